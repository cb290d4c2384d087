"""`python -m audioreason ...` and `accelerate launch -m audioreason run ...`: the command line."""
import sys

from .cli import main

sys.exit(main())
