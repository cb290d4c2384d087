"""The explorer's data: runs opened item by item (the ``spaces/explorer`` app is a thin shell over this).

A run is a folder written by ``audioreason run`` and ``audioreason score`` (run.json, outputs.jsonl,
results.json, items.jsonl), or a *bundle* of one (``export_bundle``: the same files plus
``benchmark_items.jsonl``, the items' metadata with their audio copied beside it, so that a Space shows
questions and plays audio with no benchmark folder and no ``datasets`` installed). Without a bundle's item
file, the items come from the benchmark folder the run read (when ``datasets`` is installed and the folder
is still there); otherwise the explorer shows the outputs and scores and says the questions are missing.

A bundle's audio is played only from inside the bundle; an uploaded zip is capped (``MAX_ZIP_BYTES``,
``MAX_ZIP_MEMBERS``); a file that cannot be read or shown is a ``ResultsError`` line naming it.

What it gives: ``leaderboard`` (one row per model, condition and template with each scorer's headline; the
accuracy by the benchmark's own rule, ``BENCHMARK_ACCURACY``),
``item_table`` (one row per output, filtered by category, duration tier, anchor operation and reasoning
mode), ``item_detail`` (the question, the output's CoT slots, each extracted answer with its rule, the ARIA
metrics, the rubric verdicts with their justifications when the per-item output carries them, the anchors
and criterion time ranges on the audio's timeline).
"""
from __future__ import annotations

import html
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .load import (ITEMS_FILE, RESULTS_FILE, Entry, Results, ResultsError, load_results, read_json, read_json_records,
                   reading, unique)
from .scale import display, judged, number

RUN_FILE, OUTPUTS_FILE = "run.json", "outputs.jsonl"  # the names `audioreason run` writes
BENCHMARK_ITEMS_FILE = "benchmark_items.jsonl"
FILTERS = ("category", "duration_tier", "operation", "reasoning_mode")
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

# The leaderboard's accuracy is each benchmark's own rule: (the accuracy scorer's rule entry, None for any of
# them, the field of it, the name shown). MMAR and MMAU: their official scorer (the string match of their
# evaluation scripts on the whole reply, which `audioreason score` puts in every rule's entry);
# AudioSpan: App. C.1, the reply is exactly one option letter.
OFFICIAL = (None, "official_scorer_accuracy", "official MMAR/MMAU scorer")
BENCHMARK_ACCURACY = {"mmar": OFFICIAL, "mmau": OFFICIAL, "mmau_test_mini": OFFICIAL,
                      "audiospan": ("exact_letter", "accuracy", "exact_letter, AudioSpan App. C.1")}


def _benchmark_key(name: Optional[str]) -> str:
    return str(name or "").strip().lower().replace("-", "_")


def _accuracy_headline(entries: Sequence[Entry], benchmark: Optional[str]) -> str:
    """The accuracy of one set by its benchmark's own rule, naming the rule. A benchmark the table does not
    know shows the one rule it was scored with; several rules and no benchmark rule: n/a, naming them."""
    by_rule = {e.result.get("rule"): e for e in entries}
    known = BENCHMARK_ACCURACY.get(_benchmark_key(benchmark))
    if known is None:
        if len(by_rule) != 1:
            return f"n/a (no rule of its own for benchmark {benchmark!r}; scored with {', '.join(map(str, by_rule))})"
        rule, entry = next(iter(by_rule.items()))
        return f"{display(entry.result.get('accuracy'), 'accuracy', 'accuracy', entry.result)} ({rule})"
    rule, field_name, shown = known
    entry = by_rule.get(rule) if rule else next((e for e in entries if field_name in e.result), None)
    if entry is None or field_name not in entry.result:
        how = f"score with --extraction {rule} or all" if rule else "score it again with this version"
        return f"n/a ({shown} not scored: this set was scored with {', '.join(map(str, by_rule))}; {how})"
    return f"{display(entry.result.get(field_name), 'accuracy', 'accuracy', entry.result)} ({shown})"


