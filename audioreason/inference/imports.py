"""`audioreason import FORMAT FILE`: predictions made elsewhere as a run folder that `score`, `report` and the
explorer read like one `audioreason run` wrote (outputs.jsonl records of the runner's fields, run.json).

Formats and the fields read (docs/import.md gives an example of each and the schema's source):

- ``jsonl`` / ``csv``: one row per output: ``id``, ``output``, optional ``model`` and ``condition``.
- ``mmar``: the file MMAR's code/evaluation.py scores (github.com/ddlBoJack/MMAR): MMAR-meta.jsonl's records
  with ``answer_prediction`` (and ``thinking_prediction``, read by code/evaluation_rubrics.py); a JSON
  array or JSON Lines, as evaluation.py accepts both.
- ``mmau``: the file MMAU's evaluation.py scores (github.com/Sakshi113/MMAU): a JSON array of the benchmark's
  records with ``model_output`` (the key evaluation.py reads; its README names it ``model_prediction``, the
  key lmms-eval's MMAU submission file also writes, read when ``model_output`` is absent).
- ``lmms-eval``: a ``--log_samples`` file (``<date>_samples_<task>.jsonl``; EvolvingLMMs-Lab/lmms-eval,
  lmms_eval/evaluator.py and loggers/evaluation_tracker.py): ``doc_id``, ``target``, ``filtered_resps`` (the
  reply the task scored), ``resps`` (the raw reply, written only where it differs), and the item's id from
  ``doc`` (older versions log the doc) or from the task's own per-sample entry that copies the doc
  (``submission`` for mmau_*, ``mmar_accuracy`` for mmar). Only where no id is found is ``doc_id`` (the
  position in the task's Hub split) taken as the position in ``--data``, and then only if every such row's
  ``target`` agrees with that item's answer: the Hub split's order is not ours to assume.

Counted and listed in run.json's ``source`` and printed, never dropped silently: rows whose id is not in the
benchmark (unmatched), a second row for one output (duplicates; the first is kept), empty predictions
(imported as failed outputs: wrong in every denominator, as the official scorers count an empty reply),
rows without the prediction field (MMAR/MMAU: their scorers skip such rows, so they are not imported and the
item counts as missing), and rows whose gold answer differs from the benchmark's (another version of it).
"""
from __future__ import annotations

import csv
import datetime as _dt
import hashlib
import io
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from ..jsonl import json_type, read_json_file, read_json_objects
from .prompts import EXTERNAL_TEMPLATE, get_template
from .runner import (OUTPUTS_FILE, RUN_FILE, RunConfig, git_commit, load_items_reported, package_versions,
                     unit_key, write_run_file)

FORMATS = ("jsonl", "csv", "mmar", "mmau", "lmms-eval")
ADAPTER = "import"
SCHEMAS = {
    "jsonl": "audioreason (docs/import.md): id, output, optional model, condition",
    "csv": "audioreason (docs/import.md): id, output, optional model, condition",
    "mmar": "https://github.com/ddlBoJack/MMAR (README 'Test Your Model', code/evaluation.py, "
            "code/evaluation_rubrics.py)",
    "mmau": "https://github.com/Sakshi113/MMAU (README 'Evaluation', evaluation.py)",
    "lmms-eval": "https://github.com/EvolvingLMMs-Lab/lmms-eval (lmms_eval/evaluator.py log_samples, "
                 "lmms_eval/loggers/evaluation_tracker.py save_results_samples, tasks/mmau, tasks/mmar)",
}
# lmms-eval's task names for the benchmarks here (tasks/mmar/mmar.yaml, tasks/mmau/mmau_test_mini.yaml);
# mmau_test is the split whose answers are withheld: nothing to score it against.
LMMS_TASKS = {"mmar": "mmar", "mmau_test_mini": "mmau_test_mini", "mmau_test": None}
LMMS_ID_ENTRIES = ("submission", "mmar_accuracy")  # per-sample metric entries that copy the doc's id
EMPTY_ERROR = "imported: empty prediction"


class FormatError(ValueError):
    """The file is not in the format named (or its content cannot be used): a data error, exit status 1."""


class NeedsOption(ValueError):
    """The file leaves out what an option must then give (a model name): a usage error, exit status 2."""


