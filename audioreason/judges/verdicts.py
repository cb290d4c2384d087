"""Structured verdicts: the schema a judge's reply must follow, JSON extraction from free text, validation,
and the follow-up message that re-asks with the validation error.

Schemas:
  * ``VerdictSchema.from_criteria(...)``: k named criteria, each with its allowed scores; the reply is a JSON
    list of exactly k objects ``{"name": ..., "score": ..., "justification": ...}`` (MMAR-Rubrics);
  * ``VerdictSchema.single_score(...)``: one score; the reply is one JSON object ``{"score": ...,
    "justification": ...}`` (a holistic 1-5 rating, the system-level baseline);
  * ``JsonReplySchema(name, validate, instructions)``: any other JSON reply, checked by a caller's function
    (rubric generation).

Extraction is tolerant about *where* the JSON is (code fences, prose around it, a ``<think>`` block
before it, one object where a one-criterion list was asked, a list wrapped in an object, k objects
without the enclosing brackets) and strict about *what* it says: counts, names and scores must match the
schema exactly. A reply holding two different valid verdicts is rejected as ambiguous, so text quoted from
the judged output (a prompt injection that writes its own JSON) cannot pick the verdict.

``VerdictSchema.from_criteria(..., reading="mmar_official")`` reads a reply as the official MMAR-Rubrics
scorer does instead (``parse_mmar_official``): the text from the first ``[{`` to the last ``}]`` (or the
whole reply when there is none) must be one JSON list of exactly k objects with "name" and "score";
objects are matched to criteria by position, a name that differs is only a warning; a score must be a
number (JSON ``true``/``false`` count as 1/0, as Python's bool is a number) among the criterion's options.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

Number = Union[int, float]
READINGS = ("tolerant", "mmar_official")

NAME_KEY, SCORE_KEY, JUSTIFICATION_KEY = "name", "score", "justification"
MAX_SCANNED_CHARS = 200_000  # replies are bounded by max_tokens; this bounds the scan of a runaway one
MAX_DECODE_STARTS = 2_000


def _normalize_name(name: str) -> str:
    return " ".join(str(name).split()).casefold()


def _format_number(value: Number) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True)
class Criterion:
    name: str
    allowed: tuple[Number, ...] = (0, 1)

    def __post_init__(self) -> None:
        if not str(self.name).strip():
            raise ValueError("a criterion needs a non-empty name")
        if not self.allowed:
            raise ValueError(f"criterion {self.name!r} has no allowed scores")
        object.__setattr__(self, "allowed", tuple(self.allowed))

    @property
    def max_score(self) -> Number:
        return max(self.allowed)


@dataclass(frozen=True)
class VerdictSchema:
    """What a reply must contain. Build it with ``from_criteria`` or ``single_score``."""

    kind: str  # "criteria" or "score"
    criteria: tuple[Criterion, ...] = ()
    score_field: str = SCORE_KEY
    allowed_scores: tuple[Number, ...] = ()
    require_justification: bool = False
    match_names: bool = True  # criteria: names must match (order free); False: match by position
    reading: str = "tolerant"  # or "mmar_official" (criteria only): see the module docstring

    @classmethod
    def from_criteria(
        cls,
        criteria: Iterable[Union[Criterion, Mapping[str, Any], tuple]],
        *,
        require_justification: bool = False,
        match_names: bool = True,
        reading: str = "tolerant",
    ) -> "VerdictSchema":
        """Criteria as ``Criterion``, ``(name, allowed)`` or MMAR rubric dicts (``name`` and ``choices``).
        ``reading="mmar_official"`` matches by position (``match_names`` is then False)."""
        built = []
        for c in criteria:
            if isinstance(c, Criterion):
                built.append(c)
            elif isinstance(c, Mapping):
                built.append(Criterion(str(c["name"]), tuple(c.get("choices", c.get("allowed", (0, 1))))))
            else:
                name, allowed = c
                built.append(Criterion(str(name), tuple(allowed)))
        if not built:
            raise ValueError("a criteria schema needs at least one criterion")
        if reading == "mmar_official":
            match_names = False
        names = [_normalize_name(c.name) for c in built]
        if match_names and len(set(names)) != len(names):
            raise ValueError(
                "criterion names must be distinct when replies are matched by name; "
                "pass match_names=False to match by position"
            )
        return cls(
            "criteria",
            tuple(built),
            require_justification=require_justification,
            match_names=match_names,
            reading=reading,
        )

    @classmethod
    def single_score(
        cls,
        allowed: Iterable[Number] = (1, 2, 3, 4, 5),
        *,
        score_field: str = SCORE_KEY,
        require_justification: bool = False,
    ) -> "VerdictSchema":
        allowed = tuple(allowed)
        if not allowed:
            raise ValueError("a single-score schema needs allowed scores")
        return cls(
            "score", score_field=score_field, allowed_scores=allowed, require_justification=require_justification
        )

    def __post_init__(self) -> None:
        if self.kind not in ("criteria", "score"):
            raise ValueError(f"unknown schema kind {self.kind!r}")
        if self.reading not in READINGS or (self.reading != "tolerant" and self.kind != "criteria"):
            raise ValueError(f"unknown reading {self.reading!r} for a {self.kind} schema; choose one of {READINGS}")

    @property
    def k(self) -> int:
        return len(self.criteria) if self.kind == "criteria" else 1

    @property
    def max_total(self) -> Number:
        return sum(c.max_score for c in self.criteria) if self.kind == "criteria" else max(self.allowed_scores)

    def to_dict(self) -> dict[str, Any]:
        """Canonical form (part of the cache key: a changed schema is a different request)."""
        d = {
            "kind": self.kind,
            "criteria": [[c.name, list(c.allowed)] for c in self.criteria],
            "score_field": self.score_field,
            "allowed_scores": list(self.allowed_scores),
            "require_justification": self.require_justification,
            "match_names": self.match_names,
        }
        if self.reading != "tolerant":  # older cache keys stay valid for the tolerant reading
            d["reading"] = self.reading
        return d

    def format_instructions(self) -> str:
        """The expected reply format in words, used in re-ask messages (scorers may reuse it in prompts)."""
        just = "required" if self.require_justification else "optional"
        if self.kind == "score":
            options = ", ".join(_format_number(a) for a in self.allowed_scores)
            return (
                f'a single JSON object {{"{self.score_field}": <one of {options}>, '
                f'"{JUSTIFICATION_KEY}": "<short reason>"}} (justification {just}) and nothing else'
            )
        lines = [
            f"a JSON list of exactly {self.k} object{'s' if self.k != 1 else ''}, one per criterion, each "
            f'{{"{NAME_KEY}": "<criterion name>", "{SCORE_KEY}": <score>, "{JUSTIFICATION_KEY}": '
            f'"<short reason>"}} (justification {just}), and nothing else. The criteria'
            + (" (names exactly as written)" if self.match_names else " in this order")
            + ":"
        ]
        for c in self.criteria:
            options = " or ".join(_format_number(a) for a in c.allowed)
            lines.append(f"- {c.name}: score {options}")
        return "\n".join(lines)


@dataclass(frozen=True)
class CriterionScore:
    name: str
    score: Number
    justification: str = ""


@dataclass(frozen=True)
class Verdict:
    """A validated reply. For a criteria schema, ``scores`` follows the schema's criterion order; for a
    single-score schema it holds one entry named after the score field; for a ``JsonReplySchema`` it is
    empty and ``data`` holds what the schema's validator returned (e.g. generated rubric criteria)."""

    scores: tuple[CriterionScore, ...]
    max_total: Number
    data: Any = None

    @property
    def total(self) -> Number:
        return sum(s.score for s in self.scores)

    @property
    def normalized(self) -> Optional[float]:
        """total / sum of the criteria's maximum scores (MMAR: satisfied / k for binary criteria);
        None for a reply without scores."""
        return float(self.total) / float(self.max_total) if self.scores and self.max_total else None

    def score_of(self, name: str) -> Number:
        for s in self.scores:
            if s.name == name:
                return s.score
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        d = {"scores": [asdict(s) for s in self.scores], "max_total": self.max_total}
        if self.data is not None:
            d["data"] = self.data
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Verdict":
        return cls(tuple(CriterionScore(**s) for s in data["scores"]), data["max_total"], data.get("data"))