def correct_legend(views: Sequence[RunView]) -> str:
    """What the item table's "correct" column and the leaderboard's accuracy mean for the open runs."""
    benchmarks = unique(_benchmark_key(e.benchmark or v.benchmark) for v in views for e in v.results.of("accuracy"))
    rules = "; ".join(f"{b}: {BENCHMARK_ACCURACY[b][2]}" if b in BENCHMARK_ACCURACY else f"{b or 'no benchmark'}: "
                      "the one rule it was scored with" for b in benchmarks)
    return ("**correct**: for each answer-extraction rule the output was scored with, whether the choice that "
            "rule extracts is the gold answer (`rule yes|no`; an anchor link: the Chain scorer's verdict). "
            "**accuracy (rule)** on the leaderboard is each benchmark's own rule"
            + (f" ({rules})" if rules else "") + "; `audioreason score --extraction all` scores every rule.")


def _headline(entry: Entry) -> tuple[str, str]:
    """(column, value text) of a scorer's headline for the leaderboard (accuracy: ``_accuracy_headline``)."""
    r = entry.result
    if entry.scorer == "aria":
        return "ARIA", display(r.get("aria"), "aria", "aria", r) + ("" if r.get("aria_complete", True) else
                                                                   f" (of {'+'.join(r.get('aria_metrics') or [])})")
    if entry.scorer == "mmar_rubrics":
        return "MMAR Rubrics", display(judged(r, "rubrics"), entry.scorer, "rubrics", r)
    if entry.scorer == "audiospan_rubric":
        return "AudioSpan Rubric", display(judged(r, "rubric"), entry.scorer, "rubric", r)
    if entry.scorer == "anchor_chain" and isinstance(r.get("chain"), Mapping):
        c = r["chain"]
        return "Chain", f"{display(c.get('chain'), entry.scorer, 'chain', c)} (random {display(c.get('random_chain'), entry.scorer, 'random_chain', c)})"
    if entry.scorer == "text_prior_decomposition":
        return "R_TP", display((r.get("text_prior") or {}).get("R_TP"), entry.scorer, "R_TP", r)
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


def _item_facets(view: RunView, row: Mapping[str, Any], modes: Mapping[tuple, Optional[str]]) -> dict[str, str]:
    item = view.items.get(str(row.get("id")), {})
    return {"category": str(item.get("category") or ""), "duration_tier": str(item.get("duration_tier") or ""),
            "operation": str(item.get("operation") or ""),
            "reasoning_mode": str(modes.get((row.get("model"), row.get("condition"), row.get("template"))) or "")}


ITEM_COLUMNS = ["run", "key", "id", "model", "condition", "template", "category", "tier", "operation", "mode",
                "correct", "ARIA", "rubric"]


def _correct(row: Mapping[str, Any]) -> str:
    """Each rule's verdict, named ("official yes, exact_letter no"); an anchor link's Chain verdict (see
    ``correct_legend``)."""
    verdicts = [(rule, v.get("correct")) for rule, v in (row.get("accuracy") or {}).items() if isinstance(v, Mapping)]
    if not verdicts and isinstance(row.get("anchor_chain"), Mapping):
        verdicts = [("chain", row["anchor_chain"].get("correct"))]
    return ", ".join(f"{rule} {'yes' if v else 'no'}" for rule, v in verdicts if v is not None)


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


