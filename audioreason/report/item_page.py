"""The explorer's page of one output (``item_detail``): the question and choices, the output's CoT by slot,
each extracted answer with its rule and method (``item_table.item_verdicts``), the ARIA metrics, the rubric
verdicts with their justifications, the anchors and criterion time ranges on the audio's timeline
(``timeline_html``), all of it as one HTML page (``item_page``), and the raw records."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .item_table import item_verdicts
from .load import reading
from .run_view import OFFICIAL_VERDICT, RunView
from .scale import display, number

SLOTS = ("entities", "description", "analysis", "reasoning", "answer")


def _spans(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Anchors (edit positions) and rubric criteria time ranges of an item, in seconds."""
    spans = []
    manifest = item.get("edit_manifest") if isinstance(item.get("edit_manifest"), Mapping) else {}
    for n, position in enumerate(manifest.get("positions") or []):
        if isinstance(position, Mapping):  # the dataset's form: {"start": s, "end": e}; a manifest file's: [s, e]
            position = (position.get("start"), position.get("end"))
        if isinstance(position, Sequence) and len(position) == 2 and all(number(p) is not None for p in position):
            spans.append(
                {
                    "start": float(position[0]),
                    "end": float(position[1]),
                    "kind": "anchor",
                    "label": f"anchor {n + 1}: {manifest.get('operation') or item.get('operation') or 'edit'}",
                }
            )
    for n, criterion in enumerate(item.get("rubric") or []):
        span = criterion.get("time_range") if isinstance(criterion, Mapping) else None
        if isinstance(span, Sequence) and len(span) == 2 and all(number(p) is not None for p in span):
            spans.append(
                {
                    "start": float(span[0]),
                    "end": float(span[1]),
                    "kind": "criterion",
                    "label": f"criterion {n + 1}: {criterion.get('text', '')}",
                }
            )
    return spans


def timeline_html(duration: Optional[float], spans: Sequence[Mapping[str, Any]]) -> str:
    """A bar the length of the audio with each span placed on it (HTML, no script)."""
    if not spans:
        return "<p>No anchors or timed criteria for this item.</p>"
    end = max([duration or 0.0] + [s["end"] for s in spans]) or 1.0
    colours = {"anchor": "#d62728", "criterion": "#1f77b4"}
    marks = "".join(
        f'<div title="{html.escape(s["label"])} ({s["start"]:.1f}-{s["end"]:.1f} s)" style="position:absolute;'
        f"left:{100 * s['start'] / end:.3f}%;width:{max(0.4, 100 * (s['end'] - s['start']) / end):.3f}%;top:"
        f'{4 if s["kind"] == "anchor" else 22}px;height:14px;background:{colours[s["kind"]]};opacity:.8"></div>'
        for s in spans
    )
    legend = "".join(f"<li>{html.escape(s['label'])}: {s['start']:.1f}-{s['end']:.1f} s</li>" for s in spans)
    return (
        f'<div class="timeline" style="position:relative;height:40px;background:#eee;border-radius:3px">'
        f'{marks}</div><div style="display:flex;justify-content:space-between;font-size:.75rem"><span>0 s'
        f'</span><span>{end:.1f} s</span></div><ul style="font-size:.8rem">{legend}</ul>'
    )


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
            for c in ((reply.get("verdict") or {}) if isinstance(reply, Mapping) else {}).get("criteria") or []:
                out.append(
                    [
                        scorer,
                        str(n),
                        str(c.get("index")),
                        f"semantic {c.get('semantic')}, temporal {c.get('temporal')}",
                        str(c.get("reason") or c.get("justification") or ""),
                    ]
                )
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
    answers = [
        [rule, str(v.get("choice")), str(v.get("method")), "yes" if v.get("correct") else "no"]
        for rule, v in (row.get("accuracy") or {}).items()
        if isinstance(v, Mapping)
    ]
    if OFFICIAL_VERDICT in verdicts:
        answers.insert(
            0,
            [
                OFFICIAL_VERDICT,
                "(the whole reply)",
                "string match of the official MMAR/MMAU evaluation script",
                "yes" if verdicts[OFFICIAL_VERDICT] else "no",
            ],
        )
    aria = (
        {m: row["aria"].get(m) for m in ("M1", "M2", "M3", "M4", "M5", "M6", "aria")}
        if isinstance(row.get("aria"), Mapping)
        else {}
    )
    audio = item.get("audio") if isinstance(item.get("audio"), str) and Path(item["audio"]).is_file() else None
    question = item.get("question") or ""
    choices = item.get("choices") or []
    model, condition = row.get("model", record.get("model")), row.get("condition", record.get("condition"))
    header = (
        f"**{item_id}** ({view.name}; {model}, condition {condition})\n\n"
        + (f"**Q:** {question}\n\n" if question else "")
        + "".join(f"- {c}{'  (gold)' if c == item.get('answer') else ''}\n" for c in choices)
        + (f"\n**Reference:** {item.get('reference_answer')}\n" if item.get("reference_answer") else "")
    )
    if record.get("error"):
        header += f"\n**The model call failed:** {record['error']}\n"
    detail = {
        "header": header,
        "output": output or "",
        "audio": audio,
        "slots": [[name, ", ".join(slots.entities) if name == "entities" else getattr(slots, name)] for name in SLOTS]
        + [["missing", ", ".join(slots.missing) or "none"]],
        "answers": answers,
        "aria": aria,
        "scores": {k: v for k, v in row.items() if k not in ("key", "id", "model", "condition", "template")},
        "verdicts": _verdicts(row),
        "timeline": timeline_html(number(item.get("duration_seconds")), _spans(item)),
        "raw": {"output record (outputs.jsonl)": record, "scores (items.jsonl)": row, "item": item},
    }
    detail["page"] = item_page(
        detail,
        {"item": item_id, "run": view.name, "model": model, "condition": condition, "template": row.get("template")},
        item,
        record.get("error"),
    )
    return detail