@dataclass(frozen=True)
class JsonReplySchema:
    """Any other JSON reply, through the same extraction, re-ask, cache and accounting (e.g. rubric
    generation: k criteria with name, scoring point and options). ``validate`` receives each JSON value
    found in the reply and returns a JSON-serializable payload (``Verdict.data``), or raises ValueError
    with a message fit to send back to the judge. ``name`` and ``version`` stand for the validator in
    cache keys: change one when ``validate`` changes."""

    name: str
    validate: Callable[[Any], Any]
    instructions: str  # the expected format in words, for re-ask messages
    version: str = "1"
    kind: str = "json"
    pattern: Optional[str] = None  # a regex of the reply, for judges that decode under a grammar (constrained)
    # A JSON Schema of the reply (OpenAI's strict subset): sent as ``response_format`` to a judge with structured
    # outputs, and the grammar a constrained local judge decodes under. Part of the cache key when set.
    json_schema: Optional[Mapping[str, Any]] = None

    def format_instructions(self) -> str:
        return self.instructions

    def to_dict(self) -> dict[str, Any]:
        described = {"kind": self.kind, "name": self.name, "version": self.version}
        if self.json_schema is not None:
            described["json_schema"] = self.json_schema
        return described


ReplySchema = Union[VerdictSchema, JsonReplySchema]


