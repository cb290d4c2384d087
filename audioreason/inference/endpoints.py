"""Named endpoint presets: how each provider documents audio input on its OpenAI-compatible chat endpoint.

    audioreason run --adapter openai --endpoint-preset gemini --model gemini-2.5-flash ...

A preset fills the ``OpenAIAudioAdapter`` options a provider's documentation fixes: the server, the
environment variable that usually holds its key, the audio container (``input_audio.format``), the rate
the clip is encoded at, a prefix some providers want on the base64 data, whether the endpoint must be
streamed, extra request fields, and the longest clip the provider documents. Every value given on the
command line wins over the preset's (``merge_preset``). Where a provider documents no duration limit the
preset says so (``max_audio_s=None`` and a ``limit_note``): no limit is invented.

Each preset names the pages its values come from (``sources``); docs/hosted-models.md lists them too.
Checked in December 2026; providers change their pages, so the run records the preset it used.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class EndpointPreset:
    name: str
    provider: str
    base_url: Optional[str]  # None: the user gives --base-url (a vLLM server is wherever it runs)
    api_key_env: Optional[str]  # the variable a user usually keeps the key in (None: no key needed)
    audio_format: str  # input_audio.format: "wav" or "mp3"
    sampling_rate: int  # the rate the clip is encoded at
    max_audio_s: Optional[float]  # the documented longest clip (None: none documented)
    limit_note: str  # where the limit comes from, or that none is documented
    data_prefix: str = ""  # put before the base64 data (DashScope: "data:;base64,")
    stream: bool = False  # the endpoint answers only streamed requests
    extra_body: dict[str, Any] = field(default_factory=dict)  # more request fields the provider documents
    models: tuple[str, ...] = ()  # example model names
    sources: tuple[str, ...] = ()

    def adapter_options(self) -> dict[str, Any]:
        """The OpenAIAudioAdapter options this preset sets."""
        options = {
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "audio_format": self.audio_format,
            "sampling_rate": self.sampling_rate,
            "max_audio_s": self.max_audio_s,
            "data_prefix": self.data_prefix or None,
            "stream": self.stream or None,
            "extra_body": dict(self.extra_body) or None,
        }
        return {k: v for k, v in options.items() if v is not None}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


VLLM_MULTIMODAL = "https://docs.vllm.ai/en/stable/features/multimodal_inputs.html"
VLLM_AUDIO_EXAMPLE = "https://docs.vllm.ai/en/v0.5.5/getting_started/examples/openai_audio_api_client.html"

ENDPOINT_PRESETS: dict[str, EndpointPreset] = {
    p.name: p
    for p in (
        # vLLM's OpenAI-compatible server takes audio as an input_audio part (base64 + format) or an audio_url;
        # it decodes the clip and resamples it to the model's feature extractor rate itself. A 16 kHz WAV is sent
        # so nothing is resampled twice. No limit is documented by vLLM: the model's processor decides.
        EndpointPreset(
            "vllm-qwen2-audio",
            "vLLM (vllm serve Qwen/Qwen2-Audio-7B-Instruct)",
            None,
            None,
            "wav",
            16000,
            30.0,
            "Qwen2-Audio model card: clips up to 30 s (its Whisper feature extractor's window, chunk_length 30); "
            "vLLM documents no limit of its own",
            models=("Qwen/Qwen2-Audio-7B-Instruct",),
            sources=(VLLM_MULTIMODAL, VLLM_AUDIO_EXAMPLE, "https://huggingface.co/Qwen/Qwen2-Audio-7B-Instruct"),
        ),
        EndpointPreset(
            "vllm-qwen2.5-omni",
            "vLLM (vllm serve Qwen/Qwen2.5-Omni-7B)",
            None,
            None,
            "wav",
            16000,
            None,
            "no duration limit documented by vLLM or the model card; pass --max-audio-s to set one "
            "(the transformers preset applies the processor's window)",
            models=("Qwen/Qwen2.5-Omni-7B",),
            sources=(VLLM_MULTIMODAL, "https://huggingface.co/Qwen/Qwen2.5-Omni-7B"),
        ),
        EndpointPreset(
            "vllm-voxtral",
            "vLLM (vllm serve mistralai/Voxtral-Mini-3B-2507 --tokenizer_mode mistral ...)",
            None,
            None,
            "wav",
            16000,
            2400.0,
            "Voxtral model card: audio understanding up to 40 minutes (transcription up to 30)",
            models=("mistralai/Voxtral-Mini-3B-2507", "mistralai/Voxtral-Small-24B-2507"),
            sources=(VLLM_MULTIMODAL, "https://huggingface.co/mistralai/Voxtral-Mini-3B-2507"),
        ),
        # OpenAI: input_audio {data: base64 without a data: prefix, format: "wav" | "mp3"}; text output only is
        # asked with modalities ["text"]. No duration limit for chat input audio is documented.
        EndpointPreset(
            "openai-audio",
            "OpenAI (audio-capable chat models)",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            "wav",
            16000,
            None,
            "no duration limit documented for input_audio in chat completions (the request size limit applies)",
            extra_body={"modalities": ["text"]},
            models=("gpt-4o-audio-preview", "gpt-4o-mini-audio-preview"),
            sources=(
                "https://platform.openai.com/docs/guides/audio",
                "https://platform.openai.com/docs/api-reference/chat/create",
            ),
        ),
        # Gemini's OpenAI-compatible endpoint: input_audio as OpenAI's; audio up to 9.5 hours per prompt,
        # inline requests up to 20 MB in all (a 16 kHz 16-bit WAV is 32 kB/s: about 10 minutes; send mp3 for
        # longer clips). Gemini downsamples to 16 kbps and mixes to mono itself.
        EndpointPreset(
            "gemini",
            "Google Gemini API (OpenAI compatibility)",
            "https://generativelanguage.googleapis.com/v1beta/openai/",
            "GEMINI_API_KEY",
            "wav",
            16000,
            34200.0,
            "Gemini audio docs: at most 9.5 hours of audio per prompt; an inline request is at most 20 MB "
            "(about 10 min of 16 kHz WAV: use --audio-format mp3 or --max-audio-s for longer clips)",
            models=("gemini-2.5-flash", "gemini-2.5-pro"),
            sources=("https://ai.google.dev/gemini-api/docs/openai", "https://ai.google.dev/gemini-api/docs/audio"),
        ),
        # DashScope (Alibaba Cloud Model Studio) compatible mode: Qwen-Omni is documented as streaming-only
        # (stream=True, stream_options.include_usage for the token counts); a local file goes as base64 behind
        # a "data:;base64," prefix; text output with modalities ["text"].
        EndpointPreset(
            "dashscope-qwen-omni",
            "Alibaba Cloud Model Studio (DashScope compatible mode)",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "DASHSCOPE_API_KEY",
            "wav",
            16000,
            None,
            "no duration limit found in the Qwen-Omni pages checked; pass --max-audio-s to set one",
            data_prefix="data:;base64,",
            stream=True,
            extra_body={"modalities": ["text"]},
            models=("qwen-omni-turbo", "qwen3-omni-flash", "qwen2.5-omni-7b"),
            sources=("https://www.alibabacloud.com/help/en/model-studio/qwen-omni",),
        ),
    )
}


def endpoint_preset(name: str) -> EndpointPreset:
    if name not in ENDPOINT_PRESETS:
        raise ValueError(f"unknown endpoint preset {name!r}: choose from {', '.join(ENDPOINT_PRESETS)}")
    return ENDPOINT_PRESETS[name]


def merge_preset(name: Optional[str], given: dict[str, Any]) -> dict[str, Any]:
    """The preset's adapter options overlaid with the options given (a given value, not None, wins)."""
    base = endpoint_preset(name).adapter_options() if name else {}
    return {**base, **{k: v for k, v in given.items() if v is not None}}


__all__ = ["ENDPOINT_PRESETS", "EndpointPreset", "endpoint_preset", "merge_preset"]
