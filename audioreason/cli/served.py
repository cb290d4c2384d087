"""The command-line options of served and hosted models (`--adapter openai`, `--adapter cascade`,
`--tb-adapter openai`, `--prices`) for `audioreason run` and `evaluate`: each flag only with its adapter,
every value checked before anything loads (one-line errors, exit status 2), and the options dicts the
runner's factory (``runner.make_adapter``) builds the adapters from. See docs/hosted-models.md."""

from __future__ import annotations

import argparse
from typing import Any, Optional

from audioreason.base.errors import UsageError

SERVED_FLAGS = (
    "base_url",
    "api_key_env",
    "endpoint_preset",
    "concurrency",
    "timeout_s",
    "max_attempts",
    "request_budget_s",
    "server_error_attempts",
    "backoff_base_s",
    "backoff_max_s",
    "max_retry_after_s",
    "header",
    "audio_format",
    "sampling_rate",
    "audio_position",
    "text_only",
    "name",
    "extra_body",
    "stream",
)
CASCADE_FLAGS = (
    "asr",
    "lm",
    "lm_base_url",
    "lm_api_key_env",
    "lm_endpoint_preset",
    "allow_download",
    "transcript_cache",
)
TB_FLAGS = ("tb_base_url", "tb_api_key_env", "tb_endpoint_preset")
TRANSFORMERS_FLAGS = ("preset", "device_map", "attn_implementation")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _given(args: argparse.Namespace, names: tuple[str, ...]) -> list[str]:
    return [_flag(n) for n in names if getattr(args, n, None) not in (None, False)]


def _transport(args: argparse.Namespace) -> dict[str, Any]:
    """The HTTP client options every served model of the run shares (main, tb, a cascade's LM)."""
    headers = {}
    for header in args.header or []:
        name, sep, value = header.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--header {header.split('=')[0]!r}...: give NAME=VALUE")
        headers[name.strip()] = value
    options = {
        "concurrency": args.concurrency,
        "timeout_s": args.timeout_s,
        "max_attempts": args.max_attempts,
        "request_budget_s": args.request_budget_s,
        "server_error_attempts": args.server_error_attempts,
        "backoff_base_s": args.backoff_base_s,
        "backoff_max_s": args.backoff_max_s,
        "max_retry_after_s": args.max_retry_after_s,
        "default_headers": headers or None,
    }
    return {k: v for k, v in options.items() if v is not None}


def _extra_body(args: argparse.Namespace) -> Optional[dict]:
    import json

    if args.extra_body is None:
        return None
    try:
        value = json.loads(args.extra_body)
    except ValueError as err:
        raise UsageError(f"--extra-body is not JSON ({err})") from None
    if not isinstance(value, dict):
        raise UsageError("--extra-body must be a JSON object of request fields")
    return value


def adapter_options(args: argparse.Namespace) -> dict[str, Any]:
    """The main adapter's options dict for ``make_adapter`` (what a sweep config would give as ``options``)."""
    if args.adapter == "openai":
        options = {
            **_transport(args),
            "base_url": args.base_url,
            "api_key_env": args.api_key_env,
            "endpoint_preset": args.endpoint_preset,
            "audio_format": args.audio_format,
            "sampling_rate": args.sampling_rate,
            "audio_position": args.audio_position,
            "takes_audio": False if args.text_only else None,
            "name": args.name,
            "max_audio_s": args.max_audio_s,
            "extra_body": _extra_body(args),
            "stream": args.stream or None,
        }
    elif args.adapter == "cascade":
        lm_options = {
            "base_url": args.lm_base_url,
            "api_key_env": args.lm_api_key_env,
            "endpoint_preset": args.lm_endpoint_preset,
        }
        lm_options = {k: v for k, v in lm_options.items() if v is not None}
        if args.lm and args.lm.startswith("openai:"):
            lm_options = {**_transport(args), **lm_options}
        lm_options = lm_options or None  # given without --lm openai:NAME, it is refused (hosted.check_adapter)
        options = {
            "asr": args.asr,
            "lm": args.lm,
            "lm_options": lm_options,
            "max_audio_s": args.max_audio_s,
            "allow_download": args.allow_download or None,
            "name": args.name,
            "transcript_cache": args.transcript_cache,
        }
    else:
        options = {
            "preset": args.preset,
            "dtype": args.dtype,
            "device_map": args.device_map,
            "attn_implementation": args.attn_implementation,
            "max_audio_s": args.max_audio_s,
        }
    return {k: v for k, v in options.items() if v is not None}


