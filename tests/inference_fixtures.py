"""Fixtures the inference tests share (imported by name): the tiny audio checkpoints, an MMAR raw folder,
one torch thread. Kept apart from ``tiny_audio_models`` so that scripts can build models without pytest."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tiny_audio_models import BUILDERS


@pytest.fixture(scope="session")
def tiny_audio(tmp_path_factory) -> dict[str, Path]:
    """Preset name -> folder of its tiny random checkpoint (built once per session)."""
    root = tmp_path_factory.mktemp("tiny_audio")
    return {name: build(root / name) for name, build in BUILDERS.items()}


@pytest.fixture(scope="session")
def mmar_raw(tmp_path_factory) -> Path:
    """The demo's 12 MMAR items as a raw folder with 3 s synthesized clips."""
    from audioreason.data.mmar import demo_metadata, write_raw_folder

    return write_raw_folder(demo_metadata(), tmp_path_factory.mktemp("mmar_raw"))


@pytest.fixture
def one_thread():
    """One torch thread: on a 2-core machine shared with other processes, two threads spin against each
    other and make tiny models 10x slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
