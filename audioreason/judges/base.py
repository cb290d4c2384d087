"""Types shared by every judge backend: sampling parameters, one completion, a failed call, the protocol."""

from __future__ import annotations

import math
import re
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Protocol, Sequence, runtime_checkable

# The official MMAR-Rubrics judge settings (the MMAR repository's code/evaluation_rubrics.py, the scorer of
# "The Interspeech 2026 Audio Reasoning Challenge", arXiv:2602.14224): gpt-4o-2024-11-20 at temperature 0
# with seed 42, 20 attempts per rater, a 120 s request timeout, and the openai client's own default of
# 2 retries inside each attempt (3 requests).
MMAR_JUDGE_MODEL = "gpt-4o-2024-11-20"
MMAR_TEMPERATURE = 0.0
MMAR_SEED = 42
MMAR_MAX_ATTEMPTS = 20
MMAR_TIMEOUT_S = 120.0
MMAR_CLIENT_REQUESTS = 3

# Failure kinds counted per call (Completion.call_errors / JudgeCallError.kind).
RATE_LIMITED, TIMEOUT, SERVER_ERROR, CONNECTION_ERROR, BAD_RESPONSE, CLIENT_ERROR, DEADLINE = (
    "rate_limited",
    "timeout",
    "server_error",
    "connection_error",
    "bad_response",
    "client_error",
    "deadline",
)
# Kinds that a later attempt may cure (a busy or unreachable server), as opposed to a server that answers
# with an error, a request it rejects, or an exhausted time budget.
TRANSIENT_KINDS = frozenset({RATE_LIMITED, TIMEOUT, CONNECTION_ERROR})


@dataclass(frozen=True)
class SamplingParams:
    """Sampling parameters passed through to the judge (and part of the cache key).

    ``seed_per_rater``: rater i is sent seed + i, so repeated draws of one model at temperature > 0 differ
    (intra-rater runs); off by default, as the official scorer sends seed 42 to all five raters.
    ``extra``: further request fields passed as they are (``response_format``, ``stop``, provider options).
    """

    temperature: float = MMAR_TEMPERATURE
    seed: Optional[int] = MMAR_SEED
    max_tokens: Optional[int] = None
    top_p: Optional[float] = None
    seed_per_rater: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    def for_rater(self, rater: int) -> dict[str, Any]:
        """The request parameters rater ``rater`` sends (None values left out)."""
        seed = self.seed + rater if (self.seed is not None and self.seed_per_rater) else self.seed
        params = {"temperature": self.temperature, "seed": seed, "max_tokens": self.max_tokens, "top_p": self.top_p}
        params = {k: v for k, v in params.items() if v is not None}
        params.update(self.extra)
        return params


@dataclass
class Completion:
    """One reply from a judge, with what it cost to get it."""

    text: Optional[str]
    finish_reason: Optional[str] = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1  # requests sent for this reply (1 + transport retries)
    call_errors: dict[str, int] = field(default_factory=dict)  # e.g. {"rate_limited": 1, "timeout": 2}
    waited_s: float = 0.0  # time spent backing off
    # False when the server's reply carried no token counts (no ``usage``), or counts that are no whole
    # number >= 0 (``usage_problem`` names the field): the 0s above are then unknown, not free, and the reply
    # is counted apart (``replies_without_usage``) so no total is read as complete.
    usage_reported: bool = True
    usage_problem: Optional[str] = None
    # The ``model`` field of the server's reply: the version string the server says answered (None: none
    # reported, or a judge in this process); the judge card records it beside the name asked for.
    served_model: Optional[str] = None


