"""Quiet library output for the command line's tables."""

from __future__ import annotations

import os
import sys


def quiet() -> None:
    """Model-loading progress bars and library chatter would bury the table. Set through the libraries'
    environment variables, so a command that never loads a model never imports transformers or datasets
    for it; a library already imported is told directly (it read the variables at its import)."""
    import warnings

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    if "datasets" in sys.modules:
        import datasets

        datasets.disable_progress_bars()
    warnings.filterwarnings("ignore", category=FutureWarning)
