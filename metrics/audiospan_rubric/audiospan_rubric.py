"""AudioSpan Rubric: open-ended answers about long audio graded per criterion (semantic + temporal) by a
judge ensemble, scored per Eq. 2 / Table 7 of AudioSpan: Spanning the Duration and Depth of Audio
Comprehension (arXiv:2608.26431).

A thin `evaluate` shell: all logic lives in the installed `audioreason` package (evaluate copies this
file alone into its cache, so it must not import siblings). See README.md (the metric card).
"""

import evaluate

from audioreason.apps import shells
from audioreason.scorers.audiospan_rubric.inputs import NO_JUDGE, item_names, items_from_json, score_inputs

_CITATION = """\
@misc{audiospan,
  title  = {AudioSpan: Spanning the Duration and Depth of Audio Comprehension},
  eprint = {2608.26431},
  archivePrefix = {arXiv},
  note   = {Implementation: audioreason}
}
"""

_DESCRIPTION = """\
Each AudioSpan open-ended item carries criteria (essential, weight 1 / supporting, weight 1/2, optional
time_range). A judge gives each criterion a semantic verdict (correct 1, partial 1/2, wrong 0, none) and a
temporal verdict (correct 1, wrong 0, missing, none). An essential criterion is graded on one dimension, the
judge's choice (App. C.3: semantic "none" = graded on tau), or tau when the criterion is marked
localization: true; a supporting one scores 1[sigma>0](sigma+tau)/2 with a missing tau falling back to sigma
(Table 7). Rubric = importance-weighted mean (Eq. 2), in exact fractions, in [0, 1] (the paper prints x100): the mean
over items and
Table 3's Avg (unweighted mean of the S/M/L tiers); semantic% and temporal% (Eq. 4), breakdowns by tier,
language, cognitive level and dimension, the ten-bin histogram, and with mcq_correct the MCQ-vs-OEQ analysis
of D.3 on items with an essential criterion (Rubric+, Rubric-, AUC with ties 1/2, four cells).
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions (list of str): the model's open-ended response to each item (None: no response, scored as
        the judge grades an empty answer).
    references (list of str): the item id of each prediction when `items` is given, otherwise each item
        itself as a JSON string (id, question, rubric, duration_tier, language, cognitive_level, dimension,
        pair_id).
    items (list of dict or str, optional): the OEQ records, or the path of a JSONL file of them.
    judge (audioreason.judges.Judge) or ensemble (JudgeEnsemble), or judge_model (str) with base_url,
        api_key_env, concurrency, timeout_s, max_attempts for an OpenAI-compatible judge.
    raters (int, 1), aggregation ("mean" | "trimmed_mean" | "majority"), cache (path), max_reasks (int, 2),
        tolerance_s (float, 5.0: a time point within this of the reference range is correct),
        span_tolerance_s (float, 0.0: a span must overlap the range; > 0 also accepts one that close, an option
        beyond the paper), sampling (SamplingParams). The deterministic check only flags disagreements.
    verdicts (list, optional): precomputed verdicts, one JSON string (or list, stored as its JSON) per item holding one
    entry per
        rater: a judge reply {"criteria": [...]}, a bare list of criteria entries, the raw reply text, or null
        for a failed rater. Validated and put in index order exactly as a judge's reply; a bad shape raises
        ValueError naming the item and rater. No judge is called.
    mcq_correct (list of bool or dict pair_id -> bool, optional): MCQ outcomes of the twin items.
    return_items (bool): also return per-item scores and verdicts.
    A judge that cannot work (no API key for the OpenAI API or a remote base_url; the first request refused
    with 401, 403 or 404, or unable to connect) raises audioreason.judges.JudgeUnavailable naming the cause
    before any item is scored; later failures are counted per item (n_failed).
    Inputs are checked before any judge call; a bad one is a ValueError naming the item (position and id)
    and the field: ids must be distinct; each criterion needs importance essential|supporting and a
    time_range null or [start, end] seconds, finite, 0 <= start <= end; mcq_correct flags must be
    true/false/0/1/null; tolerances finite seconds >= 0; judge client settings as OpenAICompatibleJudge checks.
Returns:
    rubric (mean over items), rubric_avg (Table 3 Avg over S/M/L; None while a tier is missing, listed in
    rubric_avg_missing_tiers), semantic, temporal (fractions in [0, 1]), by_importance, n, n_scored, n_failed,
    histogram,
    by (duration_tier, language, cognitive_level, dimension), temporal_disagreements, mcq_oeq (with
    n_no_essential, n_no_mcq, n_unscored), judge_stats.
Examples:
    >>> m = evaluate.load(audioreason.metric_path("audiospan_rubric"))
    >>> m.compute(predictions=responses, references=ids, items="oeq.jsonl", judge_model="gpt-4o",
    ...           raters=3)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AudiospanRubric(shells.ShellMetric):  # not imported by name: evaluate takes the first Metric class it sees
    SCORER = "audiospan_rubric"

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=shells.features(self.SCORER),
            reference_urls=["https://arxiv.org/abs/2608.26431"],
        )

    def _compute(
        self,
        predictions,
        references,
        item_id=None,
        choices=None,
        verdicts=None,
        mcq_correct=None,
        items=None,
        judge=None,
        judge_model=None,
        return_items=False,
        rows="all",
        **options,
    ):
        chosen = shells.select_rows(self.SCORER, rows, len(references), choices=choices)
        names = chosen.pick(item_names(references, shells.present(item_id)))
        records = items_from_json(names) if items is None else shells.items_for_references(items, names)
        mcq = mcq_correct if isinstance(mcq_correct, dict) else chosen.pick(shells.present(mcq_correct))
        result = score_inputs(
            records,
            chosen.pick(predictions),
            verdicts=chosen.pick(shells.present(verdicts)),
            mcq_correct=mcq,
            return_items=return_items,
            options=options,
            judge=lambda: shells.judge_from_options(judge, judge_model, options, missing=NO_JUDGE),
        )
        return chosen.noted(result)
