"""The explorer's view of one run (``RunView``): a run folder or a bundle of one, as read (``read_run``).

A run is a folder written by ``audioreason run`` and ``audioreason score`` (run.json, outputs.jsonl,
results.json, items.jsonl), or a *bundle* of one (``bundles.export_bundle``: the same files plus
``benchmark_items.jsonl``, the items' metadata with their audio copied beside it, so that a Space shows
questions and plays audio with no benchmark folder and no ``datasets`` installed). Without a bundle's item
file, the items come from the benchmark folder the run read (when ``datasets`` is installed and the folder
is still there); otherwise the explorer shows the outputs and scores and says the questions are missing.
A bundle's audio is played only from inside the bundle; a file that cannot be read is a ``ResultsError``
line naming it.

``read_run`` only reads; ``runs.open_run``, what callers use, also checks that the run's leaderboard rows and
item table can be shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Optional

from .load import (
    BENCHMARK_ACCURACY,
    ITEMS_FILE,
    RESULTS_FILE,
    Results,
    ResultsError,
    benchmark_key,
    load_results,
    read_json,
    read_json_records,
    reading,
    unique,
)

RUN_FILE, OUTPUTS_FILE = "run.json", "outputs.jsonl"  # the names `audioreason run` writes
BENCHMARK_ITEMS_FILE = "benchmark_items.jsonl"
OFFICIAL_VERDICT = "official scorer"  # an item's verdict by the official MMAR/MMAU scorer (whole reply)


@dataclass
class RunView:
    name: str
    folder: Path
    run: dict[str, Any]
    results: Results
    outputs: dict[str, dict[str, Any]]  # output key -> the runner's record
    rows: dict[str, dict[str, Any]]  # output key -> items.jsonl row (each scorer's per-item values)
    items: dict[str, dict[str, Any]]  # item id -> the benchmark item (no audio bytes)
    notes: list[str] = field(default_factory=list)

    @property
    def benchmark(self) -> Optional[str]:
        return (self.run.get("config") or {}).get("benchmark") or next(
            (r.get("benchmark") for r in self.results.runs if r.get("benchmark")), None
        )

    @cached_property
    def benchmark_rule(self) -> Optional[str]:
        """The verdict that is the benchmark's own rule on one item (``BENCHMARK_ACCURACY``): the official
        scorer's for MMAR and MMAU, exact_letter for AudioSpan, the one rule of a benchmark it does not know
        (None: several). Found once per run: every item's verdicts ask for it (a scan per item was quadratic)."""
        known = BENCHMARK_ACCURACY.get(benchmark_key(self.benchmark))
        if known is not None:
            return known[0] or OFFICIAL_VERDICT
        rules = unique(r for row in self.rows.values() for r in (row.get("accuracy") or {}))
        return rules[0] if len(rules) == 1 else None

    def modes(self) -> dict[tuple[str, str, str], Optional[str]]:
        """(model, condition, template) -> the reasoning mode ARIA assigned to that set."""
        return {(e.model, e.condition, e.template): e.result.get("reasoning_mode") for e in self.results.of("aria")}


def _keyed(path: Path) -> dict[str, dict[str, Any]]:
    """A run's records by their ``key`` (outputs.jsonl, items.jsonl); a key that is not a string is an error."""
    out = {}
    for n, row in enumerate(read_json_records(path), start=1):
        if "key" in row:
            if not isinstance(row["key"], str):
                raise ResultsError(f"{path}: record {n}: 'key' is a {type(row['key']).__name__}, not a string")
            out[row["key"]] = row
    return out


def _bundled_audio(folder: Path, audio: Any) -> Optional[str]:
    """A bundle item's audio as a path inside the bundle, or None for one that points outside it (``../x.wav``,
    an absolute path, a link out of it): a bundle only plays the audio it carries."""
    if not isinstance(audio, str) or not audio:
        return None
    root, path = folder.resolve(), folder / audio  # an absolute ``audio`` replaces folder
    resolved = path.resolve()  # follows links and ".."
    return str(path) if resolved.is_relative_to(root) and resolved != root else None


