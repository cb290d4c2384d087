"""Deterministic timestamp normalisation and the AudioSpan temporal check (AudioSpan, arXiv:2608.26431,
App. C.2-C.3: a time point is correct within +-5 s of the reference range, a span when it overlaps it).

    parse_timestamp("12:30") -> 750.0              parse_timestamp("64:00") -> 3840.0 (= 1:04:00)
    parse_timestamp("1h 2m 3s") -> 3723.0          parse_timestamp("1分2秒") -> 62.0
    parse_timestamp("around the 2-minute mark") -> 120.0
    parse_span("between 0:30 and 0:45") -> (30.0, 45.0)     parse_span("30-45 s") -> (30.0, 45.0)
    parse_timestamp("at 12:30pm") -> None          (never raises on garbage; ``strict=True`` raises ValueError)
    find_timestamps("the bell at 1:05, the choir [2:00, 2:30]") -> [65.0, (120.0, 150.0)]
    temporal_match(predicted, time_range) -> True / False / None (no usable timestamp)

Forms read (English and Chinese, ASCII or full-width colon):
  * clocks: MM:SS, H:MM:SS, with decimals (``1:02.5``) or SRT milliseconds (``00:01:02,500``); minutes and
    seconds past 59 are carried (``64:00`` = 1:04:00, ``1:75`` = 135 s); the seconds field has two digits,
    so ``2:1`` (a score) is no time; ``1'02"`` (minute and second marks);
  * units: ``522.640 s``, ``1 min 2 s``, ``1m02s``, ``1 minute 2 seconds``, ``1h 2m 3s``, ``2 minutes``,
    ``1 hour, 2 minutes and 3 seconds``, ``the 2-minute mark``, ``62秒``, ``1分2秒``, ``1小时2分``, ``2分钟``;
    a lone one-letter unit (``5 m``, ``2h``) or a lone ``分`` (also "points") is no time;
  * ISO 8601 durations: ``PT1M2S``;
  * spans: ``A-B`` (also – — ~ to until through 至 到), ``from A to B``, ``between A and B``, ``在A和B之间``,
    ``[A, B]``, and a unit shared by two numbers (``30-45 s``, ``1-2 minutes``, ``30到45秒``); a span must
    not run backwards.
Not times: clock times of day (``12:30pm``, ``下午3:30``), scores and ratios (``the score was 21:14``), and
durations or relative times (``5 seconds later``, ``for 30 seconds``, ``the first 30 seconds``, ``5秒后``).
Numbers written as words ("two minutes") are not read.

A whole string (``parse_timestamp`` / ``parse_span``, a judge's quoted time) must hold one time and nothing
but hedges around it ("at", "around", "about", "the ... mark", "约", "左右", "处", brackets); a bare number is
seconds there. In free text (``find_timestamps``) bare numbers are not times.

Times are read and compared as exact fractions of a second (``0:28:53.053`` is exactly 5 s before
1738.053); the public functions return floats.

Times in AudioSpan's records and anchor manifests are data, not model text, and are read strictly (an error,
never None): ``parse_record_time`` (a number, "522.64 s", "12:30", "01:04:00") and ``parse_record_span``
([a, b], {start, end}, "a-b"); ``clock`` writes seconds back as MM:SS or HH:MM:SS.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational, Real
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

TOLERANCE_S = 5.0  # C.3: a point is correct within +-5 s of the reference range
SPAN_TOLERANCE_S = 0.0  # C.3: a span is correct when it overlaps the range (no widening)
Span = Tuple[float, float]


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


def check_seconds(name: str, value: Any) -> Fraction:
    """A tolerance option as exact seconds: a finite real number >= 0 (a bool, a string, NaN, an infinity or
    a negative number is a ValueError naming the option, never a silent NaN comparison)."""
    try:
        seconds = as_fraction(value)
    except ValueError:
        seconds = None
    if seconds is None or seconds < 0:
        raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
    return seconds


# ------------------------------------------------------------------------------------- the scanner
_NUM = r"\d+(?:\.\d+)?"
_H = r"hours?|hrs?|h|个小时|個小時|小时|小時|钟头|鐘頭|时|時"
_M = r"minutes?|mins?|m|分钟|分鐘|分"
_S = r"seconds?|secs?|s|秒钟|秒鐘|秒"
_WORD_END = r"(?![a-z])"  # "2 ms" is not 2 minutes, "3 secondary" no time
_JOIN = r"\s*(?:,\s*|and\s+)?"  # "1 hour, 2 minutes and 3 seconds"
_START = r"(?<![0-9a-z.:：'’])"
_UNITS = (
    rf"{_START}{_NUM}[\s-]*(?:{_H}){_WORD_END}(?:{_JOIN}{_NUM}\s*(?:{_M}){_WORD_END})?"
    rf"(?:{_JOIN}{_NUM}\s*(?:{_S}){_WORD_END})?"
    rf"|{_START}{_NUM}[\s-]*(?:{_M}){_WORD_END}(?:{_JOIN}{_NUM}\s*(?:{_S}){_WORD_END})?"
    rf"|{_START}{_NUM}[\s-]*(?:{_S}){_WORD_END}"
)
_CLOCK_LABEL = r"(?:\s*(?:minutes?|mins?|seconds?|secs?|hours?|hrs?|s|分钟|秒)(?![a-z]))?"  # "1:02 min"
_CLOCK = (
    r"(?<![\d:：.])\d+[:：]\d{1,2}[:：]\d{2}(?:\.\d+|,\d{3}(?!\d))?(?![\d:：])"
    r"|(?<![\d:：.])\d+[:：]\d{2}(?:\.\d+)?(?![\d:：])"
)
_PRIME = r"(?<![\d.])\d+\s*['′’]\s*\d{1,2}(?:\.\d+)?\s*(?:\"|″|''|”|′′)"
_ISO = r"(?<![a-z])P(?:\d+D)?T(?=\d)(?:\d+(?:\.\d+)?H)?(?:\d+(?:\.\d+)?M)?(?:\d+(?:\.\d+)?S)?(?![a-z0-9])"
_BARE = r"(?<![\d.:：])\d+(?:\.\d+)?(?![\d:：])"
_TOKEN = re.compile(
    rf"(?P<iso>{_ISO})|(?P<clock>(?:{_CLOCK}){_CLOCK_LABEL})|(?P<prime>{_PRIME})"
    rf"|(?P<units>{_UNITS})|(?P<bare>{_BARE})",
    re.IGNORECASE,
)

_UNIT_PART = re.compile(rf"({_NUM})[\s-]*({_H}|{_M}|{_S}){_WORD_END}", re.IGNORECASE)
_ISO_PARTS = re.compile(r"(?:(\d+)D)?T(?:([\d.]+)H)?(?:([\d.]+)M)?(?:([\d.]+)S)?", re.IGNORECASE)
_LONE_UNITS = {"h", "m", "分", "时", "時"}  # too ambiguous alone: metres, "points", hours of a clock

# Context that makes a match something other than a time into the recording.
_TIME_OF_DAY_AFTER = re.compile(r"\s*(?:[ap]\.?\s?m\.?(?![a-z])|o'clock)", re.IGNORECASE)
_TIME_OF_DAY_BEFORE = re.compile(r"(?:上午|下午|晚上|凌晨|中午|早上|傍晚|清晨)\s*$")
_SCORE_BEFORE = re.compile(
    r"(?:\b(?:score[sd]?|ratio|odds|won|lost|beat)\s*(?:(?:was|is|of|were|at|by)\s*)?"
    r"|比分|比例|比数|比數)(?:是|为|為)?\s*$",
    re.IGNORECASE,
)
_DURATION_BEFORE = re.compile(
    r"(?:\b(?:for|lasting|lasts|lasted|last|every|each|within|first|next|another)"
    r"\s+(?:(?:about|around|roughly|the|only)\s+)*"
    r"|持续|持續|每|长达|長達|历时|歷時|前|最后|最後)\s*$",
    re.IGNORECASE,
)
_DURATION_AFTER = re.compile(
    r"\s*(?:(?:later|earlier|afterwards?|before|ago|apart|long|of)(?![a-z])"
    r"|after(?![a-z])(?!\s+the\s+(?:start|beginning))"
    r"|之后|之後|以后|以後|后|後|之前|以前|前(?![后後])|之内|之內|以内|以內|内|內|长|長)",
    re.IGNORECASE,
)

# Span connectors: what may stand between two times that make one span.
_RANGE_SEP = re.compile(r"\s*(?:-|–|—|―|~|～|〜|to|until|till|through|thru|至|到)\s*", re.IGNORECASE)
_AND = re.compile(r"\s*(?:and|和|与|與|跟)\s*", re.IGNORECASE)
_BETWEEN_BEFORE = re.compile(r"\bbetween\s*$", re.IGNORECASE)
_BETWEEN_AFTER = re.compile(r"\s*(?:之间|之間)")
_LIST_SEP = re.compile(r"\s*[,，;；]\s*")
_OPEN = re.compile(r"[\[(（【]\s*$")
_CLOSE = re.compile(r"\s*[\])）】]")

# What a whole string may hold around its one time.
_FILLER = re.compile(
    r"(?:\s|[\[\](){}（）【】,，.。;；:：!！?？~～≈@=]"
    r"|\b(?:at|around|about|approx|approximately|roughly|near|nearly|circa|ca|the|mark|in|into"
    r"|timestamp|time|t|from|between|and|to)\b"
    r"|约|約|大约|大約|大概|左右|处|處|时|時|第|在|的|位置|时间点|時間點|时刻|時刻|前后|前後|附近"
    r"|从|從|之间|之間)*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    kind: str  # iso, clock, prime, units, bare
    value: Fraction  # seconds
    factor: Optional[int]  # seconds per unit when the token is one number with one unit ("45 s": 1)


@dataclass(frozen=True)
class _Time:
    start: int  # position in the text
    end: int
    lo: Fraction  # seconds
    hi: Fraction
    is_span: bool
    kinds: frozenset


def _unit_seconds(unit: str) -> int:
    u = unit.lower()
    if re.fullmatch(_H, u):
        return 3600
    return 60 if re.fullmatch(_M, u) else 1


def _read_units(s: str) -> Optional[tuple[Fraction, Optional[int]]]:
    parts = _UNIT_PART.findall(s)
    if len(parts) == 1:
        number, unit = parts[0]
        if unit.lower() in _LONE_UNITS:
            return None
        if unit.lower() == "s" and re.fullmatch(r"[12]\d{3}s", s.strip(), re.IGNORECASE):
            return None  # "1990s" is a decade
    total = sum((Fraction(n) * _unit_seconds(u) for n, u in parts), Fraction(0))
    return total, (_unit_seconds(parts[0][1]) if len(parts) == 1 else None)


def _read_clock(s: str) -> Fraction:
    fields = re.split(r"[:：]", re.sub(r"[^\d:：.,]+$", "", s.strip()))
    fields[-1] = fields[-1].replace(",", ".")
    value = Fraction(0)
    for f in fields:
        value = value * 60 + Fraction(f)
    return value


def _read_iso(s: str) -> Fraction:
    days, h, m, sec = _ISO_PARTS.search(s).groups()
    return sum((Fraction(x) * k for x, k in ((days, 86400), (h, 3600), (m, 60), (sec, 1)) if x), Fraction(0))


def _token(text: str, match: re.Match) -> Optional[_Token]:
    kind, s = match.lastgroup, match.group(0)
    before, after = text[: match.start()], text[match.end() :]
    factor = None
    if kind == "clock":
        if _TIME_OF_DAY_AFTER.match(after) or _TIME_OF_DAY_BEFORE.search(before) or _SCORE_BEFORE.search(before):
            return None
        value = _read_clock(s)
    elif kind == "prime":
        minutes, seconds = re.findall(r"\d+(?:\.\d+)?", s)
        value = Fraction(minutes) * 60 + Fraction(seconds)
    elif kind == "iso":
        value = _read_iso(s)
    elif kind == "units":
        read = _read_units(s)
        if read is None:
            return None
        value, factor = read
    else:
        value = Fraction(s)
    return _Token(match.start(), match.end(), kind, value, factor)


def _joined(text: str, a: _Token, b: _Token, bare_seconds: bool) -> Optional[tuple[Fraction, Fraction]]:
    """The span a and b make together, or None: they must be joined by a range connector (or "between ...
    and", or "[a, b]"), run forwards, and share a unit when the first is a bare number."""
    gap = text[a.end : b.start]
    if not (
        _RANGE_SEP.fullmatch(gap)
        or (_AND.fullmatch(gap) and (_BETWEEN_BEFORE.search(text[: a.start]) or _BETWEEN_AFTER.match(text[b.end :])))
        or (_LIST_SEP.fullmatch(gap) and _OPEN.search(text[: a.start]) and _CLOSE.match(text[b.end :]))
    ):
        return None
    lo, hi = a.value, b.value
    if a.kind == "bare":
        if b.kind == "bare" and not bare_seconds:
            return None
        if b.kind != "bare":
            if b.factor is None:
                return None
            lo = a.value * b.factor  # "30-45 s", "1-2 minutes": the unit is shared
    elif b.kind == "bare":
        return None
    return (lo, hi) if lo <= hi else None


def _is_duration(text: str, t: _Time) -> bool:
    """A unit-written time that reads as a length or a relative time ("for 30 s", "5 seconds later")."""
    if not t.kinds <= {"units", "bare"}:
        return False
    return bool(_DURATION_BEFORE.search(text[: t.start]) or _DURATION_AFTER.match(text[t.end :]))


def _scan(text: str, bare_seconds: bool) -> list[_Time]:
    """Every time in ``text``, in order; bare numbers count as seconds only when ``bare_seconds``."""
    tokens = [t for t in (_token(text, m) for m in _TOKEN.finditer(text)) if t is not None]
    times: list[_Time] = []
    i = 0
    while i < len(tokens):
        a = tokens[i]
        span = _joined(text, a, tokens[i + 1], bare_seconds) if i + 1 < len(tokens) else None
        if span is not None:
            b = tokens[i + 1]
            times.append(_Time(a.start, b.end, span[0], span[1], True, frozenset({a.kind, b.kind})))
            i += 2
            continue
        times.append(_Time(a.start, a.end, a.value, a.value, False, frozenset({a.kind})))
        i += 1
    return [t for t in times if not _is_duration(text, t) and (bare_seconds or t.kinds != {"bare"})]


def _read_whole(text: str) -> Optional[_Time]:
    """The one time a whole string holds, hedges around it allowed; None for none, several, or other text."""
    times = _scan(text, bare_seconds=True)
    if len(times) != 1:
        return None
    t = times[0]
    rest = text[: t.start] + " " + text[t.end :]
    return t if _FILLER.fullmatch(rest) else None


# ------------------------------------------------------------------------------------- public API
def _exact(value: Any) -> Optional[_Time]:
    """A point or span from a string, a number (a point), or a [start, end] pair (a span)."""
    if isinstance(value, str):
        return _read_whole(value.strip())
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            return None
        ends = [_exact(v) for v in value]
        if any(e is None or e.is_span for e in ends) or ends[0].lo > ends[1].lo:
            return None
        return _Time(0, 0, ends[0].lo, ends[1].lo, True, frozenset())
    if isinstance(value, Mapping) and {"start", "end"} <= set(value):
        return _exact([value["start"], value["end"]])
    try:
        seconds = as_fraction(value)
    except ValueError:
        return None
    return _Time(0, 0, seconds, seconds, False, frozenset()) if seconds >= 0 else None


def parse_timestamp(text: Any, *, strict: bool = False) -> Optional[float]:
    """One time point in seconds, or None (ValueError when ``strict``) for anything else, a span included."""
    t = None if text is None else _exact(text)
    if t is None or t.is_span:
        if strict:
            raise ValueError(
                f"not a timestamp: {text!r} (expected e.g. MM:SS, HH:MM:SS, '522.640 s', '1 min 2 s', '1分2秒')"
            )
        return None
    return float(t.lo)


def parse_span(text: Any, *, strict: bool = False) -> Optional[Span]:
    """A span in seconds ("12:30-13:05", "from 0:30 to 0:45", "[0:30, 0:45]", "30-45 s", a [start, end] pair);
    a single point gives a zero-length span. None (ValueError when ``strict``) otherwise."""
    t = None if text is None else _exact(text)
    if t is None:
        if strict:
            raise ValueError(f"not a time span: {text!r} (expected e.g. '12:30-13:05' or [start, end] seconds)")
        return None
    return float(t.lo), float(t.hi)


def find_timestamps(text: Optional[str], *, bare_seconds: bool = False) -> list[Union[float, Span]]:
    """Every time written in free text, in order: a point as a float, a span as a (start, end) tuple.
    Bare numbers are no times unless ``bare_seconds`` (for a judge's quoted timestamp)."""
    return [(float(t.lo), float(t.hi)) if t.is_span else float(t.lo) for t in _scan(text or "", bare_seconds)]


def overlaps(a: Sequence[Any], b: Sequence[Any], tolerance_s: Any = SPAN_TOLERANCE_S) -> bool:
    """Whether spans a and b overlap (touching counts), or come within ``tolerance_s`` of each other; exact."""
    tol = check_seconds("tolerance_s", tolerance_s)
    a0, a1, b0, b1 = (as_fraction(x) for x in (*a, *b))
    return a0 <= b1 + tol and b0 <= a1 + tol


def temporal_match(
    predicted: Any, time_range: Any, tolerance_s: Any = TOLERANCE_S, span_tolerance_s: Any = SPAN_TOLERANCE_S
) -> Optional[bool]:
    """The C.3 temporal check of a predicted time against the reference range [start, end]: a point is
    correct when start - ``tolerance_s`` <= t <= end + ``tolerance_s``; a span when it overlaps the range
    (``span_tolerance_s`` > 0 also accepts a span that ends that close to it: an option, not the paper).
    Exact at the boundaries. None when either side holds no usable time (a range with an infinite or NaN
    end, or one that runs backwards, holds none). Both tolerances must be finite seconds >= 0 (ValueError
    naming the option otherwise)."""
    tol = check_seconds("tolerance_s", tolerance_s)
    span_tol = check_seconds("span_tolerance_s", span_tolerance_s)
    if predicted is None or time_range is None:
        return None
    ref = _exact(time_range)
    pred = _exact(predicted)
    if ref is None or pred is None:
        return None
    if pred.is_span:
        return overlaps((pred.lo, pred.hi), (ref.lo, ref.hi), span_tol)
    return ref.lo - tol <= pred.lo <= ref.hi + tol


# Times and spans as AudioSpan's records and anchor manifests write them (read alike by both).
_TIME = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d+(?:\.\d*)?)\s*$")
_SECONDS = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(?:s|sec|secs|seconds)?\s*$", re.IGNORECASE)


