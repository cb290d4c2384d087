"""AudioSpan anchor Chain (Eq. 3) and native MCQ Accuracy (Eq. 1): answer parsing, chain validation,
breakdowns. The formulas are in ``audioreason.scorers.anchor_chain.formulas``.

Answer parsing (the C.1 MCQ template asks for "ONLY the option letter"):

* ``parse="exact"`` (default, the paper's "matched exactly against the key"): the reply with leading
  and trailing whitespace removed must be exactly one upper-case option letter within range ("B").
  "b", "B.", "(B)", "The answer is B" and "" are *unparsed*. Case-sensitive because the options are
  lettered in upper case.
* ``parse="tolerant"``: the core's hybrid extractor (``audioreason.text.answers.extract_hybrid``: bare or
  bracketed letter, "the answer is B", a leading "B." / "(B)", then the choice text).

An unparsed reply is scored wrong and counted (``unparsed``, and per link for chains).

Scale: every score, rate and baseline is a fraction in [0, 1] (``audioreason.base.scale``; the paper prints 100
times these), computed exactly and returned as the nearest float.

Items are checked at the boundary (``check_items``): each needs ``choices`` (a list of at least two
strings) and a gold answer (``answer`` as choice text or letter, or ``answer_index``); ids, where given,
must be distinct (a repeated id would count one question twice). A bad item is one ValueError naming it
(position and id) and the field.
"""

from __future__ import annotations

import numbers
from collections import defaultdict
from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional, Sequence

from audioreason.base.scale import floats
from audioreason.base.schema import ExtractedAnswer
from audioreason.scorers.anchor_chain.formulas import (
    LINKS,
    accuracy,
    chain_score,
    grounding_split,
    mean,
    per_link_accuracy,
    random_chain_expectation,
)
from audioreason.scorers.common import check_distinct_id
from audioreason.scorers.common import item_where as _where
from audioreason.text.answers import UNANSWERED, extract_hybrid
from audioreason.text.cot import LETTERS

PARSE_MODES = ("exact", "tolerant")
CHAIN_BREAKDOWNS = ("operation", "duration_tier", "language")
MCQ_BREAKDOWNS = ("duration_tier", "language", "cognitive_level", "dimension")
OPERATIONS = ("addition", "deletion", "modification")


def parse_answer(reply: Any, choices: Sequence[str], parse: str = "exact") -> ExtractedAnswer:
    """The option a reply names, under ``parse`` ("exact" or "tolerant"); index None when unparsed."""
    if parse not in PARSE_MODES:
        raise ValueError(f"parse must be one of {PARSE_MODES}, got {parse!r}")
    if not isinstance(reply, str):
        return ExtractedAnswer(None, UNANSWERED)
    if parse == "tolerant":
        return extract_hybrid(reply, list(choices))
    text = reply.strip()
    if len(text) == 1 and text in LETTERS[: len(choices)]:
        index = LETTERS.index(text)
        return ExtractedAnswer(index, "exact", text, choices[index])
    return ExtractedAnswer(None, UNANSWERED, text)


def check_items(items: Sequence[Any]) -> None:
    """Refuse items the scorers cannot use, with one ValueError naming the item (position and id) and the
    field: not a dict, no ``choices`` or choices that are not a list of strings, no gold answer, an id
    already used by another item. ``gold_index`` checks the rest (at least two choices, a usable answer)."""
    seen: dict[str, int] = {}
    for n, item in enumerate(items):
        where = _where(n, item)
        if not isinstance(item, Mapping):
            raise ValueError(f"{where}: expected an MCQ record (a dict), got {type(item).__name__}")
        choices = item.get("choices")
        if choices is None:
            raise ValueError(f"{where}: the field 'choices' is missing")
        if (
            isinstance(choices, (str, bytes, Mapping))
            or not isinstance(choices, Iterable)
            or not all(isinstance(c, str) for c in choices)
        ):
            raise ValueError(f"{where}: 'choices' must be a list of strings, got {choices!r}")
        if item.get("answer") is None and item.get("answer_index") is None:
            raise ValueError(
                f"{where}: the field 'answer' is missing (give the gold choice text or letter, or answer_index)"
            )
        if item.get("id") is not None:
            check_distinct_id(seen, n, item, where)


