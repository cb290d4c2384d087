"""The demo: every scorer that exists, run on a bundled sample, printed as one table.

The sample is 12 real MMAR items (metadata copied from MMAR-meta.jsonl, CC BY-NC 4.0) with audio
synthesized here (MMAR audio is not redistributable), loaded through the MMAR dataset builder, and
fixture model outputs in the ARIA four-slot format, written by hand to cover clean, markdown,
think-block, untagged, partial and empty outputs.
Everything runs offline; each row says which backbone produced it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Optional

from . import answers
from .aria import AriaScorer
from .audio import load_audio
from .data import audio_paths
from .data.mmar import build_demo_dataset
from .scoring.aria import METRIC_NAMES, METRICS
from .anchor_chain import demo_rows as anchor_chain_demo_rows
from .audiospan_rubric import demo_rows as audiospan_rubric_demo_rows
from .text_prior import demo_rows as text_prior_demo_rows
from .cot import parse_cot

RULE_BASED = "rule-based (no model)"


@dataclass
class Row:
    scorer: str
    value: Optional[float]  # a rate in [0, 1] or a score (`unit` says how to print it); None: unavailable
    n: int
    backbone: str
    unanswered: Optional[int] = None
    unit: str = "%"


def load_demo_sample(workdir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(MMAR items, model outputs aligned with them, audio paths): the 12 items go through the MMAR
    builder (raw folder with synthesized audio under ``workdir`` -> datasets.Dataset)."""
    dataset = build_demo_dataset(workdir)
    items = dataset.remove_columns("audio").to_list()
    folder = resources.files("audioreason") / "resources" / "demo"
    outputs = {}
    for line in (folder / "outputs.jsonl").read_text("utf-8").splitlines():
        if line:
            row = json.loads(line)
            outputs[row["id"]] = row
    missing = [it["id"] for it in items if it["id"] not in outputs]
    if missing:
        raise ValueError(f"demo sample has no model output for items {missing}")
    return items, [outputs[it["id"]] for it in items], audio_paths(dataset)


def _extraction_row(name: str, extract: Callable[[dict, str], answers.ExtractedAnswer],
                    items: list[dict], texts: list[str]) -> tuple[Row, list[answers.ExtractedAnswer]]:
    found = [extract(item, text) for item, text in zip(items, texts)]
    correct = sum(answers.is_gold(e, item["answer"]) for e, item in zip(found, items))
    summary = answers.summarize(found)
    return Row(name, correct / len(items), len(items), RULE_BASED, summary["unanswered"]), found


def _answer_text(output: str) -> str:
    """What the official scorer is given: the Answer slot, or the whole output when there is none."""
    slots = parse_cot(output)
    return output if "answer" in slots.missing else slots.answer


