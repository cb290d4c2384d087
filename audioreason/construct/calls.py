"""Every model call of a construction: one ``JudgeRunner`` per role over one request cache.

``Calls.ask(role, schema, messages, item=, rollout=)`` returns the reply's validated payload, or None when the
call failed or no reply fitted the stage's schema after ``max_reasks`` re-asks (both counted per role and
stage, with the item and the error, for construction.json). What the runner gives (``audioreason.judges``):
  * every request is cached by its content (sha256 of the canonical request: model, messages with their audio,
    sampling, the stage's schema) in ``BENCH/.cache/calls.sqlite``, committed as soon as its reply is
    validated: a construction killed at any point keeps every reply it paid for, and a rerun sends only the
    requests that never got one (``calls_made``: requests sent in this session, per role); a reply that
    failed its schema after the re-asks is stored too and served again as the same counted failure;
  * the one retry policy, adaptive concurrency and key handling of ``judges.client`` for endpoint roles; a
    role that cannot work at all (no key, wrong URL, unknown model) raises ``JudgeUnavailable`` at its
    first request: a configuration error, never a counted failure;
  * a stage's JSON Schema goes to the server as ``response_format`` (``structured_outputs``, default on), to
    a local model as the grammar it decodes under (llguidance), and is checked on every reply here
    (``check_json``) before the stage's own ``check`` (an evidence id that does not exist, a segment that
    overlaps another): a reply that fails either is shown its error and re-asked.

Sampling: rollout k of a role is sent with seed k (``SamplingParams.seed_per_rater``); the solver samples at
its temperature, the other roles decode greedily, so a rerun asks the same requests and hits the cache.

A local model (``--offline``, or ``local:`` in ROLES.yaml) is treated as the small model it is: after an invalid
reply it is asked afresh, sampled and seeded per attempt, up to ``LOCAL_MAX_REASKS`` times (an endpoint's
model is shown its error, greedily, ``DEFAULT_MAX_REASKS`` times), and the caption views in its prompts are
cut to ``LOCAL_CONTEXT_CHARS`` characters each (``context_chars``); a stage's counts hold ``cut``, the requests
whose prompt held a cut view (``records.CUT_NOTE`` ends it).

Cost: with ``prices`` (``inference.hosted.load_prices``'s form, per model name), each paid reply adds to the
running cost; with ``max_cost`` no request starts once the cost so far (earlier sessions' ``spent_before``
plus this session's) has reached it: ``BudgetExceeded`` (requests already in flight still finish and are
kept).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import numpy as np

from audioreason.judges.base import SamplingParams
from audioreason.judges.runner import JudgeRequest, JudgeRunner
from audioreason.judges.verdicts import JsonReplySchema

from .records import CUT_NOTE
from .roles import AUDIO_ROLES, ROLES, RoleSpec
from .schema_check import check_json, check_schema

DEFAULT_MAX_REASKS = 1
LOCAL_MAX_NEW_TOKENS = 1536
# A local model decodes under the stage's schema with every string held to this many characters (a small
# model fills a string to its bound; the stages' own bounds are sized for a capable model). Recorded in the
# model's description and part of every cache key.
LOCAL_MAX_STRING = 100
AUDIO_RATE = 16000  # the rate stages hand audio in at
# A local model is asked afresh after an invalid reply, sampled and seeded per turn (so a rerun draws the
# same replies), this many times: greedy, a small model writes the same reply again, and shown its reply
# with the error it copies it. An endpoint's model is re-asked with the error, greedily (max_reasks).
LOCAL_REASK_SAMPLING = {"temperature": 0.8, "top_p": 0.95}
LOCAL_MAX_REASKS = 3
# Context a local model is given: the caption views in a local role's prompt are cut to this many
# characters at a line boundary (a small model's window is a few thousand tokens, and its prefill is slow).
LOCAL_CONTEXT_CHARS = 4000


class BudgetExceeded(RuntimeError):
    """The construction's cost reached ``--max-cost``: no further request is sent (resumable)."""