def gold_index(item: Mapping[str, Any], where: Optional[str] = None) -> int:
    """The gold option index: ``answer_index`` when >= 0, else ``answer`` as a choice text or a letter.
    ``where`` names the item in errors (default: its id)."""
    name = where or f"item {item.get('id', item.get('chain_id'))!r}"
    choices = list(item.get("choices") or [])
    if len(choices) < 2:
        raise ValueError(f"{name}: an MCQ needs at least 2 choices, got {len(choices)}")
    idx = item.get("answer_index")
    if isinstance(idx, int) and not isinstance(idx, bool) and idx >= 0:
        if idx >= len(choices):
            raise ValueError(f"{name}: answer_index {idx} is out of range for {len(choices)} choices")
        return idx
    answer = item.get("answer")
    if isinstance(answer, str):
        stripped = answer.strip()
        if stripped in [c.strip() for c in choices]:
            return [c.strip() for c in choices].index(stripped)
        if len(stripped) == 1 and stripped.upper() in LETTERS[: len(choices)]:
            return LETTERS.index(stripped.upper())
    raise ValueError(f"{name}: no usable gold answer (answer={answer!r}, answer_index={idx!r})")


def _score_rows(items: Sequence[Mapping[str, Any]], predictions: Sequence[Any], parse: str) -> list[dict]:
    if len(items) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(items)} items")
    check_items(items)
    rows = []
    for n, (item, reply) in enumerate(zip(items, predictions)):
        gold = gold_index(item, _where(n, item))
        got = parse_answer(reply, item["choices"], parse)
        rows.append(
            {
                "item": item,
                "pred_index": got.index,
                "method": got.method,
                "gold_index": gold,
                "parsed": got.index is not None,
                "correct": got.index == gold,
                "n_options": len(item["choices"]),
            }
        )
    return rows


def _group_by(rows: Sequence[dict], field: str, summarise) -> dict[str, dict]:
    groups: dict[str, list] = defaultdict(list)
    for row in rows:
        value = row["item"].get(field) if "item" in row else row.get(field)
        if value not in (None, ""):
            groups[str(value)].append(row)
    return {key: summarise(groups[key]) for key in sorted(groups)}


# ---------------------------------------------------------------------------------------------
# Chains
# ---------------------------------------------------------------------------------------------


