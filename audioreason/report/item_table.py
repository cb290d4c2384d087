"""The explorer's data: runs opened item by item (the ``spaces/explorer`` app is a thin shell over this).

A run is a folder written by ``audioreason run`` and ``audioreason score`` (run.json, outputs.jsonl,
results.json, items.jsonl), or a *bundle* of one (``export_bundle``: the same files plus
``benchmark_items.jsonl``, the items' metadata with their audio copied beside it, so that a Space shows
questions and plays audio with no benchmark folder and no ``datasets`` installed). Without a bundle's item
file, the items come from the benchmark folder the run read (when ``datasets`` is installed and the folder
is still there); otherwise the explorer shows the outputs and scores and says the questions are missing.

A bundle's audio is played only from inside the bundle; an uploaded zip is capped (``MAX_ZIP_BYTES``,
``MAX_ZIP_MEMBERS``); a file that cannot be read or shown is a ``ResultsError`` line naming it.

What it gives: ``leaderboard`` (one row per model, condition and template with each scorer's headline and the
95% interval results.json records for it, ``interval``; the accuracy by the benchmark's own rule,
``BENCHMARK_ACCURACY``; ``correct_legend`` and ``interval_legend`` say what is shown), ``item_rows`` (one row
per output, named by item id, model and condition, filtered by category, duration tier, anchor operation and
reasoning mode; with a ``second`` run, that run's verdicts on the same item, ``counterpart``, and the rules on
which they differ, ``differing``, optionally only the items where they disagree), ``item_detail`` (the
question, the output's CoT slots, each extracted answer with its rule and method, ``item_verdicts``, the ARIA
metrics, the rubric verdicts with their justifications, the anchors and criterion time ranges on the audio's
timeline, all of it as one HTML page, ``item_page``, and the raw records).
"""
from __future__ import annotations

import html
import json
import shutil
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .load import (BENCHMARK_ACCURACY, ITEMS_FILE, RESULTS_FILE, Entry, Results, ResultsError, benchmark_key,
                   load_results, read_json, read_json_records, reading, unique)
from .scale import display, interval, judged, number, rater_spread

RUN_FILE, OUTPUTS_FILE = "run.json", "outputs.jsonl"  # the names `audioreason run` writes
BENCHMARK_ITEMS_FILE = "benchmark_items.jsonl"
FILTERS = ("category", "duration_tier", "operation", "reasoning_mode")
OFFICIAL_VERDICT = "official scorer"  # an item's verdict by the official MMAR/MMAU scorer (whole reply)
SLOTS = ("entities", "description", "analysis", "reasoning", "answer")


@dataclass
class RunView:
    name: str
    folder: Path
    run: dict[str, Any]
    results: Results
    outputs: dict[str, dict[str, Any]]   # output key -> the runner's record
    rows: dict[str, dict[str, Any]]      # output key -> items.jsonl row (each scorer's per-item values)
    items: dict[str, dict[str, Any]]     # item id -> the benchmark item (no audio bytes)
    notes: list[str] = field(default_factory=list)

    @property
    def benchmark(self) -> Optional[str]:
        return (self.run.get("config") or {}).get("benchmark") or next(
            (r.get("benchmark") for r in self.results.runs if r.get("benchmark")), None)

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
            notes.append(f"{len(outside)} item(s) of {BENCHMARK_ITEMS_FILE} name audio outside the bundle "
                         f"({', '.join(map(repr, outside[:3]))}{', ...' if len(outside) > 3 else ''}): not played")
        return {str(it.get("id")): it for it in items}
    config = run.get("config") or {}
    if not config.get("benchmark") or not config.get("data"):
        notes.append("no benchmark items: the questions, choices and audio are not shown")
        return {}
    try:
        from ..inference.runner import load_items

        loaded = load_items(config["benchmark"], config["data"], config.get("benchmark_config"), config.get("limit"),
                            config.get("on_missing_audio") or "raise")
    except (ImportError, OSError, ValueError) as err:
        notes.append(f"the benchmark items at {config['data']!r} cannot be read here ({type(err).__name__}: {err}); "
                     "the questions, choices and audio are not shown")
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


def open_run(path: Any) -> RunView:
    """A run folder or bundle (or a lone results.json / scorer output, shown without outputs). A file that
    cannot be read or shown is a ResultsError naming it."""
    path = Path(path).expanduser()
    with reading(path):
        return _open_run(path)


def _open_run(path: Path) -> RunView:
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
                rows[key] = {"key": key, "id": str(item_row.get("id", n)), "model": entry.model,
                             "condition": entry.condition, "template": entry.template, entry.scorer: item_row}
    view = RunView(folder.name if path.is_dir() else path.name, folder, run, results, outputs, rows, items, notes)
    # A field of the wrong type fails now, named, not later in a Space handler.
    for entry in results.entries:
        with reading(entry.source):
            _headline(entry), _count_of(entry)
    present = [n for n in (OUTPUTS_FILE, ITEMS_FILE, BENCHMARK_ITEMS_FILE) if (folder / n).is_file()]
    with reading(f"{folder} ({', '.join(present)})"):
        item_table([view]), facet_values([view])
    return view


