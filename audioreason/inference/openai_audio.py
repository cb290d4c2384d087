"""A model behind an OpenAI-compatible chat-completions endpoint that takes audio as ``input_audio`` content
parts: a vLLM-served audio model (``vllm serve Qwen/Qwen2-Audio-7B-Instruct``), a hosted audio model, or,
with ``takes_audio=False``, any text model (the "tb" condition, or the text half of a cascade).

    adapter = OpenAIAudioAdapter("Qwen/Qwen2-Audio-7B-Instruct", base_url="http://127.0.0.1:8000/v1",
                                 max_audio_s=30.0)
    generations = adapter.generate([GenerationRequest(key, messages, audio), ...], DecodingParams())

What is sent, per request:
  * the messages as given (text content); a request with audio gets one ``input_audio`` part
    ``{"data": base64 WAV, "format": "wav"}`` in its last user message, before that message's text
    (``audio_position="first"``, the order of Qwen2-Audio's and Qwen2.5-Omni's chat examples) or after it
    (``"last"``); ``audio=None`` sends the messages unchanged, with no audio part and no silence;
  * the WAV is mono 16-bit PCM at ``sampling_rate`` (default 16000 Hz, Whisper-style encoders' rate);
    a clip at another rate is first resampled by the package's one resampler (soxr);
    ``audio_format="mp3"`` sends an MP3 (libsndfile's encoder) instead, for providers with request size
    limits; ``data_prefix`` goes before the base64 text where a provider wants one (DashScope's
    "data:;base64,");
  * ``extra_body``: more request fields a provider documents (e.g. ``{"modalities": ["text"]}``);
    ``stream=True`` asks for a streamed reply (``stream_options.include_usage`` for the token counts)
    where an endpoint serves only those; the events are joined into one reply;
  * decoding: ``temperature``, ``top_p``, ``max_tokens`` (= ``max_new_tokens``) and ``seed`` when set.
    Greedy decoding is temperature 0; a server may still not be bit-deterministic (batching, kernels).

Transport is the judge client's (``audioreason.judges.OpenAICompatibleJudge``): its adaptive concurrency
limit, bounded retries with backoff for 429/408/409/timeouts/connection errors, shared ``Retry-After``
pauses, at most ``server_error_attempts`` tries on a 5xx, per-request timeouts and an optional time budget
per request, and its key handling (read from ``api_key_env`` when first used; every error text scrubbed of
credentials). A batch runs concurrently on one event loop that the adapter keeps for its lifetime, so the
limit and a Retry-After pause carry over from one batch to the next; ``close()`` ends it.

Keys never reach a record or a log: the reply text, the error and the finish reason are scrubbed with the
judge layer's ``scrub`` (the key from ``api_key_env``, every value in ``base_url``'s query string and its
password, and anything shaped like a credential: a proxy or a model that quotes the key); a reply that was
changed says so in ``details["scrubbed"]``. The judge client redacts the same secrets from the HTTP
client's loggers (httpx logs every request's full URL at INFO).

A reply's token counts come from the server's ``usage``; without one, or with a count that is no whole
number >= 0 (``details["unusable_usage"]`` names it), they are recorded as None (unknown), and a reply
without text still records what the server counted. ``on_send`` (set by the runner) is told of every
request just before it goes out.

A run whose first request is refused (HTTP 401, 403, 404) or cannot connect raises ``JudgeUnavailable``
(a configuration error: the CLI says so in one line). Any other request that cannot be served never raises: it comes
back as a ``Generation`` with ``error`` set
("<kind>: <message>", kinds as in ``audioreason.judges``: rate_limited, timeout, server_error,
connection_error, bad_response, client_error, deadline; and here also invalid_request for a clip this
adapter refuses, empty_reply for a reply without text). ``details`` holds each request's attempts, the
errors retried on the way and the seconds of audio each attempt sent (``audio_s``); ``stats`` adds them
up over the adapter's life. Named provider settings: ``audioreason.inference.endpoints``.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from typing import Any, Callable, Coroutine, Mapping, Optional, Sequence, TypeVar

from ..audio import AudioError
from ..audio.io import encode_audio, encode_wav
from ..judges import (
    MMAR_MAX_ATTEMPTS,
    MMAR_TIMEOUT_S,
    JudgeCallError,
    JudgeUnavailable,
    OpenAICompatibleJudge,
    TimeBudget,
)
from ..judges.base import scrub
from ..judges.client import base64_text
from .adapter_inputs import check_audio_options, samples_at, with_user_content
from .base import DecodingParams, Generation, GenerationRequest

T = TypeVar("T")
AUDIO_POSITIONS = ("first", "last")
AUDIO_FORMATS = ("wav", "mp3")
INVALID_REQUEST, EMPTY_REPLY = "invalid_request", "empty_reply"


class _LoopThread:
    """One event loop on a daemon thread: every batch of one adapter runs there, so the HTTP client's
    connection pool, concurrency limit and Retry-After pause live as long as the adapter."""

    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()


def input_audio_part(samples: Any, sampling_rate: int, container: str = "wav", data_prefix: str = "") -> dict[str, Any]:
    """An ``input_audio`` content part: mono ``samples`` at ``sampling_rate`` as a WAV (16-bit PCM) or MP3
    file, base64 after ``data_prefix`` (a provider's data-URL head, "" for none)."""
    encoded = (
        encode_wav(samples, sampling_rate) if container == "wav" else encode_audio(samples, sampling_rate, container)
    )
    return {"type": "input_audio", "input_audio": {"data": base64_text(encoded, data_prefix), "format": container}}


class OpenAIAudioAdapter:
    """A chat model behind an OpenAI-compatible endpoint, with audio as ``input_audio`` parts.

    ``model``: the model name sent to the server. ``name`` (default ``model``): its identity in outputs.
    ``base_url``: the server (None: OpenAI itself, which needs the key). ``api_key_env``: the environment
    variable holding the key (a ``base_url`` server without it gets the placeholder "EMPTY").
    ``concurrency``: requests in flight at most; ``timeout_s``: per request; ``max_attempts``: requests per
    reply (defaults as the judge client: 120 s and 20, the MMAR scorer's); ``request_budget_s``: seconds
    one request may spend over all its attempts and back-offs (None: no budget).
    ``max_audio_s``: the model's longest clip (None: no limit; AudioSpan, arXiv:2608.26431, App. C.1
    Table 6 lists the papers' values); ``sampling_rate``: the WAV's rate; ``takes_audio``: False for a
    text-only model, which then refuses requests with audio; ``audio_position``: "first" or "last" in the
    last user message. ``audio_format``: "wav" (default) or "mp3"; ``data_prefix``: text before the base64
    data; ``extra_body``: more request fields; ``stream``: ask for a streamed reply (see the module
    docstring; ``audioreason.inference.endpoints`` has each provider's values). ``client_options`` go to
    ``OpenAICompatibleJudge`` as they are (e.g.
    ``backoff_base_s``, ``server_error_attempts``, ``default_headers``).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: Optional[str] = None,
        api_key_env: Optional[str] = "OPENAI_API_KEY",
        name: Optional[str] = None,
        concurrency: int = 8,
        timeout_s: float = MMAR_TIMEOUT_S,
        max_attempts: int = MMAR_MAX_ATTEMPTS,
        request_budget_s: Optional[float] = None,
        max_audio_s: Optional[float] = None,
        sampling_rate: int = 16000,
        takes_audio: bool = True,
        audio_position: str = "first",
        audio_format: str = "wav",
        data_prefix: str = "",
        stream: bool = False,
        extra_body: Optional[Mapping[str, Any]] = None,
        **client_options: Any,
    ):
        check_audio_options(max_audio_s, sampling_rate)
        if audio_format not in AUDIO_FORMATS:
            raise ValueError(f"audio_format must be one of {AUDIO_FORMATS}, got {audio_format!r}")
        reserved = sorted(
            set(extra_body or {})
            & {"model", "messages", "temperature", "top_p", "max_tokens", "seed", "stream", "stream_options"}
        )
        if reserved:
            raise ValueError(f"extra_body may not set {', '.join(reserved)} (the adapter sets them)")
        if audio_position not in AUDIO_POSITIONS:
            raise ValueError(f"audio_position must be one of {AUDIO_POSITIONS}, got {audio_position!r}")
        if request_budget_s is not None and not 0 < request_budget_s < math.inf:
            raise ValueError(f"request_budget_s must be None or a positive number of seconds, got {request_budget_s!r}")
        self.client = OpenAICompatibleJudge(
            model,
            base_url=base_url,
            api_key_env=api_key_env,
            name=name,
            concurrency=concurrency,
            timeout_s=timeout_s,
            max_attempts=max_attempts,
            **client_options,
        )
        self.name = self.client.name
        self.max_audio_s = None if max_audio_s is None else float(max_audio_s)
        self.sampling_rate = sampling_rate
        self.takes_audio = bool(takes_audio)
        self.audio_position = audio_position
        self.request_budget_s = request_budget_s
        self.audio_format, self.data_prefix, self.stream = audio_format, str(data_prefix or ""), bool(stream)
        self.extra_body = dict(extra_body or {})
        # Called with (request key, seconds of audio) just before each request goes out; the runner points
        # it at the run's journal, so requests whose replies a killed process lost are still counted.
        self.on_send: Optional[Callable[[str, float], None]] = None
        where = "OpenAI" if base_url is None else "an OpenAI-compatible server"
        container = "16-bit PCM WAV" if audio_format == "wav" else "MP3"
        audio = (
            f"input_audio: {container} at {sampling_rate} Hz, "
            f"{'no limit' if max_audio_s is None else f'at most {max_audio_s:g} s'}"
            if self.takes_audio
            else "text only"
        )
        self.description = f"{model} via {where} (chat completions{', streamed' if self.stream else ''}; {audio})"
        self.stats: dict[str, Any] = {
            "requests": 0,
            "ok": 0,
            "failed": 0,
            "retries": 0,
            "call_errors": {},
            "failures": {},
        }
        self._loop: Optional[_LoopThread] = None

    kind = "openai"  # the adapter's name in records (runner.ADAPTERS)

    def __repr__(self) -> str:
        return f"OpenAIAudioAdapter(name={self.name!r}, client={self._scrub(repr(self.client))})"

    # ------------------------------------------------------------------ the interface
    def generate(self, requests: Sequence[GenerationRequest], decoding: DecodingParams) -> list[Generation]:
        """One Generation per request, in order; the requests of the batch are sent concurrently."""
        if not requests:
            return []
        if self._loop is None:
            self._loop = _LoopThread(f"openai-audio-{self.name}")
        params = {
            **self.extra_body,
            "temperature": float(decoding.temperature),
            "top_p": float(decoding.top_p),
            "max_tokens": decoding.max_new_tokens,
        }
        if self.stream:
            params.update(stream=True, stream_options={"include_usage": True})
        if decoding.seed is not None:
            params["seed"] = decoding.seed
        started = time.perf_counter()
        generations = self._loop.run(self._batch(requests, params))
        share = (time.perf_counter() - started) / len(requests)
        for generation in generations:
            generation.seconds = share
            self._count(generation)
        return generations

    def close(self) -> None:
        """Close the HTTP client and stop the adapter's event loop (a later ``generate`` starts a new one)."""
        if self._loop is not None:
            try:
                self._loop.run(self.client.aclose())
            finally:
                self._loop.stop()
                self._loop = None

    def __enter__(self) -> "OpenAIAudioAdapter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ one batch
    def messages_for(self, request: GenerationRequest) -> list[dict[str, Any]]:
        """The messages sent for ``request``. Raises ``ValueError``/``AudioError`` for one it must refuse."""
        if request.audio is None:
            return [dict(m) for m in request.messages]
        if not self.takes_audio:
            raise ValueError(f"{self.name} is text-only (takes_audio=False) but the request carries audio")
        samples = samples_at(request.audio, self.sampling_rate, self.max_audio_s)
        part = input_audio_part(samples, self.sampling_rate, self.audio_format, self.data_prefix)
        return with_user_content(request.messages, [part], self.audio_position)

    async def _batch(self, requests: Sequence[GenerationRequest], params: Mapping[str, Any]) -> list[Generation]:
        return list(await asyncio.gather(*(self._one(r, params) for r in requests)))

    async def _one(self, request: GenerationRequest, params: Mapping[str, Any]) -> Generation:
        started = time.perf_counter()
        try:
            messages = self.messages_for(request)
        except (ValueError, AudioError) as err:  # AudioError is a ValueError; named for the reader
            return Generation(
                text=None, error=f"{INVALID_REQUEST}: {self._scrub(err)}", details={"attempts": 0, "call_errors": {}}
            )
        clip_s = 0.0 if request.audio is None else round(request.audio.seconds, 6)
        budget = TimeBudget(self.request_budget_s, what="request") if self.request_budget_s else None
        on_send = self.on_send
        try:
            completion = await self.client.complete(
                messages, params, budget, None if on_send is None else lambda: on_send(request.key, clip_s)
            )
        except JudgeCallError as err:  # scrubbed of the key; here also of the URL's secrets
            return Generation(
                text=None,
                error=f"{err.kind}: {self._scrub(err)}",
                details={
                    "attempts": err.attempts,
                    "call_errors": dict(err.call_errors),
                    "audio_s": clip_s,
                    "request_s": time.perf_counter() - started,
                },
            )
        except JudgeUnavailable:  # the run's first request refused or unconnectable: a configuration error
            raise  # for the whole run (no key, wrong URL, unknown model), never N failed items
        except Exception as err:  # noqa: BLE001 - one request must not take the batch down
            return Generation(
                text=None,
                error=f"{type(err).__name__}: {self._scrub(err)}",
                details={
                    "attempts": 1,
                    "call_errors": {},
                    "audio_s": clip_s,
                    "request_s": time.perf_counter() - started,
                },
            )
        details = {
            "attempts": completion.attempts,
            "call_errors": dict(completion.call_errors),
            "audio_s": clip_s,
            "request_s": time.perf_counter() - started,
        }
        finish_reason = None if completion.finish_reason is None else self._scrub(completion.finish_reason)
        # A server that reports no usage, or an unusable one, leaves the counts unknown (None), never 0.
        prompt_tokens = completion.prompt_tokens if completion.usage_reported else None
        completion_tokens = completion.completion_tokens if completion.usage_reported else None
        if completion.usage_problem:
            details["unusable_usage"] = self._scrub(completion.usage_problem)
        if completion.text is None:  # no text, but the tokens the server counted were spent all the same
            return Generation(
                text=None,
                finish_reason=finish_reason,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                error=f"{EMPTY_REPLY}: the reply has no text (finish_reason={finish_reason!r})",
                details=details,
            )
        text = self._scrub(completion.text)
        if text != completion.text:  # a reply quoting a key (a leaky proxy): kept out, and said so
            details["scrubbed"] = True
        return Generation(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=finish_reason,
            details=details,
        )

    def _secrets(self) -> list[Optional[str]]:
        return self.client._secrets()

    def _scrub(self, text: Any) -> str:
        return scrub(text, self._secrets())

    def _count(self, generation: Generation) -> None:
        stats = self.stats
        stats["requests"] += 1
        stats["ok" if generation.ok else "failed"] += 1
        stats["retries"] += max(0, int(generation.details.get("attempts", 0)) - 1)
        for kind, n in generation.details.get("call_errors", {}).items():
            stats["call_errors"][kind] = stats["call_errors"].get(kind, 0) + n
        if not generation.ok:
            kind = generation.error.split(":", 1)[0]
            stats["failures"][kind] = stats["failures"].get(kind, 0) + 1


__all__ = [
    "AUDIO_FORMATS",
    "AUDIO_POSITIONS",
    "EMPTY_REPLY",
    "INVALID_REQUEST",
    "OpenAIAudioAdapter",
    "input_audio_part",
]
