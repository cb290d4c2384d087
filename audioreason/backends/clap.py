"""CLAP audio and text embeddings (ARIA M1) through transformers' ClapModel.

Text is cut at 77 tokens and audio is read at 48 kHz mono (ARIA Table 11). M1 compares each entity with
"the whole audio" (§3.3.1, Eq. 1), so by default (``embed_sources(mode="whole")``) a clip is embedded whole:
  * an unfused checkpoint (the paper's ``laion/clap-htsat-unfused``) reads one window of
    ``max_length_s`` (10 s): the clip is cut into consecutive windows, each embedded (the last, shorter
    one repeat-padded as CLAP pads a short clip), and the unit embeddings are averaged, weighted by each
    window's share of the duration, then normalised;
  * a fused checkpoint (``enable_fusion``) uses CLAP's own long-audio fusion (``truncation="fusion"``:
    a downsampled global view of the whole clip's mel spectrogram plus three crops of it, seeded),
    built from the mel frames it uses (``clap_audio.fusion_input``).
``mode="random_crop"`` (option) is transformers' ``rand_trunc``: a clip longer than the window is cropped
to 10 s at a random offset drawn after seeding numpy with ``seed``; only that stretch is read.

Memory is flat in the clip's length in every mode: no clip is ever held whole (``clap_audio``: sources
are read in 10-s blocks at 48 kHz), and the model runs on at most ``batch_size`` windows, crops or fused
inputs at a time (``benchmarks/aria_memory.py`` measures 1 minute to 10 hours). A source that cannot be
read (missing, damaged, empty, NaN samples, an invalid array or sampling rate, or out of memory) comes
back as its ``AudioError``, never as an exception that stops the other sources.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence, Union

import numpy as np
import torch

from ..audio import AudioError
from .cache import TextCache
from .clap_audio import (
    AUDIO_MODES,
    CLAP_RATE,
    crop,
    describe,
    fusion_input,
    joined,
    numpy_seed,
    open_signal,
    source_key,
    windows,
)


def _unit(x: torch.Tensor) -> np.ndarray:
    return torch.nn.functional.normalize(x.double(), dim=-1).numpy()


def _unit_np(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def audio_key(samples: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(samples, dtype=np.float32).tobytes()).hexdigest()


@contextmanager
def _reading(source: Any) -> Iterator[None]:
    """Running out of memory on one source is that source's AudioError (the others go on)."""
    try:
        yield
    except MemoryError:
        raise AudioError(f"{describe(source)}: out of memory reading this audio") from None