# ---------------------------------------------------------------------------------------------
# Bundles (what a Space ships)
# ---------------------------------------------------------------------------------------------

def export_bundle(run_folder: Any, out: Any) -> Path:
    """Copy a scored run into ``out`` with its items' metadata and audio (``benchmark_items.jsonl`` and
    ``audio/``), so that it opens with no benchmark folder. Returns ``out``."""
    view = open_run(run_folder)
    if not view.outputs or not view.results.entries:
        raise ValueError(f"{run_folder}: a bundle needs a scored run folder (run.json, outputs.jsonl, results.json)")
    if not view.items:
        raise ValueError(f"{run_folder}: the benchmark items cannot be read ({'; '.join(view.notes)}); a bundle "
                         "ships the questions and audio")
    out = Path(out)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    for name in (RUN_FILE, OUTPUTS_FILE, RESULTS_FILE, ITEMS_FILE):
        if (view.folder / name).is_file():
            shutil.copyfile(view.folder / name, out / name)
    used = {r.get("id") for r in view.outputs.values()}
    with open(out / BENCHMARK_ITEMS_FILE, "w", encoding="utf-8") as f:
        for n, (item_id, item) in enumerate(view.items.items()):
            if item_id not in used:
                continue
            item = dict(item)
            source = Path(item["audio"]) if item.get("audio") else None
            if source is not None and source.is_file():
                target = Path("audio") / f"{n:05d}{source.suffix}"
                shutil.copyfile(source, out / target)
                item["audio"] = str(target)
            else:
                item["audio"] = None
            f.write(json.dumps(item, ensure_ascii=False, default=str) + "\n")
    return out


# ---------------------------------------------------------------------------------------------
# Leaderboard and item table
# ---------------------------------------------------------------------------------------------

LEADERBOARD_COLUMNS = ["run", "benchmark", "model", "condition", "template", "n", "accuracy (rule)", "ARIA",
                       "reasoning mode", "MMAR Rubrics", "AudioSpan Rubric", "Chain", "R_TP"]

def _accuracy_headline(entries: Sequence[Entry], benchmark: Optional[str]) -> str:
    """The accuracy of one set by its benchmark's own rule, naming the rule. A benchmark the table does not
    know shows the one rule it was scored with; several rules and no benchmark rule: n/a, naming them."""
    by_rule = {e.result.get("rule"): e for e in entries}
    known = BENCHMARK_ACCURACY.get(benchmark_key(benchmark))
    if known is None:
        if len(by_rule) != 1:
            return f"n/a (no rule of its own for benchmark {benchmark!r}; scored with {', '.join(map(str, by_rule))})"
        rule, entry = next(iter(by_rule.items()))
        return f"{_valued(entry.result, 'accuracy', 'accuracy')} ({rule})"
    rule, field_name, shown = known
    entry = by_rule.get(rule) if rule else next((e for e in entries if field_name in e.result), None)
    if entry is None or field_name not in entry.result:
        how = f"score with --extraction {rule} or all" if rule else "score it again with this version"
        return f"n/a ({shown} not scored: this set was scored with {', '.join(map(str, by_rule))}; {how})"
    return f"{_valued(entry.result, field_name, 'accuracy')} ({shown})"


def _valued(values: Mapping[str, Any], field_name: str, scorer: str, value: Any = ...) -> str:
    """A headline's text: its value, its 95% interval when recorded (none beside an n/a)."""
    text = display(values.get(field_name) if value is ... else value, scorer, field_name, values)
    return text if text == "n/a" else text + interval(values, field_name)


def correct_legend(views: Sequence[RunView]) -> str:
    """What the item table's "correct" column and the leaderboard's accuracy mean for the open runs."""
    benchmarks = unique(benchmark_key(e.benchmark or v.benchmark) for v in views for e in v.results.of("accuracy"))
    rules = "; ".join(f"{b}: {BENCHMARK_ACCURACY[b][2]}" if b in BENCHMARK_ACCURACY else f"{b or 'no benchmark'}: "
                      "the one rule it was scored with" for b in benchmarks)
    return ("**correct**: for each answer-extraction rule the output was scored with, whether the choice that "
            "rule extracts is the gold answer (`rule yes|no`; on MMAR and MMAU also the `official scorer`'s "
            "string match on the whole reply; an anchor link: the Chain scorer's verdict). "
            "**accuracy (rule)** on the leaderboard is each benchmark's own rule"
            + (f" ({rules})" if rules else "") + "; `audioreason score --extraction all` scores every rule.")


