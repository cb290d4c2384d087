"""CLAP audio and text embeddings (ARIA M1) through transformers' ClapModel.

Text is cut at 77 tokens and audio is read at 48 kHz mono (ARIA Table 11). M1 compares each entity with
"the whole audio" (§3.3.1, Eq. 1), so by default (``embed_sources(mode="whole")``) a clip is embedded whole:
  * an unfused checkpoint (the paper's ``laion/clap-htsat-unfused``) reads one window of
    ``max_length_s`` (10 s): the clip is cut into consecutive windows, each embedded (the last, shorter
    one repeat-padded as CLAP pads a short clip), and the unit embeddings are averaged, weighted by each
    window's share of the duration, then normalised. A file is streamed block by block
    (``audio.iter_blocks``), so memory holds one batch of windows, whatever the clip's length;
  * a fused checkpoint (``enable_fusion``) uses CLAP's own long-audio fusion (``truncation="fusion"``:
    a global downsampled view plus crops, seeded) on the whole clip, which must then fit in memory.
``mode="random_crop"`` (option) is transformers' ``rand_trunc`` on the whole clip: a clip longer than the
window is cropped to 10 s at a random offset drawn from a generator seeded with ``seed``.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence, Union

import numpy as np
import torch

from ..audio import AudioError, iter_blocks, load_audio
from .cache import TextCache

CLAP_RATE = 48000
AUDIO_MODES = ("whole", "random_crop")


def _unit(x: torch.Tensor) -> np.ndarray:
    return torch.nn.functional.normalize(x.double(), dim=-1).numpy()


def audio_key(samples: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(samples, dtype=np.float32).tobytes()).hexdigest()


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

    @torch.inference_mode()
    def _embed_audio(self, clips: list[np.ndarray], batch_size: int = 16, truncation: str = "rand_trunc") -> np.ndarray:
        features = []
        for clip in clips:  # features one clip at a time: the crops are drawn from numpy's global RNG
            state = np.random.get_state()
            np.random.seed(self.seed)
            try:
                features.append(self.processor.feature_extractor(
                    [clip], sampling_rate=CLAP_RATE, truncation=truncation, padding="repeatpad",
                    return_tensors="pt"))
            finally:
                np.random.set_state(state)
        dtype = next(self.model.parameters()).dtype
        rows = []
        for i in range(0, len(features), batch_size):  # the model itself runs in batches
            chunk = features[i:i + batch_size]
            batch = {k: torch.cat([f[k] for f in chunk]) for k in chunk[0].keys()}
            batch = {k: v.to(dtype) if v.is_floating_point() else v for k, v in batch.items()}
            rows.append(_unit(self._pooled(self.model.get_audio_features(**batch))))
        return np.concatenate(rows)

    def embed_texts(self, texts: Sequence[str], batch_size: int = 64, use_cache: bool = True) -> np.ndarray:
        compute = lambda todo: np.concatenate(  # noqa: E731
            [self._embed_texts(todo[i:i + batch_size]) for i in range(0, len(todo), batch_size)])
        if not use_cache:
            return compute(list(texts))
        return self.text_cache.lookup(list(texts), compute)

    def embed_audio(self, clips: Sequence[np.ndarray], use_cache: bool = True) -> np.ndarray:
        """Unit embeddings of mono 48 kHz clips, each cropped to one window at a seeded random offset
        (``rand_trunc``); identical clips are embedded once."""
        if not use_cache:
            return self._embed_audio(list(clips))
        return self.audio_cache.lookup([audio_key(c) for c in clips], self._embed_audio, inputs=list(clips))

    # ------------------------------------------------------------------ whole audio (M1 default)
    def _windows(self, chunks: Iterable[np.ndarray]) -> Iterator[tuple[np.ndarray, float]]:
        """Consecutive windows of ``self.window`` samples (the last one shorter) with their duration share
        (samples / window); raises AudioError when there is no sample at all."""
        buffer, size, total = [], 0, 0
        for chunk in chunks:
            buffer.append(np.asarray(chunk, dtype=np.float32))
            size += len(chunk)
            while size >= self.window:
                joined = np.concatenate(buffer)
                yield joined[:self.window], 1.0
                buffer, size, total = [joined[self.window:]], size - self.window, total + self.window
        if size:
            yield np.concatenate(buffer), size / self.window
        elif total == 0:
            raise AudioError("audio has no samples")

    def _embed_whole(self, items: Sequence[Iterable[np.ndarray]], batch_size: int) -> list[Union[np.ndarray, AudioError]]:
        """Whole-clip unit embedding per item (see the module docstring), or the AudioError its audio
        raised. Windows of consecutive items share batches; at most ``batch_size`` windows are held."""
        if self.fused:  # CLAP's own fusion reads the whole clip at once
            results: list[Union[np.ndarray, AudioError]] = []
            for chunks in items:
                try:
                    clip = np.concatenate([np.asarray(c, dtype=np.float32) for c in chunks] or [np.zeros(0, np.float32)])
                    if not len(clip):
                        raise AudioError("audio has no samples")
                    results.append(self._embed_audio([clip], truncation="fusion")[0])
                except AudioError as err:
                    results.append(err)
            return results
        sums: list[Any] = [0.0] * len(items)
        weights = [0.0] * len(items)
        failed: dict[int, AudioError] = {}
        pending: list[tuple[int, np.ndarray, float]] = []

        def flush() -> None:
            vecs = self._embed_audio([w for _, w, _ in pending], batch_size=batch_size)
            for (i, _, weight), vec in zip(pending, vecs):
                sums[i] = sums[i] + weight * vec
                weights[i] += weight
            pending.clear()

        for i, chunks in enumerate(items):
            try:
                for window, weight in self._windows(chunks):
                    pending.append((i, window, weight))
                    if len(pending) == batch_size:
                        flush()
            except AudioError as err:
                failed[i] = err
                pending[:] = [p for p in pending if p[0] != i]
        if pending:
            flush()
        return [failed[i] if i in failed else _unit_np(sums[i] / weights[i]) for i in range(len(items))]

    def embed_sources(self, sources: Sequence[Any], mode: str = "whole", batch_size: int = 16,
                      use_cache: bool = True) -> list[Union[np.ndarray, AudioError]]:
        """Unit audio embedding of each source (a path, ``(array, rate)`` or ``{"array", "sampling_rate"}``,
        any rate, averaged to mono and resampled to 48 kHz), or the AudioError that reading it raised.

        ``mode="whole"`` (ARIA's "whole audio input", default) or ``"random_crop"`` (one seeded 10 s
        crop). Identical sources (same file and modification time, or same samples) are embedded once
        per process with ``use_cache``; failures are not cached."""
        if mode not in AUDIO_MODES:
            raise ValueError(f"mode must be one of {AUDIO_MODES}, got {mode!r}")
        keys = [(mode, _source_key(src)) if use_cache else None for src in sources]
        results: dict[int, Union[np.ndarray, AudioError]] = {
            i: self.whole_cache[k] for i, k in enumerate(keys) if k is not None and k in self.whole_cache}
        todo = [i for i in range(len(sources)) if i not in results]
        first = {}  # repeated sources inside this call: computed once
        for i in todo:
            first.setdefault(keys[i] if use_cache else i, i)
        distinct = sorted(set(first.values()))
        if mode == "whole":
            computed = self._embed_whole([_chunks(sources[i]) for i in distinct], batch_size)
        else:
            computed = []
            for i in distinct:
                try:
                    computed.append(load_audio(sources[i], CLAP_RATE)[0])
                except AudioError as err:
                    computed.append(err)
            clips = [c for c in computed if not isinstance(c, AudioError)]
            vecs = iter(self._embed_audio(clips, batch_size) if clips else [])
            computed = [c if isinstance(c, AudioError) else next(vecs) for c in computed]
        by_first = dict(zip(distinct, computed))
        for i in todo:
            results[i] = by_first[first[keys[i] if use_cache else i]]
            if use_cache and not isinstance(results[i], AudioError):
                self.whole_cache[keys[i]] = results[i]
        return [results[i] for i in range(len(sources))]


def _unit_np(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _source_path(source: Any) -> Union[str, None]:
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    if isinstance(source, dict) and source.get("array") is None and source.get("path"):
        return str(source["path"])
    return None


def _source_key(source: Any) -> tuple:
    """What identifies a source's audio: a file by path, size and modification time; samples by hash."""
    path = _source_path(source)
    if path is not None:
        try:
            st = Path(path).stat()
        except OSError:
            return ("missing", path)
        return ("file", str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    try:
        array, rate = (source["array"], source.get("sampling_rate")) if isinstance(source, dict) else source
        return ("array", audio_key(np.asarray(array, dtype=np.float32)), rate)
    except (TypeError, ValueError, KeyError):
        return ("unhashable", id(source))


def _chunks(source: Any) -> Iterator[np.ndarray]:
    """48 kHz mono blocks of a source: a file streamed in 10-s blocks, an array resampled at once."""
    path = _source_path(source)
    if path is not None:
        yield from iter_blocks(path, 10.0, CLAP_RATE)
    else:
        yield load_audio(source, CLAP_RATE)[0]
