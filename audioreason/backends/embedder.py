"""Sentence embeddings (ARIA M2): sentence-transformers, L2-normalised, cached per text."""

from __future__ import annotations

import numpy as np

from .cache import TextCache


class SentenceEmbedder:
    role = "embedder"

    def __init__(self, model, description: str, max_tokens: int = 384):
        self.model = model
        self.description = description
        # all-mpnet-base-v2 reads 384 tokens (ARIA Table 11); a smaller model keeps its own, lower limit.
        self.model.max_seq_length = min(max_tokens, model.max_seq_length or max_tokens)
        self.cache = TextCache()

    @classmethod
    def load(cls, path: str, description: str) -> "SentenceEmbedder":
        from sentence_transformers import SentenceTransformer

        return cls(SentenceTransformer(path, device="cpu"), description)

    def clear_caches(self) -> None:
        self.cache.clear()

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        return self.model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        ).astype(np.float64)

    def encode(self, texts: list[str], batch_size: int = 32, use_cache: bool = True) -> np.ndarray:
        """(n, d) unit vectors; with ``use_cache`` each distinct text is embedded once per process."""
        if not use_cache:
            return self._encode(list(texts), batch_size)
        return self.cache.lookup(texts, lambda todo: self._encode(todo, batch_size))