def tb_options(args: argparse.Namespace) -> Optional[dict[str, Any]]:
    """The tb adapter's options when it is served (None: the runner's default, the main options)."""
    if args.tb_adapter != "openai":  # a local tb model: the main options, unless those are a served model's
        return {} if args.adapter in ("openai", "cascade") else None
    options = {
        **_transport(args),
        "base_url": args.tb_base_url,
        "api_key_env": args.tb_api_key_env,
        "endpoint_preset": args.tb_endpoint_preset,
        "takes_audio": False,
    }
    return {k: v for k, v in options.items() if v is not None}


def check_served_args(args: argparse.Namespace) -> None:
    """The served/hosted options: each only with the adapter it belongs to, every value checked by building
    the adapter (nothing is sent) and its API key looked up; the prices file read and matched to the
    served models' names. Sets ``args.model_options`` and ``args.tb_options``."""
    from audioreason.inference.hosted import check_adapter, check_prices, load_prices

    for kind, flags in (("openai", SERVED_FLAGS), ("cascade", CASCADE_FLAGS)):
        stray = _given(args, flags) if args.adapter != kind else []
        if kind == "openai" and args.adapter == "cascade":  # the cascade's served LM uses the transport flags
            stray = [
                f
                for f in stray
                if f.lstrip("-").replace("-", "_")
                not in (
                    "concurrency",
                    "timeout_s",
                    "max_attempts",
                    "request_budget_s",
                    "server_error_attempts",
                    "backoff_base_s",
                    "backoff_max_s",
                    "max_retry_after_s",
                    "header",
                    "name",
                )
            ]
        if stray:
            raise UsageError(f"{', '.join(stray)} appl{'ies' if len(stray) == 1 else 'y'} to --adapter {kind}")
    stray = _given(args, TB_FLAGS) if args.tb_adapter != "openai" else []
    if stray:
        raise UsageError(f"{', '.join(stray)} appl{'ies' if len(stray) == 1 else 'y'} to --tb-adapter openai")
    if args.adapter in ("openai", "cascade"):
        stray = _given(args, TRANSFORMERS_FLAGS) + (["--dtype"] if args.dtype != "auto" else [])
        if stray:
            raise UsageError(
                f"{', '.join(stray)} appl{'ies' if len(stray) == 1 else 'y'} to a local model "
                f"(--adapter transformers), not --adapter {args.adapter}"
            )
    if not args.model and args.adapter != "cascade":
        raise UsageError("--model is required (for --adapter cascade, --asr/--lm name the models)")
    if args.adapter == "openai" and args.endpoint_preset is None and args.base_url is None:
        raise UsageError(
            "--adapter openai needs --base-url URL (a vLLM or other OpenAI-compatible server) or "
            "--endpoint-preset NAME (see docs/hosted-models.md)"
        )
    if args.batch_size is None:
        args.batch_size = (args.concurrency or 8) if args.adapter == "openai" else 1
    args.model_options = adapter_options(args)
    args.tb_options = tb_options(args)
    try:
        check_adapter(args.adapter, args.model, args.model_options)
        if args.tb_adapter == "openai":
            if not args.tb_model:
                raise ValueError("--tb-adapter openai needs --tb-model (the served text model's name)")
            if not args.tb_options.get("base_url") and not args.tb_options.get("endpoint_preset"):
                raise ValueError("--tb-adapter openai needs --tb-base-url URL or --tb-endpoint-preset NAME")
            check_adapter("openai", args.tb_model, args.tb_options)
        args.prices_table = load_prices(args.prices) if args.prices else None
        if args.prices_table is not None:
            served = [args.model_options.get("name") or args.model] if args.adapter == "openai" else []
            served += [args.tb_model] if args.tb_adapter == "openai" else []
            check_prices(args.prices_table, served)
    except ValueError as err:
        raise UsageError(str(err)) from None


