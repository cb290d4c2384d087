"""Pure scoring functions, one module per scorer: numbers in, numbers out."""
