"""Served and hosted models in a run: the builders that ``runner.make_adapter`` calls for the "openai" and
"cascade" adapters (from a name and an options dict, so a command line and a sweep config build the same
thing), their checks before any work, what a run sent and was billed (``usage``), and its cost from a
prices file.

    make_adapter("openai", "gemini-2.5-flash", endpoint_preset="gemini", concurrency=16)
    make_adapter("cascade", None, asr="packaged:whisper-tiny.en", lm="openai:gpt-4o-mini",
                 lm_options={"api_key_env": "OPENAI_API_KEY"})

Usage is read from the records in the run's shards, every request ever made in the folder (a failed
request that a rerun filled counts beside its replacement: both were sent): per condition and in all,
requests, failed requests, requests retried and the retries, prompt and completion tokens as the server's
``usage`` reported them, and the seconds of audio sent (each attempt sends the clip again). A reply whose
server reported no usable token counts is counted in ``replies_without_usage`` (its tokens are unknown, not
0): a total with such replies is a lower bound, and so is a cost computed from it (``cost_of`` names the
models). Requests a session sent but never recorded (it was killed with replies in flight) are counted
from the run's journal of sent requests (``unrecorded_requests``, in ``requests_sent`` too).
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from ..judges.base import REDACTED, redact_url
from .endpoints import merge_preset

OPENAI_LM_PREFIX = "openai:"


def _openai_targets() -> tuple[type, ...]:
    """The constructors ``build_openai`` hands its options to."""
    from ..judges import OpenAICompatibleJudge
    from .openai_audio import OpenAIAudioAdapter

    return OpenAIAudioAdapter, OpenAICompatibleJudge


def _openai_parameters() -> set[str]:
    names = set().union(*(inspect.signature(target).parameters for target in _openai_targets()))
    return names - {"model", "client_options", "rng"}


def build_openai(model: str, *, endpoint_preset: Optional[str] = None, **options: Any) -> Any:
    """An ``OpenAIAudioAdapter`` for ``model``: the endpoint preset's options (if named) under the given ones.
    An option neither the adapter nor its HTTP client takes is a ValueError (never dropped)."""
    from .openai_audio import OpenAIAudioAdapter

    if not model:
        raise ValueError("the openai adapter needs a model name (--model)")
    unknown = sorted(set(options) - _openai_parameters())
    if unknown:
        raise ValueError(f"the openai adapter takes no option {', '.join(map(repr, unknown))}")
    adapter = OpenAIAudioAdapter(model, **merge_preset(endpoint_preset, options))
    adapter.endpoint_preset = endpoint_preset
    if endpoint_preset:
        adapter.description += f"; endpoint preset {endpoint_preset}"
    return adapter


build_openai.forwards_options_to = _openai_targets  # type: ignore[attr-defined]  # runner.adapter_option_types


def build_cascade(
    model: Optional[str] = None,
    *,
    asr: Optional[str] = None,
    lm: Optional[str] = None,
    lm_options: Optional[Mapping[str, Any]] = None,
    max_audio_s: Optional[float] = None,
    allow_download: bool = False,
    name: Optional[str] = None,
    transcript_cache: int = 4096,
) -> Any:
    """A ``CascadeAdapter``: ``asr`` (default packaged whisper-tiny.en) then ``lm``, a local LM spec or
    ``openai:NAME``, a served text model built with ``lm_options`` (as ``build_openai``'s, text-only).
    ``model``, when given without ``lm``, is the LM."""
    from ..backends.registry import OFFLINE_BACKBONES
    from .cascade import CascadeAdapter

    lm = lm or model or OFFLINE_BACKBONES["lm"]
    text_model: Any = lm
    if lm.startswith(OPENAI_LM_PREFIX):
        text_model = build_openai(lm[len(OPENAI_LM_PREFIX) :], **{**dict(lm_options or {}), "takes_audio": False})
    elif lm_options:
        raise ValueError(f"lm_options apply to a served LM (lm='openai:NAME'), not to {lm!r}")
    adapter = CascadeAdapter(
        asr or OFFLINE_BACKBONES["asr"],
        text_model,
        max_audio_s=max_audio_s,
        allow_download=allow_download,
        name=name,
        transcript_cache=transcript_cache,
    )
    adapter.kind = "cascade"
    return adapter


def check_adapter(kind: str, model: Optional[str], options: Mapping[str, Any]) -> None:
    """What can be checked of an adapter before anything loads or is sent (ValueError, one line): every
    openai option (the adapter is built, which sends nothing) and its API key; a cascade's options and
    its served LM, if any. The other kinds are checked when they load."""
    from ..judges import JudgeUnavailable

    if kind == "openai":
        adapters = [build_openai(model, **options)]
    elif kind == "cascade":
        options = dict(options)
        transcript_cache = options.get("transcript_cache", 4096)
        if isinstance(transcript_cache, bool) or not isinstance(transcript_cache, int) or transcript_cache < 0:
            raise ValueError(f"transcript_cache must be a whole number >= 0, got {transcript_cache!r}")
        max_audio_s = options.get("max_audio_s")
        if max_audio_s is not None and not 0 < float(max_audio_s) < math.inf:
            raise ValueError(f"max_audio_s must be a positive number of seconds, got {max_audio_s!r}")
        unknown = sorted(set(options) - set(inspect.signature(build_cascade).parameters))
        if unknown:
            raise ValueError(f"the cascade adapter takes no option {', '.join(map(repr, unknown))}")
        lm = options.get("lm") or model or ""
        for role, spec in (("asr", options.get("asr")), ("lm", lm)):
            if spec and spec.startswith((".", "/", "~")) and not Path(spec).expanduser().exists():
                raise ValueError(f"the cascade's {role} {spec!r} does not exist")
        adapters = []
        if lm.startswith(OPENAI_LM_PREFIX):
            adapters = [
                build_openai(
                    lm[len(OPENAI_LM_PREFIX) :], **{**dict(options.get("lm_options") or {}), "takes_audio": False}
                )
            ]
        elif options.get("lm_options"):
            raise ValueError(f"served-LM options (--lm-base-url, ...) need --lm openai:NAME, not {lm!r}")
    else:
        return
    for adapter in adapters:
        try:
            adapter.client.check_key()
        except JudgeUnavailable as err:
            raise ValueError(str(err)) from None


# ------------------------------------------------------------------------------------------------
# What is written down: options without secrets, usage, cost
# ------------------------------------------------------------------------------------------------


def public_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as run.json may show them: header values and a URL's query values and password replaced
    (they may be credentials); the key itself is never an option, only the name of its variable."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key == "default_headers" and isinstance(value, Mapping):
            value = {name: REDACTED for name in value}
        elif key == "base_url" and isinstance(value, str):
            value = redact_url(value)
        elif isinstance(value, Mapping):
            value = public_options(value)
        out[key] = value
    return out


def _empty_usage() -> dict[str, Any]:
    return {
        "records": 0,
        "ok": 0,
        "failed": 0,
        "requests_sent": 0,
        "retried_records": 0,
        "retries": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "replies_without_usage": 0,
        "unrecorded_requests": 0,
        "audio_s_sent": 0.0,
    }


def _add(total: dict[str, Any], record: Mapping[str, Any]) -> None:
    """One output record: an API adapter's details say how many requests it took (0: refused before
    sending) and the clip's seconds; a local adapter's record is one call with its clip."""
    details = record.get("details") or {}
    tokens = record.get("tokens") or {}
    if "attempts" in details:
        attempts, seconds = int(details.get("attempts") or 0), float(details.get("audio_s") or 0.0)
    else:
        attempts, seconds = 1, float((record.get("audio") or {}).get("seconds") or 0.0)
    total["records"] += 1
    total["ok" if record.get("error") is None else "failed"] += 1
    total["requests_sent"] += attempts
    total["retried_records"] += attempts > 1
    total["retries"] += max(0, attempts - 1)
    total["prompt_tokens"] += int(tokens.get("prompt") or 0)
    total["completion_tokens"] += int(tokens.get("completion") or 0)
    # An API reply (an empty one too) whose server gave no counts: its tokens are None, unknown. A request
    # that got no reply records 0 (nothing to bill), and a local or imported record has no attempts.
    total["replies_without_usage"] += (
        "attempts" in details and tokens.get("prompt") is None and tokens.get("completion") is None
    )
    total["audio_s_sent"] = round(total["audio_s_sent"] + seconds * attempts, 6)


def usage_summary(
    records: Iterable[Mapping[str, Any]],
    keys: Optional[set[str]] = None,
    sent: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> dict[str, Any]:
    """{"total", "by_condition", "by_model"} over ``records`` (those whose key is in ``keys`` when given).
    ``sent``: the run's journal of requests sent, per key {"requests", "audio_s", "model", "condition"}
    (``runner.read_sent``); a key's requests beyond those its records account for were sent by a session
    killed before it recorded them: added as ``unrecorded_requests`` (their tokens unknown)."""
    total, by_condition, by_model = _empty_usage(), {}, {}
    recorded: dict[str, int] = {}
    for record in records:
        if keys is not None and record.get("key") not in keys:
            continue
        for usage in (
            total,
            by_condition.setdefault(str(record.get("condition")), _empty_usage()),
            by_model.setdefault(str(record.get("model")), _empty_usage()),
        ):
            _add(usage, record)
        attempts = (record.get("details") or {}).get("attempts")
        recorded[record.get("key")] = recorded.get(record.get("key"), 0) + int(attempts or 0)
    for key, journal in (sent or {}).items():
        lost = journal["requests"] - recorded.get(key, 0)
        if lost <= 0 or (keys is not None and key not in keys):
            continue
        for usage in (
            total,
            by_condition.setdefault(str(journal["condition"]), _empty_usage()),
            by_model.setdefault(str(journal["model"]), _empty_usage()),
        ):
            usage["requests_sent"] += lost
            usage["unrecorded_requests"] += lost
            usage["audio_s_sent"] = round(usage["audio_s_sent"] + lost * journal["audio_s"], 6)
    return {"total": total, "by_condition": by_condition, "by_model": by_model}


# ------------------------------------------------------------------------------------------------
# Prices
# ------------------------------------------------------------------------------------------------

PRICE_FIELDS = {
    "prompt_per_million": 1e-6,
    "completion_per_million": 1e-6,
    "audio_per_second": 1.0,
    "audio_per_minute": 1 / 60,
}


def load_prices(path: str) -> dict[str, Any]:
    """A prices file (JSON, or YAML by its suffix): {"currency": "USD", "models": {NAME: {"prompt_per_million":
    2.5, "completion_per_million": 10.0, "audio_per_minute": 0.0}}}; ValueError naming what is wrong."""
    from audioreason.base.jsonl import read_json_file

    file = Path(path).expanduser()
    if not file.is_file():
        raise ValueError(f"--prices {path!r} is not a file")
    if file.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            content = yaml.safe_load(file.read_text(encoding="utf-8"))
        except yaml.YAMLError as err:
            raise ValueError(f"{file}: not valid YAML ({str(err).splitlines()[0]})") from None
    else:
        content = read_json_file(file)
    if not isinstance(content, dict) or not isinstance(content.get("models"), dict) or not content["models"]:
        raise ValueError(f'{file}: expected an object with a non-empty "models" object of prices per model')
    currency = content.get("currency", "USD")
    if not isinstance(currency, str):
        raise ValueError(f'{file}: currency must be a string such as "USD"')
    for model, prices in content["models"].items():
        if not isinstance(prices, dict) or not prices:
            raise ValueError(f"{file}: models.{model} must be an object of prices")
        for field_name, value in prices.items():
            if field_name not in PRICE_FIELDS:
                raise ValueError(f"{file}: models.{model}.{field_name} is not one of {', '.join(PRICE_FIELDS)}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise ValueError(f"{file}: models.{model}.{field_name} must be a price >= 0, got {value!r}")
        if "audio_per_second" in prices and "audio_per_minute" in prices:
            raise ValueError(f"{file}: models.{model} gives audio_per_second and audio_per_minute; give one")
    return {"currency": currency, "models": content["models"], "source": str(file)}


def check_prices(prices: Mapping[str, Any], models: Iterable[str]) -> None:
    missing = [m for m in models if m not in prices["models"]]
    if missing:
        raise ValueError(
            f"{prices['source']} has no prices for {', '.join(map(repr, missing))} (the names the run "
            f"records; it has {', '.join(map(repr, prices['models']))})"
        )


def cost_of(usage: Mapping[str, Any], prices: Mapping[str, Any]) -> dict[str, Any]:
    """The cost of a ``usage_summary`` per model and in all, from ``load_prices``'s prices. Models with
    requests whose tokens are unknown (replies without usable token counts, requests a killed session sent
    but never recorded) are listed in ``incomplete_models`` (those requests' counts): their cost, and the
    total, leave those tokens out."""
    per_model = {}
    for model, used in usage["by_model"].items():
        rates = prices["models"].get(model)
        if rates is None:
            per_model[model] = None  # counted, not guessed
            continue
        amount = (
            used["prompt_tokens"] * rates.get("prompt_per_million", 0.0) * 1e-6
            + used["completion_tokens"] * rates.get("completion_per_million", 0.0) * 1e-6
            + used["audio_s_sent"] * (rates.get("audio_per_second", 0.0) + rates.get("audio_per_minute", 0.0) / 60)
        )
        per_model[model] = round(amount, 6)
    priced = [v for v in per_model.values() if v is not None]
    incomplete = {
        m: used["replies_without_usage"] + used.get("unrecorded_requests", 0)
        for m, used in usage["by_model"].items()
        if used.get("replies_without_usage") or used.get("unrecorded_requests")
    }
    return {
        "currency": prices["currency"],
        "total": round(sum(priced), 6),
        "by_model": per_model,
        "unpriced_models": sorted(m for m, v in per_model.items() if v is None),
        "incomplete_models": incomplete,
        "prices": prices["source"],
    }


__all__ = [
    "OPENAI_LM_PREFIX",
    "build_cascade",
    "build_openai",
    "check_adapter",
    "check_prices",
    "cost_of",
    "load_prices",
    "public_options",
    "redact_url",
    "usage_summary",
]
