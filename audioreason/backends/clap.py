"""CLAP audio and text embeddings (ARIA M1) through transformers' ClapModel.

Text is cut at 77 tokens and audio is read at 48 kHz mono (ARIA Table 11). The unfused checkpoint
needs ``truncation="rand_trunc"``: a clip longer than the model's window (10 s) is cropped at a
random offset, which we draw from a seeded generator so a score is reproducible.
"""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np
import torch

from .cache import TextCache

CLAP_RATE = 48000


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

    @torch.inference_mode()
    def _embed_audio(self, clips: list[np.ndarray], batch_size: int = 16) -> np.ndarray:
        features = []
        for clip in clips:  # features one clip at a time: rand_trunc draws its crop from numpy's global RNG
            state = np.random.get_state()
            np.random.seed(self.seed)
            try:
                features.append(self.processor.feature_extractor(
                    [clip], sampling_rate=CLAP_RATE, truncation="rand_trunc", padding="repeatpad",
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
        """Unit embeddings of mono 48 kHz clips; identical clips are embedded once."""
        if not use_cache:
            return self._embed_audio(list(clips))
        return self.audio_cache.lookup([audio_key(c) for c in clips], self._embed_audio, inputs=list(clips))