@dataclass
class ParseOutcome:
    verdict: Optional[Verdict]
    error: Optional[str] = None
    candidates: int = 0  # JSON values found in the reply
    warnings: list[str] = field(default_factory=list)  # accepted, but worth a look (a criterion name that differs)

    @property
    def ok(self) -> bool:
        return self.verdict is not None


# ------------------------------------------------------------------------------------- extraction
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_JSON_START = re.compile(r"[\[{]")


def _strip_thinking(text: str) -> str:
    text = _THINK.sub(" ", text)
    lowered = text.lower()
    if "</think>" in lowered:  # an opening tag the template already emitted: keep what follows the close
        text = text[lowered.rindex("</think>") + len("</think>") :]
    return text


@dataclass
class _Found:
    start: int
    end: int
    value: Any


def extract_json_values(text: str) -> tuple[list[Any], Optional[str]]:
    """Every top-level JSON object or list in ``text`` (in order; nested values are part of their parent),
    plus runs of consecutive objects joined into a list. Also returns the decoder error of the longest
    failed attempt, to explain a reply that holds no JSON."""
    text = _strip_thinking(text or "")[:MAX_SCANNED_CHARS]
    decoder = json.JSONDecoder()
    found: list[_Found] = []
    best_error: Optional[tuple[int, str]] = None
    i, starts = 0, 0
    while starts < MAX_DECODE_STARTS:
        match = _JSON_START.search(text, i)
        if match is None:
            break
        i, starts = match.start(), starts + 1
        try:
            value, end = decoder.raw_decode(text, i)
        except RecursionError:  # pathological nesting: not a verdict
            i += 1
            continue
        except json.JSONDecodeError as err:
            if best_error is None or err.pos - i > best_error[0]:
                best_error = (
                    err.pos - i,
                    f"{err.msg} at character {err.pos - i} of the JSON starting {text[i : i + 40]!r}",
                )
            i += 1
            continue
        if isinstance(value, (dict, list)):
            found.append(_Found(i, end, value))
        i = end
    values: list[Any] = [f.value for f in found]
    # k objects written one after another (no brackets): also offer them as one list.
    run: list[_Found] = []
    for f in found + [None]:  # type: ignore[list-item]
        if (
            f is not None
            and isinstance(f.value, dict)
            and (not run or re.fullmatch(r"[\s,]*", text[run[-1].end : f.start]))
        ):
            run.append(f)
            continue
        if len(run) > 1:
            values.append([r.value for r in run])
        run = [f] if f is not None and isinstance(f.value, dict) else []
    return values, (best_error[1] if best_error else None)


# ------------------------------------------------------------------------------------- validation
class _Invalid(Exception):
    pass


def _check_score(value: Any, allowed: Sequence[Number], where: str) -> Number:
    # JSON true/false are not scores: a bool is an int in Python, so reject it explicitly.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Invalid(
            f"{where}: the score must be a number, one of "
            f"{[_format_number(a) for a in allowed]}, got {json.dumps(value)}"
        )
    for option in allowed:
        if value == option:
            return option
    raise _Invalid(
        f"{where}: score {json.dumps(value)} is not allowed; allowed scores are "
        f"{', '.join(_format_number(a) for a in allowed)}"
    )


