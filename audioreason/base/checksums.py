"""The sha256 of a file, read in blocks (audio files and prediction files can be large): the one place that
computes it for provenance (anchor manifests, imported predictions)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Union


def file_sha256(path: Union[str, Path]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


__all__ = ["file_sha256"]
