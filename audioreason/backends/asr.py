"""Speech recognition (the registry's "asr" role): a Whisper model in CTranslate2 format run by faster-whisper,
for the cascade adapter (ASR, then a text LM).

Decoding is fixed and recorded in ``description``: beam search of width ``beam_size`` (5, faster-whisper's
and Whisper's default) at temperature 0 with no temperature fallback, so a transcript is a deterministic
function of the audio (Whisper's fallback re-decodes a segment by *sampling* when its compression ratio or
log-probability looks wrong; that would make the same clip read differently from run to run). No voice
activity filter; each 30 s window is conditioned on the previous one's text (Whisper's default). The model
runs on the CPU in float32 (the packaged weights are float16, which CPUs do not compute natively).

``timed_sentences`` (the construction pipeline's step 1, AudioSpan §4.2) decodes the same way but with
faster-whisper's voice activity filter on (its bundled Silero VAD, default options: stretches of 2 s or more
without speech are cut out before decoding and the times mapped back) and word timestamps (cross-attention
alignment), and cuts Whisper's segments into sentences at the words that end in ``.``, ``?`` or ``!``. The
filter keeps Whisper from writing text into long music or silence, which a long recording has and a
benchmark clip seldom does.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .errors import BackendUnavailable

SAMPLING_RATE = 16000  # Whisper's feature extractor works at 16 kHz only
_SENTENCE_END = re.compile(r"[.?!]['\")\]]*$")


@dataclass(frozen=True)
class Transcript:
    """The text recognized in one clip; ``segments`` Whisper segments; ``seconds``: compute time."""

    text: str
    language: str
    segments: int
    seconds: float


class WhisperASR:
    role = "asr"
    sampling_rate = SAMPLING_RATE

    def __init__(self, model, description: str, beam_size: int = 5, language: Optional[str] = None):
        self.model = model
        self.beam_size = beam_size
        self.language = language  # None: the model's own (an English-only ".en" model: "en"), else detected
        self.weights = description
        self.description = f"{description}; faster-whisper beam {beam_size}, temperature 0 without fallback"

    @classmethod
    def load(cls, path: str, description: str) -> "WhisperASR":
        try:
            from faster_whisper import WhisperModel
        except ImportError as err:
            raise BackendUnavailable(
                f"speech recognition needs the faster-whisper package (pip install -e '.[weights]'): {err}"
            ) from err
        import torch

        try:  # as many threads as torch uses (faster-whisper's own default is 4, too many on a 2-core machine)
            model = WhisperModel(path, device="cpu", compute_type="float32", cpu_threads=torch.get_num_threads())
        except (RuntimeError, ValueError, OSError) as err:  # CTranslate2 reports a bad folder as RuntimeError
            raise BackendUnavailable(f"cannot load a CTranslate2 Whisper model from {description}: {err}") from err
        return cls(model, description)

    def transcribe(self, samples: np.ndarray) -> Transcript:
        """The transcript of mono float32 ``samples`` at 16 kHz: the segments' texts, stripped, joined by
        single spaces ("" when no speech was recognized)."""
        samples = np.ascontiguousarray(samples, dtype=np.float32)
        if samples.ndim != 1 or not samples.size:
            raise ValueError(f"speech recognition needs a non-empty mono clip, got shape {samples.shape}")
        started = time.perf_counter()
        segments, info = self.model.transcribe(
            samples, beam_size=self.beam_size, temperature=0.0, language=self.language, vad_filter=False
        )
        texts = [segment.text.strip() for segment in segments]  # the generator runs the model
        return Transcript(
            text=" ".join(t for t in texts if t),
            language=info.language,
            segments=len(texts),
            seconds=time.perf_counter() - started,
        )

    def timed_sentences(self, samples: np.ndarray, offset: float = 0.0) -> list[tuple[float, float, str]]:
        """Sentences recognized in mono float32 ``samples`` at 16 kHz as (start, end, text), times in seconds
        plus ``offset`` (where the samples start in the recording), in order; [] when no speech was found.
        A sentence ends at a word ending in . ? or ! and runs from its first word's start to its last word's
        end (module docstring: voice activity filter, word timestamps)."""
        samples = np.ascontiguousarray(samples, dtype=np.float32)
        if samples.ndim != 1 or not samples.size:
            raise ValueError(f"speech recognition needs a non-empty mono clip, got shape {samples.shape}")
        segments, _ = self.model.transcribe(
            samples,
            beam_size=self.beam_size,
            temperature=0.0,
            language=self.language,
            vad_filter=True,
            word_timestamps=True,
        )
        sentences: list[tuple[float, float, str]] = []
        words: list[tuple[float, float, str]] = []

        def close() -> None:
            text = "".join(w for _, _, w in words).strip()
            if text:
                sentences.append((offset + words[0][0], offset + words[-1][1], text))
            words.clear()

        for segment in segments:  # the generator runs the model
            timed = [(w.start, w.end, w.word) for w in (segment.words or [])]
            if not timed and segment.text.strip():  # no alignment for this segment: it is one sentence
                timed = [(segment.start, segment.end, segment.text)]
            for start, end, word in timed:
                words.append((float(start), float(max(start, end)), word))
                if _SENTENCE_END.search(word.strip()):
                    close()
        close()
        return sentences
