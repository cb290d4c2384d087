"""Audio-text models through transformers: the processor's chat template places the audio, ``generate`` answers.

One generic adapter (``TransformersAudioAdapter``) serves every model whose processor takes audio inside
chat messages (``{"type": "audio", "audio": samples}``) through ``processor.apply_chat_template``. A
preset names what differs between models: the model class, the checkpoint, whether text comes from a
"thinker" sub-model, the maximum audio duration with its basis, the sampling rate.

Batching: requests are padded on the left with attention masks (the tokenizer's padding side is set to
"left"); requests with audio and requests without (the "none" condition) are run as separate batches,
because some processors refuse a batch that mixes them. Decoding is greedy by default (the papers'
setting), with the end-of-sequence and padding ids passed explicitly. A batch that raises is retried one
request at a time, so an error stays with the request that caused it.

Maximum audio duration: ``max_audio_s`` is the preset's value (AudioSpan Table 6 where the paper gives
one, arXiv:2608.26431 App. C.1; else the model card), lowered to what the loaded processor itself keeps
when it silently cuts longer audio (Qwen2-Audio and Qwen2.5-Omni pad or cut to their Whisper feature
extractor's window, ``n_samples``; Audio Flamingo 3 to ``max_audio_len``). The runner cuts longer clips to
that prefix and records the cut, so no processor ever cuts silently.

Audio-only processors: the Omni and Phi-4 processors hold an image and a video processor that need
torchvision even when only audio is sent. When ``AutoProcessor`` cannot build them, the adapter builds the
same processor class with refusing stand-ins in the vision slots (any image or video input raises) and
says so in ``description``; audio and text go through the real processor code unchanged.

Presets (checked against transformers 5.24):

===================  ==========================================  ==================  ==================================
preset               checkpoint                                  max audio           basis
===================  ==========================================  ==================  ==================================
qwen2-audio          Qwen/Qwen2-Audio-7B-Instruct                30 s                model card; processor window
qwen2.5-omni         Qwen/Qwen2.5-Omni-7B (thinker, text out)    processor window    not in Table 6
qwen3-omni           Qwen/Qwen3-Omni-30B-A3B-Instruct (thinker)  80 min              AudioSpan Table 6 (position budget)
qwen3-omni-thinking  Qwen/Qwen3-Omni-30B-A3B-Thinking (thinker)  80 min              AudioSpan Table 6 (position budget)
audioflamingo3       nvidia/audio-flamingo-3-hf                  10 min              model card; processor max_audio_len
phi4-multimodal      microsoft/Phi-4-multimodal-instruct         30 min              AudioSpan Table 6 (reported ceiling)
===================  ==========================================  ==================  ==================================

All take 16 kHz mono. A local checkpoint folder picks its preset from ``config.json``'s ``model_type``; a
checkpoint whose model_type the preset's class does not read is refused. Phi-4-multimodal's Hub repository
keeps its remote-code layout ("phi4mm") on the main branch: load a transformers-format copy (model_type
"phi4_multimodal").
Not provided (transformers 5.24): Gemma 3n (its model builds a timm vision tower, and neither timm nor
torchvision installs beside this stack's CPU torch, so it could not be run or tested here), Voxtral (its
tokenizer is mistral-common's, absent here, and its chat template takes audio as base64 or a path rather
than samples), Granite Speech and Music Flamingo (evaluated by none of the four papers), Kimi-Audio,
Baichuan-Omni and MOSS-Audio (not in transformers).
"""  # noqa: E501 - a command or table kept whole

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .base import DecodingParams, Generation, GenerationRequest
from .hf import eos_token_ids, generate_and_read, generate_in_batches, load_options, move_inputs