def add_served_arguments(run: argparse.ArgumentParser) -> None:
    """--adapter openai / cascade and --tb-adapter openai options (docs/hosted-models.md)."""
    served = run.add_argument_group("served and hosted models (--adapter openai; see docs/hosted-models.md)")
    served.add_argument("--base-url", help="the OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (vllm serve)")
    served.add_argument(
        "--endpoint-preset",
        help="a provider's documented audio settings: vllm-qwen2-audio, "
        "vllm-qwen2.5-omni, vllm-voxtral, openai-audio, gemini, "
        "dashscope-qwen-omni (flags given win over the preset)",
    )
    served.add_argument(
        "--api-key-env",
        help="the environment variable holding the key (never the key itself; default OPENAI_API_KEY, or the preset's)",
    )
    served.add_argument("--concurrency", type=int, help="requests in flight at most (default 8)")
    served.add_argument("--timeout-s", type=float, help="seconds per request (default 120)")
    served.add_argument("--max-attempts", type=int, help="requests per reply at most, retries included (default 20)")
    served.add_argument("--request-budget-s", type=float, help="seconds one reply may take over all its attempts")
    served.add_argument("--server-error-attempts", type=int, help="tries on HTTP 5xx before the item fails (default 3)")
    served.add_argument("--backoff-base-s", type=float, help="first retry delay (default 1 s, doubled per retry)")
    served.add_argument("--backoff-max-s", type=float, help="longest retry delay (default 60 s)")
    served.add_argument("--max-retry-after-s", type=float, help="longest Retry-After honoured (default 300 s)")
    served.add_argument(
        "--header",
        action="append",
        help="NAME=VALUE sent with every request (repeatable; values are never written to run.json)",
    )
    served.add_argument("--audio-format", choices=("wav", "mp3"), help="input_audio container (default wav)")
    served.add_argument("--sampling-rate", type=int, help="the rate the clip is encoded at (default 16000)")
    served.add_argument("--audio-position", choices=("first", "last"), help="audio before (default) or after the text")
    served.add_argument("--text-only", action="store_true", help="the served model takes no audio")
    served.add_argument("--name", help="the model's name in outputs (default: --model)")
    served.add_argument("--extra-body", help='more request fields as a JSON object, e.g. \'{"modalities": ["text"]}\'')
    served.add_argument("--stream", action="store_true", help="ask for streamed replies (joined into one)")
    served.add_argument("--tb-base-url", help="--tb-adapter openai: the server of the tb condition's text model")
    served.add_argument("--tb-api-key-env", help="--tb-adapter openai: the variable holding its key")
    served.add_argument("--tb-endpoint-preset", help="--tb-adapter openai: an endpoint preset for it")
    served.add_argument(
        "--prices",
        help="JSON/YAML prices per model (prompt_per_million, completion_per_million, "
        "audio_per_second or audio_per_minute): run.json records the cost",
    )
    cascade = run.add_argument_group("cascade (--adapter cascade)")
    cascade.add_argument("--asr", help="speech recognizer spec (default packaged:whisper-tiny.en)")
    cascade.add_argument(
        "--lm",
        help="text LM: packaged:NAME, a local folder, or openai:NAME (a served model; "
        "with --lm-base-url or --lm-endpoint-preset)",
    )
    cascade.add_argument("--lm-base-url", help="the served LM's server (--lm openai:NAME)")
    cascade.add_argument("--lm-api-key-env", help="the served LM's key variable")
    cascade.add_argument("--lm-endpoint-preset", help="an endpoint preset for the served LM")
    cascade.add_argument("--allow-download", action="store_true", help="let the ASR/LM weights download")
    cascade.add_argument("--transcript-cache", type=int, help="transcripts kept in memory (default 4096)")


__all__ = ["add_served_arguments", "adapter_options", "check_served_args", "tb_options"]