def item_table(views: Sequence[RunView], filters: Optional[Mapping[str, Sequence[str]]] = None) -> list[list[str]]:
    """One row per scored output; ``filters`` keep the rows whose facet is one of the values given (an
    empty selection keeps every row)."""
    filters = {k: set(v) for k, v in (filters or {}).items() if v}
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise ValueError(f"unknown filters {sorted(unknown)}; filters are {', '.join(FILTERS)}")
    table = []
    for view in views:
        modes = view.modes()
        keys = unique([*view.rows, *view.outputs])
        for key in keys:
            row = view.rows.get(key) or {k: view.outputs[key].get(k) for k in ("key", "id", "model", "condition")}
            if "template" not in row and key in view.outputs:
                row["template"] = (view.outputs[key].get("template") or {}).get("name")
            facets = _item_facets(view, row, modes)
            if any(facets[name] not in allowed for name, allowed in filters.items()):
                continue
            aria = row.get("aria") if isinstance(row.get("aria"), Mapping) else {}
            table.append([view.name, key, str(row.get("id")), str(row.get("model")), str(row.get("condition") or ""),
                          str(row.get("template") or ""), facets["category"], facets["duration_tier"],
                          facets["operation"], facets["reasoning_mode"], _correct(row),
                          display(aria.get("aria"), "aria", "aria", aria) if aria else "", _rubric(row)])
    return table


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
    """Per-criterion verdicts with justifications, from any scorer's per-item output that carries them."""
    out = []
    for scorer in ("mmar_rubrics", "audiospan_rubric"):
        detail = row.get(scorer)
        if not isinstance(detail, Mapping):
            continue
        for rater in detail.get("raters") or []:
            for v in rater.get("verdicts") or []:
                out.append([scorer, str(rater.get("rater")), str(v.get("name")), str(v.get("score")),
                            str(v.get("justification") or "")])
        for n, reply in enumerate(detail.get("judge") or []):
            for c in ((reply.get("verdict") or {}).get("criteria") or []):
                out.append([scorer, str(n), str(c.get("index")), f"semantic {c.get('semantic')}, temporal "
                            f"{c.get('temporal')}", str(c.get("reason") or "")])  # the AudioSpan prompt's field
    return out


def item_detail(view: RunView, key: str) -> dict[str, Any]:
    """Everything the explorer shows for one output (a malformed record: a ResultsError naming the run)."""
    with reading(view.folder):
        return _item_detail(view, key)


def _item_detail(view: RunView, key: str) -> dict[str, Any]:
    from ..cot import parse_cot

    record = view.outputs.get(key, {})
    row = view.rows.get(key, {})
    item_id = str(row.get("id", record.get("id")))
    item = view.items.get(item_id, {})
    output = record.get("output")
    slots = parse_cot(output or "")
    answers = [[rule, str(v.get("choice")), str(v.get("method")), "yes" if v.get("correct") else "no"]
               for rule, v in (row.get("accuracy") or {}).items() if isinstance(v, Mapping)]
    aria = {m: row["aria"].get(m) for m in ("M1", "M2", "M3", "M4", "M5", "M6", "aria")} \
        if isinstance(row.get("aria"), Mapping) else {}
    audio = item.get("audio") if isinstance(item.get("audio"), str) and Path(item["audio"]).is_file() else None
    question = item.get("question") or ""
    choices = item.get("choices") or []
    header = (f"**{item_id}** ({view.name}; {row.get('model', record.get('model'))}, condition "
              f"{row.get('condition', record.get('condition'))})\n\n" + (f"**Q:** {question}\n\n" if question else "")
              + "".join(f"- {c}{'  (gold)' if c == item.get('answer') else ''}\n" for c in choices)
              + (f"\n**Reference:** {item.get('reference_answer')}\n" if item.get("reference_answer") else ""))
    if record.get("error"):
        header += f"\n**The model call failed:** {record['error']}\n"
    return {"header": header, "output": output or "", "audio": audio,
            "slots": [[name, ", ".join(slots.entities) if name == "entities" else getattr(slots, name)]
                      for name in SLOTS] + [["missing", ", ".join(slots.missing) or "none"]],
            "answers": answers, "aria": aria,
            "scores": {k: v for k, v in row.items() if k not in ("key", "id", "model", "condition", "template")},
            "verdicts": _verdicts(row),
            "timeline": timeline_html(number(item.get("duration_seconds")), _spans(item))}


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


__all__ = ["BENCHMARK_ACCURACY", "BENCHMARK_ITEMS_FILE", "FILTERS", "ITEM_COLUMNS", "LEADERBOARD_COLUMNS",
           "MAX_ZIP_BYTES", "MAX_ZIP_MEMBERS", "RUN_FOLDER_FILES", "RunView", "correct_legend", "export_bundle",
           "facet_values", "item_detail", "item_table", "leaderboard", "open_run", "open_runs", "stage_uploads",
           "timeline_html"]