@dataclass(frozen=True)
class Preset:
    name: str
    checkpoint: str
    model_class: str
    processor_class: str
    model_types: tuple[str, ...]  # config.json model_type values that select this preset
    max_audio_s: Optional[float]  # None: no limit beyond the processor's own
    max_audio_basis: str
    sampling_rate: int = 16000
    submodule: Optional[str] = None  # generate with this sub-model (the Omni "thinker": text out only)
    load_kwargs: Mapping[str, Any] = field(default_factory=dict)
    processor_cap: Optional[str] = None  # "n_samples" | "max_audio_len": where the processor cuts silently
    audio_first: bool = True  # audio block before the text in the user turn (as the model cards)
    papers: str = ""


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "qwen2-audio",
            "Qwen/Qwen2-Audio-7B-Instruct",
            "Qwen2AudioForConditionalGeneration",
            "Qwen2AudioProcessor",
            ("qwen2_audio",),
            30.0,
            "Qwen2-Audio model card: clips up to 30 s (not in AudioSpan Table 6)",
            processor_cap="n_samples",
            papers="ARIA-Rubrics; All That Glitters Is Not Audio",
        ),
        Preset(
            "qwen2.5-omni",
            "Qwen/Qwen2.5-Omni-7B",
            "Qwen2_5OmniForConditionalGeneration",
            "Qwen2_5OmniProcessor",
            ("qwen2_5_omni",),
            None,
            "not in AudioSpan Table 6; the processor's feature-extractor window applies",
            submodule="thinker",
            load_kwargs={"enable_audio_output": False},
            processor_cap="n_samples",
            papers="ARIA-Rubrics; All That Glitters Is Not Audio",
        ),
        Preset(
            "qwen3-omni",
            "Qwen/Qwen3-Omni-30B-A3B-Instruct",
            "Qwen3OmniMoeForConditionalGeneration",
            "Qwen3OmniMoeProcessor",
            ("qwen3_omni_moe",),
            4800.0,
            "AudioSpan Table 6: 80 min (position budget)",
            submodule="thinker",
            load_kwargs={"enable_audio_output": False},
            papers="AudioSpan; All That Glitters Is Not Audio",
        ),
        Preset(
            "qwen3-omni-thinking",
            "Qwen/Qwen3-Omni-30B-A3B-Thinking",
            "Qwen3OmniMoeForConditionalGeneration",
            "Qwen3OmniMoeProcessor",
            ("qwen3_omni_moe",),
            4800.0,
            "AudioSpan Table 6: 80 min (position budget)",
            submodule="thinker",
            load_kwargs={"enable_audio_output": False},
            papers="AudioSpan; All That Glitters Is Not Audio (sampled at temperature 0.6 there)",
        ),
        Preset(
            "audioflamingo3",
            "nvidia/audio-flamingo-3-hf",
            "AudioFlamingo3ForConditionalGeneration",
            "AudioFlamingo3Processor",
            ("audioflamingo3",),
            600.0,
            "AF3 model card: up to 10 min (Table 6 lists its successor, Audio Flamingo Next, at 30 min)",
            processor_cap="max_audio_len",
            papers="All That Glitters Is Not Audio",
        ),
        Preset(
            "phi4-multimodal",
            "microsoft/Phi-4-multimodal-instruct",
            "Phi4MultimodalForCausalLM",
            "Phi4MultimodalProcessor",
            ("phi4_multimodal",),
            1800.0,
            "AudioSpan Table 6: 30 min (reported ceiling)",
            papers="ARIA-Rubrics; AudioSpan",
        ),
    )
}


def _model_type(path: str) -> Optional[str]:
    """config.json's model_type, from a local folder or the Hugging Face cache (None when not found)."""
    from transformers.utils import cached_file

    try:
        config = cached_file(path, "config.json", _raise_exceptions_for_missing_entries=False)
    except (OSError, ValueError):
        return None
    return json.loads(Path(config).read_text(encoding="utf-8")).get("model_type") if config else None


def check_model_type(path: str, preset: Preset) -> None:
    """Refuse a checkpoint in another format than the preset's class reads (e.g. Phi-4-multimodal's
    remote-code "phi4mm" layout, on its Hub repository's main branch, instead of the transformers one)."""
    model_type = _model_type(path)
    if model_type is not None and model_type not in preset.model_types:
        raise ValueError(
            f"{path} has model_type {model_type!r}; the {preset.name} preset loads "
            f"{preset.model_class} checkpoints ({', '.join(preset.model_types)}): use a "
            "transformers-format copy of the weights"
        )


def resolve_preset(model: str, preset: Optional[str] = None, *, how: str = "pass preset=...") -> tuple[Preset, str]:
    """(preset, checkpoint to load) for a preset name, or a checkpoint with ``preset`` named or read from its
    config.json. ``how`` says how to name a preset where none fits (the command line says "give --preset NAME")."""
    if preset is not None:
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}: choose from {', '.join(PRESETS)}")
        return PRESETS[preset], (PRESETS[preset].checkpoint if model == preset else model)
    if model in PRESETS:
        return PRESETS[model], PRESETS[model].checkpoint
    for known in PRESETS.values():
        if model == known.checkpoint:
            return known, model
    model_type = _model_type(model)
    matches = [p for p in PRESETS.values() if model_type in p.model_types]
    if not matches:
        raise ValueError(
            f"no preset for {model!r} (model_type {model_type!r}); name one of {', '.join(PRESETS)} or {how}"
        )
    return matches[0], model


