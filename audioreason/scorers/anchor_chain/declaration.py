"""The anchor Chain's declaration (``scorers.declare``): its evaluate module's inputs and options, when it fits
a run, its section of the results (Chain, Eq. 3, and native MCQ Accuracy, Eq. 1), its printed rows and its
report table and figure. Layer 9 (ARCHITECTURE.md): the scorer (``scorer.py``, ``formulas.py``) never imports
it."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.evaluation.rows import Row
from audioreason.evaluation.rows import interval as _interval
from audioreason.evaluation.sections import OutputSet, Section, _uncertainty, is_mcq
from audioreason.scorers.declare import Declaration, Results

NAME = "anchor_chain"
BREAKDOWNS = ("operation", "duration_tier", "language", "cognitive_level", "dimension")  # per-item text columns


def fit(benchmark: str, items: Sequence[Mapping[str, Any]], sets: Sequence[OutputSet]) -> Optional[str]:
    if benchmark != "audiospan":
        return f"the anchor Chain and native MCQ Accuracy score AudioSpan items; the benchmark is {benchmark}"
    if not any(is_mcq(it) for it in items):
        return "no AudioSpan multiple-choice item (anchor chains or native MCQs) in this run"
    return None


def anchor_chain_section(
    sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]], parse: str, uncertainty: Any = None
) -> Section:
    """Chain (Eq. 3) over the complete chains of each set (a chain with a link missing from the set is left
    out and counted) and native MCQ Accuracy (Eq. 1) over its native MCQs; replies parsed by ``parse``."""
    from audioreason.scorers.anchor_chain.scorer import score_anchor_chain, score_mcq_accuracy

    U = _uncertainty()
    uncertainty = uncertainty or U.DEFAULT
    section = Section("ok")
    for output_set in sets:
        by_chain: dict[str, dict[int, dict]] = {}
        native = []
        for record in output_set.records:
            item = items[record["id"]]
            if not is_mcq(item):
                continue
            if item.get("chain_id"):
                by_chain.setdefault(str(item["chain_id"]), {})[item.get("link_position")] = record
            else:
                native.append(record)
        complete = {c: links for c, links in by_chain.items() if set(links) == {1, 2, 3}}
        entry: dict[str, Any] = {
            **output_set.describe(),
            "parse": parse,
            "chains_incomplete": len(by_chain) - len(complete),
            "failed": output_set.failed,
        }
        if complete:
            ordered = [complete[c][p] for c in complete for p in (1, 2, 3)]
            entry["chain"] = score_anchor_chain(
                [items[r["id"]] for r in ordered], [r.get("output") for r in ordered], parse=parse, return_items=True
            )  # per-chain outcomes: the ladder
            # Chain is the mean of the chains' k/3: the bootstrap resamples chains (an item's three links stay
            # together).
            entry["chain"]["uncertainty"] = {
                "chain": U.bootstrap_mean([c["chain"] for c in entry["chain"]["chains"]], uncertainty)
            }
        if native:
            mcq = score_mcq_accuracy(
                [items[r["id"]] for r in native], [r.get("output") for r in native], parse=parse, return_items=True
            )
            for record, row in zip(native, mcq.pop("items")):
                section.items[record["key"]] = {"correct": row["correct"], "method": row["method"]}
            mcq["uncertainty"] = {"accuracy": U.wilson(round(mcq["accuracy"] * mcq["n"]), mcq["n"], uncertainty)}
            entry["native_mcq"] = mcq
        if complete or native:
            section.results.append(entry)
    return section


def score(scoring: Any) -> dict[str, Section]:
    """Replies parsed exactly (App. C.1), or tolerantly when the run is scored with the hybrid extractor."""
    if not scoring.runs(NAME):
        return {}
    parse = "tolerant" if scoring.options.extraction == "hybrid" else "exact"
    return {NAME: anchor_chain_section(scoring.run.sets, scoring.run.items, parse, scoring.uncertainty)}


def anchor_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    rows = []
    if "chain" in entry:
        chain = entry["chain"]
        rows.append(
            Row(
                label("anchor_chain: Chain (Eq. 3)"),
                chain["chain"],
                chain["n"],
                f"{entry['parse']} parsing; random {chain['random_chain']:.4f}; unparsed "
                f"{chain['unparsed']}; incomplete chains left out {entry['chains_incomplete']}",
                interval=_interval(chain, "chain"),
            )
        )
    if "native_mcq" in entry:
        mcq = entry["native_mcq"]
        rows.append(
            Row(
                label("audiospan: native MCQ Accuracy (Eq. 1)"),
                mcq["accuracy"],
                mcq["n"],
                f"{entry['parse']} parsing; random {mcq['random_accuracy']:.4f}",
                mcq["unparsed"],
                interval=_interval(mcq, "accuracy"),
            )
        )
    return rows


def detect(result: Mapping[str, Any]) -> bool:
    return (
        ("chain" in result and "random_chain" in result)
        or "random_accuracy" in result
        or "native_mcq" in result
        or isinstance(result.get("chain"), Mapping)
    )


def bare(result: dict) -> dict:
    """A compute() output (the chain's or the native MCQs' alone) as results.json's entry holds it."""
    if not isinstance(result.get("chain"), Mapping) and "native_mcq" not in result:
        return {"native_mcq": result} if "random_accuracy" in result else {"chain": result}
    return result


DECLARATION = Declaration(
    name=NAME,
    folder="anchor_chain",
    inputs={
        "choices": "texts",
        "item_id": "text",
        "chain_id": "text",
        "link_position": "int",
        **{name: "text" for name in BREAKDOWNS},
    },
    options=("task", "parse", "return_items", "rows"),
    fit=fit,
    score=score,
    detect=detect,
    bare=bare,
    protocol=("extraction",),  # its parse follows --extraction
    results=(
        Results(
            NAME,
            "AudioSpan anchor Chain and MCQ Accuracy",
            anchor_rows,
            tables=("anchor_chain_table",),
            figures=("anchor_chain_figure",),
        ),
    ),
)


__all__ = ["DECLARATION", "anchor_chain_section"]
