"""AudioSpan anchor Chain (Eq. 3) and native MCQ Accuracy (Eq. 1).

A thin `evaluate` shell: all logic lives in the installed `audioreason` package (evaluate copies this
file alone into its cache, so it must not import siblings). See README.md (the metric card).
"""

import evaluate

from audioreason.apps import shells
from audioreason.scorers.anchor_chain.scorer import check_task_columns, items_from_columns, score_task

_CITATION = """\
@article{audiospan,
  title  = {AudioSpan: Spanning the Duration and Depth of Audio Comprehension},
  note   = {Implementation: audioreason}
}
"""

_DESCRIPTION = """\
AudioSpan multiple-choice scores from raw model replies to the C.1 template ("Answer with ONLY the option
letter"). task="chain" (default): anchor chains of three linked MCQs (perception, understanding,
reasoning); Chain = 1/3 sum_k prod_{j<=k} 1[a_hat_j = a_j], per-link accuracy P/U/R, the grounding split
(U and R accuracy on chains whose perception link is correct vs wrong), breakdowns by operation, duration
tier and language, and the random baseline from the option counts (7/64 = 0.109375 for four options).
Every score is a fraction in [0, 1] (the paper prints percentages).
task="accuracy": native MCQ Accuracy with breakdowns by tier, language, cognitive level and dimension.
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions (list of str): the model's raw reply per question (None counts as unparsed).
    references (list of str): the gold answer per question, as the choice text or the option letter.
    choices (list of list of str): the options of each question, in lettered order A, B, C, ...
    task ("chain" | "accuracy"): anchor Chain (default) or native MCQ Accuracy.
    parse ("exact" | "tolerant"): "exact" (default): the reply stripped of whitespace must be exactly one
        upper-case option letter; "tolerant": the core's hybrid extractor ("B.", "(B)", "The answer is B",
        the choice text). Unparsed replies are counted and scored wrong.
    chain_id, link_position (lists; task="chain"): the chain of each row and its link, 1 (P), 2 (U),
        3 (R), each chain's rows in that order.
    operation, duration_tier, language (lists, optional): breakdown fields (chain: operation, tier,
        language; accuracy: tier, language).
    cognitive_level, dimension (lists, optional; task="accuracy"): breakdown fields.
    item_id (list, optional): the id of each row (default its position); ids must be distinct.
    return_items (bool): also return per-chain (chain) or per-item (accuracy) results.
    Every row is checked first: choices a list of at least two strings, a gold answer among them (text or
    letter), distinct ids; a bad row is a ValueError naming it (position and id) and the field.
Returns:
    chain: chain, random_chain, P, U, R, n, grounding, by_operation, by_duration_tier, by_language,
    unparsed, unparsed_by_link, n_items, parse, (chains).
    accuracy: accuracy, random_accuracy, unparsed, n, by_duration_tier, by_language, by_cognitive_level,
    by_dimension, parse, (items).
Examples:
    >>> metric = evaluate.load(audioreason.metric_path("anchor_chain"))
    >>> metric.compute(predictions=["A", "B", "A"], references=["x", "y", "z"],
    ...                choices=[["x", "y"], ["x", "y"], ["z", "w"]], chain_id=["c1"] * 3, link_position=[1, 2, 3])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AnchorChain(shells.ShellMetric):  # not imported by name: evaluate takes the first Metric class it sees
    SCORER = "anchor_chain"

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
        choices=None,
        task="chain",
        parse="exact",
        return_items=False,
        item_id=None,
        rows="all",
        **columns,
    ):
        columns = {k: shells.present(v) for k, v in columns.items()}
        check_task_columns(task, columns)
        chosen = shells.select_rows(self.SCORER, rows, len(references), choices=choices)
        item_id = shells.present(item_id)
        items = items_from_columns(
            chosen.pick(references),
            chosen.pick(choices),
            id=chosen.pick(item_id),
            **{k: chosen.pick(v) for k, v in columns.items()},
        )
        return chosen.noted(score_task(task, items, chosen.pick(predictions), parse=parse, return_items=return_items))
