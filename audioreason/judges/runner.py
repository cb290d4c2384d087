"""Run judgement requests through one judge: cache look-up, the call, validation, re-asks, accounting.

A scorer sends ``JudgeRequest``s (item id, rater index, chat messages, verdict schema) and gets one
``JudgeResult`` per request, in order: a validated verdict, or a recorded failure with every raw reply.
A failed call or an invalid verdict never raises; ``JudgeStats`` counts them beside the score.

Each request is looked up in the cache just before it is judged, and claimed there (``VerdictCache.claim``)
so that processes sharing one cache file share the work; a request identical to one already in flight in
this runner waits for that one instead of paying again. Replies are scrubbed of the judge's API key (and
anything shaped like a key) before they are parsed, stored or returned.

An invalid reply is handled in one of two ways (``on_invalid``):
  * "reask" (default): a follow-up turn shows the judge its reply and the validation error
    (``max_reasks`` follow-ups); transport failures are retried inside the judge client;
  * "resend": the same messages are sent again, as the official MMAR-Rubrics scorer does; the request then
    has ``max_reasks + 1`` attempts in all, and a call that failed for a transient reason (rate limit,
    timeout, connection: ``base.TRANSIENT_KINDS``) uses one of them too; any other call failure ends it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from .base import (
    TRANSIENT_KINDS,
    Completion,
    Judge,
    JudgeCallError,
    JudgeUnavailable,
    SamplingParams,
    TimeBudget,
    scrub,
)
from .cache import VerdictCache, cache_key
from .structured import response_format
from .verdicts import ReplySchema, Verdict, parse_verdict, reask_messages

log = logging.getLogger("audioreason.judges")

OK, INVALID, CALL_FAILED = "ok", "invalid", "call_failed"
DEFAULT_MAX_REASKS = 2
ON_INVALID = ("reask", "resend")
DEFAULT_CLAIM_TTL_S = 900.0
# Re-ask seeds step past any rater's seed (rater r sends seed + r), so no draw repeats another request's.
REASK_SEED_STEP = 1000
CLAIM_POLL_S, CLAIM_POLL_MAX_S = 0.05, 2.0


@dataclass(frozen=True)
class JudgeRequest:
    """One judgement: ``messages`` as sent (system prompt, then the user turn holding the submission)."""

    item_id: str
    messages: Sequence[Mapping[str, Any]]
    schema: ReplySchema  # VerdictSchema (criteria or one score) or JsonReplySchema
    rater: int = 0


@dataclass
class JudgeResult:
    """The outcome of one request.

    status: "ok" (``verdict`` set), "invalid" (the judge replied, but no reply validated after
    ``max_reasks`` re-asks) or "call_failed" (no reply: retries exhausted, or an error retrying cannot
    fix). ``raw_reply`` is the last reply (the one the verdict came from, when ok); ``replies`` and
    ``validation_errors`` hold every reply and why each invalid one was rejected. ``error`` says why a
    failure failed. ``calls`` counts requests sent (re-asks and transport retries included); ``reasks``
    counts follow-ups, or resends with ``on_invalid="resend"``. ``warnings``: what the verdict's reading
    accepted but flagged (a criterion name that differs, in the official MMAR reading).
    """

    item_id: str
    rater: int
    judge: str
    key: str
    status: str
    verdict: Optional[Verdict] = None
    raw_reply: Optional[str] = None
    error: Optional[str] = None
    replies: list[str] = field(default_factory=list)
    validation_errors: list[str] = field(default_factory=list)
    calls: int = 0
    retries: int = 0
    reasks: int = 0
    call_errors: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    replies_without_usage: int = 0  # replies whose server reported no token counts (the sums above miss them)
    served_model: Optional[str] = None  # the reply's ``model`` field: the version the server says answered
    waited_s: float = 0.0
    elapsed_s: float = 0.0
    cached: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def score(self) -> Optional[float]:
        """The verdict's normalized score (total / max total); None for a failure or an unscored reply."""
        return self.verdict.normalized if self.verdict is not None else None

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["verdict"] = self.verdict.to_dict() if self.verdict is not None else None
        d["call_errors"] = dict(self.call_errors)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "JudgeResult":
        data = dict(data)
        if data.get("verdict") is not None:
            data["verdict"] = Verdict.from_dict(data["verdict"])
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class JudgeStats:
    """Counts over the requests a runner has answered (this process). Tokens are those paid in this run;
    cached results cost nothing and are counted in ``cache_hits`` only."""

    requests: int = 0
    ok: int = 0
    invalid: int = 0
    call_failed: int = 0
    cache_hits: int = 0
    cache_spilled: int = 0  # verdicts written to the cache's side file because the database stayed locked
    calls: int = 0
    retries: int = 0
    reasks: int = 0
    rate_limited: int = 0
    timeouts: int = 0
    server_errors: int = 0
    connection_errors: int = 0
    bad_responses: int = 0
    client_errors: int = 0
    deadlines: int = 0
    other_errors: int = 0
    warnings: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    replies_without_usage: int = 0
    waited_s: float = 0.0
    # Verdicts (cached ones too) by the model version their server reported; "" counts those with none.
    served_models: dict[str, int] = field(default_factory=dict)

    _ERROR_FIELDS = {
        "rate_limited": "rate_limited",
        "timeout": "timeouts",
        "server_error": "server_errors",
        "connection_error": "connection_errors",
        "bad_response": "bad_responses",
        "client_error": "client_errors",
        "deadline": "deadlines",
    }

    def add(self, result: JudgeResult) -> None:
        self.requests += 1
        setattr(self, result.status, getattr(self, result.status) + 1)
        self.warnings += len(result.warnings)
        if result.status != CALL_FAILED:
            name = result.served_model or ""
            self.served_models[name] = self.served_models.get(name, 0) + 1
        if result.cached:
            self.cache_hits += 1
            return
        self.calls += result.calls
        self.retries += result.retries
        self.reasks += result.reasks
        for kind, n in result.call_errors.items():
            name = self._ERROR_FIELDS.get(kind, "other_errors")
            setattr(self, name, getattr(self, name) + n)
        self.prompt_tokens += result.prompt_tokens
        self.completion_tokens += result.completion_tokens
        self.replies_without_usage += result.replies_without_usage
        self.waited_s += result.waited_s

    def merge(self, other: "JudgeStats") -> "JudgeStats":
        served = dict(self.served_models)
        for name, n in other.served_models.items():
            served[name] = served.get(name, 0) + n
        return JudgeStats(
            **{
                f.name: getattr(self, f.name) + getattr(other, f.name)
                for f in fields(self)
                if f.name != "served_models"
            },
            served_models=served,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class JudgeRunner:
    """Judges requests with one judge model.

    sampling: sent with every request (rater i gets ``sampling.for_rater(i)``).
    cache: a ``VerdictCache`` or a path to one; None disables caching.
    max_reasks: follow-up turns (or resends) after an invalid reply.
    on_invalid: "reask" or "resend" (see the module docstring).
    retry_invalid_cached: judge again requests whose stored outcome is an invalid verdict (default: a
        broken deployment's invalid replies must not stick; the stored record stays for inspection until a
        valid verdict replaces it). False: serve them from the cache like valid ones.
    claim_ttl_s: how long this runner's claim on a key keeps other processes waiting for its verdict.
    reask_sampling: sampling parameters that replace the request's on re-ask turns (None: re-asks are sent
        with the request's own). A greedy small model asked again writes the same reply again; a sampled
        attempt draws another (with on_invalid="resend": shown its reply with the error, a small model copies
        it). Re-ask turn t is seeded with the request's seed + t * REASK_SEED_STEP, so a rerun draws the same
        replies. Part of the cache key when set.
    """

    def __init__(
        self,
        judge: Judge,
        *,
        sampling: SamplingParams = SamplingParams(),
        cache: Union[VerdictCache, str, Path, None] = None,
        max_reasks: int = DEFAULT_MAX_REASKS,
        on_invalid: str = "reask",
        retry_invalid_cached: bool = True,
        claim_ttl_s: float = DEFAULT_CLAIM_TTL_S,
        reask_sampling: Optional[Mapping[str, Any]] = None,
    ):
        if max_reasks < 0:
            raise ValueError("max_reasks must be >= 0")
        if on_invalid not in ON_INVALID:
            raise ValueError(f"unknown on_invalid {on_invalid!r}; choose one of {ON_INVALID}")
        self.on_invalid = on_invalid
        self.judge = judge
        self.sampling = sampling
        self.cache = VerdictCache(cache) if isinstance(cache, (str, Path)) else cache
        self.max_reasks = max_reasks
        self.retry_invalid_cached = retry_invalid_cached
        self.stats = JudgeStats()
        self._in_flight: dict[str, asyncio.Future] = {}
        self.claim_ttl_s = claim_ttl_s
        self.reask_sampling = dict(reask_sampling) if reask_sampling else None
        self._owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"

    def params(self, request: JudgeRequest) -> dict[str, Any]:
        """The request fields besides the messages: the rater's sampling parameters, and the request's schema as
        ``response_format`` when the judge asks for structured outputs (``judges.structured``)."""
        params = self.sampling.for_rater(request.rater)
        if getattr(self.judge, "structured_outputs", False) is True:
            fmt = response_format(request.schema)
            if fmt is not None:
                params["response_format"] = fmt
        return params

    def key(self, request: JudgeRequest) -> str:
        params = self.params(request)
        if self.reask_sampling:
            params["reask_sampling"] = self.reask_sampling
        return cache_key(self.judge.name, request.messages, params, request.rater, request.schema.to_dict())

    def _turn_params(self, params: dict[str, Any], turn: int) -> dict[str, Any]:
        """The parameters re-ask ``turn`` (1, 2, ...) is sent with (see ``reask_sampling``)."""
        if not turn or not self.reask_sampling:
            return params
        seed = int(params.get("seed") or 0) + turn * REASK_SEED_STEP
        return {**params, **self.reask_sampling, "seed": seed}

    # ------------------------------------------------------------------ batch entry points
    def run(self, requests: Sequence[JudgeRequest]) -> list[JudgeResult]:
        """Synchronous ``arun`` (not from inside a running event loop: await ``arun`` there)."""

        async def main() -> list[JudgeResult]:
            try:
                return await self.arun(requests)
            finally:
                await self.judge.aclose()

        return asyncio.run(main())

    async def arun(
        self, requests: Sequence[JudgeRequest], budgets: Optional[Sequence[Optional[TimeBudget]]] = None
    ) -> list[JudgeResult]:
        """Results in request order. Cached requests are answered without a call; identical requests in
        one batch are judged once. ``budgets``: an optional time budget per request."""
        budgets = list(budgets) if budgets is not None else [None] * len(requests)
        return list(await asyncio.gather(*(self.ajudge(r, b) for r, b in zip(requests, budgets))))

    async def ajudge(self, request: JudgeRequest, budget: Optional[TimeBudget] = None) -> JudgeResult:
        """One request: the judgement in flight here for the same key, else the cache (waiting while another
        process holds the key's claim), else a new judgement."""
        key = self.key(request)
        shared = self._in_flight.get(key)
        if shared is not None:
            try:
                done = await asyncio.shield(shared)
            except asyncio.CancelledError:
                if not shared.cancelled():
                    raise  # this request itself was cancelled
                done = None  # the judgement we waited for was cancelled with its item: judge it here
            if done is not None:
                return self._served(request, JudgeResult.from_dict(done.to_dict()))
        future = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future  # registered before any await: a twin request now waits for this one
        try:
            result = await self._stored_or_judged(request, key, budget)
        except BaseException:
            future.cancel()
            raise
        finally:
            if self._in_flight.get(key) is future:
                del self._in_flight[key]
        future.set_result(result)
        return result

    def _usable(self, record: Optional[Mapping[str, Any]]) -> bool:
        return record is not None and (record["status"] == OK or not self.retry_invalid_cached)

    async def _stored_or_judged(self, request: JudgeRequest, key: str, budget: Optional[TimeBudget]) -> JudgeResult:
        if self.cache is None:
            result = await self._judge_one(request, key, budget)
            self.stats.add(result)
            return result
        poll = CLAIM_POLL_S
        while True:  # cache operations run in a worker thread: a locked database never blocks the loop
            record = await asyncio.to_thread(self.cache.get, key)
            if self._usable(record):
                return self._served(request, JudgeResult.from_dict(record))
            if await asyncio.to_thread(self.cache.claim, key, self._owner, self.claim_ttl_s):
                # A verdict stored (and its claim ended) between our look-up and our claim is now visible.
                record = await asyncio.to_thread(self.cache.get, key)
                if self._usable(record):
                    self.cache.release(key, self._owner)
                    return self._served(request, JudgeResult.from_dict(record))
                break
            await asyncio.sleep(poll)  # another process is judging this key: wait for its verdict
            poll = min(CLAIM_POLL_MAX_S, poll * 2)
        result: Optional[JudgeResult] = None
        try:
            result = await self._judge_one(request, key, budget)
        finally:
            if result is None or result.status not in (OK, INVALID):  # failed or cancelled: free the key
                self.cache.release(key, self._owner)
        self.stats.add(result)
        return result

    def _served(self, request: JudgeRequest, result: JudgeResult) -> JudgeResult:
        """A stored or shared result, relabelled for this request and counted as a cache hit."""
        result.item_id, result.rater, result.cached = request.item_id, request.rater, True
        self.stats.add(result)
        return result

    # ------------------------------------------------------------------ one request
    async def _judge_one(self, request: JudgeRequest, key: str, budget: Optional[TimeBudget] = None) -> JudgeResult:
        started = time.monotonic()
        params = self.params(request)
        result = JudgeResult(
            item_id=request.item_id, rater=request.rater, judge=self.judge.name, key=key, status=CALL_FAILED
        )
        messages = [dict(m) for m in request.messages]
        resend = self.on_invalid == "resend"
        secrets = getattr(self.judge, "_secrets", list)()
        for turn in range(self.max_reasks + 1):
            last = turn == self.max_reasks
            try:
                if budget is not None and budget.exhausted:
                    raise budget.error()
                sent = self._turn_params(params, turn)
                if getattr(self.judge, "constrained", False):  # it decodes under the reply schema's grammar
                    completion = await self.judge.complete(messages, sent, budget, schema=request.schema)
                else:
                    completion = await self.judge.complete(messages, sent, budget)
            except JudgeCallError as err:
                self._account(result, err.attempts, err.call_errors, err.waited_s)
                result.status, result.error = CALL_FAILED, str(err)
                if resend and err.kind in TRANSIENT_KINDS and not last:
                    continue  # the official scorer's loop: a transient failure costs one of the attempts
                break
            except JudgeUnavailable:  # a judge that cannot work at all is the run's error, not this item's
                raise
            except Exception as err:  # a backend bug must not kill the batch; record it, scrubbed
                result.calls += 1
                result.status = CALL_FAILED
                result.error = scrub(f"{type(err).__name__}: {err}", secrets)
                log.exception("judge %s: unexpected error", self.judge.name)
                break
            self._account(result, completion.attempts, completion.call_errors, completion.waited_s, completion)
            # A reply that quotes the key (a server echoing its request) must not carry it into the cache.
            reply = scrub(completion.text, secrets) if completion.text is not None else ""
            result.replies.append(reply)
            result.raw_reply = reply
            result.served_model = completion.served_model
            outcome = parse_verdict(reply, request.schema)
            if outcome.ok:
                result.status, result.verdict, result.error = OK, outcome.verdict, None
                result.warnings = list(outcome.warnings)
                break
            result.validation_errors.append(outcome.error or "invalid")
            result.status, result.error = INVALID, outcome.error
            if not last:
                result.reasks += 1
                if not resend:
                    messages = reask_messages(
                        request.messages,
                        reply,
                        outcome.error or "invalid",
                        request.schema,
                        truncated=completion.finish_reason == "length",
                    )
        result.elapsed_s = time.monotonic() - started
        if self.cache is not None and result.status in (OK, INVALID):
            # Committed now (or spilled to the side file): a run killed after this line keeps this judgement.
            where = await asyncio.to_thread(
                self.cache.put, key, self.judge.name, request.rater, result.status, result.to_dict()
            )
            self.stats.cache_spilled += where == "spilled"
        return result

    @staticmethod
    def _account(
        result: JudgeResult,
        attempts: int,
        call_errors: Mapping[str, int],
        waited_s: float,
        completion: Optional[Completion] = None,
    ) -> None:
        result.calls += attempts
        result.retries += max(0, attempts - 1)
        for kind, n in call_errors.items():
            result.call_errors[kind] = result.call_errors.get(kind, 0) + n
        result.waited_s += waited_s
        if completion is not None:
            result.prompt_tokens += completion.prompt_tokens
            result.completion_tokens += completion.completion_tokens
            result.replies_without_usage += not completion.usage_reported