def build_chains(items: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """Row indices of each chain, in order of first appearance; raises ValueError naming the chain for a
    missing, duplicated, out-of-range or out-of-order link, more than 3 links, or inconsistent metadata."""
    order: list[str] = []
    members: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        cid = item.get("chain_id")
        if cid in (None, ""):
            raise ValueError(f"item {item.get('id', i)!r} (row {i}) has no chain_id")
        cid = str(cid)
        if cid not in members:
            order.append(cid)
            members[cid] = []
        members[cid].append(i)
    chains = []
    for cid in order:
        rows = members[cid]
        positions = []
        for i in rows:
            pos = items[i].get("link_position")
            if isinstance(pos, bool) or not isinstance(pos, numbers.Integral) or pos not in (1, 2, 3):
                raise ValueError(
                    f"chain {cid!r}: item {items[i].get('id', i)!r} has link_position {pos!r}, expected 1, 2 or 3"
                )
            positions.append(int(pos))
        if len(rows) > 3:
            raise ValueError(f"chain {cid!r} has {len(rows)} links (positions {positions}), expected 3")
        dup = sorted({p for p in positions if positions.count(p) > 1})
        if dup:
            raise ValueError(f"chain {cid!r} has duplicated link(s) {dup} (positions {positions})")
        missing = sorted({1, 2, 3} - set(positions))
        if missing:
            raise ValueError(f"chain {cid!r} is missing link(s) {missing} (positions {positions})")
        if positions != [1, 2, 3]:
            raise ValueError(
                f"chain {cid!r} has its links out of order in the input: positions {positions}, expected [1, 2, 3]"
            )
        for field in CHAIN_BREAKDOWNS:
            values = {items[i].get(field) for i in rows}
            if len(values) > 1:
                raise ValueError(
                    f"chain {cid!r} has different {field} values across its links: {sorted(map(str, values))}"
                )
        chains.append(rows)
    return chains


def _chain_summary(chains: Sequence[dict]) -> dict[str, Any]:
    links = [c["links"] for c in chains]
    out = {
        "chain": mean([c["chain"] for c in chains]),
        "random_chain": mean([c["random_chain"] for c in chains]),
        "n": len(chains),
    }
    out.update(per_link_accuracy(links))
    return out


def score_anchor_chain(
    items: Sequence[Mapping[str, Any]], predictions: Sequence[Any], *, parse: str = "exact", return_items: bool = False
) -> dict[str, Any]:
    """Chain (Eq. 3), per-link P/U/R, the D.5 grounding split, breakdowns by operation, duration tier and
    language, the random baseline beside each score, and unparsed counts (overall and per link).

    ``items``: one dict per link with ``chain_id``, ``link_position`` (1 P, 2 U, 3 R, in this order in the
    input), ``choices`` and ``answer`` / ``answer_index``; optionally ``id``, ``operation``,
    ``duration_tier``, ``language``. ``predictions``: the model's raw reply per item.
    """
    rows = _score_rows(items, predictions, parse)
    chains = []
    for idx in build_chains(items):
        first = items[idx[0]]
        links = [rows[i]["correct"] for i in idx]
        chains.append(
            {
                "chain_id": str(first["chain_id"]),
                "links": links,
                "chain": chain_score(links),
                "random_chain": random_chain_expectation([rows[i]["n_options"] for i in idx]),
                "unparsed": [not rows[i]["parsed"] for i in idx],
                **{f: first.get(f) for f in CHAIN_BREAKDOWNS},
            }
        )
    result = _chain_summary(chains)
    result["grounding"] = grounding_split([c["links"] for c in chains])
    for field in CHAIN_BREAKDOWNS:
        result[f"by_{field}"] = _group_by(chains, field, _chain_summary)
    result["unparsed"] = sum(not r["parsed"] for r in rows)
    result["unparsed_by_link"] = {name: sum(c["unparsed"][i] for c in chains) for i, name in enumerate(LINKS)}
    result["n_items"] = len(rows)
    result["parse"] = parse
    if return_items:
        result["chains"] = chains
    return floats(result)


# ---------------------------------------------------------------------------------------------
# Native MCQ Accuracy
# ---------------------------------------------------------------------------------------------


def _mcq_summary(rows: Sequence[dict]) -> dict[str, Any]:
    return {
        "accuracy": accuracy([r["correct"] for r in rows]),
        "random_accuracy": mean([Fraction(1, r["n_options"]) for r in rows]),
        "unparsed": sum(not r["parsed"] for r in rows),
        "n": len(rows),
    }


def score_mcq_accuracy(
    items: Sequence[Mapping[str, Any]], predictions: Sequence[Any], *, parse: str = "exact", return_items: bool = False
) -> dict[str, Any]:
    """Native MCQ Accuracy (Eq. 1) with the random baseline (mean 1/n_options), unparsed count and
    breakdowns by duration tier, language, cognitive level and dimension."""
    rows = _score_rows(items, predictions, parse)
    result = _mcq_summary(rows)
    for field in MCQ_BREAKDOWNS:
        result[f"by_{field}"] = _group_by(rows, field, _mcq_summary)
    result["parse"] = parse
    if return_items:
        result["items"] = [
            {
                "id": r["item"].get("id"),
                "pred_index": r["pred_index"],
                "gold_index": r["gold_index"],
                "correct": r["correct"],
                "method": r["method"],
            }
            for r in rows
        ]
    return floats(result)


# The evaluate module's (``metrics/anchor_chain``) tasks: the per-item columns each reads besides references,
# choices and item_id.
TASK_COLUMNS = {"chain": ("chain_id", "link_position") + CHAIN_BREAKDOWNS, "accuracy": MCQ_BREAKDOWNS}


def check_task_columns(task: str, columns: Mapping[str, Optional[Sequence[Any]]]) -> None:
    """A task of ``TASK_COLUMNS``, given only its columns (a column None: not given)."""
    _task_scorer(task)
    unknown = {k for k, v in columns.items() if v is not None} - set(TASK_COLUMNS[task])
    if unknown:
        raise ValueError(f"unknown argument(s) for task={task!r}: {sorted(unknown)}")


def score_task(
    task: str,
    items: Sequence[Mapping[str, Any]],
    predictions: Sequence[Any],
    *,
    parse: str = "exact",
    return_items: bool = False,
) -> dict[str, Any]:
    """The Chain (task "chain") or the native MCQ Accuracy (task "accuracy") of ``items``."""
    return _task_scorer(task)(items, predictions, parse=parse, return_items=return_items)


def _task_scorer(task: str) -> Any:
    """The scoring function of a task of ``TASK_COLUMNS``; ValueError names the tasks (never a default)."""
    scorers = {"chain": score_anchor_chain, "accuracy": score_mcq_accuracy}
    if task not in scorers:
        raise ValueError(f"task must be {' or '.join(map(repr, TASK_COLUMNS))}, got {task!r}")
    return scorers[task]


def items_from_columns(
    references: Sequence[Any], choices: Sequence[Sequence[str]], **columns: Optional[Sequence[Any]]
) -> list[dict]:
    """Item dicts from parallel columns (the `evaluate` shell): ``references`` are gold texts or letters."""
    n = len(references)
    # An empty choices=[] for no rows is given, not missing: no rows is scored as n = 0 below.
    if choices is None or (n and all(c is None for c in choices)):
        raise ValueError("choices is missing: give one list of option texts per row (choices=[[...], ...])")
    if len(choices) != n:
        raise ValueError(f"choices must give one list per reference ({n}), got {len(choices)}")
    items = []
    for i in range(n):
        if choices[i] is None:
            raise ValueError(f"choices[{i}] (row {i}) is missing: every multiple-choice row needs its options")
        item = {"answer": references[i], "choices": list(choices[i])}
        for name, col in columns.items():
            if col is not None:
                if len(col) != n:
                    raise ValueError(f"{name} has {len(col)} values for {n} references")
                item[name] = col[i]
        item.setdefault("id", i)
        items.append(item)
    return items


# ---------------------------------------------------------------------------------------------
# Demo
# ---------------------------------------------------------------------------------------------


def demo_items() -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]], list[str]]:
    """A hand-written AudioSpan-shaped sample: four anchor chains (one per outcome pattern) and six
    native MCQs, with replies in the C.1 format ("Answer with ONLY the option letter")."""
    choices = ["first", "second", "third", "fourth"]
    # chain id -> (operation, tier, language, replies for P, U, R); gold is always "B"
    chains = {
        "c1": ("addition", "S", "en", ["B", "B", "B"]),  # all right: 1
        "c2": ("deletion", "M", "zh", ["B", "B", "A"]),  # R wrong: 2/3
        "c3": ("modification", "L", "en", ["A", "B", "B"]),  # P wrong: 0 (U, R answered "by guessing")
        "c4": ("addition", "M", "en", ["B", "b", "B"]),
    }  # "b" is unparsed in exact mode: 1/3
    anchor, anchor_replies = [], []
    for cid, (operation, tier, language, replies) in chains.items():
        for position, reply in enumerate(replies, start=1):
            anchor.append(
                {
                    "id": f"{cid}-{position}",
                    "chain_id": cid,
                    "link_position": position,
                    "operation": operation,
                    "duration_tier": tier,
                    "language": language,
                    "choices": choices,
                    "answer": "second",
                    "answer_index": 1,
                }
            )
            anchor_replies.append(reply)
    native = [
        {
            "id": f"n{i}",
            "duration_tier": tier,
            "language": "en",
            "cognitive_level": level,
            "dimension": "localization" if level == "P" else "inference",
            "choices": choices,
            "answer": "third",
            "answer_index": 2,
        }
        for i, (tier, level) in enumerate([("S", "P"), ("S", "U"), ("M", "R"), ("M", "P"), ("L", "U"), ("L", "R")])
    ]
    native_replies = ["C", "C", "A", "C", "The answer is C", "D"]
    return anchor, anchor_replies, native, native_replies


def demo_rows() -> list[tuple[str, Optional[float], int, str]]:
    """(name, value as a fraction, n, note) rows for the project demo."""
    anchor, anchor_replies, native, native_replies = demo_items()
    chain = score_anchor_chain(anchor, anchor_replies)
    mcq = score_mcq_accuracy(native, native_replies)
    note = "hand-written AudioSpan-shaped sample, exact-letter parsing"
    return [
        (
            "anchor_chain: Chain (Eq. 3)",
            chain["chain"],
            chain["n"],
            f"{note}; random {chain['random_chain']:.4f}; unparsed {chain['unparsed']}",
        ),
        (
            "anchor_chain: P link accuracy",
            chain["P"],
            chain["n"],
            f"U {chain['U']:.4f}, R {chain['R']:.4f} (per-link accuracy, not truncated)",
        ),
        (
            "audiospan: native MCQ Accuracy (Eq. 1)",
            mcq["accuracy"],
            mcq["n"],
            f"{note}; random {mcq['random_accuracy']:.4f}; unparsed {mcq['unparsed']}",
        ),
    ]