def run_demo(workdir: Path) -> dict[str, Any]:
    """Run every available scorer on the bundled sample; return rows and per-item details."""
    items, outputs, paths = load_demo_sample(Path(workdir))
    texts = [o["output"] for o in outputs]
    durations = [len(a) / sr for a, sr in (load_audio(p, 16000) for p in paths)]

    extractors = {
        "answers: ARIA App. E": lambda it, t: answers.extract_aria(t, it["choices"]),
        "answers: ARIA, tolerant tags": lambda it, t: answers.extract_aria(t, it["choices"], tags="tolerant"),
        "answers: official MMAR match": lambda it, t: answers.extract_string_match(_answer_text(t), it["choices"]),
        "answers: strict string match": lambda it, t: answers.extract_string_match(
            _answer_text(t), it["choices"], strict=True),
        "answers: hybrid (no judge)": lambda it, t: answers.extract_hybrid(t, it["choices"], question=it["question"]),
    }
    rows, per_item = [], [{"id": it["id"], "answer": it["answer"]} for it in items]
    for name, extract in extractors.items():
        row, found = _extraction_row(name, extract, items, texts)
        rows.append(row)
        for record, e in zip(per_item, found):
            record[name] = e.to_dict()
    # The official scorer's own correctness test (gold known), which can differ from its extractor view.
    official = sum(answers.official_string_match(it["answer"], _answer_text(t), it["choices"])
                   for it, t in zip(items, texts))
    rows.append(Row("accuracy: official MMAR scorer", official / len(items), len(items), RULE_BASED))
    parses = [parse_cot(t) for t in texts]
    rows.append(Row("cot: all four slots + entities", sum(p.complete for p in parses) / len(items),
                    len(items), "rule-based parser"))
    for record, p in zip(per_item, parses):
        record["missing_slots"] = list(p.missing)
        record["entities"] = p.entities
    aria = AriaScorer(backbones="offline").score(
        texts, [it["answer"] for it in items], [it["choices"] for it in items],
        audio=paths, return_items=True)
    for metric in METRICS:
        rows.append(Row(f"aria: {metric} {METRIC_NAMES[metric]}", aria[metric], len(items),
                        aria["backbones"][metric], unit="score"))
    rows.append(Row(f"aria: ARIA (mean of {'+'.join(aria['aria_metrics'])})", aria["aria"], len(items),
                    "the metrics above", unit="score"))
    for record, item in zip(per_item, aria["items"]):
        record["aria"] = {k: v for k, v in item.items() if k.startswith("M") or k == "aria"}
    rows += _mmar_rubrics_rows(items, texts)
    # text_prior_decomposition needs several models under several audio conditions: its rows come from
    # a small synthetic correctness table (audioreason.text_prior.demo_records), not from the sample.
    rows += [Row(r.name, r.value, r.n, r.note, unit=r.unit) for r in text_prior_demo_rows()]
    # AudioSpan's anchor chains and native MCQs need AudioSpan items: a small hand-written sample.
    rows += [Row(name, value, n, note) for name, value, n, note in anchor_chain_demo_rows()]
    rows += [Row(name, value, n, note) for name, value, n, note in audiospan_rubric_demo_rows()]
    return {
        "sample": f"{len(items)} MMAR items (real metadata, synthesized audio of "
                  f"{min(durations):.1f}-{max(durations):.1f} s), model 'fixture-cot-model'",
        "rows": rows,
        "per_item": per_item,
        "aria": {k: v for k, v in aria.items() if k != "items"},
    }


def _mmar_rubrics_rows(items: list[dict], texts: list[str]) -> list[Row]:
    """MMAR-Rubrics with the only judge that runs offline here: SmolLM2-135M in process. Demo setting:
    1 rater, no re-asks, short replies (the official protocol is 5 raters of gpt-4o). At 135M the judge
    rarely writes valid JSON, so most judged items fail, and the table says how many."""
    from .backends import BackendUnavailable
    from .judges import LocalJudge, SamplingParams
    from .mmar_rubrics import MMARRubricsScorer

    try:
        judge = LocalJudge("packaged:SmolLM2-135M-Instruct", max_new_tokens=64, batch_size=4)
    except BackendUnavailable as err:
        return [Row("mmar_rubrics: Rubrics", None, len(items), f"unavailable: {err}", unit="score")]
    scorer = MMARRubricsScorer(judge, raters=1, max_reasks=0,
                               sampling=SamplingParams(temperature=0.0, seed=42, max_tokens=64))
    result = scorer.score(items, texts, [_answer_text(t) for t in texts])
    backbone = f"judge {judge.name}, 1 rater (demo); judged {result['n_judged']}, failed {result['n_failed']}"
    return [Row("mmar_rubrics: Accuracy (official gate)", result["accuracy"] / 100, result["n"], RULE_BASED),
            Row("mmar_rubrics: Rubrics (x100)", result["rubrics"], result["n"], backbone, unit="score")]


def format_table(rows: list[Row]) -> str:
    """A plain-text table: scorer, value, unanswered (count and rate), n, backbone."""
    header = ("scorer", "value", "unanswered", "n", "backbone")
    body = []
    for r in rows:
        if r.value is None:
            value = "n/a"
        else:
            value = f"{100 * r.value:.1f}%" if r.unit == "%" else f"{r.value:.4f}"
        unanswered = "-" if r.unanswered is None else f"{r.unanswered} ({100 * r.unanswered / r.n:.1f}%)"
        body.append((r.scorer, value, unanswered, str(r.n), r.backbone))
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    fmt = lambda line: "  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(header), fmt(tuple("-" * w for w in widths)), *map(fmt, body)])
