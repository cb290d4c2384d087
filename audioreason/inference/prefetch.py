"""The runner's inputs computed ahead: while the model generates one batch, a second thread decodes the audio
of the next two batches and, for adapters that have ``prepare(requests)`` (the transformers adapter: its
processor call, on its own copy of the processor), computes the model's inputs. Model time is mostly spent outside
Python (torch kernels, GPU), so the two overlap; the outputs are those of one batch after the other
(``tests/test_runner_prefetch.py`` compares them record by record).

Decoded clips are kept for the other templates of the same item and condition (``ClipCache``): they are
next to each other in the runner's length-sorted order, so a small cache finds them."""

from __future__ import annotations

from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from ..audio.errors import AudioError


@dataclass
class PreparedBatch:
    """A batch ready for the model: (unit, clip, seconds) per unit with audio ready, (unit, error, audio
    info, seconds) per unit whose audio failed, their requests, and the adapter's inputs (None: the
    adapter computes them itself in ``generate``)."""

    clips: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    requests: list = field(default_factory=list)
    inputs: Any = None


class ClipCache:
    """Recent clips by (preparer, condition, item): at most ``entries`` of them and ``max_bytes`` of
    samples, least recently used dropped first. An audio error is kept as well (it would fail again)."""

    def __init__(self, entries: int = 32, max_bytes: int = 256 * 2**20):
        self.entries, self.max_bytes = entries, max_bytes
        self.kept: OrderedDict = OrderedDict()
        self.hits = 0

    def get(self, preparer: Any, condition: Any, item_index: int, prepare: Callable[[], Any]) -> Any:
        key = (id(preparer), condition, item_index)
        if key in self.kept:
            self.kept.move_to_end(key)
            self.hits += 1
            return self.kept[key]
        try:
            value = prepare()
        except AudioError as err:
            value = err
        self.kept[key] = value
        while len(self.kept) > self.entries or (len(self.kept) > 1 and self._bytes() > self.max_bytes):
            self.kept.popitem(last=False)
        return value

    def _bytes(self) -> int:
        return sum(
            v.audio.array.nbytes
            for v in self.kept.values()
            if not isinstance(v, AudioError) and getattr(v, "audio", None) is not None
        )


def prefetched(runner: Any, planned: Sequence[Sequence[Any]], depth: int = 2) -> Iterator[Sequence[Any]]:
    """Run ``planned`` batches in order on ``runner`` (``prepare`` then ``run_prepared``), preparing up to
    ``depth`` batches ahead on one second thread (in order) while the model generates; yields each batch
    once its records are written. Two ahead let the thread catch up after a stretch in which the machine
    gave it no CPU. An error while preparing is raised where that batch runs, as it would be without it."""
    if not planned:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="audioreason-prefetch") as pool:
        ahead = deque(pool.submit(runner.prepare, batch) for batch in planned[:depth])
        queued = len(ahead)
        try:
            for batch in planned:
                ready = ahead.popleft().result()
                if queued < len(planned):
                    ahead.append(pool.submit(runner.prepare, planned[queued]))
                    queued += 1
                runner.run_prepared(batch, ready)
                yield batch
        finally:
            for future in ahead:
                future.cancel()


__all__ = ["ClipCache", "PreparedBatch", "prefetched"]