@dataclass
class Prediction:
    where: str                       # "line N" / "entry N" in the file
    id: Optional[str]
    output: Optional[str]
    model: Optional[str] = None
    condition: Optional[str] = None
    gold: Optional[str] = None       # the answer the file itself carries, compared with the benchmark's
    details: dict[str, Any] = field(default_factory=dict)
    absent: bool = False             # the prediction field is missing (the official scorers skip the row)
    doc_id: Optional[int] = None     # lmms-eval, when no id was found in the row


def _text(value: Any, where: str, name: str, required: bool = False) -> Optional[str]:
    """A string field (None where absent and not ``required``); an id may be an integer."""
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int) if name == "id" else str):
        raise FormatError(f"{where}: {name} is {json_type(value)}, not a string")
    return str(value)


def _rows(path: Path) -> list[tuple[str, dict]]:
    """A JSON array of objects or JSON Lines of objects (by the first character), as (where, row)."""
    if path.read_bytes().lstrip()[:1] == b"[":
        array = read_json_file(path)
        bad = next((n for n, row in enumerate(array) if not isinstance(row, dict)), None)
        if bad is not None:
            raise FormatError(f"{path}: entry {bad} is {json_type(array[bad])}, not an object")
        return [(f"entry {n}", row) for n, row in enumerate(array)]
    return [(f"line {n}", row) for n, row in read_json_objects(path)[0]]


def _plain(rows: Sequence[tuple[str, dict]], path: Path) -> list[Prediction]:
    out = []
    for where, row in rows:
        for name in ("id", "output"):
            if name not in row:
                raise FormatError(f"{path}: {where} has no {name!r} field (the jsonl/csv format: id, output, "
                                  "optional model, condition)")
        out.append(Prediction(where, _text(row["id"], where, "id", True), _text(row["output"], where, "output"),
                              _text(row.get("model") or None, where, "model"),
                              _text(row.get("condition") or None, where, "condition")))
    return out


def read_csv(path: Path) -> list[Prediction]:
    text = path.read_bytes().decode("utf-8-sig")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames or not {"id", "output"} <= set(reader.fieldnames):
        raise FormatError(f"{path}: the header {reader.fieldnames or []} lacks id and output (the csv format: "
                          "id, output, optional model, condition)")
    rows = []
    for row in reader:
        if None in row:
            raise FormatError(f"{path}: line {reader.line_num} has more cells than the header")
        rows.append((f"line {reader.line_num}", row))
    return _plain(rows, path)


def read_official(path: Path, fmt: str) -> tuple[list[Prediction], dict[str, int]]:
    """MMAR's or MMAU's results file; also returns how many rows each prediction field came from."""
    keys = ("answer_prediction",) if fmt == "mmar" else ("model_output", "model_prediction")
    rows = _rows(path)
    used = {k: sum(k in row for _, row in rows) for k in keys}
    if rows and not any(used.values()):
        other = "mmau" if fmt == "mmar" and any("model_output" in r for _, r in rows) else \
            "mmar" if fmt == "mmau" and any("answer_prediction" in r for _, r in rows) else None
        raise FormatError(f"{path}: no row has {' or '.join(keys)}: not an {fmt.upper()} results file"
                          + (f" (it looks like the {other} format)" if other else ""))
    out = []
    for where, row in rows:
        if "id" not in row:
            raise FormatError(f"{path}: {where} has no 'id' (the benchmark's records carry one)")
        key = next((k for k in keys if k in row), None)
        p = Prediction(where, _text(row["id"], where, "id", True),
                       _text(row[key], where, key) if key else None, gold=_text(row.get("answer"), where, "answer"),
                       absent=key is None)
        if key and key != keys[0]:
            p.details["field"] = key
        if fmt == "mmar" and row.get("thinking_prediction") is not None:
            p.details["thinking_prediction"] = _text(row["thinking_prediction"], where, "thinking_prediction")
        out.append(p)
    return out, used


def _one_reply(value: Any, where: str, name: str) -> Optional[str]:
    """A generate_until reply: a string, or lists of one (older versions log [reply] or [[reply]])."""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, list):
        raise FormatError(f"{where}: {name} holds {len(value)} replies; import takes one generated reply per item "
                          "(a generate_until task)")
    return _text(value, where, name)


def lmms_task(path: Path) -> Optional[str]:
    match = re.match(r"^(?:.*_)?samples_(.+)\.jsonl$", path.name)
    return match.group(1) if match else None