def parse_record_time(value: Any) -> float:
    """Seconds from a number, "522.64", "522.64 s", "12:30", "64:00" or "01:04:00"."""
    if isinstance(value, bool):
        raise ValueError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        match = _TIME.match(value)
        if match:
            hours, minutes, secs = match.groups()
            seconds = int(hours or 0) * 3600 + int(minutes) * 60 + float(secs)
        else:
            match = _SECONDS.match(value)
            if not match:
                raise ValueError(f"not a time: {value!r}")
            seconds = float(match.group(1))
    else:
        raise ValueError(f"not a time: {value!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"not a time: {value!r}")
    return seconds


def parse_record_span(value: Any) -> Optional[list[float]]:
    """[start, end] seconds from [a, b], {"start", "end"} or "a-b" ("12:30-12:45"); None for null/[]."""
    if value is None or (isinstance(value, (list, tuple, str)) and len(value) == 0):
        return None
    if isinstance(value, Mapping):
        start, end = value.get("start"), value.get("end")
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        start, end = value
    elif _is_range_text(value):
        text = value.strip()
        cut = re.search(r"\s*[-–~]\s*", text[1:])
        start, end = text[: cut.start() + 1], text[cut.end() + 1 :]
    else:
        raise ValueError(f"not a [start, end] span: {value!r}")
    span = [parse_record_time(start), parse_record_time(end)]
    if span[1] < span[0]:
        raise ValueError(f"span ends before it starts: {value!r}")
    return span


def _is_range_text(value: Any) -> bool:
    return isinstance(value, str) and bool(re.search(r"[-–~]", value.strip()[1:]))


def is_single_span(value: Any) -> bool:
    """A span given on its own ({start, end}, "a-b", [a, b]) rather than a list of spans."""
    if isinstance(value, (Mapping, str)):
        return True
    return (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, (int, float)) or (isinstance(v, str) and not _is_range_text(v)) for v in value)
    )


def clock(seconds: float) -> str:
    """Seconds as MM:SS or HH:MM:SS, with the fraction where there is one (750.5 -> "12:30.5")."""
    s = float(seconds)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    sec_text = f"{sec:06.3f}".rstrip("0").rstrip(".") if sec % 1 else f"{int(sec):02d}"
    return f"{int(h):02d}:{int(m):02d}:{sec_text}" if h else f"{int(m):02d}:{sec_text}"