def _justification(obj: Mapping[str, Any], where: str, required: bool) -> str:
    value = obj.get(JUSTIFICATION_KEY)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise _Invalid(f'{where}: a non-empty "{JUSTIFICATION_KEY}" is required')
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _as_criteria_list(value: Any, k: int) -> Any:
    """Accept the usual near-misses of shape: {"criteria": [...]} and, for k == 1, a bare object."""
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1 and NAME_KEY not in value and SCORE_KEY not in value:
            return lists[0]
        if k == 1:
            return [value]
    return value


def _validate_criteria(value: Any, schema: VerdictSchema) -> Verdict:
    value = _as_criteria_list(value, schema.k)
    if not isinstance(value, list):
        raise _Invalid(f"expected a JSON list of {schema.k} objects, got a JSON {type(value).__name__}")
    if len(value) != schema.k:
        raise _Invalid(f"expected exactly {schema.k} criteria (one object per criterion), got {len(value)}")
    for n, obj in enumerate(value, 1):
        if not isinstance(obj, dict):
            raise _Invalid(f"item {n} of the list is not a JSON object")
        if SCORE_KEY not in obj:
            raise _Invalid(f'item {n} of the list has no "{SCORE_KEY}"')
    if schema.match_names:
        by_name = {_normalize_name(c.name): c for c in schema.criteria}
        matched: dict[str, tuple[Criterion, Mapping]] = {}
        unknown, repeated = [], []
        for n, obj in enumerate(value, 1):
            name = obj.get(NAME_KEY)
            key = _normalize_name(name) if isinstance(name, str) else None
            if key is None or key not in by_name:
                unknown.append(json.dumps(name, ensure_ascii=False) if name is not None else f"(item {n} has no name)")
            elif key in matched:
                repeated.append(by_name[key].name)
            else:
                matched[key] = (by_name[key], obj)
        missing = [c.name for c in schema.criteria if _normalize_name(c.name) not in matched]
        if unknown or repeated or missing:
            parts = []
            if unknown:
                parts.append(f"unknown criterion names {', '.join(unknown)}")
            if repeated:
                parts.append(f"criteria given twice: {', '.join(repeated)}")
            if missing:
                parts.append(f"missing criteria: {', '.join(missing)}")
            raise _Invalid("; ".join(parts) + "; use each criterion name exactly once, as written")
        pairs = [matched[_normalize_name(c.name)] for c in schema.criteria]
    else:
        pairs = list(zip(schema.criteria, value))
    scores = []
    for criterion, obj in pairs:
        where = f"criterion {criterion.name!r}"
        scores.append(
            CriterionScore(
                criterion.name,
                _check_score(obj[SCORE_KEY], criterion.allowed, where),
                _justification(obj, where, schema.require_justification),
            )
        )
    return Verdict(tuple(scores), schema.max_total)


def _validate_score(value: Any, schema: VerdictSchema) -> Verdict:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, dict):
        raise _Invalid(
            f'expected one JSON object with a "{schema.score_field}" field, got a JSON {type(value).__name__}'
        )
    if schema.score_field not in value:
        raise _Invalid(f'the object has no "{schema.score_field}" field')
    score = _check_score(value[schema.score_field], schema.allowed_scores, f'"{schema.score_field}"')
    return Verdict(
        (
            CriterionScore(
                schema.score_field, score, _justification(value, "the verdict", schema.require_justification)
            ),
        ),
        schema.max_total,
    )


def validate_value(value: Any, schema: ReplySchema) -> Verdict:
    """Validate one decoded JSON value; raises ValueError with a message fit to send back to the judge."""
    if isinstance(schema, JsonReplySchema):
        try:
            return Verdict((), 0, schema.validate(value))
        except (TypeError, KeyError, IndexError, AttributeError) as err:  # a validator surprised by the shape
            raise ValueError(f"unexpected JSON structure ({type(err).__name__}: {err})") from None
    try:
        return (_validate_criteria if schema.kind == "criteria" else _validate_score)(value, schema)
    except _Invalid as err:
        raise ValueError(str(err)) from None


_OFFICIAL_LIST = re.compile(r"\[\s*\{.*\}\s*\]", re.DOTALL)