def read_lmms(path: Path, benchmark: str) -> tuple[list[Prediction], Optional[str]]:
    task = lmms_task(path)
    if task in LMMS_TASKS and LMMS_TASKS[task] != benchmark:
        why = "its answers are withheld" if LMMS_TASKS[task] is None else f"that is the {LMMS_TASKS[task]} benchmark"
        raise FormatError(f"{path}: lmms-eval task {task!r} does not score --benchmark {benchmark} ({why})")
    out = []
    for n, row in read_json_objects(path)[0]:
        where = f"line {n}"
        if "doc_id" not in row or not ("filtered_resps" in row or "resps" in row):
            raise FormatError(f"{path}: {where} has no doc_id and filtered_resps: not an lmms-eval --log_samples "
                              "file")
        doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
        found = [doc.get("id")] + [row[k].get("id") for k in LMMS_ID_ENTRIES if isinstance(row.get(k), dict)]
        item_id = next((str(v) for v in found if isinstance(v, (str, int)) and str(v)), None)
        reply = _one_reply(row.get("filtered_resps", row.get("resps")), where, "filtered_resps")
        p = Prediction(where, item_id, reply, gold=_text(row.get("target"), where, "target"))
        if not isinstance(row["doc_id"], int) or isinstance(row["doc_id"], bool):
            raise FormatError(f"{path}: {where}: doc_id is {json_type(row['doc_id'])}, not an integer")
        p.details["doc_id"] = row["doc_id"]
        if item_id is None:
            p.doc_id = row["doc_id"]
        if "resps" in row and "filtered_resps" in row:
            raw = _one_reply(row["resps"], where, "resps")
            if raw != reply:
                p.details["raw_response"] = raw
        out.append(p)
    return out, task


def read_file(fmt: str, path: Path, benchmark: str) -> tuple[list[Prediction], dict[str, Any]]:
    """The predictions of ``path`` in format ``fmt`` and what the source records about them."""
    info: dict[str, Any] = {}
    try:
        if fmt == "jsonl":
            preds = _plain(_rows(path), path)
        elif fmt == "csv":
            preds = read_csv(path)
        elif fmt in ("mmar", "mmau"):
            preds, info["prediction_fields"] = read_official(path, fmt)
        elif fmt == "lmms-eval":
            preds, info["lmms_task"] = read_lmms(path, benchmark)
        else:
            raise FormatError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    except UnicodeDecodeError as err:
        raise FormatError(f"{path}: not valid UTF-8 ({err.reason} at byte {err.start})") from None
    except FormatError:
        raise
    except ValueError as err:  # the JSON Lines reader names the line
        raise FormatError(f"{err} (not a {fmt} file)") from None
    if not preds:
        raise FormatError(f"{path}: no predictions in the file")
    return preds, info


# ---------------------------------------------------------------------------------------------
# Matching and the run folder
# ---------------------------------------------------------------------------------------------

def _same(a: str, b: str) -> bool:
    return a.strip().casefold() == b.strip().casefold()


def gold_agrees(gold: str, item: dict) -> bool:
    """The file's answer is the item's: its text, or (lmms-eval's MMAR task) the answer's option letter."""
    choices = [str(c) for c in item.get("choices") or []]
    letter = chr(65 + choices.index(item["answer"])) if item.get("answer") in choices else None
    return _same(gold, str(item.get("answer") or "")) or (letter is not None and _same(gold, letter))


def _match_doc_order(preds: Sequence[Prediction], items: Sequence[dict], path: Path) -> int:
    """Give the rows without an id the item at their doc_id, if every one's target agrees with it."""
    pending = [p for p in preds if p.id is None]
    if not pending:
        return 0
    bad = [p for p in pending if not (0 <= p.doc_id < len(items)) or p.gold is None
           or not gold_agrees(p.gold, items[p.doc_id])]
    if bad:
        raise FormatError(f"{path}: {len(pending)} row(s) carry no item id, and their doc_id is not the position "
                          f"in --data for {len(bad)} of them ({bad[0].where}: doc_id {bad[0].doc_id}, target "
                          f"{bad[0].gold!r}); log the samples with the doc (an older lmms-eval) or with an id")
    for p in pending:
        p.id = str(items[p.doc_id]["id"])
    return len(pending)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class ImportOptions:
    fmt: str
    file: str
    benchmark: str
    data: str
    out: str
    model: Optional[str] = None
    condition: str = "full"
    template: Optional[str] = None     # one of ours when the predictions were made with it; else "external"
    on_missing_audio: str = "keep"     # raw folders: scoring the text needs no audio (ARIA's M1 counts it)


