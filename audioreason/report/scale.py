"""The one place that knows on which scale each scorer reports each number, and the one formatter.

The scorers do not share a scale yet: ``aria`` and ``anchor_chain`` report fractions in [0, 1], the
``mmar_rubrics`` and ``audiospan_rubric`` scores are percentages (x100, as their papers print them), and
``text_prior_decomposition`` reports accuracies as fractions but R_N as a percentage. A result that states
its own scale (``"scale": 100`` or ``"scale": 1``: the value of a perfect score, for every number in it) is
read as it says (also written ``"0-100"`` or ``"0-1"``; a ``results.json`` that states one for the whole file
passes it to every result in it, ``load``); otherwise the scale comes from ``PERCENT_FIELDS`` below, the
scales the scorers wrote before the project settled on one (results written then state none). Everything the report and the
explorer show goes through ``fraction`` (to a number in [0, 1]) and ``display`` (to text), so either scale
renders the same way.

Display conventions: the ARIA metrics M1-M6 and the ARIA score are shown as scores in [0, 1] with four
decimals (ARIA-Rubrics Table 1); every other number (accuracy, Rubrics, Rubric, Chain, R_TP, R_N, shares)
is shown as a percentage with one decimal. A missing value (None, NaN: unavailable or undefined) is
"n/a", never 0.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Optional

PERCENT, FRACTION = 100.0, 1.0

# Fields a scorer reports as percentages (0-100) when its result does not state a scale; "*" is every field.
PERCENT_FIELDS: dict[str, frozenset[str]] = {
    "mmar_rubrics": frozenset({"*"}),
    "audiospan_rubric": frozenset({"*"}),
    "text_prior_decomposition": frozenset({"R_N", "R_2"}),
}
# Exceptions to "*": fields those scorers report as fractions (an item's MMAR-Rubrics score is the middle-3
# mean of its raters' satisfied/total, in [0, 1]; the headline is 100 x the mean of these).
FRACTION_FIELDS: dict[str, frozenset[str]] = {"mmar_rubrics": frozenset({"item.score"})}
# Fields shown as [0, 1] scores rather than percentages (ARIA-Rubrics Table 1).
SCORE_FIELDS = frozenset({"M1", "M2", "M3", "M4", "M5", "M6", "aria"})


STATED = {100: PERCENT, "100": PERCENT, "0-100": PERCENT, 1: FRACTION, "1": FRACTION, "0-1": FRACTION}


def stated_scale(stated: Any, where: str) -> float:
    """A stated scale (100, 1, "0-100", "0-1") as the value of a perfect score; anything else is an error."""
    if isinstance(stated, bool) or not isinstance(stated, (int, float, str)) or stated not in STATED:
        raise ValueError(f"{where} states scale {stated!r}; expected 1, 100, \"0-1\" or \"0-100\"")
    return STATED[stated]


def scale_of(scorer: str, field: str, result: Optional[Mapping[str, Any]] = None) -> float:
    """The value of a perfect score for ``field`` of a ``scorer`` result: 100 or 1."""
    stated = result.get("scale") if isinstance(result, Mapping) else None
    if stated is not None:
        return stated_scale(stated, f"a {scorer} result")
    if field in FRACTION_FIELDS.get(scorer, frozenset()):
        return FRACTION
    fields = PERCENT_FIELDS.get(scorer, frozenset())
    return PERCENT if "*" in fields or field in fields else FRACTION


def number(value: Any) -> Optional[float]:
    """A finite float, or None for a missing or undefined value (None, NaN, a non-number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def fraction(value: Any, scorer: str, field: str, result: Optional[Mapping[str, Any]] = None) -> Optional[float]:
    """``value`` of ``field`` as a fraction of a perfect score (None when missing)."""
    value = number(value)
    return None if value is None else value / scale_of(scorer, field, result)


def percent(share: Optional[float]) -> str:
    """A share in [0, 1] as text: "41.7%" (None: "n/a")."""
    return "n/a" if share is None else f"{100 * share:.1f}%"


def display(value: Any, scorer: str, field: str, result: Optional[Mapping[str, Any]] = None) -> str:
    """Text for a reported number: "0.5530" for ARIA scores, "41.7%" for every rate or percentage score."""
    share = fraction(value, scorer, field, result)
    if share is None or field not in SCORE_FIELDS:
        return percent(share)
    return f"{share:.4f}"


__all__ = ["FRACTION", "FRACTION_FIELDS", "PERCENT", "PERCENT_FIELDS", "SCORE_FIELDS", "display", "fraction", "number",
           "percent", "scale_of", "stated_scale"]
