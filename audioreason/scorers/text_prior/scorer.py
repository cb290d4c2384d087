"""Text prior and audio reliance ("All That Glitters Is Not Audio: Rethinking Text Priors and Audio
Reliance in Audio-Language Evaluation", arXiv:2604.24401, §2-§4): from per-condition predictions to the
paper's tables. Where the paper is silent, options name the conventions of its public analysis code
(github.com/leonardofhy/all-that-glitters-is-not-audio); the metric card says which option reproduces which.

Input: one record per (model, item, condition). ``condition`` follows the one condition grammar
(``audioreason.text.conditions``; case-insensitive, surrounding spaces ignored), of which this scorer takes::

    condition := "full" | "none" | "tb" | "frag:" N ":" k      N, k decimal integers, N >= 2, 0 <= k < N

full = the clip as given; none = no audio input at all (not silence); tb = the model's text-only
backbone; frag:N:k = the k-th (0-based) of N equal-duration fragments (``audioreason.audio.fragments``).

A record's ``prediction`` is either a correctness (True/False/0/1; ``reference`` may be None) or a raw
model output (str), scored with the core's hybrid extractor (``answers.extract_hybrid``) against the
record's ``choices`` and gold ``reference``; None means the run errored (no output: the public code's
"ERROR: ..." record). A raw output whose extraction fails (``unanswered``: no letter, no content match and
no judge to ask, or an empty output; ``judge_error``; ``judge_invalid``) is also an *errored* prediction.
Errored predictions count as not correct in every accuracy and are reported per condition; in the FS/XS
split they follow ``errored_fragments``: under "separate" every errored fragment is unverified evidence,
under "sufficient" (the public code) only a run that errored counts, as sufficient, and an unreadable
output is a wrong answer (``sections._fragment_evidence``, ``audioreason.scorers.text_prior.formulas.categorize_item``).

``score_text_prior(records)`` returns accuracy per condition, the text-prior rate, the retention curve,
the item decomposition (Table 1, Table 4), the per-category table (Table 5), counts of missing and
errored predictions, and optionally the per-item table. The formulas live in
``audioreason.scorers.text_prior.formulas``; this module groups the records and assembles the result: the
records are checked and scored in ``records``, the other input shapes read in ``inputs``, the sections built
in ``sections``, the display tables in ``tables``, the demo table in ``examples``.

Scale: every accuracy, rate (R_TP, R_N), share and chance level is a fraction in [0, 1], the project's one
scale (``audioreason.base.scale``); the paper prints them x 100 (R_2 = 45.0 in the paper is 0.45 here). They are
computed exactly and returned as the nearest floats.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable, Mapping, Optional

from audioreason.base.scale import floats
from audioreason.scorers.text_prior import formulas as tp
from audioreason.scorers.text_prior.inputs import records_from_nested
from audioreason.scorers.text_prior.records import ERROR, Outcome, score_prediction, validate_records
from audioreason.scorers.text_prior.sections import (
    _accuracy_section,
    _category_section,
    _condition_order,
    _decomposition_section,
    _item_rows,
    _ModelTable,
    _retention_section,
    _text_prior_section,
)
from audioreason.text.conditions import Condition


def score_text_prior(
    data: Any,
    *,
    errored_fragments: str = "separate",
    chance: Optional[float] = None,
    zero_an_models: str = "as_zero",
    judge: Optional[Callable] = None,
    return_items: bool = False,
) -> dict[str, Any]:
    """Every number of the paper's §2 for several models at once.

    ``data``: a list of records (dicts with model, item_id, condition, prediction and optionally
    reference, choices, category, question) or the nested form ``{model: {item: {condition: correct}}}``.
    ``errored_fragments``: "separate" (default: an errored fragment, whether its run errored or its
    output could not be read, is not correct, and the XS items left unverified by errored or missing
    fragments are counted as ``XS_unverified``) or "sufficient" (the public analysis code: a fragment whose
    run errored, i.e. prediction None, counts as correct, so the item is FS; an unreadable output is a wrong
    answer). ``chance``: the TB chance level; when given it is used for every model, whatever the choices
    (the paper's MMAU and MMAR "TB − chance" use 0.25); when None, the mean of 1 / (number of choices) over
    the TB items. ``zero_an_models``: how a model with fragments and items with both Full and None, but no
    audio-needed item among them, enters the XS/AN model mean: "as_zero" (default, the public analysis
    code) or "exclude"; a model with no item with both Full and None is left out in both modes and named
    in ``decomposition.XS_over_AN.excluded``. ``judge(text, question,
    choices) -> index``: passed to ``extract_hybrid`` for raw outputs its regexes cannot decide.
    """
    if errored_fragments not in tp.ERRORED_FRAGMENT_MODES:
        raise ValueError(f"errored_fragments must be one of {tp.ERRORED_FRAGMENT_MODES}, got {errored_fragments!r}")
    if chance is not None and (isinstance(chance, bool) or not isinstance(chance, (int, float)) or not 0 < chance <= 1):
        raise ValueError(f"chance must be a number in (0, 1], e.g. 0.25 for four choices; got {chance!r}")
    if zero_an_models not in tp.ZERO_AN_MODES:
        raise ValueError(f"zero_an_models must be one of {tp.ZERO_AN_MODES}, got {zero_an_models!r}")
    if judge is not None and not callable(judge):
        raise ValueError("judge must be a callable judge(text, question, choices) -> choice index or None")
    if isinstance(data, Mapping):
        data = records_from_nested(data)
    elif isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
        raise ValueError("data must be a list of records or a {model: {item: {condition: correct}}} mapping")
    records = validate_records(data)

    by_model: dict[str, dict[Condition, dict[Hashable, Outcome]]] = {}
    for record in records:
        by_model.setdefault(record.model, {}).setdefault(record.condition, {})[record.item_id] = score_prediction(
            record, judge
        )
    tables = [_ModelTable(name, conditions) for name, conditions in by_model.items()]
    universe = {r.item_id for r in records}
    item_category = {r.item_id: r.category for r in records if r.category is not None}
    n_choices = {r.item_id: len(r.choices) for r in records if r.choices is not None}

    decomposition, labels = _decomposition_section(tables, errored_fragments, zero_an_models)
    result: dict[str, Any] = {
        "models": [t.name for t in tables],
        "accuracy": _accuracy_section(tables, len(universe)),
        "text_prior": _text_prior_section(tables, n_choices, chance),
        "retention": _retention_section(tables),
        "decomposition": decomposition,
        "by_category": _category_section(tables, item_category, universe),
        "counts": {
            "rows": len(records),
            "models": len(tables),
            "items": len(universe),
            "errored_predictions": {
                t.name: {
                    str(c): sum(o.status == ERROR for o in t.items(c).values())
                    for c in sorted(t.by_condition, key=_condition_order)
                }
                for t in tables
            },
            "missing_predictions": {
                t.name: {str(c): len(universe) - len(t.items(c)) for c in sorted(t.by_condition, key=_condition_order)}
                for t in tables
            },
            "absent_conditions": {
                t.name: [c for c in ("full", "none", "tb") if Condition(c) not in t.by_condition]
                + ([] if t.fragment_conditions else ["fragments"])
                for t in tables
            },
        },
        "options": {
            "errored_fragments": errored_fragments,
            "chance": chance,
            "zero_an_models": zero_an_models,
            "judge": judge is not None,
        },
    }
    if return_items:
        result["items"] = _item_rows(tables, labels, item_category, universe)
    return floats(result)
