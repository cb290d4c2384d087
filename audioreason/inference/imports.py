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

import datetime as _dt
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from ..base.checksums import file_sha256
from ..base.schema import OutputRecord, RunSummary
from .import_formats import FORMATS, LMMS_TASKS, SCHEMAS, FormatError, NeedsOption, Prediction, read_file
from .lmms_reconcile import reconcile
from .prompts import EXTERNAL_TEMPLATE, get_template
from .protocol import run_protocol, with_protocol
from .runner import (
    OUTPUTS_FILE,
    RUN_FILE,
    RunConfig,
    git_commit,
    load_items_reported,
    package_versions,
    unit_key,
    write_outputs,
    write_run_file,
)

ADAPTER = "import"
EMPTY_ERROR = "imported: empty prediction"

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
    bad = [
        p
        for p in pending
        if not (0 <= p.doc_id < len(items)) or p.gold is None or not gold_agrees(p.gold, items[p.doc_id])
    ]
    if bad:
        raise FormatError(
            f"{path}: {len(pending)} row(s) carry no item id, and their doc_id is not the position "
            f"in --data for {len(bad)} of them ({bad[0].where}: doc_id {bad[0].doc_id}, target "
            f"{bad[0].gold!r}); log the samples with the doc (an older lmms-eval) or with an id"
        )
    for p in pending:
        p.id = str(items[p.doc_id]["id"])
    return len(pending)


@dataclass
class ImportOptions:
    fmt: str
    file: str
    benchmark: str
    data: str
    out: str
    model: Optional[str] = None
    condition: str = "full"
    template: Optional[str] = None  # one of ours when the predictions were made with it; else "external"
    on_missing_audio: str = "keep"  # raw folders: scoring the text needs no audio (ARIA's M1 counts it)
    match: str = "id"  # lmms-eval: "doc-order" pairs every row by doc_id (targets checked)


def template_entry(name: Optional[str]) -> dict[str, str]:
    if name is None or name == EXTERNAL_TEMPLATE:
        return {
            "name": EXTERNAL_TEMPLATE,
            "hash": EXTERNAL_TEMPLATE,
            "source": "made elsewhere: the prompt is not one of audioreason's templates",
        }
    t = get_template(name)
    return {"name": t.name, "hash": t.hash, "source": t.source}