def _benchmark_items(folder: Path, run: Mapping[str, Any], notes: list[str]) -> dict[str, dict[str, Any]]:
    bundled = folder / BENCHMARK_ITEMS_FILE
    if bundled.is_file():
        items, outside = read_json_records(bundled), []
        for item in items:  # audio paths in a bundle are relative to it and stay inside it
            audio = item.get("audio")
            item["audio"] = _bundled_audio(folder, audio)
            if item["audio"] is None and audio:
                outside.append(str(audio))
        if outside:
            notes.append(
                f"{len(outside)} item(s) of {BENCHMARK_ITEMS_FILE} name audio outside the bundle "
                f"({', '.join(map(repr, outside[:3]))}{', ...' if len(outside) > 3 else ''}): not played"
            )
        return {str(it.get("id")): it for it in items}
    config = run.get("config") or {}
    if not config.get("benchmark") or not config.get("data"):
        notes.append("no benchmark items: the questions, choices and audio are not shown")
        return {}
    try:
        from ..inference.runner import load_items

        loaded = load_items(
            config["benchmark"],
            config["data"],
            config.get("benchmark_config"),
            config.get("limit"),
            config.get("on_missing_audio") or "raise",
        )
    except (ImportError, OSError, ValueError) as err:
        notes.append(
            f"the benchmark items at {config['data']!r} cannot be read here ({type(err).__name__}: {err}); "
            "the questions, choices and audio are not shown"
        )
        return {}
    return {str(it["id"]): _plain_item(it) for it in loaded}


def _plain_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """An item without audio bytes: its audio as a local path (None when it only has bytes)."""
    out = {k: v for k, v in item.items() if k != "audio"}
    audio = item.get("audio")
    out["audio"] = audio.get("path") if isinstance(audio, Mapping) else audio if isinstance(audio, str) else None
    if isinstance(out.get("edit_manifest"), str):
        try:
            out["edit_manifest"] = json.loads(out["edit_manifest"])
        except json.JSONDecodeError:
            pass
    return out


def read_run(path: Path) -> RunView:
    """A run folder or bundle (or a lone results.json / scorer output) as read, not yet checked (``runs.open_run``
    checks it); ``path`` is an expanded path, read inside ``load.reading`` so that an error names it."""
    folder = path if path.is_dir() else path.parent
    notes: list[str] = []
    run = read_json(folder / RUN_FILE) if (folder / RUN_FILE).is_file() else {}
    if not isinstance(run, dict):
        raise ResultsError(f"{folder / RUN_FILE}: a {type(run).__name__}, not an object")
    results = load_results(path) if path.is_file() or (folder / RESULTS_FILE).is_file() else Results()
    if not results.entries and not results.not_run:
        notes.append("not scored yet: no results.json (run `audioreason score` on the folder)")
    outputs = _keyed(folder / OUTPUTS_FILE) if (folder / OUTPUTS_FILE).is_file() else {}
    if not outputs:
        notes.append("no outputs.jsonl: the model outputs (CoT) are not shown")
    rows = _keyed(folder / ITEMS_FILE) if (folder / ITEMS_FILE).is_file() else {}
    with reading(folder / (BENCHMARK_ITEMS_FILE if (folder / BENCHMARK_ITEMS_FILE).is_file() else RUN_FILE)):
        items = _benchmark_items(folder, run, notes) if outputs or rows else {}
    if path.is_file() and path.name != RESULTS_FILE:  # a scorer's own output: its per-item rows by position
        for entry in results.entries:
            for n, item_row in enumerate(entry.items):
                key = f"{entry.source}#{n}"
                rows[key] = {
                    "key": key,
                    "id": str(item_row.get("id", n)),
                    "model": entry.model,
                    "condition": entry.condition,
                    "template": entry.template,
                    entry.scorer: item_row,
                }
    return RunView(folder.name if path.is_dir() else path.name, folder, run, results, outputs, rows, items, notes)


__all__ = ["BENCHMARK_ITEMS_FILE", "OFFICIAL_VERDICT", "OUTPUTS_FILE", "RUN_FILE", "RunView", "read_run"]