class ClapBackend:
    role = "clap"

    def __init__(self, model, processor, description: str, seed: int = 0):
        self.model = model.eval()
        self.processor = processor
        self.description = description
        self.seed = seed
        self.text_cache = TextCache()
        self.audio_cache = TextCache()
        self.whole_cache: dict[tuple, np.ndarray] = {}

    @classmethod
    def load(cls, path: str, description: str) -> "ClapBackend":
        from transformers import ClapModel, ClapProcessor

        return cls(ClapModel.from_pretrained(path), ClapProcessor.from_pretrained(path), description)

    @staticmethod
    def _pooled(output) -> torch.Tensor:
        return output.pooler_output if hasattr(output, "pooler_output") else output

    @torch.inference_mode()
    def _embed_texts(self, texts: list[str]) -> np.ndarray:
        batch = self.processor.tokenizer(texts, padding=True, truncation=True, max_length=77, return_tensors="pt")
        return _unit(self._pooled(self.model.get_text_features(**batch)))

    def clear_caches(self) -> None:
        self.text_cache.clear()
        self.audio_cache.clear()
        self.whole_cache.clear()

    @property
    def fused(self) -> bool:
        return bool(getattr(self.model.config.audio_config, "enable_fusion", False))

    @property
    def window(self) -> int:
        """Samples the audio tower reads at once (``max_length_s`` at 48 kHz)."""
        return int(self.processor.feature_extractor.nb_max_samples)

    def _features(self, clip: np.ndarray, truncation: str, seed: int) -> dict[str, torch.Tensor]:
        """The feature extractor's input for one clip; its random draws (crops) follow ``seed``."""
        with numpy_seed(seed):
            return dict(
                self.processor.feature_extractor(
                    [clip], sampling_rate=CLAP_RATE, truncation=truncation, padding="repeatpad", return_tensors="pt"
                )
            )

    @torch.inference_mode()
    def _run(self, features: Sequence[dict[str, torch.Tensor]]) -> np.ndarray:
        """Unit embeddings of a batch of extracted features, in one model call."""
        dtype = next(self.model.parameters()).dtype
        batch = {k: torch.cat([f[k] for f in features]) for k in features[0].keys()}
        batch = {k: v.to(dtype) if v.is_floating_point() else v for k, v in batch.items()}
        return _unit(self._pooled(self.model.get_audio_features(**batch)))

    def _embed_audio(
        self,
        clips: list[np.ndarray],
        batch_size: int = 16,
        truncation: str = "rand_trunc",
        seed: Union[int, None] = None,
    ) -> np.ndarray:
        """Unit embeddings of 48 kHz clips, ``batch_size`` at a time (features one clip at a time, each
        with numpy seeded: the crops are drawn from numpy's global generator)."""
        seed = self.seed if seed is None else seed
        return np.concatenate(
            [
                self._run([self._features(c, truncation, seed) for c in clips[i : i + batch_size]])
                for i in range(0, len(clips), batch_size)
            ]
        )

    def embed_texts(self, texts: Sequence[str], batch_size: int = 64, use_cache: bool = True) -> np.ndarray:
        def compute(todo: list[str]) -> np.ndarray:
            return np.concatenate(
                [self._embed_texts(todo[i : i + batch_size]) for i in range(0, len(todo), batch_size)]
            )

        if not use_cache:
            return compute(list(texts))
        return self.text_cache.lookup(list(texts), compute)

    def embed_audio(self, clips: Sequence[np.ndarray], use_cache: bool = True) -> np.ndarray:
        """Unit embeddings of mono 48 kHz clips, each cropped to one window at a seeded random offset
        (``rand_trunc``); identical clips are embedded once."""
        if not use_cache:
            return self._embed_audio(list(clips))
        return self.audio_cache.lookup([audio_key(c) for c in clips], self._embed_audio, inputs=list(clips))

    # ------------------------------------------------------------------ sources (M1)
    def _embed_whole(self, sources: Sequence[Any], batch_size: int) -> list[Union[np.ndarray, AudioError]]:
        """Whole-clip unit embedding of each unfused source (see the module docstring), or its AudioError.
        Windows of consecutive sources share batches; at most ``batch_size`` windows are held."""
        sums: list[Any] = [0.0] * len(sources)
        weights = [0.0] * len(sources)
        failed: dict[int, AudioError] = {}
        pending: list[tuple[int, np.ndarray, float]] = []

        def flush() -> None:
            vecs = self._embed_audio([w for _, w, _ in pending], batch_size=batch_size)
            for (i, _, weight), vec in zip(pending, vecs):
                sums[i] = sums[i] + weight * vec
                weights[i] += weight
            pending.clear()

        def source_windows(source: Any) -> Iterator[tuple[np.ndarray, float]]:
            with _reading(source):
                yield from windows(open_signal(source).blocks(), self.window)

        for i, source in enumerate(sources):
            try:
                for window, weight in source_windows(source):
                    pending.append((i, window, weight))
                    if len(pending) == batch_size:
                        flush()
            except AudioError as err:
                failed[i] = err
                pending[:] = [p for p in pending if p[0] != i]
        if pending:
            flush()
        return [failed[i] if i in failed else _unit_np(sums[i] / weights[i]) for i in range(len(sources))]

    def _embed_each(
        self, sources: Sequence[Any], batch_size: int, features: Callable[[Any], dict[str, torch.Tensor]]
    ) -> list[Union[np.ndarray, AudioError]]:
        """One model input per source (``features``: a crop's or a fused clip's), run ``batch_size`` at a
        time; a source whose reading fails gets its AudioError."""
        results: list[Union[np.ndarray, AudioError, None]] = [None] * len(sources)
        pending: list[tuple[int, dict[str, torch.Tensor]]] = []

        def flush() -> None:
            for (i, _), vec in zip(pending, self._run([f for _, f in pending])):
                results[i] = vec
            pending.clear()

        for i, source in enumerate(sources):
            try:
                with _reading(source):
                    pending.append((i, features(source)))
            except AudioError as err:
                results[i] = err
            if len(pending) == batch_size:
                flush()
        if pending:
            flush()
        return results

    def _crop_features(self, source: Any, seed: int) -> dict[str, torch.Tensor]:
        clip = crop(open_signal(source), self.window, seed)
        if not len(clip):
            raise AudioError("audio has no samples")
        return self._features(clip, "rand_trunc", seed)

    def _fused_features(self, source: Any, seed: int) -> dict[str, torch.Tensor]:
        signal = open_signal(source)
        stacked = fusion_input(signal, self.processor.feature_extractor, seed)
        if stacked is not None:
            return {"input_features": torch.from_numpy(stacked[None]), "is_longer": torch.tensor([[True]])}
        clip = joined(signal.blocks())  # at most one window and one hop: CLAP's features of the clip itself
        if not len(clip):
            raise AudioError("audio has no samples")
        return self._features(clip, "fusion", seed)

    def embed_sources(
        self,
        sources: Sequence[Any],
        mode: str = "whole",
        batch_size: int = 16,
        use_cache: bool = True,
        seed: Union[int, None] = None,
    ) -> list[Union[np.ndarray, AudioError]]:
        """Unit audio embedding of each source (a path, a file's bytes, ``{"path", "bytes"}``, a dataset's
        audio value, ``(array, rate)`` or ``{"array", "sampling_rate"}``; any rate, averaged to mono and
        resampled to 48 kHz), or the AudioError that reading it raised.

        ``mode="whole"`` (ARIA's "whole audio input", default) or ``"random_crop"`` (one 10-s crop);
        ``seed`` (default: the backend's) seeds the crop and a fused CLAP's crops. Identical sources (same
        file and modification time, same bytes or samples) are embedded once per process with
        ``use_cache``; failures are not cached."""
        if mode not in AUDIO_MODES:
            raise ValueError(f"mode must be one of {AUDIO_MODES}, got {mode!r}")
        seed = self.seed if seed is None else seed
        keys = [(mode, seed, source_key(src)) if use_cache else None for src in sources]
        # A source with nothing stable to hash (keyed by its id, which Python reuses once it is freed) is
        # never cached nor shared: another clip could later get its embedding.
        keys = [None if k is not None and k[2][0] == "unhashable" else k for k in keys]
        results: dict[int, Union[np.ndarray, AudioError]] = {
            i: self.whole_cache[k] for i, k in enumerate(keys) if k is not None and k in self.whole_cache
        }
        todo = [i for i in range(len(sources)) if i not in results]
        first = {}  # repeated sources inside this call: computed once
        for i in todo:
            first.setdefault(keys[i] if keys[i] is not None else i, i)
        distinct = sorted(set(first.values()))
        chosen = [sources[i] for i in distinct]
        if mode == "random_crop":
            computed = self._embed_each(chosen, batch_size, lambda src: self._crop_features(src, seed))
        elif self.fused:
            computed = self._embed_each(chosen, batch_size, lambda src: self._fused_features(src, seed))
        else:
            computed = self._embed_whole(chosen, batch_size)
        by_first = dict(zip(distinct, computed))
        for i in todo:
            results[i] = by_first[first[keys[i] if keys[i] is not None else i]]
            if keys[i] is not None and not isinstance(results[i], AudioError):
                self.whole_cache[keys[i]] = results[i]
        return [results[i] for i in range(len(sources))]