def parse_mmar_official(reply: str, schema: VerdictSchema) -> ParseOutcome:
    """The official MMAR-Rubrics reading of a reply (see the module docstring). Never raises."""
    text = str(reply)[:MAX_SCANNED_CHARS]
    match = _OFFICIAL_LIST.search(text)
    try:
        value = json.loads(match.group(0) if match else text)
    except (json.JSONDecodeError, RecursionError) as err:
        return ParseOutcome(None, f"invalid JSON: {err}")
    if not isinstance(value, list):
        return ParseOutcome(None, "the reply must be a JSON list", 1)
    if len(value) != schema.k:
        return ParseOutcome(None, f"expected {schema.k} criteria, got {len(value)}", 1)
    scores, warnings = [], []
    for n, (obj, criterion) in enumerate(zip(value, schema.criteria), 1):
        if not isinstance(obj, dict) or NAME_KEY not in obj or SCORE_KEY not in obj:
            return ParseOutcome(None, f'item {n} must be an object with "{NAME_KEY}" and "{SCORE_KEY}"', 1)
        if obj[NAME_KEY] != criterion.name:
            warnings.append(f"criterion {n}: expected the name {criterion.name!r}, got {obj[NAME_KEY]!r}")
        score = obj[SCORE_KEY]
        if not isinstance(score, (int, float)) or score not in criterion.allowed:
            return ParseOutcome(
                None,
                f"criterion {n} ({criterion.name!r}): score {json.dumps(score)} is not one "
                f"of {[_format_number(a) for a in criterion.allowed]}",
                1,
            )
        scores.append(
            CriterionScore(
                criterion.name,
                int(score) if isinstance(score, bool) else score,
                _justification(obj, f"criterion {n}", False),
            )
        )
    return ParseOutcome(Verdict(tuple(scores), schema.max_total), None, 1, warnings)


def parse_verdict(reply: Optional[str], schema: ReplySchema) -> ParseOutcome:
    """Extract and validate the verdict in a judge's reply. Never raises."""
    if reply is None or not str(reply).strip():
        return ParseOutcome(None, "the reply was empty")
    if getattr(schema, "reading", "tolerant") == "mmar_official":
        return parse_mmar_official(str(reply), schema)
    values, decode_error = extract_json_values(str(reply))
    if not values:
        why = f" ({decode_error})" if decode_error else ""
        return ParseOutcome(None, f"no JSON found in the reply{why}")
    valid: list[Verdict] = []
    errors: list[str] = []
    for value in values:
        try:
            verdict = validate_value(value, schema)
        except ValueError as err:
            errors.append(str(err))
            continue
        if verdict not in valid:
            valid.append(verdict)
    if len(valid) == 1:
        return ParseOutcome(valid[0], None, len(values))
    if len(valid) > 1:
        return ParseOutcome(None, f"the reply contains {len(valid)} different verdicts; give exactly one", len(values))
    # Explain the candidate that came closest to the expected container (a list for criteria).
    want = {"criteria": list, "score": dict}.get(schema.kind, object)
    shaped = [e for v, e in zip(values, errors) if isinstance(v, want)]
    return ParseOutcome(None, (shaped or errors)[-1], len(values))


REASK_TEMPLATE = (
    "Your previous reply could not be used: {error}.{cut}\nJudge the same submission again and reply with {format}"
)


def reask_messages(
    messages: Sequence[Mapping[str, Any]],
    reply: Optional[str],
    error: str,
    schema: ReplySchema,
    truncated: bool = False,
) -> list[dict[str, Any]]:
    """The original conversation, the judge's invalid reply as an assistant turn, and a user turn with
    the validation error; never the identical prompt again, and the system prompt is left untouched."""
    cut = " The reply was cut off at the token limit; keep the justifications short." if truncated else ""
    follow_up = REASK_TEMPLATE.format(error=error.rstrip("."), cut=cut, format=schema.format_instructions())
    return [dict(m) for m in messages] + [
        {"role": "assistant", "content": reply or ""},
        {"role": "user", "content": follow_up},
    ]


__all__ = [
    "Criterion",
    "CriterionScore",
    "JsonReplySchema",
    "ParseOutcome",
    "REASK_TEMPLATE",
    "ReplySchema",
    "Verdict",
    "VerdictSchema",
    "extract_json_values",
    "parse_mmar_official",
    "parse_verdict",
    "reask_messages",
    "validate_value",
]
