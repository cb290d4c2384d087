"""Quiet library output for the command line's tables."""
from __future__ import annotations

import os


def quiet() -> None:
    """Model-loading progress bars and library chatter would bury the table."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    import datasets

    datasets.disable_progress_bars()
    warnings.filterwarnings("ignore", category=FutureWarning)
