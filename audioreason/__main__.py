"""`python -m audioreason ...` and `accelerate launch -m audioreason run ...`: the command line."""

from .cli.__main__ import console

console()
