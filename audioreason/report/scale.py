"""The one place that knows on which scale each number of a result is, and the one formatter.

Every scorer here reports on one scale, fractions in [0, 1] (``audioreason.base.scale``); the report and the
explorer print them the same way, with four decimals (a paper's percentage is 100 times the value). Results
written before that (``mmar_rubrics`` and ``audiospan_rubric`` scores, and ``text_prior_decomposition``'s R_N,
were percentages then) are still read right:

- a result that states its scale (``"scale"``: 100, 1, ``"0-100"`` or ``"0-1"``; a ``results.json`` that states
  one for the whole file passes it to every result in it, ``load``; ``audioreason score`` always states "0-1")
  is read as it says;
- otherwise a result of one of those scorers whose headline values exceed 1 (impossible in [0, 1]: rubrics or
  accuracy, rubric, semantic or temporal, an R_N) is read on their old scale (``LEGACY_PERCENT_FIELDS``);
- otherwise the value is a fraction.

Everything shown goes through ``fraction`` (to a number in [0, 1]) and ``display`` (to text). A missing value
(None, NaN: unavailable or undefined) is "n/a", never 0; so is a judged score whose judged items all failed
(``unavailable``, ``judged``: a headline or one breakdown row).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

PERCENT, FRACTION = 100.0, 1.0
DECIMALS = 4  # as audioreason.base.scale.DISPLAY_DECIMALS

# Fields those scorers wrote as percentages (0-100) before the one 0-1 scale; "*" is every field.
LEGACY_PERCENT_FIELDS: dict[str, frozenset[str]] = {
    "mmar_rubrics": frozenset({"*"}),
    "audiospan_rubric": frozenset({"*"}),
    "text_prior_decomposition": frozenset({"R_N", "R_2"}),
}
# Exceptions to "*": fields that were fractions then too (an item's MMAR-Rubrics score, the middle-3 mean of its
# raters' satisfied/total).
LEGACY_FRACTION_FIELDS: dict[str, frozenset[str]] = {"mmar_rubrics": frozenset({"item.score"})}
# The headline values that tell an old result: any above 1 cannot be a fraction.
LEGACY_HEADLINES: dict[str, tuple[str, ...]] = {
    "mmar_rubrics": ("rubrics", "accuracy"),
    "audiospan_rubric": ("rubric", "semantic", "temporal"),
}


def _legacy_percent(scorer: str, result: Optional[Mapping[str, Any]]) -> bool:
    """Whether ``result`` (a scorer's result or an item's values) was written on the old percentage scale."""
    if not isinstance(result, Mapping):
        return False
    values = [result.get(k) for k in LEGACY_HEADLINES.get(scorer, ())]
    if scorer == "text_prior_decomposition":
        per_model = (result.get("retention") or {}).get("per_model") or {}
        values = [
            v.get("R_N")
            for per_n in per_model.values()
            if isinstance(per_n, Mapping)
            for v in per_n.values()
            if isinstance(v, Mapping)
        ]
    return any((number(v) or 0) > 1 for v in values)


STATED = {100: PERCENT, "100": PERCENT, "0-100": PERCENT, 1: FRACTION, "1": FRACTION, "0-1": FRACTION}


def stated_scale(stated: Any, where: str) -> float:
    """A stated scale (100, 1, "0-100", "0-1") as the value of a perfect score; anything else is an error."""
    if isinstance(stated, bool) or not isinstance(stated, (int, float, str)) or stated not in STATED:
        raise ValueError(f'{where} states scale {stated!r}; expected 1, 100, "0-1" or "0-100"')
    return STATED[stated]


def scale_of(scorer: str, field: str, result: Optional[Mapping[str, Any]] = None) -> float:
    """The value of a perfect score for ``field`` of a ``scorer`` result: 1, or 100 as stated or as an old
    result was written."""
    stated = result.get("scale") if isinstance(result, Mapping) else None
    if stated is not None:
        return stated_scale(stated, f"a {scorer} result")
    if not _legacy_percent(scorer, result) or field in LEGACY_FRACTION_FIELDS.get(scorer, frozenset()):
        return FRACTION
    fields = LEGACY_PERCENT_FIELDS.get(scorer, frozenset())
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


def unavailable(values: Any) -> Optional[str]:
    """Why a judged score (a set's headline, or one group's row of its breakdown) is not a score, or None.
    It is not one when items went to the judge and every one failed: the value written counts those failures
    at 0 (the rule ``audioreason score`` records as ``headline_unavailable``; a group's row has its own
    ``n_failed`` and ``n_judged``/``n_scored``). Such a value is shown as n/a everywhere, never as 0."""
    if not isinstance(values, Mapping):
        return None
    if values.get("headline_unavailable"):
        return str(values["headline_unavailable"])
    failed, judged = number(values.get("n_failed")) or 0, values.get("n_judged", values.get("n_scored"))
    if failed > 0 and not number(judged):
        return f"every one of the {int(failed)} items sent to the judge failed; not a score"
    return None


def judged(values: Any, field: str) -> Any:
    """``values[field]`` of a judged score, None (n/a) when it is ``unavailable``."""
    return None if not isinstance(values, Mapping) or unavailable(values) else values.get(field)


def display(value: Any, scorer: str, field: str, result: Optional[Mapping[str, Any]] = None) -> str:
    """Text for a reported number on the 0-1 scale: "0.4167" ("n/a" when missing or undefined)."""
    share = fraction(value, scorer, field, result)
    return "n/a" if share is None else f"{share:.{DECIMALS}f}"


def interval(values: Any, field_name: str) -> str:
    """The 95% interval ``audioreason score`` recorded for ``values[field_name]`` (``values["uncertainty"]``,
    on the 0-1 scale): " [lo, hi]", " [no interval: why]" when it could not be computed, "" when the result
    carries none (scored before intervals, or a scorer's own output)."""
    u = ((values.get("uncertainty") if isinstance(values, Mapping) else None) or {}).get(field_name)
    if not isinstance(u, Mapping):
        return ""
    ci = u.get("ci95")
    if isinstance(ci, Sequence) and len(ci) == 2 and all(number(x) is not None for x in ci):
        return f" [{number(ci[0]):.{DECIMALS}f}, {number(ci[1]):.{DECIMALS}f}]"
    return f" [no interval: {u.get('unavailable') or 'none recorded'}]"


def rater_spread(values: Any) -> str:
    """A judged score's rater spread, as "; rater sd ..." after its value (the mean over items of the raters'
    standard deviation), or ""."""
    spread = values.get("rater_spread") if isinstance(values, Mapping) else None
    if not isinstance(spread, Mapping):
        return ""
    sd = number(spread.get("sd"))
    raters = spread.get("raters")
    return f"; rater sd {'n/a' if sd is None else f'{sd:.{DECIMALS}f}'} ({raters} rater{'' if raters == 1 else 's'})"


__all__ = [
    "DECIMALS",
    "FRACTION",
    "LEGACY_FRACTION_FIELDS",
    "LEGACY_PERCENT_FIELDS",
    "PERCENT",
    "display",
    "fraction",
    "interval",
    "judged",
    "number",
    "rater_spread",
    "scale_of",
    "stated_scale",
    "unavailable",
]