METHODS = {"wilson": "the Wilson score interval of a binomial proportion (a plain accuracy)",
           "bootstrap_percentile": "percentile bootstrap over items",
           "bootstrap_bca": "bias-corrected and accelerated (BCa) bootstrap over items"}


def _uncertainties(entry: Entry) -> list[Mapping[str, Any]]:
    """The uncertainty records of an entry's headlines (its own, its chain's, its text prior's)."""
    r = entry.result
    holders = [r, r.get("chain"), r.get("text_prior")]
    return [u for h in holders if isinstance(h, Mapping) and isinstance(h.get("uncertainty"), Mapping)
            for u in h["uncertainty"].values() if isinstance(u, Mapping)]


def interval_legend(views: Sequence[RunView]) -> str:
    """What the brackets beside the leaderboard's headlines are: each interval method the open runs used, with
    its resamples and seed; "" when no run carries intervals (nothing is shown then)."""
    found = unique((u.get("method"), u.get("resamples"), u.get("seed")) for v in views for e in v.results.entries
                   for u in _uncertainties(e) if u.get("method"))
    spread = any(isinstance(e.result.get("rater_spread"), Mapping) for v in views for e in v.results.entries)
    if not found and not spread:
        return ""
    how = "; ".join(f"`{m}`: {METHODS.get(m, m)}" + (f" ({resamples} resamples, seed {seed})" if resamples else "")
                    for m, resamples, seed in found)
    return ("**[lo, hi]** beside a headline: its 95% interval over the items, as `audioreason score` recorded it"
            + (f" ({how})" if how else "") + "; `[no interval: why]` where none could be computed."
            + (" **rater sd**: the mean over items of the standard deviation of the raters' scores." if spread else ""))


def _headline(entry: Entry) -> tuple[str, str]:
    """(column, value text) of a scorer's headline for the leaderboard (accuracy: ``_accuracy_headline``)."""
    r = entry.result
    if entry.scorer == "aria":
        return "ARIA", _valued(r, "aria", "aria") + ("" if r.get("aria_complete", True) else
                                                    f" (of {'+'.join(r.get('aria_metrics') or [])})")
    if entry.scorer in ("mmar_rubrics", "audiospan_rubric"):
        from ..judges.base import offline_judge_label

        label = offline_judge_label(r)  # a score from an in-process judge says so beside the number
        field = "rubrics" if entry.scorer == "mmar_rubrics" else "rubric"
        return ("MMAR Rubrics" if field == "rubrics" else "AudioSpan Rubric",
                _valued(r, field, entry.scorer, judged(r, field)) + rater_spread(r) + (f" {label}" if label else ""))
    if entry.scorer == "anchor_chain" and isinstance(r.get("chain"), Mapping):
        c = r["chain"]
        random = display(c.get("random_chain"), entry.scorer, "random_chain", c)
        return "Chain", f"{_valued(c, 'chain', entry.scorer)} (random {random})"
    if entry.scorer == "text_prior_decomposition":
        tp = r.get("text_prior") if isinstance(r.get("text_prior"), Mapping) else {}
        return "R_TP", _valued({"scale": r.get("scale"), **tp}, "R_TP", entry.scorer)
    return "", ""


def _count_of(entry: Entry) -> Any:
    return entry.result.get("n") or (entry.result.get("counts") or {}).get("items")


def leaderboard(views: Sequence[RunView]) -> list[list[str]]:
    """One row per (run, model, condition, template), each scorer's headline in its column."""
    rows: dict[tuple, dict[str, str]] = {}
    accuracy: dict[tuple, list[Entry]] = {}  # one accuracy entry per rule: the benchmark's rule is chosen below
    for view in views:
        for entry in view.results.entries:
            conditions = [entry.condition] if entry.scorer != "text_prior_decomposition" else ["(all)"]
            key = (view.name, entry.benchmark or view.benchmark or "", entry.model, conditions[0] or "", entry.template or "")
            row = rows.setdefault(key, {"n": ""})
            if entry.scorer == "accuracy":
                accuracy.setdefault(key, []).append(entry)
            column, value = _headline(entry)
            if column:
                row[column] = value
            if entry.scorer == "aria":
                row["reasoning mode"] = entry.result.get("reasoning_mode") or "none"
            n = _count_of(entry)
            if n and not row["n"]:
                row["n"] = str(n)
    for key, entries in accuracy.items():
        rows[key]["accuracy (rule)"] = _accuracy_headline(entries, key[1])
    return [[*key, *(row.get(c, "") for c in LEADERBOARD_COLUMNS[5:])] for key, row in rows.items()]


