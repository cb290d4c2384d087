"""Text prior and audio reliance ("All That Glitters Is Not Audio"): R_TP, the retention curve R_N and
the TS / FS / XS / AH / UN item decomposition, for several models at once.

A thin `evaluate` shell: all logic lives in the installed `audioreason` package (evaluate copies this
file alone into its cache, so it must not import siblings). See README.md (the metric card).
"""

import datasets
import evaluate

from audioreason.apps import shells
from audioreason.base.hf_internals import ChoosesFeatures
from audioreason.scorers.text_prior.inputs import records_from_columns
from audioreason.scorers.text_prior.records import prediction_column_kind
from audioreason.scorers.text_prior.scorer import score_text_prior

_CITATION = """\
@article{foo2026glitters,
  title   = {All That Glitters Is Not Audio: Rethinking Text Priors and Audio Reliance in Audio-Language Evaluation},
  author  = {Foo, Leonardo Haw-Yang and Yang, Chih-Kai and Li, Chen-An and Lu, Ke-Han and Lee, Hung-yi},
  journal = {arXiv preprint arXiv:2604.24401},
  year    = {2026},
  note    = {Public analysis code: github.com/leonardofhy/all-that-glitters-is-not-audio}
}
"""

_DESCRIPTION = """\
How much of an audio benchmark score needs the audio. One row per (model, item, condition), where the
condition is "full" (audio), "none" (no audio input), "tb" (the model's text-only backbone) or
"frag:N:k" (the k-th of N equal-duration fragments). Returns accuracy per condition, the text-prior rate
R_TP = Acc_none / Acc_full (per model, and across models as a ratio of sums), TB above chance, the
retention rate R_N (a fraction of Full accuracy) and its curve over N, the item decomposition TS / FS / XS / AH / UN
with
XS/AN over models, and the per-category Full-None gap and N=2 retention (Table 5).
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions (list): per row, a correctness (True/False/0/1), a raw model output (str, scored with the
        hybrid extractor against choices and the reference), or None (an errored prediction). One kind
        per call (None allowed with either, at any position, the first included).
    references (list of str, optional): gold answer texts; needed for raw outputs only.
    model (list of str): the model of each row.
    item_id (list of str or int): the item of each row (NaN or an infinity is refused: a NaN never equals
        itself, so each such row would become an item of its own).
    condition (list of str): "full", "none", "tb" or "frag:N:k" (N >= 2, 0 <= k < N).
    choices (list of list of str, optional): per row; needed for raw outputs, and gives the TB chance level.
    category (list of str, optional): per row, the item's task category (Table 5).
    question (list of str, optional): per row, passed to the judge.
    judge (callable, optional): judge(text, question, choices) -> choice index or None, for raw outputs
        the regexes cannot decide.
    errored_fragments ("separate" | "sufficient"): how an errored fragment prediction enters the FS / XS
        split. "separate" (default): an errored fragment (None, or an output that could not be read or
        judged) is not correct, and an audio-needed item with no correct fragment is XS, counted in
        XS_unverified when some fragment errored or is missing; "sufficient": a fragment whose run errored
        (None) counts as correct (the item is FS) and an unreadable output as wrong, as the public
        analysis code does.
    chance (float, optional): the TB chance level for every model, whatever the choices (0.25 reproduces
        the paper's MMAU and MMAR "TB - chance"); default: the mean of 1 / (number of choices) over the
        TB items.
    zero_an_models ("as_zero" | "exclude"): how a model with fragments and items in both Full and None,
        but no audio-needed item among them, enters the XS/AN model mean: as 0 (default, the public
        analysis code) or left out. A model with no item in both Full and None is left out in both modes
        (named in decomposition.XS_over_AN.excluded).
    return_items (bool): also return the per-item table with each item's category.
Returns:
    models, accuracy, text_prior, retention, decomposition, by_category, counts, options, (items).
Examples:
    >>> metric = evaluate.load(audioreason.metric_path("text_prior_decomposition"))
    >>> metric.compute(predictions=[True, False, True, True], references=None,
    ...                model=["m"] * 4, item_id=["q1"] * 4, condition=["full", "none", "frag:2:0", "frag:2:1"])
"""

_RAW = shells.features("text_prior_decomposition")
_CORRECTNESS = shells.features("text_prior_decomposition", predictions=datasets.Value("bool"))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TextPriorDecomposition(ChoosesFeatures, shells.ShellMetric):  # not imported by name (evaluate takes the first)
    SCORER = "text_prior_decomposition"

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[_RAW, _CORRECTNESS],
            reference_urls=["https://arxiv.org/abs/2604.24401"],
            codebase_urls=["https://github.com/leonardofhy/all-that-glitters-is-not-audio"],
        )

    # evaluate stores predictions in one typed Arrow column and picks its type from the first row, which
    # would silently turn True into "True" (or a string into True): the column's kind chooses the type.
    def choose_features(self, predictions):
        kind = prediction_column_kind(predictions)
        chosen = self.chosen_features()
        if chosen is not None and kind != "error":
            chosen_kind = "raw" if chosen["predictions"].dtype == "string" else "correctness"
            if kind != chosen_kind:
                raise ValueError(f"this batch holds {kind} predictions but earlier batches held {chosen_kind} ones")
        return _CORRECTNESS if kind == "correctness" else _RAW

    # Arrow's string column refuses a leading None, so a missing reference travels as "" and comes back None.
    @staticmethod
    def _references(predictions, references):
        if predictions is None:
            return references
        if references is None:
            return [""] * len(predictions)
        return ["" if r is None else r for r in references]

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score every row; ``references`` may be omitted when the predictions are correctness values."""
        return super().compute(predictions=predictions, references=self._references(predictions, references), **kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add rows; their predictions must be of the kind earlier batches held."""
        if predictions is not None:
            self.choose_features(predictions)
        return super().add_batch(
            predictions=predictions, references=self._references(predictions, references), **kwargs
        )

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one row."""
        self.choose_features([prediction])
        return super().add(prediction=prediction, reference="" if reference is None else reference, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        model=None,
        item_id=None,
        condition=None,
        choices=None,
        category=None,
        question=None,
        rows="all",
        **options,
    ):
        shells.check_rows(rows)  # every row applies: the decomposition reads every condition
        references = [r if r else None for r in references]
        present = shells.present
        records = records_from_columns(
            predictions,
            references,
            model=present(model),
            item_id=present(item_id),
            condition=present(condition),
            choices=present(choices),
            category=present(category),
            question=present(question),
        )
        return score_text_prior(records, **options)
