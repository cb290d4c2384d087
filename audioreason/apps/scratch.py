"""Scratch folders for the Spaces' requests: uploads unpacked, reports drawn, audio clips cut.

A Space serves for days; a folder made per request with ``tempfile.mkdtemp`` and never removed fills its
disk with every upload. Here each app has one root folder, made on first use and removed when the process
exits, and each request gets a folder under it. An app whose outputs are needed only until Gradio has
copied them into its own cache (a report) names a ``max_age_s``: a request's folder older than that is
removed when the next one is made. An app whose folders hold what a session keeps open (the explorer's
uploaded runs) releases them when the session ends (``release``, from ``gr.State``'s ``delete_callback``).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import time
from pathlib import Path
from typing import Iterable, Optional


class Scratch:
    """The request folders of one app (module docstring)."""

    def __init__(self, name: str, max_age_s: Optional[float] = None):
        self.name, self.max_age_s = name, max_age_s
        self._root: Optional[Path] = None

    @property
    def root(self) -> Path:
        if self._root is None or not self._root.is_dir():
            self._root = Path(tempfile.mkdtemp(prefix=f"audioreason-{self.name}-"))
            atexit.register(shutil.rmtree, self._root, True)
        return self._root

    def folder(self, kind: str) -> Path:
        """A new folder for one request (the expired ones removed first)."""
        self.prune()
        return Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=self.root))

    def prune(self, now: Optional[float] = None) -> int:
        """Remove the request folders last changed more than ``max_age_s`` ago; how many were removed."""
        if self.max_age_s is None:
            return 0
        now = time.time() if now is None else now
        removed = 0
        for path in self.root.iterdir():
            try:
                expired = now - path.stat().st_mtime > self.max_age_s
            except OSError:  # removed meanwhile
                continue
            if expired:
                shutil.rmtree(path, ignore_errors=True)
                removed += 1
        return removed

    def release(self, paths: Iterable[str]) -> list[str]:
        """Remove the request folders holding any of ``paths``; the paths that were inside them."""
        if self._root is None:
            return []
        root = self._root.resolve()
        released, folders = [], set()
        for given in paths:
            try:
                inside = Path(given).resolve().relative_to(root)
            except ValueError:  # not one of this app's folders (a bundled run, a folder given at start)
                continue
            if inside.parts:
                folders.add(root / inside.parts[0])
                released.append(given)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        return released


__all__ = ["Scratch"]
