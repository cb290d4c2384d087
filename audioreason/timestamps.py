"""Deterministic timestamp normalisation and the AudioSpan temporal check (App. C.2: +-5 s tolerance).

    parse_timestamp("12:30") -> 750.0          parse_timestamp("64:00") -> 3840.0 (= 1:04:00)
    parse_timestamp("1:04:00") -> 3840.0       parse_timestamp("522.640 s") -> 522.64
    parse_span("12:30-13:05") -> (750.0, 785.0)
    parse_timestamp("soon") -> None            (never raises on garbage; ``strict=True`` raises ValueError)
    temporal_match(predicted, time_range, tolerance_s=5.0) -> True / False / None (no usable timestamp)

Minutes or seconds past 59 in MM:SS are accepted and carried (``64:00`` is 64 minutes); seconds past 59
in the last field are carried too (``1:75`` = 135 s). Hours are never bounded.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction
from numbers import Rational, Real
from typing import Any, Optional, Sequence, Tuple, Union

TOLERANCE_S = 5.0
Span = Tuple[float, float]

_NUM = r"\d+(?:\.\d+)?"
_SECONDS = re.compile(rf"^({_NUM})\s*(?:s|sec|secs|second|seconds)?$", re.IGNORECASE)
_SPAN_SEP = re.compile(r"\s*(?:-|–|—|~|\bto\b)\s*", re.IGNORECASE)
_FIND = re.compile(rf"\d+:\d+(?::{_NUM})?(?:\.\d+)?|{_NUM}\s*(?:s|sec|secs|seconds?)\b", re.IGNORECASE)


def as_fraction(value: Any) -> Fraction:
    """A number as an exact fraction. Integers and fractions are taken as they are; a float is read as the
    shortest decimal that prints as it (``0.2`` -> 1/5, ``1738.053`` -> 1738053/1000), i.e. the number its
    writer meant, so sums and comparisons made on the result are exact. Raises ValueError for anything
    else (bools, NaN, infinities, strings)."""
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, Rational):
        return Fraction(value)
    if isinstance(value, Real) and math.isfinite(value):  # float, numpy floats
        return Fraction(repr(float(value)))
    raise ValueError(f"not a finite number: {value!r}")


def parse_timestamp(text: Any, *, strict: bool = False) -> Optional[float]:
    """One time point in seconds, or None (ValueError when ``strict``) for anything unparseable."""
    if isinstance(text, bool):
        value = None
    elif isinstance(text, (int, float)):
        value = float(text) if text >= 0 else None
    else:
        value = _parse_str(str(text).strip()) if text is not None else None
    if value is None and strict:
        raise ValueError(f"not a timestamp: {text!r} (expected MM:SS, HH:MM:SS or seconds like '522.640 s')")
    return value


def _parse_str(s: str) -> Optional[float]:
    s = s.strip().strip("[]()").strip()
    if not s:
        return None
    m = re.fullmatch(rf"(\d+):(\d+):({_NUM})", s)
    if m:
        return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    m = re.fullmatch(rf"(\d+):({_NUM})", s)
    if m:
        return int(m.group(1)) * 60 + float(m.group(2))
    m = _SECONDS.fullmatch(s)
    if m:
        return float(m.group(1))
    return None


def parse_span(text: Any, *, strict: bool = False) -> Optional[Span]:
    """A span "12:30-13:05" (or a [start, end] pair, or a single point as a zero-length span) in seconds."""
    span: Optional[Span] = None
    if isinstance(text, (list, tuple)) and len(text) == 2:
        a, b = parse_timestamp(text[0]), parse_timestamp(text[1])
        span = (a, b) if a is not None and b is not None else None
    elif isinstance(text, str):
        parts = _SPAN_SEP.split(text.strip())
        if len(parts) == 2:
            a, b = parse_timestamp(parts[0]), parse_timestamp(parts[1])
            span = (a, b) if a is not None and b is not None else None
        elif len(parts) == 1:
            a = parse_timestamp(parts[0])
            span = (a, a) if a is not None else None
    elif isinstance(text, (int, float)) and not isinstance(text, bool):
        a = parse_timestamp(text)
        span = (a, a) if a is not None else None
    if span is not None and span[1] < span[0]:
        span = None
    if span is None and strict:
        raise ValueError(f"not a time span: {text!r} (expected e.g. '12:30-13:05' or [start, end] seconds)")
    return span


def find_timestamps(text: str) -> list[float]:
    """Every time point written in free text (clock forms and '<n> s'), in order of appearance."""
    out = []
    for m in _FIND.finditer(text or ""):
        v = parse_timestamp(m.group(0))
        if v is not None:
            out.append(v)
    return out


def overlaps(a: Span, b: Span, tolerance_s: float = TOLERANCE_S) -> bool:
    """Whether two spans overlap once each is widened by ``tolerance_s`` in total distance."""
    return a[0] <= b[1] + tolerance_s and b[0] <= a[1] + tolerance_s


def temporal_match(predicted: Union[str, float, Sequence, None], time_range: Optional[Sequence],
                   tolerance_s: float = TOLERANCE_S) -> Optional[bool]:
    """True when the predicted point or span lies within ``tolerance_s`` of the reference range
    [start, end] (a point: start - tol <= t <= end + tol; a span: overlap after widening). None when either
    side cannot be parsed (no timestamp to check)."""
    if time_range is None:
        return None
    ref = parse_span(list(time_range) if not isinstance(time_range, str) else time_range)
    pred = parse_span(predicted) if predicted is not None else None
    if ref is None or pred is None:
        return None
    return overlaps(pred, ref, tolerance_s)