_TABLE = "border-collapse:collapse;margin:.3rem 0 .8rem;font-size:.9rem"
_CELL = "border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top"


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f'<th style="{_CELL};background:#f3f3f3">{html.escape(str(h))}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td style="{_CELL}">{html.escape(str(c))}</td>' for c in r) + "</tr>" for r in rows
    )
    return f'<table style="{_TABLE}"><tr>{head}</tr>{body}</table>'


def item_page(detail: Mapping[str, Any], names: Mapping[str, Any], item: Mapping[str, Any], error: Any = None) -> str:
    """One output as a page (HTML, every text escaped): which item, model and condition; the question and
    choices (the gold marked); the chain of thought by slot; the answer each rule extracted, with how and
    whether it is right; the ARIA metrics; the rubric verdicts with their justifications; the anchors on the
    audio's timeline; the reply."""
    e = html.escape
    parts = [
        f'<h3 style="margin:.2rem 0">{e(str(names["item"]))}</h3><p style="margin:0 0 .6rem">'
        + " · ".join(f"<b>{k}</b> {e(str(v))}" for k, v in names.items() if k != "item" and v)
        + "</p>"
    ]
    if item.get("question"):
        parts.append(f"<p><b>Question.</b> {e(str(item['question']))}</p>")
    if item.get("choices"):
        parts.append(
            '<ol type="A">'
            + "".join(
                f"<li>{e(str(c))}{' <b>(gold)</b>' if c == item.get('answer') else ''}</li>" for c in item["choices"]
            )
            + "</ol>"
        )
    if item.get("reference_answer"):
        parts.append(f"<p><b>Reference answer.</b> {e(str(item['reference_answer']))}</p>")
    if not item:
        parts.append("<p><i>The benchmark item is not at hand: no question, choices or audio.</i></p>")
    if error:
        parts.append(f'<p style="color:#b00"><b>The model call failed:</b> {e(str(error))}</p>')
    slots = dict(detail["slots"])
    parts.append(
        '<h4>Chain of thought</h4><dl style="margin:0">'
        + "".join(
            f'<dt><b>{e(name.capitalize())}</b></dt><dd style="margin:0 0 .4rem 1rem;white-space:pre-wrap">'
            + (e(slots[name]) if slots[name] else "<i>missing</i>")
            + "</dd>"
            for name in SLOTS
        )
        + "</dl>"
    )
    if detail["answers"]:
        parts.append(
            "<h4>Answer per rule</h4>"
            + _html_table(["rule", "extracted", "why (method)", "correct"], detail["answers"])
        )
    if detail["aria"]:
        aria = detail["aria"]
        parts.append(
            "<h4>ARIA metrics</h4>" + _html_table(list(aria), [[display(v, "aria", m) for m, v in aria.items()]])
        )
    if detail["verdicts"]:
        parts.append(
            "<h4>Rubric verdicts</h4>"
            + _html_table(["scorer", "rater", "criterion", "verdict", "justification"], detail["verdicts"])
        )
    parts.append("<h4>Anchors and timed criteria on the audio's timeline</h4>" + detail["timeline"])
    parts.append(
        '<h4>Reply</h4><pre style="white-space:pre-wrap;background:#f7f7f7;padding:.5rem">'
        + (e(detail["output"]) or "<i>no output</i>")
        + "</pre>"
    )
    return '<div class="item-page">' + "".join(parts) + "</div>"


__all__ = ["SLOTS", "item_detail", "item_page", "timeline_html"]
