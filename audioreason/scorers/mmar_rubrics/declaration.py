"""MMAR-Rubrics' declaration (``scorers.declare``): its evaluate module's inputs and options, when it fits a
run, how the run scoring judges it (``evaluation.score``), its section of the results, its printed rows and its
report tables and figure. Layer 9 (ARCHITECTURE.md): the scorer (``scorer.py``, ``formulas.py``) never
imports it."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.base.protocol import text_sha256
from audioreason.evaluation.rows import Row
from audioreason.evaluation.rows import interval as _interval
from audioreason.evaluation.rows import judge_note as _judge_note
from audioreason.evaluation.rows import left_out_note as _left_out_note
from audioreason.evaluation.sections import NO_RUBRIC, OutputSet, Section, _uncertainty, answer_text
from audioreason.judges.base import MMAR_JUDGE_MODEL
from audioreason.scorers.declare import Declaration, Judged, Results

NAME = "mmar_rubrics"


def fit(benchmark: str, items: Sequence[Mapping[str, Any]], sets: Sequence[OutputSet]) -> Optional[str]:
    if benchmark != "mmar":
        return f"MMAR-Rubrics judges MMAR items against their rubric criteria; the benchmark is {benchmark}"
    if not any(it.get("rubric") for it in items):
        return "no item carries MMAR-Rubrics criteria (the rubric field)"
    return None


def reply_parts(record: Mapping[str, Any]) -> tuple[str, str]:
    """(reasoning, answer) of an output for MMAR-Rubrics: the whole output and its Answer slot, or, for an
    MMAR results file imported with ``thinking_prediction`` (`audioreason import mmar`), that field and the
    output (its ``answer_prediction``), the two fields the official code/evaluation_rubrics.py reads."""
    text = record.get("output") or ""
    thinking = (record.get("details") or {}).get("thinking_prediction")
    return (thinking, text) if isinstance(thinking, str) else (text, answer_text(text))


def mmar_rubrics_section(
    make_scorer: Callable[[], Any],
    sets: Sequence[OutputSet],
    items: Mapping[str, Mapping[str, Any]],
    uncertainty: Any = None,
) -> Section:
    """An MMARRubricsScorer per set (``make_scorer()``, so each set's judge statistics are its own): the
    reasoning is the whole output, the answer its Answer slot (the whole output without one), as the
    challenge's submissions give them."""
    section = Section("ok")
    for output_set in sets:
        # An item without criteria (an empty or missing rubric) cannot be judged: it is left out of Rubrics and
        # its Accuracy, counted and named (in the entry, a note and the printed table), never dropped unsaid.
        records, no_rubric = [], []
        for record in output_set.records:
            if items[record["id"]].get("rubric"):
                records.append(record)
            else:
                no_rubric.append(str(record["id"]))
                section.items[record["key"]] = {"status": NO_RUBRIC}
        if no_rubric:
            section.notes.append(
                f"{output_set.label}: {len(no_rubric)} item(s) without rubric criteria, not "
                f"judged: {', '.join(no_rubric)}"
            )
        if not records:
            continue
        reasonings, answers_given = zip(*(reply_parts(r) for r in records))
        result = make_scorer().score(
            [items[r["id"]] for r in records], list(reasonings), list(answers_given), return_items=True
        )
        details = result.pop("items")
        by_id = {str(d["id"]): d for d in details}
        section.results.append(
            {
                **output_set.describe(),
                **result,
                "failed_outputs": output_set.failed,
                "no_rubric": len(no_rubric),
                "no_rubric_ids": no_rubric,
                **mmar_uncertainty(result, details, uncertainty, items),
            }
        )
        for record in records:
            detail = by_id.get(str(record["id"]))  # compat drops items whose judging failed
            section.items[record["key"]] = (
                {"status": "dropped (judging failed, compat)"}
                if detail is None
                else {
                    "status": detail["status"],
                    "score": detail["score"],
                    "correct": detail["correct"],
                    "raters": detail.get("raters", []),
                }
            )  # verdicts, justifications
    return section


def _mmar_intervals(
    values: Mapping[str, Any], details: Sequence[Mapping[str, Any]], uncertainty: Any
) -> dict[str, Any]:
    """Rubrics (each item's score, a failed one at 0, as the value counts it) by bootstrap and the
    official-gate Accuracy by Wilson, over ``details``, the items ``values`` was computed on."""
    U = _uncertainty()
    if values.get("rubrics") is None:
        rubrics = U.unavailable("Rubrics has no value", U.PERCENTILE, len(details), uncertainty)
    else:
        rubrics = U.bootstrap_mean([d.get("score") or 0 for d in details], uncertainty)
    accuracy = (
        U.wilson_of([d.get("correct") for d in details], uncertainty)
        if values.get("accuracy") is not None
        else U.unavailable("Accuracy has no value", U.WILSON, len(details))
    )
    return {"rubrics": rubrics, "accuracy": accuracy}


def mmar_uncertainty(
    result: Mapping[str, Any],
    details: Sequence[Mapping[str, Any]],
    uncertainty: Any = None,
    items: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> dict[str, Any]:
    """The intervals of Rubrics and Accuracy over the items the headline counts (compat drops failed ones),
    and the rater spread beside them. With ``items`` (id -> item), each row of the modality, category and
    sub-category tables gets its own, over that row's items (written into the row, as the headline's)."""
    from audioreason.scorers.mmar_rubrics.formulas import GROUP_KEYS

    U = _uncertainty()
    uncertainty = uncertainty or U.DEFAULT
    if items is not None:
        for key in GROUP_KEYS:
            for name, row in (result.get(key) or {}).items():
                members = [d for d in details if str((items.get(str(d["id"])) or {}).get(key)) == name]
                if isinstance(row, dict):
                    row["uncertainty"] = _mmar_intervals(row, members, uncertainty)
    return {
        "uncertainty": _mmar_intervals(result, details, uncertainty),
        "rater_spread": U.rater_spread([d.get("rater_scores") or [] for d in details]),
    }


def to_judge(run: Any) -> int:
    """The outputs the judge sees: those the official gate passes (a wrong answer is never judged)."""
    from audioreason.text.answers import official_string_match

    return sum(
        official_string_match(run.items[r["id"]]["answer"], answer_text(r.get("output")), run.items[r["id"]]["choices"])
        for s in run.sets
        for r in s.records
        if run.items[r["id"]].get("rubric")
    )


def client(model: str, options: Any) -> Any:
    from audioreason.scorers.mmar_rubrics.scorer import default_judge

    return default_judge(
        options.compat,
        model,
        base_url=options.base_url,
        api_key_env=options.api_key_env,
        structured_outputs=options.structured_outputs,
    )


def make_scorer(judge: Any, options: Any, cache: str, extra: Mapping[str, Any]) -> Any:
    from audioreason.scorers.mmar_rubrics.scorer import MMARRubricsScorer

    return MMARRubricsScorer(
        judge, compat=options.judge.compat, cache=cache, official_scorer=options.judge.official_scorer, **extra
    )


def prompt_sha256(scorer: Any) -> str:
    """The wording it sends: the official scorer's file hash when it reads the official wording."""
    from audioreason.scorers.mmar_rubrics import scorer as mmar

    if scorer.official is not None:
        return scorer.official.sha256
    texts = (
        (mmar.SYSTEM_LEVEL_PROMPT, mmar.SYSTEM_LEVEL_TEMPLATE)
        if scorer.protocol == "system"
        else (mmar.SYSTEM_PROMPT, mmar.USER_TEMPLATE, mmar.CRITERION_TEMPLATE)
    )
    return text_sha256("\n\x00\n".join(texts))


def score(scoring: Any) -> dict[str, Section]:
    return {NAME: scoring.judged(NAME)} if scoring.runs(NAME) else {}


def mmar_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    value = None if entry.get("headline_unavailable") else entry.get("rubrics")
    left_out = _left_out_note(entry)
    return [
        Row(
            label("mmar_rubrics: Accuracy (official gate)"),
            entry.get("accuracy"),
            entry["n"],
            "rule-based (no model)" + left_out,
            interval=_interval(entry, "accuracy"),
        ),
        Row(
            label("mmar_rubrics: Rubrics"),
            value,
            entry["n"],
            _judge_note(entry, entry.get("n_judged")) + left_out,
            interval=_interval(entry, "rubrics"),
        ),
    ]


DECLARATION = Declaration(
    name=NAME,
    folder="mmar_rubrics",
    inputs={"answers": "text"},
    # its compute() options besides the judge's (apps.shells adds those to every judged module)
    options=(
        "items",
        "model",
        "return_items",
        "compat",
        "official_scorer",
        "min_valid_raters",
        "protocol",
        "item_timeout_s",
        "run_timeout_s",
    ),
    fit=fit,
    score=score,
    detect=lambda result: "rubrics" in result,
    judged=Judged(
        client=client,
        to_judge=to_judge,
        make_scorer=make_scorer,
        section=mmar_rubrics_section,
        headline="rubrics",
        default_model=MMAR_JUDGE_MODEL,
        prompt_sha256=prompt_sha256,
        protocol=lambda scorer: {"rubric_protocol": scorer.protocol, "compat": scorer.compat},
    ),
    results=(
        Results(
            NAME,
            "MMAR-Rubrics",
            mmar_rows,
            tables=("mmar_rubrics_table", "mmar_groups_table", "judge_card_table"),
            figures=("mmar_rubrics_figure",),
        ),
    ),
)


__all__ = ["DECLARATION", "mmar_rubrics_section", "mmar_uncertainty", "reply_parts"]