def filled_columns(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> tuple[list[str], list[list[str]]]:
    """The table without the columns that are empty in every row (a scorer no open run was scored with): an
    empty column squeezed by the others wraps its header into a tall column of letters."""
    keep = [n for n in range(len(headers)) if any(str(r[n]).strip() for r in rows)] if rows else range(len(headers))
    return [headers[n] for n in keep], [[r[n] for n in keep] for r in rows]


def _item_facets(view: RunView, row: Mapping[str, Any], modes: Mapping[tuple, Optional[str]]) -> dict[str, str]:
    item = view.items.get(str(row.get("id")), {})
    return {"category": str(item.get("category") or ""), "duration_tier": str(item.get("duration_tier") or ""),
            "operation": str(item.get("operation") or ""),
            "reasoning_mode": str(modes.get((row.get("model"), row.get("condition"), row.get("template"))) or "")}


ITEM_COLUMNS = ["run", "item", "model", "condition", "template", "category", "tier", "operation", "mode",
                "correct", "ARIA", "rubric", "second run: correct", "differs on"]
DISAGREE = ("benchmark", "any")  # which verdicts a comparison of two runs filters on


@dataclass
class ItemRow:
    """One output in the item table: the run it is in (its index among the views), its key, its cells
    (``ITEM_COLUMNS``) and the key of the same item in the second run of a comparison (None: not there)."""

    run: int
    key: str
    cells: list[str]
    other: Optional[str] = None


def _row(view: RunView, key: str) -> dict[str, Any]:
    """An output's items.jsonl row, or the identifying fields of its record when it was not scored."""
    if key in view.rows:
        return view.rows[key]
    record = view.outputs.get(key, {})
    row = {k: record.get(k) for k in ("key", "id", "model", "condition")}
    row["template"] = (record.get("template") or {}).get("name") if isinstance(record.get("template"), Mapping) \
        else record.get("template")
    return row


def item_verdicts(view: RunView, key: str) -> dict[str, bool]:
    """Whether an output is right, per rule: each extraction rule it was scored with (items.jsonl), and, on
    MMAR and MMAU, the official scorer's string match on the whole reply: as `audioreason score` recorded it
    (``official_scorer_correct``), or for a run scored before it was recorded, computed here by the same
    function from the output and the item (absent when the item is not at hand)."""
    row = _row(view, key)
    verdicts = [v for v in (row.get("accuracy") or {}).values() if isinstance(v, Mapping)]
    out = {rule: bool(v["correct"]) for rule, v in (row.get("accuracy") or {}).items()
           if isinstance(v, Mapping) and v.get("correct") is not None}
    if view.benchmark_rule == OFFICIAL_VERDICT:
        recorded = next((v["official_scorer_correct"] for v in verdicts
                         if isinstance(v.get("official_scorer_correct"), bool)), None)
        if recorded is not None:
            return {OFFICIAL_VERDICT: recorded, **out}
        from audioreason.evaluation.sections import is_mcq, official_scorer_correct

        item = view.items.get(str(row.get("id")))
        if item and key in view.outputs and is_mcq(item) and item.get("answer") is not None:
            out = {OFFICIAL_VERDICT: official_scorer_correct(view.outputs[key].get("output"), item), **out}
    return out


def _correct(view: RunView, key: str) -> str:
    """Each rule's verdict, named ("official scorer yes, exact_letter no"); an anchor link's Chain verdict (see
    ``correct_legend``)."""
    verdicts = list(item_verdicts(view, key).items())
    row = _row(view, key)
    if not verdicts and isinstance(row.get("anchor_chain"), Mapping) and row["anchor_chain"].get("correct") is not None:
        verdicts = [("chain", row["anchor_chain"]["correct"])]
    return ", ".join(f"{rule} {'yes' if v else 'no'}" for rule, v in verdicts)


def _by_item(view: RunView) -> dict[tuple[str, Any], list[str]]:
    """A run's output keys by (item id, condition)."""
    out: dict[tuple[str, Any], list[str]] = {}
    for key in unique([*view.rows, *view.outputs]):
        row = _row(view, key)
        out.setdefault((str(row.get("id")), row.get("condition")), []).append(key)
    return out


def counterpart(row: Mapping[str, Any], other: RunView,
                index: Optional[Mapping[tuple[str, Any], list[str]]] = None) -> Optional[str]:
    """The key of the same item in ``other``: same item id, condition and template, else the same item id and
    condition (two models' templates may differ); None when ``other`` has no such output."""
    same_item = (index if index is not None else _by_item(other)).get((str(row.get("id")), row.get("condition")), [])
    exact = [k for k in same_item if _row(other, k).get("template") == row.get("template")]
    return (exact or same_item or [None])[0]


def same_item(view: RunView, key: str, other: RunView) -> Optional[str]:
    """The key of ``view``'s output ``key``'s item in ``other`` (``counterpart``)."""
    return counterpart(_row(view, key), other)


def differing(view: RunView, key: str, other: RunView, other_key: str, scope: str = "benchmark") -> list[str]:
    """The verdicts on which two runs' outputs for one item disagree: ``scope`` "benchmark", the benchmark's own
    rule (when both runs are on one benchmark); "any", every rule both were scored with. A rule only one of
    them has is not a disagreement."""
    if scope not in DISAGREE:
        raise ValueError(f"unknown disagreement scope {scope!r}; choose {' or '.join(DISAGREE)}")
    mine, theirs = item_verdicts(view, key), item_verdicts(other, other_key)
    rules = [r for r in mine if r in theirs]
    if scope == "benchmark":
        rule = view.benchmark_rule
        rules = [rule] if rule in rules and rule == other.benchmark_rule else []
    return [r for r in rules if mine[r] != theirs[r]]


def _rubric(row: Mapping[str, Any]) -> str:
    if isinstance(row.get("mmar_rubrics"), Mapping):
        r = row["mmar_rubrics"]
        score = display(r.get("score"), "mmar_rubrics", "item.score") if r.get("score") is not None else ""
        return f"{r.get('status')} {score}".strip()
    if isinstance(row.get("audiospan_rubric"), Mapping):
        return display(row["audiospan_rubric"].get("rubric"), "audiospan_rubric", "item.rubric")
    return ""


def facet_values(views: Sequence[RunView]) -> dict[str, list[str]]:
    """The values each filter can take over the loaded runs."""
    out: dict[str, list[str]] = {f: [] for f in FILTERS}
    for view in views:
        modes = view.modes()
        for row in view.rows.values():
            for name, value in _item_facets(view, row, modes).items():
                if value and value not in out[name]:
                    out[name].append(value)
    return {k: sorted(v) for k, v in out.items()}


def item_rows(views: Sequence[RunView], filters: Optional[Mapping[str, Sequence[str]]] = None,
              second: Optional[int] = None, disagree: Optional[str] = None) -> list[ItemRow]:
    """One row per output; ``filters`` keep the rows whose facet is one of the values given (an empty selection
    keeps every row). ``second``: the index of a run to compare with: the other runs' rows each get that run's
    verdicts on the same item (``counterpart``), and ``disagree`` ("benchmark" or "any", ``differing``) keeps
    only the items on which they differ. The second run's own rows are then not listed (they are its column)."""
    filters = {k: set(v) for k, v in (filters or {}).items() if v}
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise ValueError(f"unknown filters {sorted(unknown)}; filters are {', '.join(FILTERS)}")
    if second is not None and not 0 <= second < len(views):
        raise ValueError(f"no run {second} to compare with ({len(views)} open)")
    if disagree is not None and second is None:
        raise ValueError("the disagreement filter needs a second run to compare with")
    table, index = [], _by_item(views[second]) if second is not None else {}
    for n, view in enumerate(views):
        if n == second:
            continue
        modes = view.modes()
        for key in unique([*view.rows, *view.outputs]):
            row = _row(view, key)
            facets = _item_facets(view, row, modes)
            if any(facets[name] not in allowed for name, allowed in filters.items()):
                continue
            other = counterpart(row, views[second], index) if second is not None else None
            differs = differing(view, key, views[second], other, "any") if other else []
            if disagree is not None and not (differs if disagree == "any" else
                                             other and differing(view, key, views[second], other, disagree)):
                continue
            aria = row.get("aria") if isinstance(row.get("aria"), Mapping) else {}
            theirs = ("(not in it)" if other is None else _correct(views[second], other)) if second is not None else ""
            table.append(ItemRow(n, key, [
                view.name, str(row.get("id")), str(row.get("model")), str(row.get("condition") or ""),
                str(row.get("template") or ""), facets["category"], facets["duration_tier"], facets["operation"],
                facets["reasoning_mode"], _correct(view, key), display(aria.get("aria"), "aria", "aria", aria)
                if aria else "", _rubric(row), theirs, ", ".join(differs)], other))
    return table


def item_table(views: Sequence[RunView], filters: Optional[Mapping[str, Sequence[str]]] = None,
               second: Optional[int] = None, disagree: Optional[str] = None) -> list[list[str]]:
    """The cells of ``item_rows`` (``ITEM_COLUMNS``)."""
    return [r.cells for r in item_rows(views, filters, second, disagree)]


# ---------------------------------------------------------------------------------------------
# One item
# ---------------------------------------------------------------------------------------------

def _spans(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Anchors (edit positions) and rubric criteria time ranges of an item, in seconds."""
    spans = []
    manifest = item.get("edit_manifest") if isinstance(item.get("edit_manifest"), Mapping) else {}
    for n, position in enumerate(manifest.get("positions") or []):
        if isinstance(position, Mapping):  # the dataset's form: {"start": s, "end": e}; a manifest file's: [s, e]
            position = (position.get("start"), position.get("end"))
        if isinstance(position, Sequence) and len(position) == 2 and all(number(p) is not None for p in position):
            spans.append({"start": float(position[0]), "end": float(position[1]), "kind": "anchor",
                          "label": f"anchor {n + 1}: {manifest.get('operation') or item.get('operation') or 'edit'}"})
    for n, criterion in enumerate(item.get("rubric") or []):
        span = criterion.get("time_range") if isinstance(criterion, Mapping) else None
        if isinstance(span, Sequence) and len(span) == 2 and all(number(p) is not None for p in span):
            spans.append({"start": float(span[0]), "end": float(span[1]), "kind": "criterion",
                          "label": f"criterion {n + 1}: {criterion.get('text', '')}"})
    return spans


def timeline_html(duration: Optional[float], spans: Sequence[Mapping[str, Any]]) -> str:
    """A bar the length of the audio with each span placed on it (HTML, no script)."""
    if not spans:
        return "<p>No anchors or timed criteria for this item.</p>"
    end = max([duration or 0.0] + [s["end"] for s in spans]) or 1.0
    colours = {"anchor": "#d62728", "criterion": "#1f77b4"}
    marks = "".join(
        f"<div title=\"{html.escape(s['label'])} ({s['start']:.1f}-{s['end']:.1f} s)\" style=\"position:absolute;"
        f"left:{100 * s['start'] / end:.3f}%;width:{max(0.4, 100 * (s['end'] - s['start']) / end):.3f}%;top:"
        f"{4 if s['kind'] == 'anchor' else 22}px;height:14px;background:{colours[s['kind']]};opacity:.8\"></div>"
        for s in spans)
    legend = "".join(f"<li>{html.escape(s['label'])}: {s['start']:.1f}-{s['end']:.1f} s</li>" for s in spans)
    return (f"<div class=\"timeline\" style=\"position:relative;height:40px;background:#eee;border-radius:3px\">"
            f"{marks}</div><div style=\"display:flex;justify-content:space-between;font-size:.75rem\"><span>0 s"
            f"</span><span>{end:.1f} s</span></div><ul style=\"font-size:.8rem\">{legend}</ul>")


def _verdicts(row: Mapping[str, Any]) -> list[list[str]]:
    """Per-criterion verdicts with justifications, from any scorer's per-item output that carries them:
    [scorer, rater, criterion, verdict, justification] (a rater whose call failed: its error)."""
    out = []
    for scorer in ("mmar_rubrics", "audiospan_rubric"):
        detail = row.get(scorer)
        if not isinstance(detail, Mapping):
            continue
        for rater in detail.get("raters") or []:
            if not isinstance(rater, Mapping):
                continue
            who = str(rater.get("rater")) + (f" ({rater['judge']})" if rater.get("judge") else "")
            if rater.get("error") and not rater.get("verdicts"):
                out.append([scorer, who, "", f"failed ({rater.get('status')})", str(rater["error"])])
            for v in rater.get("verdicts") or []:
                out.append([scorer, who, str(v.get("name")), str(v.get("score")), str(v.get("justification") or "")])
        for n, reply in enumerate(detail.get("judge") or []):
            if isinstance(reply, Mapping) and reply.get("error") and not reply.get("verdict"):
                out.append([scorer, str(n), "", f"failed ({reply.get('status')})", str(reply["error"])])
            for c in (((reply.get("verdict") or {}) if isinstance(reply, Mapping) else {}).get("criteria") or []):
                out.append([scorer, str(n), str(c.get("index")), f"semantic {c.get('semantic')}, temporal "
                            f"{c.get('temporal')}", str(c.get("reason") or c.get("justification") or "")])
    return out


def item_detail(view: RunView, key: str) -> dict[str, Any]:
    """Everything the explorer shows for one output (a malformed record: a ResultsError naming the run):
    ``page`` is it as one readable HTML page (``item_page``), ``raw`` the records behind it."""
    with reading(view.folder):
        return _item_detail(view, key)


def _item_detail(view: RunView, key: str) -> dict[str, Any]:
    from audioreason.text.cot import parse_cot

    record = view.outputs.get(key, {})
    row = view.rows.get(key, {})
    item_id = str(row.get("id", record.get("id")))
    item = view.items.get(item_id, {})
    output = record.get("output")
    slots = parse_cot(output or "")
    verdicts = item_verdicts(view, key)
    answers = [[rule, str(v.get("choice")), str(v.get("method")), "yes" if v.get("correct") else "no"]
               for rule, v in (row.get("accuracy") or {}).items() if isinstance(v, Mapping)]
    if OFFICIAL_VERDICT in verdicts:
        answers.insert(0, [OFFICIAL_VERDICT, "(the whole reply)", "string match of the official MMAR/MMAU "
                           "evaluation script", "yes" if verdicts[OFFICIAL_VERDICT] else "no"])
    aria = {m: row["aria"].get(m) for m in ("M1", "M2", "M3", "M4", "M5", "M6", "aria")} \
        if isinstance(row.get("aria"), Mapping) else {}
    audio = item.get("audio") if isinstance(item.get("audio"), str) and Path(item["audio"]).is_file() else None
    question = item.get("question") or ""
    choices = item.get("choices") or []
    model, condition = row.get("model", record.get("model")), row.get("condition", record.get("condition"))
    header = (f"**{item_id}** ({view.name}; {model}, condition {condition})\n\n"
              + (f"**Q:** {question}\n\n" if question else "")
              + "".join(f"- {c}{'  (gold)' if c == item.get('answer') else ''}\n" for c in choices)
              + (f"\n**Reference:** {item.get('reference_answer')}\n" if item.get("reference_answer") else ""))
    if record.get("error"):
        header += f"\n**The model call failed:** {record['error']}\n"
    detail = {"header": header, "output": output or "", "audio": audio,
              "slots": [[name, ", ".join(slots.entities) if name == "entities" else getattr(slots, name)]
                        for name in SLOTS] + [["missing", ", ".join(slots.missing) or "none"]],
              "answers": answers, "aria": aria,
              "scores": {k: v for k, v in row.items() if k not in ("key", "id", "model", "condition", "template")},
              "verdicts": _verdicts(row),
              "timeline": timeline_html(number(item.get("duration_seconds")), _spans(item)),
              "raw": {"output record (outputs.jsonl)": record, "scores (items.jsonl)": row, "item": item}}
    detail["page"] = item_page(detail, {"item": item_id, "run": view.name, "model": model, "condition": condition,
                                        "template": row.get("template")}, item, record.get("error"))
    return detail


_TABLE = "border-collapse:collapse;margin:.3rem 0 .8rem;font-size:.9rem"
_CELL = "border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top"


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th style=\"{_CELL};background:#f3f3f3\">{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td style=\"{_CELL}\">{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table style=\"{_TABLE}\"><tr>{head}</tr>{body}</table>"


def item_page(detail: Mapping[str, Any], names: Mapping[str, Any], item: Mapping[str, Any],
              error: Any = None) -> str:
    """One output as a page (HTML, every text escaped): which item, model and condition; the question and
    choices (the gold marked); the chain of thought by slot; the answer each rule extracted, with how and
    whether it is right; the ARIA metrics; the rubric verdicts with their justifications; the anchors on the
    audio's timeline; the reply."""
    e = html.escape
    parts = [f"<h3 style=\"margin:.2rem 0\">{e(str(names['item']))}</h3><p style=\"margin:0 0 .6rem\">"
             + " · ".join(f"<b>{k}</b> {e(str(v))}" for k, v in names.items() if k != "item" and v) + "</p>"]
    if item.get("question"):
        parts.append(f"<p><b>Question.</b> {e(str(item['question']))}</p>")
    if item.get("choices"):
        parts.append("<ol type=\"A\">" + "".join(
            f"<li>{e(str(c))}{' <b>(gold)</b>' if c == item.get('answer') else ''}</li>" for c in item["choices"])
            + "</ol>")
    if item.get("reference_answer"):
        parts.append(f"<p><b>Reference answer.</b> {e(str(item['reference_answer']))}</p>")
    if not item:
        parts.append("<p><i>The benchmark item is not at hand: no question, choices or audio.</i></p>")
    if error:
        parts.append(f"<p style=\"color:#b00\"><b>The model call failed:</b> {e(str(error))}</p>")
    slots = dict(detail["slots"])
    parts.append("<h4>Chain of thought</h4><dl style=\"margin:0\">" + "".join(
        f"<dt><b>{e(name.capitalize())}</b></dt><dd style=\"margin:0 0 .4rem 1rem;white-space:pre-wrap\">"
        + (e(slots[name]) if slots[name] else "<i>missing</i>") + "</dd>" for name in SLOTS) + "</dl>")
    if detail["answers"]:
        parts.append("<h4>Answer per rule</h4>" + _html_table(["rule", "extracted", "why (method)", "correct"],
                                                               detail["answers"]))
    if detail["aria"]:
        aria = detail["aria"]
        parts.append("<h4>ARIA metrics</h4>"
                     + _html_table(list(aria), [[display(v, "aria", m) for m, v in aria.items()]]))
    if detail["verdicts"]:
        parts.append("<h4>Rubric verdicts</h4>" + _html_table(["scorer", "rater", "criterion", "verdict",
                                                                "justification"], detail["verdicts"]))
    parts.append("<h4>Anchors and timed criteria on the audio's timeline</h4>" + detail["timeline"])
    parts.append("<h4>Reply</h4><pre style=\"white-space:pre-wrap;background:#f7f7f7;padding:.5rem\">"
                 + (e(detail["output"]) or "<i>no output</i>") + "</pre>")
    return "<div class=\"item-page\">" + "".join(parts) + "</div>"


RUN_FOLDER_FILES = (RUN_FILE, OUTPUTS_FILE, RESULTS_FILE, ITEMS_FILE, BENCHMARK_ITEMS_FILE)
# What an uploaded zip may expand to: a bundle of results with its items' audio fits easily; a zip bomb does not.
# A bigger run opens from its folder (``python app.py RUN_DIR`` or ``open_run``), which has no cap.
MAX_ZIP_BYTES = 200 * 2**20
MAX_ZIP_MEMBERS = 5000
_CHUNK = 2**20


def _unzip(path: Path, target: Path, max_bytes: int, max_members: int) -> None:
    """Extract a zip into ``target`` within the caps: refused from its headers first (member count, declared
    sizes, unsafe names), then counted while extracting, since headers can lie."""
    import zipfile

    def too_big(size: int) -> ValueError:
        return ValueError(f"{path.name}: expands to {size:,} bytes or more; an uploaded zip may expand to at most "
                          f"{max_bytes:,} (open a bigger run from its folder)")

    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            if len(members) > max_members:
                raise ValueError(f"{path.name}: {len(members):,} files in the zip; an upload may hold at most "
                                 f"{max_members:,}")
            unsafe = [m.filename for m in members if m.filename.startswith("/") or ".." in Path(m.filename).parts]
            if unsafe:
                raise ValueError(f"{path.name}: unsafe paths in the zip: {unsafe[:3]}")
            declared = sum(m.file_size for m in members)
            if declared > max_bytes:
                raise too_big(declared)
            written = 0
            for member in members:
                out = target / member.filename
                if member.is_dir():
                    out.mkdir(parents=True, exist_ok=True)
                    continue
                out.parent.mkdir(parents=True, exist_ok=True)
                with z.open(member) as source, open(out, "wb") as sink:
                    while chunk := source.read(_CHUNK):
                        written += len(chunk)
                        if written > max_bytes:
                            raise too_big(written)
                        sink.write(chunk)
    # What zipfile raises on an upload it cannot unpack: a damaged archive (BadZipFile, EOFError), a member
    # needing ZIP64 (LargeZipFile), an unsupported compression method (NotImplementedError), an encrypted
    # member (RuntimeError), a file system refusal (OSError): each is the upload's fault, named in one line.
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, OSError) as err:
        raise ValueError(f"{path.name}: cannot be unpacked ({type(err).__name__}: {err})") from None


def stage_uploads(files: Sequence[Any], dest: Any, max_bytes: int = MAX_ZIP_BYTES,
                  max_members: int = MAX_ZIP_MEMBERS) -> list[Path]:
    """Uploaded files as paths ``open_run`` and ``load_results`` take: a .zip is unpacked (at most
    ``max_bytes`` uncompressed in ``max_members`` files) and each folder in it that holds results.json or
    run.json is one run; loose run-folder files (run.json, outputs.jsonl, results.json, items.jsonl,
    benchmark_items.jsonl) are put together as one run; any other .json file is a scorer's own output."""
    dest = Path(dest)
    loose, paths = dest / "uploaded-run", []
    for n, given in enumerate(files or []):
        path = Path(given)
        if path.suffix == ".zip":
            target = dest / f"zip-{n}"
            try:
                _unzip(path, target, max_bytes, max_members)
            except ValueError:
                shutil.rmtree(target, ignore_errors=True)  # nothing half-extracted is left behind
                raise
            found = sorted({p.parent for p in target.rglob("*") if p.name in (RESULTS_FILE, RUN_FILE)})
            if not found:
                raise ValueError(f"{path.name}: the zip holds no run folder (no results.json or run.json in it)")
            paths += found
        elif path.name in RUN_FOLDER_FILES:
            loose.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, loose / path.name)
        elif path.suffix == ".json":
            paths.append(path)
        else:
            raise ValueError(f"{path.name}: give a zipped run folder, run-folder files ({', '.join(RUN_FOLDER_FILES)}) "
                             "or a scorer's output (.json)")
    if loose.is_dir():
        paths.append(loose)
    return paths


def open_runs(paths: Sequence[Any]) -> tuple[list[RunView], list[str]]:
    """Every run that opens, and an error line for each that does not."""
    views, errors = [], []
    for path in paths:
        try:
            views.append(open_run(path))
        except (ResultsError, OSError, ValueError) as err:
            errors.append(f"{path}: {err}")
    return views, errors


__all__ = ["BENCHMARK_ACCURACY", "BENCHMARK_ITEMS_FILE", "DISAGREE", "FILTERS", "ITEM_COLUMNS", "ItemRow",
           "LEADERBOARD_COLUMNS", "MAX_ZIP_BYTES", "MAX_ZIP_MEMBERS", "OFFICIAL_VERDICT", "RUN_FOLDER_FILES",
           "RunView", "correct_legend", "counterpart", "differing", "export_bundle", "facet_values",
           "filled_columns", "interval",
           "interval_legend", "item_detail", "item_page", "item_rows", "item_table", "item_verdicts", "leaderboard",
           "open_run", "open_runs", "rater_spread", "same_item", "stage_uploads", "timeline_html"]
