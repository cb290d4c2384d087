"""The AudioSpan Rubric's declaration (``scorers.declare``): its evaluate module's inputs and options, when it
fits a run, how the run scoring judges it (``evaluation.score``), its section of the results, its printed rows
and its report table and figure. Layer 9 (ARCHITECTURE.md): the scorer (``scorer.py``, ``formulas.py``) never
imports it."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.base.protocol import text_sha256
from audioreason.evaluation.rows import Row
from audioreason.evaluation.rows import interval as _interval
from audioreason.evaluation.rows import judge_note as _judge_note
from audioreason.evaluation.rows import left_out_note as _left_out_note
from audioreason.evaluation.sections import NO_RUBRIC, OutputSet, Section, _uncertainty
from audioreason.scorers.declare import Declaration, Judged, Results
from audioreason.text.audiospan_templates import item_format

NAME = "audiospan_rubric"


def fit(benchmark: str, items: Sequence[Mapping[str, Any]], sets: Sequence[OutputSet]) -> Optional[str]:
    if benchmark != "audiospan":
        return f"the AudioSpan Rubric grades AudioSpan open-ended answers; the benchmark is {benchmark}"
    if not any(item_format(it) == "oeq" and it.get("rubric") for it in items):
        return "no open-ended AudioSpan item with rubric criteria (native_oeq) in this run"
    return None


def audiospan_rubric_section(
    make_scorer: Callable[[], Any],
    sets: Sequence[OutputSet],
    items: Mapping[str, Mapping[str, Any]],
    uncertainty: Any = None,
) -> Section:
    """An AudioSpanRubricScorer per set on its open-ended items (``make_scorer()``, as for MMAR-Rubrics)."""
    section = Section("ok")
    for output_set in sets:
        open_ended = [r for r in output_set.records if item_format(items[r["id"]]) == "oeq"]
        records = [r for r in open_ended if items[r["id"]].get("rubric")]
        # As for MMAR-Rubrics: an open-ended item without criteria is not judged, but counted and named.
        no_rubric = [str(r["id"]) for r in open_ended if not items[r["id"]].get("rubric")]
        for record in open_ended:
            if not items[record["id"]].get("rubric"):
                section.items[record["key"]] = {"status": NO_RUBRIC}
        if no_rubric:
            section.notes.append(
                f"{output_set.label}: {len(no_rubric)} open-ended item(s) without rubric criteria, "
                f"not judged: {', '.join(no_rubric)}"
            )
        if not records:
            continue
        result = make_scorer().score(
            [items[r["id"]] for r in records], [r.get("output") for r in records], return_items=True
        )
        details = result.pop("items")
        U = _uncertainty()
        # The headline counts a failed item at 0 (audiospan_rubric.score_verdicts): so does its interval.
        interval = (
            U.bootstrap_mean([d.get("rubric") or 0 for d in details], uncertainty or U.DEFAULT)
            if result.get("rubric") is not None
            else U.unavailable("Rubric has no value", U.PERCENTILE, len(details), uncertainty or U.DEFAULT)
        )
        section.results.append(
            {
                **output_set.describe(),
                **result,
                "failed_outputs": output_set.failed,
                "no_rubric": len(no_rubric),
                "no_rubric_ids": no_rubric,
                "uncertainty": {"rubric": interval},
                "rater_spread": U.rater_spread([d.get("rater_scores") or [] for d in details]),
            }
        )
        for record, detail in zip(records, details):
            section.items[record["key"]] = {
                "rubric": detail.get("rubric"),
                "n_valid_raters": detail.get("n_valid_raters"),
                "judge": detail.get("judge", []),
            }  # each rater's verdict per criterion
    return section


def to_judge(run: Any) -> int:
    return sum(item_format(run.items[r["id"]]) == "oeq" for s in run.sets for r in s.records)


def client(model: str, options: Any) -> Any:
    from audioreason.judges import OpenAICompatibleJudge

    return OpenAICompatibleJudge(
        model, base_url=options.base_url, api_key_env=options.api_key_env, structured_outputs=options.structured_outputs
    )


def make_scorer(judge: Any, options: Any, cache: str, extra: Mapping[str, Any]) -> Any:
    from audioreason.scorers.audiospan_rubric.scorer import AudioSpanRubricScorer

    return AudioSpanRubricScorer(judge, cache=cache, **extra)


def prompt_sha256(scorer: Any) -> str:
    from audioreason.scorers.audiospan_rubric import scorer as span

    return text_sha256("\n\x00\n".join((span.SYSTEM_PROMPT, span.USER_TEMPLATE, span.SCHEMA_VERSION)))


def score(scoring: Any) -> dict[str, Section]:
    return {NAME: scoring.judged(NAME)} if scoring.runs(NAME) else {}


def audiospan_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    value = None if entry.get("headline_unavailable") else entry.get("rubric")
    return [
        Row(
            label("audiospan_rubric: Rubric (Eq. 2)"),
            value,
            entry["n"],
            _judge_note(entry, entry.get("n_scored")) + _left_out_note(entry),
            interval=_interval(entry, "rubric"),
        )
    ]


DECLARATION = Declaration(
    name=NAME,
    folder="audiospan_rubric",
    inputs={"item_id": "text", "choices": "texts", "verdicts": "text", "mcq_correct": "bool"},
    # its compute() options besides the judge's (apps.shells adds those to every judged module)
    options=(
        "items",
        "judge_model",
        "mcq_correct",
        "return_items",
        "rows",
        "aggregation",
        "tolerance_s",
        "span_tolerance_s",
    ),
    fit=fit,
    score=score,
    detect=lambda result: "rubric" in result and "semantic" in result,
    judged=Judged(
        client=client,
        to_judge=to_judge,
        make_scorer=make_scorer,
        section=audiospan_rubric_section,
        headline="rubric",
        prompt_sha256=prompt_sha256,
        no_model="no judge given: pass --judge-model (AudioSpan, arXiv:2608.26431, §3.2 grades with an "
        "ensemble of LLM judges; App. C.4 Table 8 lists gpt-5.4 as its judge model)",
    ),
    results=(
        Results(
            NAME,
            "AudioSpan Rubric (open-ended)",
            audiospan_rows,
            tables=("audiospan_rubric_table", "judge_card_table"),
            figures=("rubric_figure",),
        ),
    ),
)


__all__ = ["DECLARATION", "audiospan_rubric_section"]
