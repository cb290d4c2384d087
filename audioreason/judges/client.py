"""A judge behind any OpenAI-compatible chat-completions server (OpenAI, Gemini's OpenAI endpoint, vLLM,
TGI, llama.cpp server, ``transformers serve``). Requests go out through the ``openai`` package's HTTP client
(httpx2) with the URL, headers and body bytes of the SDK's own request path, without that path's
per-request machinery: the body is JSON-encoded once per reply, and written and read on the socket by
``http11.KeepAliveTransport`` (asyncio's own transports) unless a proxy from the environment applies.

Flow control, all in this module (the ``openai`` client's own retries are not used):
  * an adaptive concurrency limit (AIMD): at most ``concurrency`` requests in flight; a 429 (or a 503)
    halves the limit, each success adds 1/limit (about +1 per round of replies), and the limit also grows
    back by 1 every ``recovery_s`` seconds without a new 429, so a server that stops answering cannot leave
    the run serialised; never above ``concurrency`` or below 1. A timeout does not lower the limit: it says
    a request hung, not that the rate was too high (the time budgets bound what hanging costs);
  * a 429's ``Retry-After`` (seconds or an HTTP date; also ``retry-after-ms``) pauses *every* request to
    that server until it has passed, not only the one that got it;
  * bounded retries (``max_attempts`` requests per reply, default 20 as in the MMAR scorer) with
    exponential backoff and full jitter for 429, 408/409, timeouts, connection errors (a connection closed
    mid-reply, an event stream cut off) and broken bodies;
  * a server that answers 5xx is asked at most ``server_error_attempts`` times (default 3, the openai
    client's own default of 2 retries, which is what the official MMAR scorer gets): a 5xx is a broken
    deployment far more often than a busy one, and 20 back-offs on a dead server cost minutes per item;
  * other 4xx (bad request, auth, not found) fail at once, since repeating cannot fix them;
  * a hard per-request timeout (``timeout_s``), counted and retried;
  * an optional ``TimeBudget`` per call (the runner passes the item's): no request starts, and no back-off
    runs, past it; each request's timeout is cut to what is left of it;
  * the first contact (per event loop, i.e. per run): until the server has answered once, one request at a
    time is sent (the first item's own request; no extra one), the others wait. If that first attempt is
    refused with HTTP 401, 403 or 404 (bad key, no access, unknown model) or cannot connect (refused, no
    such host, a failed TLS handshake), every request of the run raises ``JudgeUnavailable`` naming the
    cause: a configuration error, not a failed item. Any other answer (a reply, 429, 5xx, another 4xx, a
    broken body, a connection that was made and then dropped mid-reply) or a timeout opens the run to full
    concurrency, and from then on every failure is counted per item as above.
  * a 200 reply whose ``usage`` is missing or holds a count that is no whole number >= 0 (a string, a
    negative number) is kept: its tokens are unknown (``Completion.usage_reported`` False, counted as
    ``replies_without_usage``; ``usage_problem`` names the field), never guessed and never a reason to pay
    for the reply again.

A job that uses a judge long after it starts (``audioreason construct``'s solver and critic) can call
``reach()`` first: one free ``GET models``; a 401, a 403 or no connection is ``JudgeUnavailable`` then, any
other answer is left to the first real request (the scorers do not call it: their first request is the
first item's own).

A missing API key is also ``JudgeUnavailable`` (before any request) for OpenAI itself (no ``base_url``) and
for a remote ``base_url``; a local one (loopback, a private-network address, a single-label host name such as
``vllm`` or ``gpu-node-3``) gets the placeholder key "EMPTY" that vLLM, TGI and llama.cpp accept, as does any
server when ``api_key_env=None`` says it takes no key.

The API key is read from an environment variable (``api_key_env``) when the client is first used; it is
never stored on this object, and every error message passes through ``scrub`` before it is raised,
logged or recorded, with the key and what of ``base_url`` may be a credential (its query values and
password; ``scrub`` also blanks any URL's password). httpx logs every request's full URL at INFO, so the
client puts the same redaction on the HTTP client's loggers (httpx, httpx2, openai) when it is first used.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import ipaddress
import json
import logging
import math
import os
import random
import ssl
import time
import urllib.parse
from collections import deque
from typing import Any, Callable, Mapping, Optional, Sequence

from ..base.jsonl import json_type
from .base import (
    BAD_RESPONSE,
    CLIENT_ERROR,
    CONNECTION_ERROR,
    MMAR_MAX_ATTEMPTS,
    RATE_LIMITED,
    SERVER_ERROR,
    TIMEOUT,
    Completion,
    JudgeCallError,
    JudgeUnavailable,
    TimeBudget,
    scrub,
    url_secrets,
)

log = logging.getLogger("audioreason.judges")

DEFAULT_SERVER_ERROR_ATTEMPTS = 3
DEFAULT_RECOVERY_S = 5.0
_RETRYABLE_STATUS = {408, 409, 429}
# What a refusal of the run's first request means (the judge cannot work at all: JudgeUnavailable).
_UNAVAILABLE_STATUS = {
    401: "the server refused the credentials: check the key in {env}",
    403: "the server denied access with this key: check the key's permissions for the model",
    404: "unknown model {model!r}, or no chat-completions endpoint at this base_url",
}


HTTP_LOGGERS = ("httpx", "httpx2", "openai", "openai._base_client")


class _RedactSecrets(logging.Filter):
    """Scrubs the registered secrets (and any URL's password) from every record of the logger it is on."""

    def __init__(self) -> None:
        super().__init__("audioreason-redact")
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message, sorted(self.secrets))
        if clean != message:
            record.msg, record.args = clean, ()
        return True


