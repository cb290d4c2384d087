"""The predictions files `audioreason import` reads (the formats, their fields and sources: ``imports`` and
docs/import.md), each as ``Prediction`` rows; a file not in its format is a ``FormatError`` naming the line or
entry and the field."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from audioreason.base import jsonl
from audioreason.base.jsonl import json_type, read_json_file, read_json_objects

FORMATS = ("jsonl", "csv", "mmar", "mmau", "lmms-eval")
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
# lmms-eval's own per-sample verdict: entry -> (its 0/1 score field, the field naming what it parsed); MMAU's
# parsed answer is in the submission entry (mmau_process_results writes doc["model_prediction"]).
LMMS_METRICS = {"mmar_accuracy": ("score", "prediction"), "accuracy": ("overall", "model_prediction")}


class FormatError(ValueError):
    """The file is not in the format named (or its content cannot be used): a data error, exit status 1."""


class _FieldError(FormatError):
    """A field of the wrong kind, named by its line or entry; ``read_file`` adds the file's name."""


class NeedsOption(ValueError):
    """The file leaves out what an option must then give (a model name): a usage error, exit status 2."""


@dataclass
class Prediction:
    where: str  # "line N" / "entry N" in the file
    id: Optional[str]
    output: Optional[str]
    model: Optional[str] = None
    condition: Optional[str] = None
    gold: Optional[str] = None  # the answer the file itself carries, compared with the benchmark's
    details: dict[str, Any] = field(default_factory=dict)
    absent: bool = False  # the prediction field is missing (the official scorers skip the row)
    doc_id: Optional[int] = None  # lmms-eval, when no id was found in the row


def _text(value: Any, where: str, name: str, required: bool = False) -> Optional[str]:
    """A string field (None where absent and not ``required``); an id may be an integer."""
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int) if name == "id" else str):
        raise _FieldError(f"{where}: {name} is {json_type(value)}, not a string")
    return str(value)


def _rows(path: Path) -> list[tuple[str, dict]]:
    """A JSON array of objects or JSON Lines of objects (by the first character), as (where, row)."""
    if _first_byte(path) == b"[":
        array = read_json_file(path)
        bad = next((n for n, row in enumerate(array) if not isinstance(row, dict)), None)
        if bad is not None:
            raise FormatError(f"{path}: entry {bad} is {json_type(array[bad])}, not an object")
        return [(f"entry {n}", row) for n, row in enumerate(array)]
    return [(f"line {n}", row) for n, row in read_json_objects(path)[0]]


def _first_byte(path: Path) -> bytes:
    """The file's first byte that is not white space (b"" if none), read without reading the file whole."""
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            if block.strip():
                return block.lstrip()[:1]
    return b""


def _plain(rows: Sequence[tuple[str, dict]], path: Path) -> list[Prediction]:
    out = []
    for where, row in rows:
        for name in ("id", "output"):
            if name not in row:
                raise FormatError(
                    f"{path}: {where} has no {name!r} field (the jsonl/csv format: id, output, "
                    "optional model, condition)"
                )
        out.append(
            Prediction(
                where,
                _text(row["id"], where, "id", True),
                _text(row["output"], where, "output"),
                _text(row.get("model") or None, where, "model"),
                _text(row.get("condition") or None, where, "condition"),
            )
        )
    return out


def read_csv(path: Path) -> list[Prediction]:
    text = path.read_bytes().decode("utf-8-sig")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    # csv's own bound on a cell (128 KiB) is below a long chain of thought: a cell may be as long as a JSON line
    previous = csv.field_size_limit(jsonl.MAX_LINE_BYTES)
    try:
        if not reader.fieldnames or not {"id", "output"} <= set(reader.fieldnames):
            raise FormatError(
                f"{path}: the header {reader.fieldnames or []} lacks id and output (the csv format: "
                "id, output, optional model, condition)"
            )
        rows = []
        for row in reader:
            if None in row:
                raise FormatError(f"{path}: line {reader.line_num} has more cells than the header")
            rows.append((f"line {reader.line_num}", row))
    except csv.Error as err:  # a cell over the bound, a quote left open
        raise FormatError(f"{path}: line {reader.line_num + 1}: {err}") from None
    finally:
        csv.field_size_limit(previous)
    return _plain(rows, path)