# ------------------------------------------------------------------------------------------------
# Processor
# ------------------------------------------------------------------------------------------------


def _refusing_stand_ins():
    from transformers.image_processing_utils import ImageProcessingMixin
    from transformers.video_processing_utils import BaseVideoProcessor

    class NoImages(ImageProcessingMixin):
        def __call__(self, *args: Any, **kwargs: Any):
            raise RuntimeError("this processor was built for audio only (its image processor needs torchvision)")

    class NoVideos(BaseVideoProcessor):
        def __call__(self, *args: Any, **kwargs: Any):
            raise RuntimeError("this processor was built for audio only (its video processor needs torchvision)")

    return NoImages, NoVideos


def audio_only_processor(processor_class: str, path: str) -> Any:
    """``processor_class`` built from ``path``'s tokenizer, feature extractor and chat template, with stand-ins
    that refuse any image or video in the vision slots (for machines without torchvision)."""
    import transformers
    from transformers import AutoFeatureExtractor, AutoTokenizer

    base = getattr(transformers, processor_class)
    no_images, no_videos = _refusing_stand_ins()

    class AudioOnly(base):  # type: ignore[misc, valid-type]
        def check_argument_for_proper_class(self, argument_name: str, argument: Any):
            if isinstance(argument, (no_images, no_videos)):
                return type(argument)
            return super().check_argument_for_proper_class(argument_name, argument)

    AudioOnly.__name__ = AudioOnly.__qualname__ = base.__name__
    processor_dict, _ = base.get_processor_dict(path)
    parts: dict[str, Any] = {}
    for attribute in base.get_attributes():
        if "tokenizer" in attribute:
            parts[attribute] = AutoTokenizer.from_pretrained(path)
        elif attribute in ("feature_extractor", "audio_processor"):
            parts[attribute] = AutoFeatureExtractor.from_pretrained(path)
        elif attribute == "image_processor":
            parts[attribute] = no_images()
        elif attribute == "video_processor":
            parts[attribute] = no_videos()
        else:
            raise ValueError(f"{processor_class} has a {attribute!r} part that an audio-only build cannot supply")
    return AudioOnly(**parts, chat_template=processor_dict.get("chat_template"))


def load_processor(path: str, preset: Preset) -> tuple[Any, str]:
    """(processor, note): ``AutoProcessor``, else the audio-only build of the preset's processor class."""
    from transformers import AutoProcessor

    try:
        processor = AutoProcessor.from_pretrained(path)
        if hasattr(processor, "tokenizer") and type(processor).__name__ == preset.processor_class:
            return processor, ""
        first_error = f"AutoProcessor gave a {type(processor).__name__}, not a {preset.processor_class}"
    except (ImportError, ValueError, OSError) as err:
        first_error = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    try:
        return audio_only_processor(preset.processor_class, path), "audio-only processor (no image/video parts)"
    except Exception as err:  # noqa: BLE001 - both failures are reported together
        raise RuntimeError(
            f"cannot build the {preset.processor_class} for {path}: {first_error}; audio-only build: "
            f"{type(err).__name__}: {err}"
        ) from err


def processor_cap_s(processor: Any, preset: Preset) -> Optional[float]:
    """Seconds beyond which the loaded processor cuts audio by itself (None: it does not)."""
    if preset.processor_cap == "max_audio_len":
        return float(processor.max_audio_len)
    if preset.processor_cap == "n_samples":
        extractor = processor.feature_extractor
        return float(extractor.n_samples) / float(extractor.sampling_rate)
    return None


def checkpoint_cap_s(path: str, preset: Preset) -> Optional[float]:
    """``processor_cap_s`` from the checkpoint's processor files alone (preprocessor_config.json or
    processor_config.json; no weights, no tokenizer), so a limit can be checked before the model loads."""
    import inspect
    from types import SimpleNamespace

    import transformers

    if preset.processor_cap == "n_samples":
        extractor = transformers.AutoFeatureExtractor.from_pretrained(path)
        return processor_cap_s(SimpleNamespace(feature_extractor=extractor), preset)
    if preset.processor_cap == "max_audio_len":
        cls = getattr(transformers, preset.processor_class)
        processor_dict, _ = cls.get_processor_dict(path)
        default = inspect.signature(cls.__init__).parameters["max_audio_len"].default
        return processor_cap_s(SimpleNamespace(max_audio_len=processor_dict.get("max_audio_len", default)), preset)
    return None


