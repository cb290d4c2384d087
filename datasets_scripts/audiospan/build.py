"""Build the Hub-ready audiospan folder from its raw folder: see README.md beside this file.

python datasets_scripts/audiospan/build.py RAW_DIR OUT_DIR [--on-missing-audio skip] [--push-to-hub ORG/NAME]
"""

import sys
from pathlib import Path

from audioreason.cli.build_script import run_build_script


def main(argv=None) -> int:
    return run_build_script("audiospan", Path(__file__).with_name("README.md"), argv)


if __name__ == "__main__":
    sys.exit(main())