_REDACT = _RedactSecrets()


def redact_http_logs(secrets: Sequence[Optional[str]]) -> None:
    """Keep ``secrets`` out of what the HTTP client's loggers print (httpx logs each URL at INFO)."""
    _REDACT.secrets.update(s for s in secrets if s and len(s) >= 4)
    for name in HTTP_LOGGERS:
        logger = logging.getLogger(name)
        if _REDACT not in logger.filters:
            logger.addFilter(_REDACT)


def is_local_url(base_url: str) -> bool:
    """True for a server on this machine or a private network (loopback, private or link-local address,
    localhost, a single-label host name): one that may need no API key."""
    host = (urllib.parse.urlsplit(base_url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost") or "." not in host and ":" not in host:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


class _FirstContact:
    """Per event loop: until the server has answered once, one request at a time is let through (see the
    module docstring); its outcome opens the loop, or fails it with a ``JudgeUnavailable`` every request
    then raises."""

    def __init__(self) -> None:
        self.opened = False
        self.error: Optional[JudgeUnavailable] = None
        self._trying = False
        self._changed = asyncio.Event()

    async def enter(self) -> bool:
        """True when this request is the one that tries the server first."""
        while not self.opened:
            if self.error is not None:
                raise JudgeUnavailable(str(self.error))
            if not self._trying:
                self._trying = True
                return True
            await self._changed.wait()
        return False

    def _settle(self) -> None:
        self._trying = False
        self._changed.set()
        self._changed = asyncio.Event()

    def open(self) -> None:
        self.opened = True
        self._settle()

    def fail(self, error: JudgeUnavailable) -> JudgeUnavailable:
        self.error = error
        self._settle()
        return error

    def leave(self) -> None:
        """The trying request ended without an outcome (cancelled, out of time): the next one tries."""
        self._settle()


class AdaptiveLimiter:
    """AIMD limit on requests in flight, plus a shared pause after a Retry-After. Waiters are served in
    arrival order and a release wakes only the waiters it has slots for (thousands of queued requests
    cost nothing per release). Single event loop, no threads (``OpenAICompatibleJudge`` makes one per loop)."""

    def __init__(self, max_concurrency: int, min_concurrency: int = 1, recovery_s: float = DEFAULT_RECOVERY_S):
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise ValueError(f"concurrency must be an integer of at least 1, got {max_concurrency!r}")
        self.max_concurrency = max_concurrency
        self.min_concurrency = max(1, min(min_concurrency, max_concurrency))
        self.limit = float(max_concurrency)
        self.lowest_limit = self.limit
        self.recovery_s = recovery_s
        self._last_change = time.monotonic()
        self.in_flight = 0
        self.pause_until = 0.0  # loop time
        self._waiters: deque[asyncio.Future] = deque()

    def _recover(self) -> None:
        """+1 per whole ``recovery_s`` since the last change, up to the maximum (a part period carries over)."""
        now = time.monotonic()
        steps = int((now - self._last_change) / self.recovery_s) if self.recovery_s > 0 else 0
        if steps and self.limit < self.max_concurrency:
            self.limit = min(float(self.max_concurrency), self.limit + steps)
            self._last_change += steps * self.recovery_s
        elif self.limit >= self.max_concurrency:
            self._last_change = now

    async def acquire(self) -> float:
        """Wait for a slot and for any pause to pass; returns the seconds spent waiting on a pause."""
        self._recover()
        if self.in_flight < int(self.limit) and not self._waiters:
            self.in_flight += 1
        else:
            slot = asyncio.get_running_loop().create_future()
            self._waiters.append(slot)
            try:
                await slot  # the releaser counted us in before waking us
            except asyncio.CancelledError:
                if slot.done() and not slot.cancelled():
                    self.release()  # woken and cancelled at once: hand the slot on
                else:
                    self._waiters.remove(slot)
                raise
        loop = asyncio.get_running_loop()
        started = loop.time()
        while (delay := self.pause_until - loop.time()) > 0:  # re-read: another 429 may extend the pause
            await asyncio.sleep(delay)
        return loop.time() - started

    def release(self, overloaded: bool = False, success: bool = False, retry_after_s: Optional[float] = None) -> None:
        self.in_flight -= 1
        self._recover()
        if overloaded:
            self.limit = max(float(self.min_concurrency), self.limit / 2)
            self.lowest_limit = min(self.lowest_limit, self.limit)
            self._last_change = time.monotonic()
        elif success:
            self.limit = min(float(self.max_concurrency), self.limit + 1.0 / self.limit)
        if retry_after_s:
            self.pause_until = max(self.pause_until, asyncio.get_running_loop().time() + retry_after_s)
        while self._waiters and self.in_flight < int(self.limit):
            slot = self._waiters.popleft()
            if not slot.done():
                self.in_flight += 1
                slot.set_result(None)


def parse_retry_after(headers: Optional[Mapping[str, str]]) -> Optional[float]:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (delta seconds or an HTTP date)."""
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


def check_base_url(base_url: Any, name: str = "base_url") -> None:
    """ValueError (its secrets scrubbed) unless ``base_url`` is an http(s) URL with a host: the client's own
    check, also made by a sweep file's check before any work."""
    parts = urllib.parse.urlsplit(str(base_url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            scrub(
                f"{name} must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}",
                url_secrets(str(base_url)),
            )
        )


class OpenAICompatibleJudge:
    """A judge model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``name`` (default: ``model``) identifies the judge in cache keys and results; set it when one model
    name means different weights on different servers (e.g. "default" on two vLLM servers).
    Without the API key variable set, a local ``base_url`` server gets the placeholder key "EMPTY" (vLLM,
    TGI and llama.cpp need none); OpenAI itself (no ``base_url``) and a remote server raise
    ``JudgeUnavailable`` (``api_key_env=None``: the server takes no key, "EMPTY" is sent).
    ``structured_outputs``: ``JudgeRunner`` sends each request's verdict schema as a JSON Schema
    ``response_format`` (``audioreason.judges.structured``); off by default, as the official MMAR scorer.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: Optional[str] = None,
        api_key_env: Optional[str] = "OPENAI_API_KEY",
        name: Optional[str] = None,
        concurrency: int = 8,
        timeout_s: float = 60.0,
        max_attempts: int = MMAR_MAX_ATTEMPTS,
        server_error_attempts: int = DEFAULT_SERVER_ERROR_ATTEMPTS,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        max_retry_after_s: float = 300.0,
        default_headers: Optional[Mapping[str, str]] = None,
        structured_outputs: bool = False,
        rng: Optional[random.Random] = None,
    ):
        for option, value in (
            ("concurrency", concurrency),
            ("max_attempts", max_attempts),
            ("server_error_attempts", server_error_attempts),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{option} must be an integer of at least 1, got {value!r}")
        for option, value in (
            ("timeout_s", timeout_s),
            ("backoff_base_s", backoff_base_s),
            ("backoff_max_s", backoff_max_s),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ValueError(f"{option} must be a positive number of seconds, got {value!r}")
        if base_url is not None:
            check_base_url(base_url)
        self.model = model
        self.name = name or model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_attempts = max_attempts
        self.server_error_attempts = server_error_attempts
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.max_retry_after_s = max_retry_after_s
        self.default_headers = dict(default_headers or {})
        if not isinstance(structured_outputs, bool):
            raise ValueError(f"structured_outputs must be True or False, got {structured_outputs!r}")
        self.structured_outputs = structured_outputs
        self._rng = rng or random.Random()
        # id(loop) -> (loop, client, limiter, first contact)
        self._per_loop: dict[int, tuple[Any, Any, AdaptiveLimiter, _FirstContact]] = {}
        # The limiter of the latest event loop, kept after the run for reports (limit, lowest_limit).
        self.limiter: Optional[AdaptiveLimiter] = None

    def __repr__(self) -> str:
        base_url = None if self.base_url is None else scrub(self.base_url, self._secrets())
        return (
            f"OpenAICompatibleJudge(model={self.model!r}, base_url={base_url!r}, "
            f"api_key_env={self.api_key_env!r}, concurrency={self.concurrency}"
            + (", structured_outputs=True)" if self.structured_outputs else ")")
        )

    # ------------------------------------------------------------------ per-loop resources
    def _where(self) -> str:
        """The judge and its server, the URL scrubbed (a password or a key in its query string)."""
        return f"judge {self.model} at {scrub(self.base_url, self._secrets()) if self.base_url else 'the OpenAI API'}"

    def _unavailable(self, cause: str, server_text: str = "") -> JudgeUnavailable:
        """The error naming the cause; what the server or the transport said is scrubbed of credentials."""
        detail = f": {scrub(server_text, self._secrets())}" if server_text else ""
        return JudgeUnavailable(f"{self._where()} is unavailable: {cause}{detail}")

    def _api_key(self) -> str:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            return key
        if self.base_url is None:
            raise self._unavailable(f"no API key: set the environment variable {self.api_key_env or 'OPENAI_API_KEY'}")
        if self.api_key_env and not is_local_url(self.base_url):
            raise self._unavailable(
                f"no API key: set the environment variable {self.api_key_env} (the server is "
                "not on this machine or a private network; api_key_env=None sends no key)"
            )
        return "EMPTY"

    def check_key(self) -> None:
        """Raise ``JudgeUnavailable`` now, without a request, when the API key the judge needs is not set."""
        self._api_key()

    async def reach(self, timeout_s: float = 30.0) -> None:
        """Ask the server for its model list (``GET models``, which costs nothing) before any work, so that a
        refused key or a server that cannot be reached is ``JudgeUnavailable`` now rather than at the role's
        first request, which may come late in a long job. Only a clear refusal (401, 403) or no connection is
        an error: any other answer (the list, a 404 from a server that lists no models, a 5xx, a timeout) is
        left for the first real request to judge, and a model missing from the list is too (llama.cpp's
        server answers under any model name; Gemini lists its models as ``models/NAME``)."""
        client, _, _ = self._resources()
        try:
            status, text = await _within(client.get("models", timeout_s), timeout_s)
        except (asyncio.TimeoutError, *client.timeout_errors):
            return
        except client.connection_errors as err:
            if _never_connected(err):
                raise self._unavailable("cannot connect to the server", f"Connection error. ({err})") from None
            return
        if status in (401, 403):
            raise self._unavailable(self._refusal(status), f"HTTP {status} to GET models: {text}")

    def _refusal(self, status: int) -> str:
        """What a refusal with ``status`` (one of ``_UNAVAILABLE_STATUS``) means for this judge."""
        if status == 401 and not self.api_key_env:
            return "the server refused a request sent without a key (api_key_env is None)"
        return _UNAVAILABLE_STATUS[status].format(env=self.api_key_env, model=self.model)

    def _secrets(self) -> list[Optional[str]]:
        """The key and what of ``base_url`` may be a credential (query values, the password)."""
        return [os.environ.get(self.api_key_env) if self.api_key_env else None, *url_secrets(self.base_url)]

    def _resources(self) -> tuple["_Transport", AdaptiveLimiter, _FirstContact]:
        """The HTTP transport, limiter and first-contact gate of the running loop (loop-bound state)."""
        loop = asyncio.get_running_loop()
        entry = self._per_loop.get(id(loop))
        if entry is None or entry[0] is not loop:
            redact_http_logs(self._secrets())  # httpx logs each request's URL, the key may be in the query
            transport = _Transport(self._api_key(), self.base_url, self.default_headers)
            entry = (loop, transport, AdaptiveLimiter(self.concurrency), _FirstContact())
            self._per_loop[id(loop)] = entry
            self.limiter = entry[2]
        return entry[1], entry[2], entry[3]

    async def aclose(self) -> None:
        """Close the current loop's HTTP client (the runner calls this at the end of a run)."""
        loop = asyncio.get_running_loop()
        entry = self._per_loop.pop(id(loop), None)
        if entry is not None:
            await entry[1].aclose()

    # ------------------------------------------------------------------ one reply
    def _backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(max, base * 2^(attempt-1))]."""
        return self._rng.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1)))

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any],
        budget: Optional[TimeBudget] = None,
        on_send: Optional[Callable[[], None]] = None,
    ) -> Completion:
        """One reply. ``on_send`` is called just before each request goes out (a run's journal of what was
        sent: a reply lost to a killed process was still sent, and may be billed)."""
        client, limiter, contact = self._resources()
        first = await contact.enter()
        try:
            return await self._complete(client, limiter, contact if first else None, messages, params, budget, on_send)
        finally:
            if first and not contact.opened and contact.error is None:
                contact.leave()

    async def _complete(
        self,
        client: Any,
        limiter: AdaptiveLimiter,
        contact: Optional[_FirstContact],
        messages: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any],
        budget: Optional[TimeBudget],
        on_send: Optional[Callable[[], None]],
    ) -> Completion:
        """One reply; ``contact``: this request tries the server first, so its first answer decides the run."""
        # JSON-encoded once for all attempts (it holds the base64 audio of a served model's request).
        body = encode_json({"model": self.model, "messages": [dict(m) for m in messages], **params})
        errors: dict[str, int] = {}
        waited, last_error = 0.0, ""
        for attempt in range(1, self.max_attempts + 1):
            waited += await limiter.acquire()
            timeout = self.timeout_s
            if budget is not None:
                budget.start()
                timeout = min(timeout, budget.remaining())
                if timeout <= 0:
                    limiter.release()
                    raise self._out_of_time(budget, attempt - 1, errors, waited)
            kind, retry_after, overloaded = None, None, False
            try:
                if on_send is not None:
                    on_send()
                response = await _within(client.send(body, timeout), timeout)
                if response.status_code >= 400:
                    raise _StatusError(response)
                completion = self._read(response)
                completion.served_model = served_model(response)
            except (asyncio.TimeoutError, *client.timeout_errors):  # hung, not rate-limited: the limit stays
                kind, last_error = TIMEOUT, f"no reply within {timeout:g} s"
            except _StatusError as err:
                status = err.status_code
                last_error = f"HTTP {status}: {err}"
                if contact is not None:
                    if status in _UNAVAILABLE_STATUS:
                        limiter.release()
                        raise contact.fail(self._unavailable(self._refusal(status), last_error)) from None
                    contact.open()  # the server answers: from here on a failure is the item's
                    contact = None
                if status == 429:
                    kind, overloaded = RATE_LIMITED, True
                    retry_after = parse_retry_after(err.headers)
                elif status >= 500:
                    kind = SERVER_ERROR
                    overloaded = status == 503
                    retry_after = parse_retry_after(err.headers) if status == 503 else None
                elif status in _RETRYABLE_STATUS:
                    kind = SERVER_ERROR
                else:
                    errors[CLIENT_ERROR] = errors.get(CLIENT_ERROR, 0) + 1
                    limiter.release()
                    raise self._error(f"{last_error} (not retried)", CLIENT_ERROR, attempt, errors, waited) from None
            except client.connection_errors as err:
                detail = f"Connection error. ({err})"
                kind, last_error = CONNECTION_ERROR, f"connection error: {detail}"
                if contact is not None and _never_connected(err):
                    limiter.release()
                    raise contact.fail(self._unavailable("cannot connect to the server", detail)) from None
            except (ValueError, _BadResponse) as err:  # JSONDecodeError too
                kind, last_error = BAD_RESPONSE, f"unusable response body: {err}"
            except BaseException:
                limiter.release()
                raise
            if contact is not None:  # a reply, a timeout, a broken or cut-off body: the run goes on, per item
                contact.open()
                contact = None
            if kind is None:
                limiter.release(success=True)
                completion.attempts, completion.call_errors, completion.waited_s = attempt, errors, waited
                return completion
            if retry_after is not None:
                retry_after = min(retry_after, self.max_retry_after_s)
            limiter.release(overloaded=overloaded, retry_after_s=retry_after)
            errors[kind] = errors.get(kind, 0) + 1
            if kind == SERVER_ERROR and errors[kind] >= self.server_error_attempts:
                raise self._error(
                    f"gave up after {errors[kind]} server errors; last error: {last_error}",
                    SERVER_ERROR,
                    attempt,
                    errors,
                    waited,
                )
            if attempt == self.max_attempts:
                break
            # Honour Retry-After (every request waits for it in acquire()); otherwise back off with jitter.
            delay = self._backoff(attempt) if retry_after is None else 0.0
            if budget is not None and delay >= budget.remaining():
                raise self._out_of_time(budget, attempt, errors, waited)
            log.info(
                "judge %s: %s (attempt %d of %d); retrying in %.2f s%s",
                self.name,
                scrub(last_error, self._secrets()),
                attempt,
                self.max_attempts,
                delay,
                f" after Retry-After {retry_after:g} s" if retry_after is not None else "",
            )
            if delay:
                await asyncio.sleep(delay)
                waited += delay
        raise self._error(
            f"gave up after {self.max_attempts} attempts; last error: {last_error}",
            max(errors, key=errors.get) if errors else SERVER_ERROR,
            self.max_attempts,
            errors,
            waited,
            retryable=True,
        )

    def _out_of_time(self, budget: TimeBudget, attempts: int, errors: dict[str, int], waited: float) -> JudgeCallError:
        err = budget.error(attempts)
        for kind, n in errors.items():
            err.call_errors[kind] = err.call_errors.get(kind, 0) + n
        err.waited_s = waited
        log.warning("judge %s: %s", self.name, err)
        return err

    def _error(
        self, message: str, kind: str, attempts: int, errors: dict[str, int], waited: float, retryable: bool = False
    ) -> JudgeCallError:
        text = scrub(message, self._secrets())
        log.warning("judge %s: call failed: %s", self.name, text)
        return JudgeCallError(
            text, kind=kind, attempts=attempts, call_errors=errors, waited_s=waited, retryable=retryable
        )

    @staticmethod
    def _read(response: Any) -> Completion:
        if "text/event-stream" in str(response.headers.get("content-type", "")):
            return read_event_stream(response.text)  # a request sent with stream=True
        data = response.json()
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices[0], dict):
            raise _BadResponse("no choices in the response")
        message = choices[0].get("message") or {}
        content = message.get("content")
        if isinstance(content, list):  # content parts (some servers): keep the text parts
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        return Completion(
            text=content, finish_reason=choices[0].get("finish_reason"), **token_counts(data.get("usage"))
        )


def read_event_stream(body: str) -> Completion:
    """A streamed chat completion (server-sent events, ``data: {chunk}`` lines, ``data: [DONE]`` last) as one
    reply: the deltas' text joined, the last finish_reason, and the usage chunk's token counts (sent when
    the request asked ``stream_options.include_usage``). A body with no chunk is a bad response."""
    texts: list[str] = []
    finish_reason, usage, chunks = None, None, 0
    for line in body.splitlines():
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            break
        chunk = json.loads(payload)  # a broken event is a ValueError: a bad response, retried
        if not isinstance(chunk, dict):
            raise _BadResponse("a stream event is not a JSON object")
        chunks += 1
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                texts.append(delta["content"])
            finish_reason = choice.get("finish_reason") or finish_reason
    if not chunks:
        raise _BadResponse("the event stream holds no chunk")
    return Completion(text="".join(texts) if texts else None, finish_reason=finish_reason, **token_counts(usage))


def token_counts(usage: Any) -> dict[str, Any]:
    """A reply's ``usage`` as Completion fields. Some servers send none (or an empty one); one whose count
    is no whole number >= 0 (a string, a negative number) is not trusted either. Either way the reply is
    kept and its tokens are unknown (``usage_reported`` False, ``usage_problem`` naming a bad field): the
    text was paid for, and a made-up count would change the totals and the cost."""
    counts: dict[str, int] = {}
    problem = None
    if usage is not None and not isinstance(usage, dict):
        problem = f"usage is {json_type(usage)}, not an object"
    for name in ("prompt_tokens", "completion_tokens"):
        value = usage.get(name) if isinstance(usage, dict) else None
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            problem = problem or f"usage.{name} is {json.dumps(value)[:40]}, not a token count >= 0"
        else:
            counts[name] = value
    if problem or not counts:
        return {"prompt_tokens": 0, "completion_tokens": 0, "usage_reported": False, "usage_problem": problem}
    return {"prompt_tokens": counts.get("prompt_tokens", 0), "completion_tokens": counts.get("completion_tokens", 0)}


def served_model(response: Any) -> Optional[str]:
    """The ``model`` field of a chat-completions reply (a streamed one: of its first chunk that has one), as
    the server reported it; None when it reports none."""
    try:
        if "text/event-stream" in str(response.headers.get("content-type", "")):
            for line in response.text.splitlines():
                if line.startswith("data:") and line[5:].strip() != "[DONE]":
                    chunk = json.loads(line[5:].strip())
                    if isinstance(chunk, dict) and isinstance(chunk.get("model"), str):
                        return chunk["model"]
            return None
        data = response.json()
    except ValueError:
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) and model else None


async def _within(awaitable: Any, timeout: float) -> Any:
    """``asyncio.wait_for``, without the task it makes per call (40 us) where ``asyncio.timeout`` exists."""
    if not hasattr(asyncio, "timeout"):  # Python 3.10
        return await asyncio.wait_for(awaitable, timeout)
    async with asyncio.timeout(timeout):
        return await awaitable


class _BadResponse(Exception):
    """A 200 response without a usable completion in it."""


def _never_connected(err: BaseException) -> bool:
    """Whether a transport error came before any connection was made (refused, no such host, a failed TLS
    handshake): the server cannot be reached. A connection made and then lost (closed or reset mid-reply,
    an event stream cut off) is a transient fault of that one reply, retried like a timeout."""
    import httpx2

    return isinstance(err, (ssl.SSLError, httpx2.ConnectError, httpx2.UnsupportedProtocol))


class _StatusError(Exception):
    """An HTTP error status; its text is the ``openai`` client's ("Error code: 429 - <the body's
    error.message>"), so error messages read as they did when requests went through that client."""

    def __init__(self, response: Any):
        self.status_code, self.headers = response.status_code, response.headers
        text, message = response.text.strip(), None
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        error = data.get("error", data) if isinstance(data, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        super().__init__(
            f"Error code: {self.status_code}" + (f" - {message}" if isinstance(message, str) and message else "")
        )


def encode_json(body: Any) -> bytes:
    """``body`` as the ``openai`` client encodes a request (``json.dumps`` with ``ensure_ascii=False``,
    compact separators, ``allow_nan=False``; UTF-8), the same bytes at a fraction of the CPU: a long string
    that needs no escaping (base64 audio, 125 kB a 3 s clip) is set into the encoded rest instead of being
    scanned by the encoder character by character."""
    long: list[bytes] = []

    def stand_in(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: stand_in(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [stand_in(v) for v in value]
        if type(value) is JsonText or isinstance(value, str) and len(value) >= 4096 and _json_plain(value):
            long.append(value.encode("ascii"))
            return f"\x00{len(long) - 1}\x00"  # encoded as "\u0000<n>\u0000", which no plain text holds
        return value

    skeleton = json.dumps(stand_in(body), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    parts = []  # joined once, not replaced in one by one: each 128 kB copy costs about 50 us in fresh memory
    for n, raw in enumerate(long):
        before, marker, skeleton = skeleton.partition(b'"\\u0000%d\\u0000"' % n)
        if not marker or marker in skeleton:  # the same text elsewhere in the body: encode it the plain way
            return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        parts += [before, b'"', raw, b'"']
    return b"".join([*parts, skeleton])


_JSON_PLAIN = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')


def _json_plain(text: str) -> bool:
    """Whether JSON writes ``text`` as it is: printable ASCII without '"' and '\\' (0.1 ms for 128 kB)."""
    return text.isascii() and not text.encode("ascii").translate(None, _JSON_PLAIN)


class JsonText(str):
    """Text known to be written by JSON as it is (``_json_plain``), made by ``base64_text``:
    ``encode_json`` sets it into the body without scanning it again."""


def base64_text(data: bytes, prefix: str = "") -> str:
    """``prefix`` followed by ``data`` in base64 (an audio part's ``data``), as a ``JsonText`` when the
    prefix is plain too."""
    encoded = base64.b64encode(data)
    if not _json_plain(prefix):
        return prefix + encoded.decode("ascii")
    return JsonText(prefix.encode("ascii") + encoded if prefix else encoded, "ascii")  # decoded into it directly


class _Transport:
    """Chat-completions requests sent the way the ``openai`` client sends them (same URL, headers and
    body bytes; the SDK gives its headers and its HTTP client, httpx2), without its per-request
    machinery: the body is encoded once per reply, not once per attempt through typed options.

    The socket work is ``http11.KeepAliveTransport``'s, not httpcore2's (which cost about 1 ms of CPU per
    request with a 125 kB body), unless a proxy from the environment (``HTTPS_PROXY``, ``NO_PROXY``...)
    applies to the server: then httpx2's own transport sends through it, in one pool. Which one is decided
    once, for the server's URL (with httpx2's ``_transport_for_url``: the openai pin fixes its version)."""

    def __init__(self, api_key: str, base_url: Optional[str], default_headers: Mapping[str, str]):
        import anyio
        import httpx2
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient, Omit

        from audioreason.judges.http11 import KeepAliveTransport

        tls = httpx2.create_ssl_context()
        self._http = DefaultAsyncHttpxClient(verify=tls)
        sdk = AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            http_client=self._http,
            default_headers=dict(default_headers) or None,
        )
        # Lower-cased, in the SDK's order: the header lines are the bytes the SDK writes.
        self.headers = {
            name.lower(): value
            for name, value in {**sdk.auth_headers, **sdk.default_headers}.items()
            if not isinstance(value, Omit)
        }
        self.headers["x-stainless-retry-count"] = "0"  # this client's own retries are not the SDK's
        base = sdk.base_url
        self.url = base.copy_with(raw_path=base.raw_path + b"chat/completions")
        if self._http._transport_for_url(self.url) is self._http._transport:  # no proxy for this server
            self._http = DefaultAsyncHttpxClient(verify=tls, transport=KeepAliveTransport(tls))
        self.timeout_errors: tuple[type, ...] = (httpx2.TimeoutException,)
        # What the SDK reports as a connection error (anyio's EndOfStream: a TLS handshake cut off).
        self.connection_errors: tuple[type, ...] = (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream)
        self._timeout_type, self._timeout, self._timeouts = httpx2.Timeout, None, None

    async def send(self, body: bytes, timeout: float) -> Any:
        """POST ``body`` and read the whole reply (an event stream too); an HTTP error status is returned."""
        if timeout != self._timeout:  # made again only when the timeout changes (a time budget cuts it)
            self._timeout, self._timeouts = timeout, self._timeout_type(timeout)
            # The headers in the httpx2 client's own, merged into its defaults once, not once per request;
            # the read timeout after the others, as the SDK sends it.
            self._http.headers = {**self.headers, "x-stainless-read-timeout": str(timeout)}
        request = self._http.build_request("POST", self.url, content=body, timeout=self._timeouts)
        return await self._http.send(request)

    async def get(self, path: str, timeout: float) -> tuple[int, str]:
        """GET ``path`` under the base URL, with the same headers: (status, the body's first 300 characters)."""
        url = self.url.copy_with(raw_path=self.url.raw_path[: -len(b"chat/completions")] + path.encode("ascii"))
        request = self._http.build_request("GET", url, headers=self.headers, timeout=self._timeout_type(timeout))
        response = await self._http.send(request)
        return response.status_code, response.text[:300]

    async def aclose(self) -> None:
        await self._http.aclose()
