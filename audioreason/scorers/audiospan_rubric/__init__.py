"""the AudioSpan Rubric: ``formulas`` (the pure functions) and ``scorer`` (the class); the evaluate module is
``metrics/audiospan_rubric/``."""
