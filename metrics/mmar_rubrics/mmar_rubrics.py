"""MMAR-Rubrics: answer-gated, instance-level rubric scoring of audio reasoning by an LLM judge.

A thin `evaluate` shell: all logic lives in the installed `audioreason` package (evaluate copies this
file alone into its cache, so it must not import siblings). See README.md (the metric card).
"""

import evaluate

from audioreason.apps import shells
from audioreason.apps.shells import items_for_references, judge_from_options
from audioreason.judges import MMAR_JUDGE_MODEL
from audioreason.scorers.mmar_rubrics.scorer import MMARRubricsScorer, default_judge

_CITATION = """\
@inproceedings{mmar_rubrics,
  title  = {Interspeech 2026 Audio Reasoning Challenge: MMAR-Rubrics},
  note   = {Implementation: audioreason}
}
"""

_DESCRIPTION = """\
MMAR-Rubrics scores a model's reasoning on MMAR items against instance-level rubrics (5 binary criteria
written from the gold chain of thought). An answer that fails the official MMAR string match scores 0 and
is not judged; a correct one is judged 5 times by an LLM judge, each rater's score is satisfied / k, and
the item's score is the mean of the middle 3. Rubrics (Total Score) and Accuracy are fractions in [0, 1] (the paper
prints x100), overall and per
modality, category and sub-category. compat=True reproduces the official scorer exactly.
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions (list of str): the predicted reasoning of each item.
    references (list of str): the MMAR item id of each prediction.
    answers (list of str): the predicted answer of each item (the text the gate checks).
    items (list of dict or str): the MMAR records (question, choices, answer, thinking, rubric, modality,
        category, sub-category), or the path of a JSONL file of them (MMAR-meta.jsonl).
    judge (audioreason.judges.Judge, optional): the judge; default an OpenAI-compatible client for
        `model` at `base_url` (key from `api_key_env`, default OPENAI_API_KEY).
    model (str): default "gpt-4o-2024-11-20". base_url, api_key_env, concurrency, timeout_s, max_attempts,
        server_error_attempts: passed to OpenAICompatibleJudge (compat: 3 requests per attempt, 120 s).
    compat (bool): reproduce the official scorer (raters in order, an item dropped at its first failed
        rater and from every denominator, replies read as the official scorer reads them, invalid replies
        resent within 20 attempts).
    official_scorer (str): path of your copy of the official code/evaluation_rubrics.py: its prompt wording
        is sent (read at run time); result["prompt"] says which wording was used.
    raters (int), cache (path), max_reasks (int), min_valid_raters (int), protocol ("instance" | "system"),
    sampling (SamplingParams), ensemble (JudgeEnsemble), item_timeout_s (float): see MMARRubricsScorer.
    return_items (bool): also return per-item verdicts with justifications.
    A judge that cannot work (no API key for the OpenAI API or a remote base_url; the first request refused
    with 401, 403 or 404, or unable to connect) raises audioreason.judges.JudgeUnavailable naming the cause
    before any item is scored; later failures are counted per item (n_failed).
Returns:
    rubrics, accuracy, n, n_rubrics, n_correct, n_judged, n_gated, n_failed, n_partial, n_dropped,
    failed_ids, partial_ids, modality / category / sub-category tables, judge_stats, judges, compat, prompt,
    reliability (alpha, or None with the reason in "unavailable"), items.
Examples:
    >>> mmar = evaluate.load(audioreason.metric_path("mmar_rubrics"))
    >>> mmar.compute(predictions=reasonings, references=ids, answers=answers, items="MMAR-meta.jsonl",
    ...              compat=True)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MmarRubrics(shells.ShellMetric):  # not imported by name: evaluate takes the first Metric class it sees
    SCORER = "mmar_rubrics"

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=shells.features(self.SCORER),
            reference_urls=["https://arxiv.org/abs/2602.14224"],
        )

    def _compute(
        self, predictions, references, answers=None, items=None, judge=None, model=None, return_items=False, **options
    ):
        answers = shells.present(answers)
        if answers is None or items is None:
            raise ValueError(
                "mmar_rubrics needs answers=[...] (predicted answers) and items=[...] or a "
                "JSONL path (the MMAR records the references name)"
            )
        chosen = items_for_references(items, references)
        compat = bool(options.get("compat", False))
        judge = judge_from_options(
            judge, model or MMAR_JUDGE_MODEL, options, lambda name, **client: default_judge(compat, name, **client)
        )
        scorer = MMARRubricsScorer(judge, **options)
        return scorer.score(chosen, predictions, answers, return_items=return_items)
