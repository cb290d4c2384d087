"""The audio-reliance check of a run (``audioreason run --audio-check N``): did the model use the audio?

The runner sends N seeded items again with silence of the same length (``silence``) and with another checked
item's clip (``shuffled``), beside their ``full`` outputs (``audioreason.inference.conditions.AudioCheck``).
Per (model, template), on the checked items whose three outputs all came back (failed ones are left out and
counted): the share of items whose output text changes under silence, under shuffled and under either (a
Wilson interval each: they are proportions), the accuracy under each condition with its Wilson interval
(multiple-choice items, the template's extraction rule) and a verdict:

- ``audio ignored``: no output changes under either condition, or the accuracy under silence lies inside
  the interval of the accuracy under full (the model scores as well without the audio);
- ``ok``: otherwise;
- ``unavailable``: no checked item has its three outputs.

The reason beside the verdict gives its numbers. A run without the check has the section with status
"not_applicable" and why.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Optional, Sequence

from audioreason.evaluation.sections import (
    DEFAULT_RULES,
    RULES,
    OutputSet,
    Section,
    extraction_rules,
    is_mcq,
    not_applicable,
)
from audioreason.text import answers
from audioreason.text.conditions import CHECK_KINDS as CHECK_CONDITIONS

COMPARED = ("full", *CHECK_CONDITIONS)
IGNORED, OK, UNAVAILABLE = "audio ignored", "ok", "unavailable"
OFF_REASON = (
    "the run has no audio-reliance check (silence and shuffled outputs): run it with --audio-check N "
    "(audio_check in a sweep file)"
)


def split_check_sets(sets: Sequence[OutputSet]) -> tuple[list[OutputSet], list[OutputSet]]:
    """(the sets the scorers score, the check's silence and shuffled sets)."""
    return (
        [s for s in sets if s.condition not in CHECK_CONDITIONS],
        [s for s in sets if s.condition in CHECK_CONDITIONS],
    )


def _rule(template: str, extraction: str) -> str:
    """The one rule the check's accuracies use: the asked one, else the template's own."""
    return extraction_rules(template, extraction)[0] if extraction != "all" else DEFAULT_RULES.get(template, "hybrid")


def audio_reliance_section(
    sets: Sequence[OutputSet],
    items: Mapping[str, Mapping[str, Any]],
    audio_check: Optional[Mapping[str, Any]],
    extraction: str = "auto",
    uncertainty: Any = None,
) -> Section:
    """The ``audio_reliance`` section from every set of a run (``audio_check``: run.json's block, naming the
    checked items); its items: per silence and shuffled output, whether it changed and whether it is correct."""
    from audioreason.analysis import uncertainty as U

    uncertainty = uncertainty or U.DEFAULT
    _, check_sets = split_check_sets(sets)
    if not check_sets:
        return not_applicable(OFF_REASON)
    section = Section("ok")
    groups: dict[tuple[str, str, str], dict[str, OutputSet]] = {}
    for s in sets:
        if s.condition in COMPARED:
            groups.setdefault((s.model, s.template, s.template_hash), {})[s.condition] = s
    for (model, template, template_hash), by_condition in groups.items():
        if not any(c in by_condition for c in CHECK_CONDITIONS):
            continue
        ids = list((audio_check or {}).get("ids") or [])
        entry, per_item = _entry(
            model, template, template_hash, by_condition, ids, items, _rule(template, extraction), uncertainty
        )
        section.results.append(entry)
        section.items.update(per_item)
    return section


def _entry(
    model: str,
    template: str,
    template_hash: str,
    by_condition: Mapping[str, OutputSet],
    ids: list[str],
    items: Mapping[str, Mapping[str, Any]],
    rule_name: str,
    uncertainty: Any,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    from audioreason.analysis import uncertainty as U

    records = {c: {r["id"]: r for r in s.records} for c, s in by_condition.items()}
    if not ids:  # no run.json block (an older run): the items that have check outputs, in item order
        order = {item_id: n for n, item_id in enumerate(items)}
        ids = sorted({i for c in CHECK_CONDITIONS for i in records.get(c, {})}, key=order.__getitem__)
    kept, failed, missing = [], 0, 0
    for item_id in ids:
        found = [records.get(c, {}).get(item_id) for c in COMPARED]
        if any(r is None for r in found):
            missing += 1
        elif any(r.get("error") is not None for r in found):
            failed += 1
        else:
            kept.append((item_id, dict(zip(COMPARED, found))))
    n = len(kept)
    text = lambda r: (r.get("output") or "").strip()  # noqa: E731
    changed = {c: [text(by[c]) != text(by["full"]) for _, by in kept] for c in CHECK_CONDITIONS}
    changed["either"] = [a or b for a, b in zip(changed["silence"], changed["shuffled"])]
    entry: dict[str, Any] = {
        "model": model,
        "template": template,
        "template_hash": template_hash,
        "checked_items": len(ids),
        "n": n,
        "left_out": {"failed": failed, "missing": missing},
        "changed": {
            c: {
                "share": sum(v) / n if n else None,
                "changed": sum(v),
                "n": n,
                "uncertainty": U.wilson(sum(v), n, uncertainty),
            }
            for c, v in changed.items()
        },
        "rule": rule_name,
        "accuracy": None,
    }
    rule = RULES[rule_name]
    mcq = [(item_id, by) for item_id, by in kept if is_mcq(items[item_id])]
    correct: dict[str, list[bool]] = {}
    if mcq:
        for c in COMPARED:
            correct[c] = [
                answers.is_gold(rule.extract(by[c].get("output") or "", items[i]), items[i]["answer"]) for i, by in mcq
            ]
        entry["accuracy"] = {
            c: {
                "accuracy": sum(v) / len(v),
                "correct": sum(v),
                "n": len(v),
                "uncertainty": U.wilson(sum(v), len(v), uncertainty),
            }
            for c, v in correct.items()
        }
    entry["verdict"], entry["reason"] = verdict(entry)
    per_item: dict[str, dict[str, Any]] = {}
    mcq_index = {item_id: k for k, (item_id, _) in enumerate(mcq)}
    for k, (item_id, by) in enumerate(kept):
        for c in CHECK_CONDITIONS:
            row = {"changed": changed[c][k]}
            if item_id in mcq_index:
                row["correct"] = correct[c][mcq_index[item_id]]
            per_item[by[c]["key"]] = row
    return entry, per_item


def verdict(entry: Mapping[str, Any]) -> tuple[str, str]:
    """(verdict, its reason with the numbers) of one entry."""
    n = entry["n"]
    left = entry["left_out"]
    left_text = (
        f" ({left['failed']} failed and {left['missing']} missing left out)"
        if left["failed"] or left["missing"]
        else ""
    )
    if not n:
        return UNAVAILABLE, f"no checked item has its full, silence and shuffled outputs{left_text}"
    ch = entry["changed"]
    moved = (
        f"outputs changed on {ch['either']['changed']} of {n} items (silence {ch['silence']['changed']}, "
        f"shuffled {ch['shuffled']['changed']}){left_text}"
    )
    if ch["either"]["changed"] == 0:
        return IGNORED, f"outputs identical under full, silence and shuffled audio on all {n} items{left_text}"
    accuracy = entry.get("accuracy")
    if not accuracy:
        return OK, f"{moved}; no multiple-choice item, so no accuracy compared"
    full, silence, shuffled = accuracy["full"], accuracy["silence"], accuracy["shuffled"]
    ci = full["uncertainty"].get("ci95")
    numbers = (
        f"accuracy full {full['accuracy']:.4f} {_ci(ci)}, silence {silence['accuracy']:.4f}, shuffled "
        f"{shuffled['accuracy']:.4f} (n {full['n']}, rule {entry['rule']})"
    )
    if ci and ci[0] <= silence["accuracy"] <= ci[1]:
        return IGNORED, f"accuracy under silence is inside full's interval: {numbers}; {moved}"
    if not ci:
        return OK, f"{moved}; {numbers}; full's accuracy has no interval"
    return OK, f"{moved}; {numbers}: silence outside full's interval"


def _ci(ci: Optional[Sequence[float]]) -> str:
    return "[n/a]" if not ci else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def reliance_lines(results: Mapping[str, Any]) -> list[str]:
    """One printed line per entry of a results dict's audio_reliance section (or why it did not run)."""
    section = results.get("audio_reliance") or {}
    if section.get("status") != "ok":
        return [f"audio reliance: not checked ({section.get('reason') or OFF_REASON})"]
    return [
        f"audio reliance [{e['model']} {e['template']}]: {e['verdict']}: {e['reason']}"
        for e in section.get("results", [])
    ]


def board_entries(results: Mapping[str, Any], model: str, benchmark: str) -> list[dict[str, Any]]:
    """A sweep leaderboard's audio_reliance rows of one run: its verdict per template with the numbers (a run
    without the check: one row saying so)."""
    section = results.get("audio_reliance") or {}
    if section.get("status") != "ok":
        return [
            {
                "model": model,
                "benchmark": benchmark,
                "template": None,
                "verdict": "not checked",
                "reason": section.get("reason") or OFF_REASON,
                "changed": None,
                "accuracy": None,
                "n": 0,
            }
        ]
    return [
        {
            "model": model,
            "benchmark": benchmark,
            "template": e["template"],
            "verdict": e["verdict"],
            "reason": e["reason"],
            "n": e["n"],
            "changed": e["changed"]["either"]["share"],
            "accuracy": {c: a["accuracy"] for c, a in (e.get("accuracy") or {}).items()} or None,
        }
        for e in section.get("results", [])
    ]


def board_markdown(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The leaderboard.md section of the audio-reliance rows."""
    if not entries:
        return []
    number = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
    lines = [
        "",
        "## Audio reliance",
        "",
        "Did the model use the audio? Checked items run again with silence and with another item's audio "
        "(`--audio-check`, `audio_check`); changed: share of items whose output changed.",
        "",
        "| model | benchmark | template | verdict | changed | acc. full | acc. silence | acc. shuffled | n | reason |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for e in entries:
        acc = e.get("accuracy") or {}
        cells = [
            e["model"],
            e["benchmark"],
            e.get("template") or "-",
            e["verdict"],
            number(e.get("changed")),
            number(acc.get("full")),
            number(acc.get("silence")),
            number(acc.get("shuffled")),
            str(e["n"]),
            e["reason"],
        ]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return lines


def without_check_sets(run: Any) -> Any:
    """A run folder (``score.RunFolder``) holding only the sets the scorers score."""
    return replace(run, sets=split_check_sets(run.sets)[0])


__all__ = [
    "CHECK_CONDITIONS",
    "IGNORED",
    "OFF_REASON",
    "OK",
    "UNAVAILABLE",
    "audio_reliance_section",
    "board_entries",
    "board_markdown",
    "reliance_lines",
    "split_check_sets",
    "verdict",
    "without_check_sets",
]
