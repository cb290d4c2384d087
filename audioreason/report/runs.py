"""Runs opened for the explorer: ``open_run`` reads a run folder, a bundle or a lone results file
(``run_view.read_run``) and builds its leaderboard rows and item table once, so that a field of the wrong
type is a ``ResultsError`` naming the file when the run is opened, not later in a Space handler; ``open_runs``
opens several, with an error line for each that does not open."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from .item_table import facet_values, item_table
from .leaderboard import _count_of, _headline
from .load import ITEMS_FILE, ResultsError, reading
from .run_view import BENCHMARK_ITEMS_FILE, OUTPUTS_FILE, RunView, read_run


def open_run(path: Any) -> RunView:
    """A run folder or bundle (or a lone results.json / scorer output, shown without outputs). A file that
    cannot be read or shown is a ResultsError naming it."""
    path = Path(path).expanduser()
    with reading(path):
        return _checked(read_run(path))


def _checked(view: RunView) -> RunView:
    """``view``, once each of its headlines and its item table have been built from it."""
    # A field of the wrong type fails now, named, not later in a Space handler.
    for entry in view.results.entries:
        with reading(entry.source):
            _headline(entry), _count_of(entry)
    present = [n for n in (OUTPUTS_FILE, ITEMS_FILE, BENCHMARK_ITEMS_FILE) if (view.folder / n).is_file()]
    with reading(f"{view.folder} ({', '.join(present)})"):
        item_table([view]), facet_values([view])
    return view


def open_runs(paths: Sequence[Any]) -> tuple[list[RunView], list[str]]:
    """Every run that opens, and an error line for each that does not."""
    views, errors = [], []
    for path in paths:
        try:
            views.append(open_run(path))
        except (ResultsError, OSError, ValueError) as err:
            errors.append(f"{path}: {err}")
    return views, errors


__all__ = ["open_run", "open_runs"]
