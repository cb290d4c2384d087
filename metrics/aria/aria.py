"""ARIA-Rubrics: six chain-of-thought metrics (M1-M6) and the ARIA score for audio reasoning.

A thin `evaluate` shell: all logic lives in the installed `audioreason` package (evaluate copies this
file alone into its cache, so it must not import siblings). See README.md (the metric card).
"""

import evaluate

from audioreason.apps import shells
from audioreason.scorers.aria.scorer import AriaConfig, AriaScorer, check_columns, check_one_condition

_CITATION = """\
@article{aria_rubrics,
  title  = {ARIA-Rubrics: Six Metrics for Audio Reasoning Quality},
  note   = {Implementation: audioreason}
}
"""

_DESCRIPTION = """\
ARIA-Rubrics scores the chain of thought (CoT) of an audio-language model written in the four-step
format [PERCEPTION] (with an Entities: line) / [ANALYSIS] / [REASONING] / [ANSWER]: M1 acoustic
grounding (CLAP), M2 inter-step coherence (sentence embeddings), M3 chain coverage (a small LM's
substantiveness scores), M4 step causality (perplexity of the gold answer), M5 reasoning progress (NLI
entailment), M6 audio lexical density (word vectors against an AudioSet vocabulary). ARIA is their
unweighted mean; accuracy uses the paper's three-stage answer extraction (Appendix E).
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions (list of str): raw model outputs (the whole CoT).
    references (list of str): gold answer texts.
    choices (list of list of str): the choices of each item (for answer extraction).
    audio (list, optional): per item a file path, (array, rate) or {"array", "sampling_rate"}; needed for M1.
    return_items (bool): also return the per-item table (raw and clipped metrics, slots, extracted answer).
    backbones ("paper" | "offline" | dict): role -> local path, HF id (local cache) or "packaged:NAME".
    Any other AriaConfig option: m1_audio ("whole" | "random_crop"), m3_mode ("generate" | "logprob"),
    m4_absent ("info_zero" | "term_zero"),
    answer_tags, answer_substring, on_audio_error ("raise" | "skip"), allow_download, batch_size, seed,
    vocabulary, mode_rule ("paper" | "fitted"), mode_thresholds.
Returns:
    M1..M6 and M1_std..M6_std (None when a backbone is unavailable), aria, aria_std, aria_metrics,
    aria_complete, accuracy, unanswered_rate, answer_methods, reasoning_mode, reasoning_mode_rule, backbones (per
    metric, or
    "unavailable: reason"), counts (skipped and failed work), note (when ARIA is partial), items.
Examples:
    >>> aria = evaluate.load(audioreason.metric_path("aria"))
    >>> aria.compute(predictions=[cot], references=["Dog barking"], choices=[["Dog barking", "Rain"]],
    ...              audio=["clip.wav"], backbones="offline")
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Aria(shells.ShellMetric):  # not imported by name: evaluate takes the first Metric class it sees
    SCORER = "aria"

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=shells.features(self.SCORER),
            reference_urls=["https://arxiv.org/abs/2602.14224"],
        )

    def _compute(
        self,
        predictions,
        references,
        choices=None,
        audio=None,
        model=None,
        condition=None,
        return_items=False,
        rows="all",
        **options,
    ):
        check_columns(shells.present(choices), model)
        chosen = shells.select_rows(self.SCORER, rows, len(predictions), condition=condition)
        if chosen.every_row:
            check_one_condition(condition)
        scorer = AriaScorer(AriaConfig(), **options)
        return chosen.noted(
            scorer.score(
                chosen.pick(predictions),
                chosen.pick(references),
                chosen.pick(choices),
                audio=chosen.pick(shells.present(audio)),
                return_items=return_items,
            )
        )