def template_entry(name: Optional[str]) -> dict[str, str]:
    if name is None or name == EXTERNAL_TEMPLATE:
        return {"name": EXTERNAL_TEMPLATE, "hash": EXTERNAL_TEMPLATE,
                "source": "made elsewhere: the prompt is not one of audioreason's templates"}
    t = get_template(name)
    return {"name": t.name, "hash": t.hash, "source": t.source}


def import_predictions(options: ImportOptions) -> dict[str, Any]:
    """Read, match and write the run folder; returns run.json's content. FormatError: the file's fault."""
    from ..data import benchmark_spec, is_raw_folder
    from .conditions import parse_condition

    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    benchmark = benchmark_spec(options.benchmark).name
    path, out = Path(options.file).expanduser(), Path(options.out).expanduser()
    template = template_entry(options.template)
    preds, info = read_file(options.fmt, path, benchmark)
    conditions = {}
    for p in preds:  # every condition named is one the runner knows, before the benchmark loads
        name = p.condition or options.condition
        if name not in conditions:
            try:
                parsed = parse_condition(name)
            except ValueError as err:
                raise FormatError(f"{path}: {p.where}: {err}") from None
            if len(parsed) != 1:
                raise FormatError(f"{p.where}: condition {name!r} names {len(parsed)} conditions; give one (e.g. "
                                  f"{parsed[0].name})")
            conditions[name] = parsed[0].name
    if options.model is None and any(p.model is None for p in preds):
        raise NeedsOption(f"{path}: {next(p.where for p in preds if p.model is None)} names no model: give --model "
                          "NAME")
    # A raw folder's missing audio is kept by default (the predictions are made; only ARIA's M1 reads the
    # audio, and counts what is missing); a Hub-ready folder checks audio per item, so it takes no policy.
    policy = options.on_missing_audio if is_raw_folder(benchmark, options.data) else "raise"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        items, skipped = load_items_reported(benchmark, options.data, on_missing_audio=policy)
    info["load_warnings"] = [line.strip() for w in caught if issubclass(w.category, UserWarning)
                             for line in str(w.message).splitlines() if line.strip()]
    by_id = {str(it["id"]): (n, it) for n, it in enumerate(items)}
    matched_by_order = _match_doc_order(preds, items, path)
    unmatched, duplicates, empty, absent, gold_differs = [], [], [], [], []
    chosen: dict[tuple, tuple[Prediction, dict]] = {}
    for p in preds:
        if p.absent:
            absent.append({"id": p.id, "where": p.where})
            continue
        if p.id not in by_id:
            left_out = next((i["reason"] for i in skipped if str(i["id"]) == p.id), None)
            unmatched.append({"id": p.id, "where": p.where,
                              **({"reason": f"skipped at load: {left_out}"} if left_out else {})})
            continue
        index, item = by_id[p.id]
        model, condition = p.model or options.model, conditions[p.condition or options.condition]
        if (model, condition, p.id) in chosen:
            first = chosen[(model, condition, p.id)][0]
            duplicates.append({"id": p.id, "where": p.where, "first": first.where, "model": model,
                               "condition": condition, "same_output": first.output == p.output})
            continue
        if p.gold is not None and not gold_agrees(p.gold, item):
            gold_differs.append({"id": p.id, "where": p.where, "file": p.gold, "benchmark": item.get("answer")})
        blank = p.output is None or not p.output.strip()
        if blank:
            empty.append({"id": p.id, "where": p.where})
        key = json_key(model, condition, template, p.id)
        record = {"key": key, "id": p.id, "index": index, "model": model, "adapter": ADAPTER,
                  "condition": condition, "template": {"name": template["name"], "hash": template["hash"]},
                  "decoding": None, "output": p.output if not blank else (p.output or ""),
                  "error": EMPTY_ERROR if blank else None, "finish_reason": None,
                  "details": {"imported": {"format": options.fmt, "where": p.where}, **p.details},
                  "audio": None, "tokens": {"prompt": None, "completion": None}, "timings": None, "rank": None}
        chosen[(model, condition, p.id)] = (p, record)
    if not chosen:
        example = f" (e.g. {unmatched[0]['id']!r}, {unmatched[0]['where']})" if unmatched else ""
        raise FormatError(f"{path}: no row matched an item of {options.benchmark} in {options.data}: "
                          f"{len(unmatched)} unmatched{example}, {len(absent)} without a prediction, "
                          f"{len(duplicates)} repeated; is it the right --benchmark and --data?")
    order = {c: n for n, c in enumerate(dict.fromkeys(conditions.values()))}
    records = sorted((r for _, r in chosen.values()), key=lambda r: (r["index"], order[r["condition"]], r["model"]))
    sets = sorted({(r["model"], r["condition"]) for r in records}, key=lambda s: (order[s[1]], s[0]))
    have = {(r["model"], r["condition"], r["id"]) for r in records}
    missing = [{"model": m, "condition": c, "ids": [str(it["id"]) for it in items if (m, c, str(it["id"])) not in have]}
               for m, c in sets]
    missing = [m for m in missing if m["ids"]]
    roles: dict[str, str] = {}
    for m, c in sets:  # the first model of each role names it, as a run's main and text-backbone models
        roles.setdefault("tb" if c == "tb" else "main", m)
    if "main" not in roles:
        roles = {"main": roles.get("tb") or options.model or preds[0].model or "", **roles}
    main = roles["main"]
    description = f"predictions imported from {path.name} ({options.fmt} format)"
    config = RunConfig(model=main, benchmark=benchmark, data=str(options.data), out=str(options.out),
                       conditions=list(order), templates=[template["name"]], adapter=ADAPTER,
                       on_missing_audio=policy, progress=False).to_dict()
    config["decoding"] = None  # made elsewhere: not known here
    config["format"] = options.fmt
    models = {role: {"name": name, "adapter": ADAPTER, "description": description, "max_audio_s": None,
                     "sampling_rate": None} for role, name in roles.items()}
    failed = sum(r["error"] is not None for r in records)
    finished = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    summary = {
        "identity": {"benchmark": benchmark, "decoding": None,
                     "models": {role: {"name": m["name"], "max_audio_s": None} for role, m in models.items()}},
        "config": config, "models": models, "templates": [template],
        "versions": package_versions(), "git": git_commit(), "started": started, "finished": finished,
        "sessions": [{"started": started, "finished": finished, "world_size": 1, "ran": 0,
                      "imported": len(records)}],
        "counts": {"units": len(items) * len(sets), "written": len(records),
                   "missing": sum(len(m["ids"]) for m in missing), "ok": len(records) - failed, "failed": failed,
                   "failed_by_kind": {"empty": failed} if failed else {}, "not_applicable": {}, "truncated": 0,
                   "resumed": 0, "torn_lines": 0, "duplicates": len(duplicates), "skipped_at_load": len(skipped)},
        "skipped_items": skipped,
        "status": "finished" if not missing else "incomplete",
        "outputs": OUTPUTS_FILE,
        "source": {"format": options.fmt, "file": path.name, "path": str(path.resolve()), "sha256": sha256_file(path),
                   "bytes": path.stat().st_size, "schema": SCHEMAS[options.fmt], **info,
                   "counts": {"rows": len(preds), "imported": len(records), "unmatched": len(unmatched),
                              "duplicates": len(duplicates), "empty": len(empty), "no_prediction": len(absent),
                              "gold_differs": len(gold_differs), "matched_by_doc_order": matched_by_order},
                   "unmatched": unmatched, "duplicates": duplicates, "empty": empty, "no_prediction": absent,
                   "gold_differs": gold_differs, "missing": missing},
    }
    write_outputs(out, records)
    write_run_file(out, summary)
    return summary


def json_key(model: str, condition: str, template: dict[str, str], item_id: str) -> str:
    """The runner's output key (``unit_key``) for a template given by name and hash."""
    return unit_key(model, condition, _Named(template["name"], template["hash"]), item_id)


@dataclass(frozen=True)
class _Named:
    name: str
    hash: str


def write_outputs(out: Path, records: Sequence[dict]) -> None:
    import json
    import os

    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (OUTPUTS_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(tmp, out / OUTPUTS_FILE)


__all__ = ["ADAPTER", "FORMATS", "FormatError", "ImportOptions", "NeedsOption", "LMMS_TASKS", "RUN_FILE", "gold_agrees",
           "import_predictions", "read_file"]
