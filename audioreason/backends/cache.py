"""A per-backend memo of computed vectors: repeated inputs ("speech", the same audio for nine models)
are computed once, and new ones are computed together in one batch."""

from __future__ import annotations

from typing import Callable, Hashable, Sequence

import numpy as np


class TextCache:
    def __init__(self) -> None:
        self._store: dict[Hashable, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._store)

    def clear(self) -> None:
        self._store.clear()

    def lookup(
        self, keys: Sequence[Hashable], compute: Callable[[list], np.ndarray], inputs: Sequence | None = None
    ) -> np.ndarray:
        """Rows for ``keys``; ``compute`` gets the distinct missing inputs (``inputs`` or the keys)."""
        inputs = keys if inputs is None else inputs
        todo: dict[Hashable, int] = {}
        for i, key in enumerate(keys):
            if key not in self._store and key not in todo:
                todo[key] = i
        if todo:
            rows = compute([inputs[i] for i in todo.values()])
            for key, row in zip(todo, rows):
                self._store[key] = row
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._store[k] for k in keys])