def stage_schema(
    name: str,
    json_schema: Mapping[str, Any],
    check: Optional[Callable[[Any], Any]] = None,
    *,
    version: str = "1",
    instructions: Optional[str] = None,
) -> JsonReplySchema:
    """A stage's reply schema: the reply must be one JSON value fitting ``json_schema``; ``check(value)``
    then returns the payload or raises ValueError with what is wrong (sent back on a re-ask). Change
    ``version`` when ``check`` changes meaning (it is part of the cache key, as the schema is)."""

    check_schema(json_schema)

    def validate(value: Any) -> Any:
        check_json(value, json_schema)
        return check(value) if check is not None else value

    return JsonReplySchema(
        name=name,
        validate=validate,
        instructions=instructions or "one JSON object fitting this JSON Schema: " + _compact(json_schema),
        version=version,
        json_schema=dict(json_schema),
    )


def as_stored(payload: Any) -> Any:
    """``payload`` as the cache gives it back (canonical JSON: keys sorted, tuples as lists), so that a stage
    sees the same value, and writes the same bytes, whether its reply was fresh or cached."""
    import json

    from audioreason.judges.cache import canonical_json

    return json.loads(canonical_json(payload))


def _compact(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def cap_strings(json_schema: Any, cap: int = LOCAL_MAX_STRING) -> Any:
    """``json_schema`` with every string's ``maxLength`` at most ``cap`` (a reply to it fits the original)."""
    if isinstance(json_schema, list):
        return [cap_strings(v, cap) for v in json_schema]
    if not isinstance(json_schema, Mapping):
        return json_schema
    out = {k: cap_strings(v, cap) if k in ("properties", "items", "anyOf") else v for k, v in json_schema.items()}
    if "properties" in json_schema:
        out["properties"] = {k: cap_strings(v, cap) for k, v in json_schema["properties"].items()}
    kinds = json_schema.get("type")
    if kinds == "string" or (isinstance(kinds, list) and "string" in kinds):
        if "enum" not in json_schema:
            out["maxLength"] = min(int(json_schema.get("maxLength", cap)), cap)
    return out


def _local_schema(schema: JsonReplySchema) -> JsonReplySchema:
    from dataclasses import replace

    return replace(schema, json_schema=cap_strings(schema.json_schema))


def _texts(messages: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """The text of every message and text part (never an audio part's base64)."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            yield content
        for part in content if isinstance(content, list) else ():
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                yield part["text"]


class Calls:
    """The roles' models and the accounting of what they were asked (see the module docstring)."""

    def __init__(
        self,
        specs: Mapping[str, RoleSpec],
        cache_path: Path,
        *,
        concurrency: Optional[int] = None,
        prices: Optional[Mapping[str, Any]] = None,
        max_cost: Optional[float] = None,
        spent_before: float = 0.0,
        max_reasks: Optional[int] = None,
        local_backends: Optional[Mapping[str, Any]] = None,
    ):
        """``max_reasks``: for every role (default: ``DEFAULT_MAX_REASKS`` for an endpoint, ``LOCAL_MAX_REASKS``
        for a local model); ``local_backends``: already loaded models by spec (tests share one across
        constructions)."""
        missing = [r for r in ROLES if r not in specs]
        if missing:
            raise ValueError(f"no spec for the roles {', '.join(missing)}")
        self.specs = dict(specs)
        self.prices, self.max_cost, self.spent_before = prices, max_cost, float(spent_before)
        from audioreason.base.errors import UsageError

        if max_cost is not None:
            unpriced = [s.options["model"] for s in specs.values() if s.kind == "endpoint"]
            unpriced = [m for m in unpriced if not prices or m not in prices["models"]]
            if unpriced:
                raise UsageError(f"--max-cost needs --prices naming {', '.join(sorted(set(unpriced)))}")
        # A missing key is a configuration error, found before anything is written or any model loaded.
        endpoints = {r: self._endpoint(spec, concurrency) for r, spec in self.specs.items() if spec.kind == "endpoint"}
        from audioreason.judges.base import JudgeUnavailable

        for role, judge in endpoints.items():
            try:
                judge.check_key()
            except JudgeUnavailable as err:
                raise UsageError(f"roles.{role}: {err}") from None
        self._endpoints = endpoints
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        from audioreason.judges.cache import VerdictCache

        self.cache = VerdictCache(cache_path)
        self._locals: dict[str, Any] = dict(local_backends or {})
        self.runners: dict[str, JudgeRunner] = {}
        self._asr: Any = None
        for role in [r for r in ROLES if r != "asr"] + ["asr"]:  # asr last: the order usage is reported in
            spec = self.specs[role]
            if spec.kind == "offline" or (role == "asr" and spec.kind == "local"):
                continue  # stand-ins, and the in-process recogniser (``local_asr``)
            local = spec.kind == "local"
            sampling = SamplingParams(
                temperature=spec.temperature,
                seed=0,
                seed_per_rater=True,
                max_tokens=spec.options.get("max_tokens") or (LOCAL_MAX_NEW_TOKENS if local else None),
                extra=self._extra(spec),
            )
            if max_reasks is None:
                max_reasks_here = LOCAL_MAX_REASKS if local else DEFAULT_MAX_REASKS
            else:
                max_reasks_here = max_reasks
            # A reply that never fitted its schema was paid for: a rerun serves it again (the same counted
            # failure) rather than paying for it twice (retry_invalid_cached=False).
            self.runners[role] = JudgeRunner(
                self._local(spec) if local else endpoints[role],
                sampling=sampling,
                cache=self.cache,
                max_reasks=max_reasks_here,
                retry_invalid_cached=False,
                on_invalid="resend" if local else "reask",
                reask_sampling=LOCAL_REASK_SAMPLING if local else None,
            )
        self.counts: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
        self.failures: list[dict[str, Any]] = []
        self.audio_s_sent: dict[str, float] = defaultdict(float)
        self._audio_seconds: dict[int, float] = {}

    # ------------------------------------------------------------------ building the roles
    @staticmethod
    def _preset(spec: RoleSpec) -> Any:
        from audioreason.inference.endpoints import endpoint_preset

        return endpoint_preset(spec.options["endpoint"]) if spec.options.get("endpoint") else None

    def _endpoint(self, spec: RoleSpec, concurrency: Optional[int]) -> Any:
        from audioreason.judges.client import OpenAICompatibleJudge

        preset = self._preset(spec)
        options = spec.options
        base_url = options.get("base_url") or (preset.base_url if preset else None)
        api_key_env = options["api_key_env"] if "api_key_env" in options else (preset.api_key_env if preset else None)
        if preset is None and "api_key_env" not in options:
            api_key_env = "OPENAI_API_KEY"
        kwargs = {
            k: options[k] for k in ("timeout_s", "max_attempts") if options.get(k) is not None
        }  # the client's defaults otherwise
        return OpenAICompatibleJudge(
            options["model"],
            base_url=base_url,
            api_key_env=api_key_env,
            concurrency=options.get("concurrency") or concurrency or 8,
            structured_outputs=options.get("structured_outputs", True),
            **kwargs,
        )

    def _local(self, spec: RoleSpec) -> Any:
        from audioreason.backends import load_backend
        from audioreason.judges.local import LocalJudge, offline_model

        model = spec.options.get("local")
        key = model or "offline-judge"
        if key not in self._locals:
            backend = load_backend("lm", offline_model(model))
            window = getattr(backend.model.config, "max_position_embeddings", None) or 4096
            self._locals[key] = LocalJudge(
                backend=backend,
                constrained=True,
                constraint=f"llguidance, each stage's JSON Schema, strings <= {LOCAL_MAX_STRING} chars",
                max_new_tokens=LOCAL_MAX_NEW_TOKENS,
                max_input_tokens=max(512, int(window) - LOCAL_MAX_NEW_TOKENS),  # the prompt and its reply fit
            )
        return self._locals[key]

    def _extra(self, spec: RoleSpec) -> dict[str, Any]:
        preset = self._preset(spec) if spec.kind == "endpoint" else None
        extra = dict(preset.extra_body) if preset else {}
        if preset is not None and preset.stream:
            extra.update(stream=True, stream_options={"include_usage": True})
        return extra

    def local_asr(self) -> Any:
        """The in-process speech recogniser of a local ``asr`` role (loaded once), or None for an endpoint."""
        spec = self.specs["asr"]
        if spec.kind != "local":
            return None
        if self._asr is None:
            from audioreason.backends import load_backend

            self._asr = load_backend("asr", spec.options["local"])
        return self._asr

    # ------------------------------------------------------------------ what stages ask
    def has_audio_model(self, role: str) -> bool:
        """Whether ``role`` is played by a model that hears audio (False: the offline stand-in runs)."""
        return self.specs[role].kind == "endpoint" or (role == "asr" and self.specs[role].kind == "local")

    def describe(self, role: str) -> str:
        spec = self.specs[role]
        if spec.kind == "offline":
            return "offline: no audio-language model; signal measurements and ASR re-transcription stand in"
        if role == "asr" and spec.kind == "local":
            return f"local faster-whisper: {spec.options['local']}"
        runner = self.runners[role]
        if spec.kind == "local":
            return f"local: {runner.judge.name}"
        from audioreason.judges.base import scrub

        where = runner.judge.base_url or "the OpenAI API"
        return f"{spec.options['model']} at {scrub(where, runner.judge._secrets())}"

    async def reach(self) -> None:
        """Every endpoint role's server asked for its model list (``OpenAICompatibleJudge.reach``, free) before
        any work, once per server and key: a refused key or a server that cannot be reached is
        ``JudgeUnavailable`` naming the role now, not when the role is first asked (the solver's first request
        comes after a whole recording's caption)."""
        from audioreason.judges.base import JudgeUnavailable

        asked = set()
        for role, judge in self._endpoints.items():
            if (judge.base_url, judge.api_key_env) in asked:
                continue
            asked.add((judge.base_url, judge.api_key_env))
            try:
                await judge.reach()
            except JudgeUnavailable as err:
                raise JudgeUnavailable(f"roles.{role}: {err}") from None

    def is_local(self, role: str) -> bool:
        """Whether ``role`` is a model in this process (a small one: stages may ask it shorter questions)."""
        return self.specs[role].kind == "local"

    def prompt_fits(self, role: str, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Whether ``messages`` fit ``role``'s context: a local model's window less its reply budget, counted
        with its tokenizer; an endpoint's window is not known here, so its prompts are taken to fit."""
        if not self.is_local(role):
            return True
        judge = self.runners[role].judge
        return len(judge.encode(messages)) <= judge.max_input_tokens

    def context_chars(self, role: str) -> Optional[int]:
        """How many characters of each caption view ``role``'s prompts may hold (None: all of it)."""
        return LOCAL_CONTEXT_CHARS if self.is_local(role) else None

    def max_audio_s(self, role: str) -> Optional[float]:
        preset = self._preset(self.specs[role]) if self.specs[role].kind == "endpoint" else None
        return preset.max_audio_s if preset else None

    def audio_part(self, role: str, samples: np.ndarray, rate: int = AUDIO_RATE) -> dict[str, Any]:
        """An ``input_audio`` content part of mono ``samples`` in the role's container, rate and data prefix
        (its endpoint preset; a 16 kHz WAV without one). ValueError for a clip over the preset's limit."""
        if role not in AUDIO_ROLES:
            raise ValueError(f"the {role} role takes no audio")
        spec = self.specs[role]
        preset = self._preset(spec) if spec.kind == "endpoint" else None
        target = preset.sampling_rate if preset else AUDIO_RATE
        samples = np.asarray(samples, dtype=np.float32).reshape(-1)
        if rate != target:
            from audioreason.audio.io import load_audio

            samples, _ = load_audio((samples, rate), target)
        seconds = len(samples) / target
        limit = self.max_audio_s(role)
        if limit is not None and seconds > limit + 1e-6:
            raise ValueError(f"a {seconds:.1f} s clip is over the {role} endpoint's {limit:g} s limit")
        from audioreason.inference.openai_audio import input_audio_part

        container, prefix = (preset.audio_format, preset.data_prefix) if preset else ("wav", "")
        part = input_audio_part(samples, target, container, prefix)
        self._audio_seconds[hash(part["input_audio"]["data"])] = seconds  # str caches its hash: one pass
        return part

    def _audio_in(self, messages: Sequence[Mapping[str, Any]]) -> float:
        seconds = 0.0
        for message in messages:
            content = message.get("content")
            for part in content if isinstance(content, list) else ():
                if isinstance(part, Mapping) and part.get("type") == "input_audio":
                    seconds += self._audio_seconds.get(hash(part["input_audio"]["data"]), 0.0)
        return seconds

    async def ask(
        self,
        role: str,
        schema: JsonReplySchema,
        messages: Sequence[Mapping[str, Any]],
        *,
        item: str,
        rollout: int = 0,
    ) -> Optional[Any]:
        """The validated payload of ``role``'s reply, or None (a counted failure; see the module docstring)."""
        runner = self.runners.get(role)
        if runner is None:
            raise ValueError(f"the {role} role is played by {self.specs[role].kind!r}, not a model that can be asked")
        self._check_budget()
        counts = self.counts[role][schema.name]
        counts["asked"] += 1
        if any(CUT_NOTE in text for text in _texts(messages)):
            counts["cut"] += 1  # the prompt holds a caption view cut to a local model's limit
        if self.specs[role].kind == "local":
            schema = _local_schema(schema)
        result = await runner.ajudge(JudgeRequest(item_id=item, messages=messages, schema=schema, rater=rollout))
        if result.cached:
            counts["cached"] += 1
        else:
            self.audio_s_sent[role] += self._audio_in(messages)
        if result.ok:
            counts["ok"] += 1
            return as_stored(result.verdict.data)
        counts["failed"] += 1
        self.failures.append(
            {
                "role": role,
                "stage": schema.name,
                "item": item,
                "rollout": rollout,
                "status": result.status,
                "error": result.error,
            }  # fmt: skip
        )
        return None

    # ------------------------------------------------------------------ accounting
    def _check_budget(self) -> None:
        if self.max_cost is None:
            return
        spent = self.spent_before + self.cost()["total"]
        if spent >= self.max_cost:
            raise BudgetExceeded(
                f"the construction has cost {spent:.4f} {self.prices['currency']}, reaching --max-cost "
                f"{self.max_cost:g}: no further request sent (rerun with a higher --max-cost to continue)"
            )

    def usage(self) -> dict[str, Any]:
        """Per role: what its runner counted in this session (requests, cache hits, calls, retries, re-asks,
        tokens, errors by kind) and the audio seconds sent."""
        out = {}
        for role, runner in self.runners.items():
            stats = runner.stats.to_dict()
            stats["audio_s_sent"] = round(self.audio_s_sent.get(role, 0.0), 3)
            stats["model"] = self.specs[role].options.get("model") or runner.judge.name
            out[role] = stats
        return out

    def calls_made(self) -> dict[str, int]:
        """Requests sent in this session per role (re-asks and retries included; cache hits are not)."""
        return {role: runner.stats.calls for role, runner in self.runners.items()}

    def cost(self) -> dict[str, Any]:
        """This session's cost per role from ``prices`` (roles whose model has no price: listed, not guessed)."""
        total, by_role, unpriced = 0.0, {}, []
        for role, runner in self.runners.items():
            spec = self.specs[role]
            if spec.kind != "endpoint":
                by_role[role] = 0.0
                continue
            rates = (self.prices or {}).get("models", {}).get(spec.options["model"])
            if rates is None:
                by_role[role] = None
                unpriced.append(role)
                continue
            stats = runner.stats
            amount = (
                stats.prompt_tokens * rates.get("prompt_per_million", 0.0) * 1e-6
                + stats.completion_tokens * rates.get("completion_per_million", 0.0) * 1e-6
                + self.audio_s_sent.get(role, 0.0)
                * (rates.get("audio_per_second", 0.0) + rates.get("audio_per_minute", 0.0) / 60)
            )
            by_role[role] = round(amount, 6)
            total += amount
        currency = (self.prices or {}).get("currency", "USD")
        return {"currency": currency, "total": round(total, 6), "by_role": by_role, "unpriced_roles": unpriced}

    async def aclose(self) -> None:
        for runner in self.runners.values():
            await runner.judge.aclose()


__all__ = ["AUDIO_RATE", "BudgetExceeded", "Calls", "stage_schema"]