def refuse_above_cap(
    requested: Optional[float], cap: Optional[float], preset: Preset, what: str = "max_audio_s="
) -> None:
    if requested is not None and cap is not None and requested > cap:
        raise ValueError(
            f"{what}{requested:g} exceeds the {cap:g} s the {preset.processor_class} keeps; it would "
            "cut the rest without a record"
        )


# ------------------------------------------------------------------------------------------------
# Adapter
# ------------------------------------------------------------------------------------------------


class TransformersAudioAdapter:
    """A transformers audio-text model behind the ``ModelAdapter`` interface.

    ``model``: a preset name (loads its checkpoint), a Hub id or a local checkpoint folder (its preset read
    from config.json unless ``preset`` names one). Options: ``dtype`` ("auto", "bfloat16", ...),
    ``device_map`` (e.g. "auto" to spread a large model over GPUs), ``device`` (one device, the runner
    passes each process's own), ``attn_implementation`` ("sdpa", "flash_attention_2", "eager"),
    ``max_audio_s`` (a lower limit than the preset's; a higher one than the processor keeps is refused),
    ``system_prompt`` (a system turn before the question; default none, the chat template's own default
    applies).
    """

    kind = "transformers"
    takes_audio = True

    def __init__(
        self,
        model: str,
        *,
        preset: Optional[str] = None,
        dtype: str = "auto",
        device: Optional[str] = None,
        device_map: Optional[str] = None,
        attn_implementation: Optional[str] = None,
        max_audio_s: Optional[float] = None,
        system_prompt: Optional[str] = None,
    ):
        import transformers

        self.preset, path = resolve_preset(model, preset)
        check_model_type(path, self.preset)
        options = load_options(dtype, device_map, attn_implementation)
        self.processor, processor_note = load_processor(path, self.preset)
        self.tokenizer = self.processor.tokenizer
        self.tokenizer.padding_side = "left"
        self.prefetch_processor = processor_copy(self.processor)
        model_class = getattr(transformers, self.preset.model_class)
        loaded = model_class.from_pretrained(path, **options, **self.preset.load_kwargs)
        self.model = getattr(loaded, self.preset.submodule) if self.preset.submodule else loaded
        if device is not None and not device_map:
            self.model.to(device)
        self.model.eval()
        self.eos_ids = eos_token_ids(self.tokenizer, self.model.generation_config, loaded.generation_config)
        extractor = getattr(self.processor, "feature_extractor", None) or getattr(self.processor, "audio_processor")
        self.sampling_rate = int(getattr(extractor, "sampling_rate", self.preset.sampling_rate))
        self.max_audio_s, self.max_audio_basis = self._limit(max_audio_s)
        self.system_prompt = system_prompt
        self.name = model
        notes = [
            n
            for n in (processor_note, f"generates with .{self.preset.submodule}" if self.preset.submodule else "")
            if n
        ]
        self.description = (
            f"{model} ({self.preset.name} preset, {type(loaded).__name__}, dtype {self.model.dtype}, "
            f"attention {self.model.config._attn_implementation}, max audio "
            f"{self.max_audio_s if self.max_audio_s is not None else 'unlimited'} s: "
            f"{self.max_audio_basis}{'; ' + '; '.join(notes) if notes else ''})"
        )

    def _limit(self, requested: Optional[float]) -> tuple[Optional[float], str]:
        cap = processor_cap_s(self.processor, self.preset)
        limit, basis = self.preset.max_audio_s, self.preset.max_audio_basis
        if cap is not None and (limit is None or cap < limit):
            limit, basis = cap, f"{basis}; the processor keeps only the first {cap:g} s"
        if requested is not None:
            refuse_above_cap(requested, cap, self.preset)
            limit, basis = float(requested), f"set by the user (preset: {self.preset.max_audio_basis})"
        return limit, basis

    # -- generation ------------------------------------------------------------------------------
    def generate(
        self,
        requests: Sequence[GenerationRequest],
        decoding: DecodingParams,
        prepared: Optional["PreparedInputs"] = None,
    ) -> list[Generation]:
        """One Generation per request, in order. Audio and no-audio requests are batched apart.
        ``prepared``: this batch's processor inputs from ``prepare`` (computed ahead by the runner)."""
        results: list[Optional[Generation]] = [None] * len(requests)
        for wants_audio in (True, False):
            indices = [i for i, r in enumerate(requests) if (r.audio is not None) == wants_audio]
            group = [requests[i] for i in indices]
            ready = prepared if prepared is not None and prepared.keys == tuple(r.key for r in group) else None

            def run(batch: Sequence[GenerationRequest], ready: Optional[PreparedInputs] = ready) -> list[Generation]:
                # The inputs computed ahead serve the whole group; a retry one request at a time encodes anew.
                return self._batch(
                    batch, decoding, ready if ready is not None and len(batch) == len(ready.keys) else None
                )

            for i, generation in zip(indices, generate_in_batches(group, run)):
                results[i] = generation
        return results  # type: ignore[return-value]

    def prepare(self, requests: Sequence[GenerationRequest]) -> Optional["PreparedInputs"]:
        """The processor's inputs for a batch of one audio presence, computed ahead on the runner's prefetch
        thread with this adapter's second processor (a tokenizer is not safe to share between threads);
        None when there is nothing to compute ahead or it fails (``generate`` then encodes, and records
        any error per request as it always does)."""
        if not requests or len({r.audio is not None for r in requests}) != 1 or self.prefetch_processor is None:
            return None
        start = time.perf_counter()
        try:
            inputs = self._encode(requests, self.prefetch_processor)
        except Exception:  # noqa: BLE001 - generate() meets the same failure and records it per request
            return None
        return PreparedInputs(tuple(r.key for r in requests), inputs, time.perf_counter() - start)

    def conversation(self, request: GenerationRequest) -> list[dict[str, Any]]:
        """The request's messages as processor chat content, the audio block in the last user turn."""
        messages = [
            {"role": m["role"], "content": [{"type": "text", "text": str(m["content"])}]} for m in request.messages
        ]
        if self.system_prompt:
            messages.insert(0, {"role": "system", "content": [{"type": "text", "text": self.system_prompt}]})
        if request.audio is not None:
            if request.audio.sampling_rate != self.sampling_rate:
                raise ValueError(f"audio at {request.audio.sampling_rate} Hz; this model takes {self.sampling_rate} Hz")
            last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
            block = {"type": "audio", "audio": request.audio.array}
            content = messages[last_user]["content"]
            messages[last_user]["content"] = [block, *content] if self.preset.audio_first else [*content, block]
        return messages

    def _encode(self, requests: Sequence[GenerationRequest], processor: Any) -> Any:
        return processor.apply_chat_template(
            [self.conversation(r) for r in requests],
            tokenize=True,
            return_dict=True,
            add_generation_prompt=True,
            processor_kwargs={"text_kwargs": {"padding": True, "padding_side": "left"}},
            return_tensors="pt",
        )

    def _batch(
        self, requests: Sequence[GenerationRequest], decoding: DecodingParams, ready: Optional["PreparedInputs"] = None
    ) -> list[Generation]:
        if ready is not None:  # the processor ran ahead: its seconds still count in each request's share
            start, inputs = time.perf_counter() - ready.seconds, ready.inputs
        else:
            start = time.perf_counter()
            inputs = self._encode(requests, self.processor)
        return generate_and_read(
            self.model, self.tokenizer, move_inputs(inputs, self.model), decoding, self.eos_ids, start
        )


@dataclass(frozen=True)
class PreparedInputs:
    """A batch's processor output computed ahead: for the requests with these keys, in this order."""

    keys: tuple[str, ...]
    inputs: Any
    seconds: float


def processor_copy(processor: Any) -> Optional[Any]:
    """A second, independent processor for the prefetch thread (None when it cannot be copied: then
    nothing is computed ahead)."""
    import copy

    try:
        return copy.deepcopy(processor)
    except Exception:  # noqa: BLE001 - only the prefetch is given up
        return None


__all__ = [
    "PRESETS",
    "Preset",
    "TransformersAudioAdapter",
    "audio_only_processor",
    "check_model_type",
    "checkpoint_cap_s",
    "load_processor",
    "processor_cap_s",
    "refuse_above_cap",
    "resolve_preset",
]
