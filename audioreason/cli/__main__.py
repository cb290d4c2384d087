"""``python -m audioreason.cli``: the command line."""
import sys

from audioreason.cli import main

sys.exit(main())