class JudgeCallError(Exception):
    """A call that produced no reply: retries exhausted or an error that retrying cannot fix.
    Its message is already scrubbed of credentials."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        attempts: int = 1,
        call_errors: Optional[dict[str, int]] = None,
        waited_s: float = 0.0,
        retryable: bool = False,
    ):
        super().__init__(message)
        self.kind = kind
        self.attempts = attempts
        self.call_errors = dict(call_errors or {})
        self.waited_s = waited_s
        self.retryable = retryable


class JudgeUnavailable(RuntimeError):
    """A judge that cannot work at all: no API key for a remote server, or the run's first request refused
    (HTTP 401, 403, 404) or unable to connect. A configuration error, raised out of the scorer before any item
    is scored, never counted as a failed item. Its message is scrubbed and names the model, the server and
    the cause."""


class TimeBudget:
    """Seconds of active judging allowed for one item (every rater, retry, re-ask and back-off of it) or for
    a whole run (``what="run"``).

    An item's clock starts when its first request gets a slot from the judge (``start``), not when it is
    queued, so a long run does not time out the items waiting their turn. Shared by the item's raters. An
    item budget with a ``parent`` (the run's) is exhausted when either is."""

    def __init__(self, seconds: float, parent: Optional["TimeBudget"] = None, what: str = "item"):
        if not seconds > 0:
            raise ValueError(f"a time budget needs a positive number of seconds, got {seconds!r}")
        self.seconds = float(seconds)
        self.parent, self.what = parent, what
        self.started: Optional[float] = None

    def start(self) -> None:
        if self.started is None:
            self.started = time.monotonic()

    def _own(self) -> float:
        return math.inf if self.started is None else self.seconds - (time.monotonic() - self.started)

    def remaining(self) -> float:
        return min(self._own(), self.parent.remaining() if self.parent is not None else math.inf)

    @property
    def exhausted(self) -> bool:
        return self.remaining() <= 0

    def error(self, attempts: int = 0) -> "JudgeCallError":
        spent = self if self._own() <= 0 or self.parent is None else self.parent
        return JudgeCallError(
            f"the {spent.what}'s time budget of {spent.seconds:g} s ran out",
            kind=DEADLINE,
            attempts=attempts,
            call_errors={DEADLINE: 1},
        )


@runtime_checkable
class Judge(Protocol):
    """What the runner needs from a judge backend. ``budget`` (may be None): stop retrying, and raise the
    budget's ``error()``, once it is exhausted; call ``budget.start()`` when a request first gets a slot."""

    name: str  # identifies the model in cache keys and results (never a URL or a key)

    async def complete(
        self, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any], budget: Optional[TimeBudget] = None
    ) -> Completion: ...

    async def aclose(self) -> None: ...


def judge_metadata(judge: Any) -> dict[str, Any]:
    """What a result records about a judge: its name, its weights, whether it ran in this process (an
    offline judge) and the decoding constraint (None: free text). Judges without ``metadata()`` are remote."""
    metadata = getattr(judge, "metadata", None)
    if callable(metadata):
        return dict(metadata())
    return {"name": judge.name, "model": judge.name, "offline": False, "constraint": None}


def judges_metadata(judges: Sequence[Any]) -> list[dict[str, Any]]:
    """One entry per distinct judge name, sorted by name."""
    seen: dict[str, dict[str, Any]] = {}
    for judge in judges:
        seen.setdefault(judge.name, judge_metadata(judge))
    return [seen[name] for name in sorted(seen)]


def offline_judge_label(entry: Mapping[str, Any]) -> str:
    """ "(offline judge: MODEL, constrained: HOW)" when a result was judged in process, else ""."""
    offline = [m for m in entry.get("judge_metadata") or [] if m.get("offline")]
    if not offline:
        return ""
    parts = "; ".join(
        f"{m.get('model')}" + (f", constrained: {m['constraint']}" if m.get("constraint") else ", unconstrained")
        for m in offline
    )
    return f"(offline judge: {parts})"


_KEEP_PREFIX_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[^\s\"',;)]+"),
    re.compile(
        r"(?i)((?:api[-_ ]?key|token|secret|authorization|password)(?: provided)?[\"']?\s*[:=]\s*[\"']?)"
        r"[^\s\"',;)]+"
    ),
)
_KEY_SHAPED = re.compile(r"\b(?:sk-|sk_|pk-|rk-|sess-|AIza)[A-Za-z0-9_\-\*\.]{6,}")
# The password of a URL's user info (scheme://user:PASSWORD@host), wherever a URL is quoted.
_URL_PASSWORD = re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^\s/@:\"']*:)[^\s/@\"']+@")


def scrub(text: Any, secrets: Sequence[Optional[str]] = ()) -> str:
    """``text`` with the given secrets, every URL's password and anything shaped like a credential replaced
    by [REDACTED]. Providers quote keys, whole or masked, in error messages ("Incorrect API key provided:
    sk-..."); ``url_secrets`` gives what of a server URL must be passed here (its query values)."""
    out = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            out = out.replace(secret, "[REDACTED]")
    out = _URL_PASSWORD.sub(lambda m: m.group(1) + "[REDACTED]@", out)
    for pattern in _KEEP_PREFIX_PATTERNS:
        out = pattern.sub(lambda m: m.group(1) + "[REDACTED]", out)
    return _KEY_SHAPED.sub("[REDACTED]", out)


def url_secrets(url: Optional[str]) -> list[str]:
    """What in a server URL may be a credential: every query-string value (``?key=...``) and the password."""
    if not url:
        return []
    parts = urllib.parse.urlsplit(str(url))
    values = [value for _, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=False)]
    return [v for v in values + [parts.password or ""] if v]


REDACTED = "<redacted>"


def redact_url(url: str) -> str:
    """``url`` as a file may store it: its password and every query value replaced by <redacted>."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if parts.password:
        netloc = netloc.replace(f":{parts.password}@", f":{REDACTED}@")
    query = urllib.parse.urlencode([(k, REDACTED) for k, _ in urllib.parse.parse_qsl(parts.query, True)])
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
