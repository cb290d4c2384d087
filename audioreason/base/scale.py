"""The one score scale of every scorer here: a score, a rate or an accuracy is a fraction in [0, 1].

Why 0-1 and not the percentages three of the four papers print: it is the scale of `evaluate`'s own metrics
(accuracy, precision, recall, f1 return fractions), so results combined with ``evaluate.combine`` or set beside
those metrics read alike; it is the scale ARIA-Rubrics defines M1-M6 and its reasoning-mode thresholds on; and
the values the papers define as ratios (k/3 for an anchor chain, weights 1 and 1/2 in the AudioSpan Rubric,
satisfied/5 for an MMAR rater, correct/total) are exact fractions in it. A paper's percentage is 100 times
the value here (each metric card lists the paper's numbers in both).

Exact arithmetic: where the paper's values are fractions, scorers compute with ``fractions.Fraction`` and
turn a value into a float once, at the output edge (``to_float``): the float is the one nearest the exact
value, so no sum of rounded floats shows as 0.49999999999999994. ``rounded`` is for what people read (Space
widgets, printed tables): floats to 4 decimals, everything else as it is.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Union

SCALE = "0-1"
DISPLAY_DECIMALS = 4


def to_float(value: Optional[Union[Fraction, float, int]]) -> Optional[float]:
    """An exact value as the nearest float (None stays None)."""
    return None if value is None else float(value)


def floats(obj: Any) -> Any:
    """``obj`` with every Fraction inside dicts, lists and tuples turned into its nearest float."""
    if isinstance(obj, Fraction):
        return float(obj)
    if isinstance(obj, dict):
        return {k: floats(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(floats(v) for v in obj)
    return obj


def rounded(obj: Any, decimals: int = DISPLAY_DECIMALS) -> Any:
    """``obj`` for people to read: every float (and Fraction) inside dicts and lists rounded to ``decimals``."""
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, (float, Fraction)):
        return round(float(obj), decimals)
    if isinstance(obj, dict):
        return {k: rounded(v, decimals) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(rounded(v, decimals) for v in obj)
    return obj