def import_predictions(options: ImportOptions) -> dict[str, Any]:
    """Read, match and write the run folder; returns run.json's content. FormatError: the file's fault."""
    from ..data import benchmark_spec, is_raw_folder
    from .conditions import expand_condition

    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    benchmark = benchmark_spec(options.benchmark).name
    path, out = Path(options.file).expanduser(), Path(options.out).expanduser()
    template = template_entry(options.template)
    preds, info = read_file(options.fmt, path, benchmark)
    if options.match == "doc-order":  # the ids the task logged are not --data's: pair by position instead
        for p in preds:
            p.details.update({"lmms_id": p.id} if p.id is not None else {})
            p.id, p.doc_id = None, p.details["doc_id"]
    conditions = {}
    for p in preds:  # every condition named is one the runner knows, before the benchmark loads
        name = p.condition or options.condition
        if name not in conditions:
            try:
                parsed = expand_condition(name)
            except ValueError as err:
                raise FormatError(f"{path}: {p.where}: {err}") from None
            if len(parsed) != 1:
                raise FormatError(
                    f"{path}: {p.where}: condition {name!r} names {len(parsed)} conditions; give one "
                    f"(e.g. {parsed[0].name})"
                )
            conditions[name] = parsed[0].name
    if options.model is None and any(p.model is None for p in preds):
        raise NeedsOption(
            f"{path}: {next(p.where for p in preds if p.model is None)} names no model: give --model NAME"
        )
    # A raw folder's missing audio is kept by default (the predictions are made; only ARIA's M1 reads the
    # audio, and counts what is missing); a Hub-ready folder checks audio per item, so it takes no policy.
    policy = options.on_missing_audio if is_raw_folder(benchmark, options.data) else "raise"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        items, skipped = load_items_reported(benchmark, options.data, on_missing_audio=policy)
    info["load_warnings"] = [
        line.strip()
        for w in caught
        if issubclass(w.category, UserWarning)
        for line in str(w.message).splitlines()
        if line.strip()
    ]
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
            unmatched.append(
                {"id": p.id, "where": p.where, **({"reason": f"skipped at load: {left_out}"} if left_out else {})}
            )
            continue
        index, item = by_id[p.id]
        model, condition = p.model or options.model, conditions[p.condition or options.condition]
        if (model, condition, p.id) in chosen:
            first = chosen[(model, condition, p.id)][0]
            duplicates.append(
                {
                    "id": p.id,
                    "where": p.where,
                    "first": first.where,
                    "model": model,
                    "condition": condition,
                    "same_output": first.output == p.output,
                }
            )
            continue
        if p.gold is not None and not gold_agrees(p.gold, item):
            gold_differs.append({"id": p.id, "where": p.where, "file": p.gold, "benchmark": item.get("answer")})
        blank = p.output is None or not p.output.strip()
        if blank:
            empty.append({"id": p.id, "where": p.where})
        key = json_key(model, condition, template, p.id)
        record = OutputRecord(
            key=key,
            id=p.id,
            index=index,
            model=model,
            adapter=ADAPTER,
            condition=condition,
            template={"name": template["name"], "hash": template["hash"]},
            decoding=None,
            output=p.output if not blank else (p.output or ""),
            error=EMPTY_ERROR if blank else None,
            finish_reason=None,
            details={"imported": {"format": options.fmt, "where": p.where}, **p.details},
            audio=None,
            tokens={"prompt": None, "completion": None},
            timings=None,
            rank=None,
        ).to_dict()
        chosen[(model, condition, p.id)] = (p, record)
    if not chosen:
        example = f" (e.g. {unmatched[0]['id']!r}, {unmatched[0]['where']})" if unmatched else ""
        raise FormatError(
            f"{path}: no row matched an item of {options.benchmark} in {options.data}: "
            f"{len(unmatched)} unmatched{example}, {len(absent)} without a prediction, "
            f"{len(duplicates)} repeated; is it the right --benchmark and --data?"
        )
    order = {c: n for n, c in enumerate(dict.fromkeys(conditions.values()))}
    records = sorted((r for _, r in chosen.values()), key=lambda r: (r["index"], order[r["condition"]], r["model"]))
    if options.fmt == "lmms-eval":  # lmms-eval's own number beside the official rule's (marks guessed rows)
        info["lmms_eval"] = reconcile(records, {i: it for i, (_, it) in by_id.items()}, benchmark)
    sets = sorted({(r["model"], r["condition"]) for r in records}, key=lambda s: (order[s[1]], s[0]))
    have = {(r["model"], r["condition"], r["id"]) for r in records}
    missing = [
        {"model": m, "condition": c, "ids": [str(it["id"]) for it in items if (m, c, str(it["id"])) not in have]}
        for m, c in sets
    ]
    missing = [m for m in missing if m["ids"]]
    roles: dict[str, str] = {}
    for m, c in sets:  # the first model of each role names it, as a run's main and text-backbone models
        roles.setdefault("tb" if c == "tb" else "main", m)
    if "main" not in roles:
        roles = {"main": roles.get("tb") or options.model or preds[0].model or "", **roles}
    main = roles["main"]
    description = f"predictions imported from {path.name} ({options.fmt} format)"
    config = RunConfig(
        model=main,
        benchmark=benchmark,
        data=str(options.data),
        out=str(options.out),
        conditions=list(order),
        templates=[template["name"]],
        adapter=ADAPTER,
        on_missing_audio=policy,
        progress=False,
    ).to_dict()
    config["decoding"] = None  # made elsewhere: not known here
    config["format"] = options.fmt
    models = {
        role: {"name": name, "adapter": ADAPTER, "description": description, "max_audio_s": None, "sampling_rate": None}
        for role, name in roles.items()
    }
    failed = sum(r["error"] is not None for r in records)
    finished = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    summary = RunSummary(
        identity={
            "benchmark": benchmark,
            "decoding": None,
            "models": {role: {"name": m["name"], "max_audio_s": None} for role, m in models.items()},
        },
        config=config,
        models=models,
        templates=[template],
        versions=package_versions(),
        git=git_commit(),
        started=started,
        finished=finished,
        sessions=[{"started": started, "finished": finished, "world_size": 1, "ran": 0, "imported": len(records)}],
        counts={
            "units": len(items) * len(sets),
            "written": len(records),
            "missing": sum(len(m["ids"]) for m in missing),
            "ok": len(records) - failed,
            "failed": failed,
            "failed_by_kind": {"empty": failed} if failed else {},
            "not_applicable": {},
            "truncated": 0,
            "resumed": 0,
            "torn_lines": 0,
            "duplicates": len(duplicates),
            "skipped_at_load": len(skipped),
        },
        skipped_items=skipped,
        status="finished" if not missing else "incomplete",
        outputs=OUTPUTS_FILE,
        source={
            "format": options.fmt,
            "file": path.name,
            "path": str(path.resolve()),
            "sha256": file_sha256(path),
            "bytes": path.stat().st_size,
            "schema": SCHEMAS[options.fmt],
            **info,
            "counts": {
                "rows": len(preds),
                "imported": len(records),
                "unmatched": len(unmatched),
                "duplicates": len(duplicates),
                "empty": len(empty),
                "no_prediction": len(absent),
                "gold_differs": len(gold_differs),
                "matched_by_doc_order": matched_by_order,
            },
            "unmatched": unmatched,
            "duplicates": duplicates,
            "empty": empty,
            "no_prediction": absent,
            "gold_differs": gold_differs,
            "missing": missing,
        },
    ).to_dict()
    summary = with_protocol(
        summary,
        run_protocol(
            benchmark=benchmark,
            data=str(options.data),
            benchmark_config=None,
            item_ids=dict.fromkeys(r["id"] for r in records),
            templates=[template],
            conditions=list(order),
            decoding=None,
            text_backbone=roles.get("tb"),
            source=f"import ({options.fmt})",
        ),
    )
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


__all__ = [
    "ADAPTER",
    "EMPTY_ERROR",
    "FORMATS",
    "FormatError",
    "ImportOptions",
    "LMMS_TASKS",
    "NeedsOption",
    "RUN_FILE",
    "SCHEMAS",
    "gold_agrees",
    "import_predictions",
    "read_file",
    "template_entry",
]