def read_official(path: Path, fmt: str) -> tuple[list[Prediction], dict[str, int]]:
    """MMAR's or MMAU's results file; also returns how many rows each prediction field came from."""
    keys = ("answer_prediction",) if fmt == "mmar" else ("model_output", "model_prediction")
    rows = _rows(path)
    used = {k: sum(k in row for _, row in rows) for k in keys}
    if rows and not any(used.values()):
        other = (
            "mmau"
            if fmt == "mmar" and any("model_output" in r for _, r in rows)
            else "mmar"
            if fmt == "mmau" and any("answer_prediction" in r for _, r in rows)
            else None
        )
        raise FormatError(
            f"{path}: no row has {' or '.join(keys)}: not an {fmt.upper()} results file"
            + (f" (it looks like the {other} format)" if other else "")
        )
    out = []
    for where, row in rows:
        if "id" not in row:
            raise FormatError(f"{path}: {where} has no 'id' (the benchmark's records carry one)")
        key = next((k for k in keys if k in row), None)
        p = Prediction(
            where,
            _text(row["id"], where, "id", True),
            _text(row[key], where, key) if key else None,
            gold=_text(row.get("answer"), where, "answer"),
            absent=key is None,
        )
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
        raise _FieldError(
            f"{where}: {name} holds {len(value)} replies; import takes one generated reply per item "
            "(a generate_until task)"
        )
    return _text(value, where, name)


def lmms_task(path: Path) -> Optional[str]:
    match = re.match(r"^(?:.*_)?samples_(.+)\.jsonl$", path.name)
    return match.group(1) if match else None


def _lmms_metric(row: dict, where: str) -> Optional[dict[str, Any]]:
    """lmms-eval's own per-sample verdict, where the task logged one: (entry, field) of LMMS_METRICS."""
    for name, (key, prediction) in LMMS_METRICS.items():
        entry = row.get(name)
        if isinstance(entry, dict) and key in entry:
            score = entry[key]
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
                raise _FieldError(f"{where}: {name}.{key} is {json_type(score)} {score!r}, not a score in [0, 1]")
            source = row.get("submission") if name == "accuracy" else entry
            guess = source.get(prediction) if isinstance(source, dict) else None
            return {
                "metric": name,
                "score": float(score),
                "prediction": str(guess) if isinstance(guess, (str, int)) else None,
            }
    return None


def read_lmms(path: Path, benchmark: str) -> tuple[list[Prediction], Optional[str]]:
    task = lmms_task(path)
    if task in LMMS_TASKS and LMMS_TASKS[task] != benchmark:
        why = "its answers are withheld" if LMMS_TASKS[task] is None else f"that is the {LMMS_TASKS[task]} benchmark"
        raise FormatError(f"{path}: lmms-eval task {task!r} does not score --benchmark {benchmark} ({why})")
    out = []
    for n, row in read_json_objects(path)[0]:
        where = f"line {n}"
        if "doc_id" not in row or not ("filtered_resps" in row or "resps" in row):
            raise FormatError(f"{path}: {where} has no doc_id and filtered_resps: not an lmms-eval --log_samples file")
        doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
        found = [doc.get("id")] + [row[k].get("id") for k in LMMS_ID_ENTRIES if isinstance(row.get(k), dict)]
        item_id = next((str(v) for v in found if isinstance(v, (str, int)) and str(v)), None)
        # The raw reply (resps) is what the official scorers read; lmms-eval logs it only where its filters
        # (reasoning tags removed, ...) changed it, and scores the filtered one, kept beside it.
        raw_field = "resps" if "resps" in row else "filtered_resps"
        reply = _one_reply(row[raw_field], where, raw_field)
        p = Prediction(where, item_id, reply, gold=_text(row.get("target"), where, "target"))
        if not isinstance(row["doc_id"], int) or isinstance(row["doc_id"], bool):
            raise FormatError(f"{path}: {where}: doc_id is {json_type(row['doc_id'])}, not an integer")
        p.details["doc_id"] = row["doc_id"]
        if item_id is None:
            p.doc_id = row["doc_id"]
        if "resps" in row and "filtered_resps" in row:
            filtered = _one_reply(row["filtered_resps"], where, "filtered_resps")
            if filtered != reply:
                p.details["filtered_response"] = filtered
        metric = _lmms_metric(row, where)
        if metric is not None:
            p.details["lmms_eval"] = metric
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
    except _FieldError as err:
        raise FormatError(f"{path}: {err}") from None
    except FormatError:
        raise
    except ValueError as err:  # the JSON reader names the file and the line or key
        raise FormatError(f"{err} (read as the {fmt} format)") from None
    if not preds:
        raise FormatError(f"{path}: no predictions in the file")
    return preds, info


__all__ = ["FORMATS", "FormatError", "LMMS_TASKS", "NeedsOption", "Prediction", "SCHEMAS", "lmms_task", "read_file"]
