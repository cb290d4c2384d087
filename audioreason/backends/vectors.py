"""Word vectors (ARIA M6): each word's maximum cosine similarity to an audio vocabulary."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import numpy as np


class WordVectors:
    role = "vectors"

    def __init__(self, keyed_vectors, description: str):
        self.kv = keyed_vectors
        self.description = description
        self._vocab_key: Optional[tuple[str, ...]] = None
        self._vocab_matrix = np.zeros((0, 0), dtype=np.float32)
        self.vocabulary_missing: list[str] = []
        self._best: dict[str, Optional[float]] = {}

    @classmethod
    def load(cls, path: str, description: str) -> "WordVectors":
        from gensim.models import KeyedVectors

        p = Path(path)
        glove = p / "glove_6B_50d_emb.npy"
        if glove.exists():  # the packaged GloVe: a parquet word index and a numpy matrix
            import pyarrow.parquet as pq

            words = pq.read_table(p / "glove_6B_index.parquet").column("index").to_pylist()
            vectors = np.load(glove)
            kv = KeyedVectors(vectors.shape[1])
            kv.add_vectors([str(w) for w in words], vectors.astype(np.float32))
            return cls(kv, description)
        if p.is_dir():
            found = sorted(p.glob("*.model")) + sorted(p.glob("*.kv"))
            if not found:
                raise ValueError(f"no gensim .model/.kv file in {p}")
            p = found[0]
        if p.suffix in (".model", ".kv"):
            kv = KeyedVectors.load(str(p), mmap="r")
        else:  # word2vec format, binary (.bin) or text
            kv = KeyedVectors.load_word2vec_format(str(p), binary=p.suffix == ".bin")
        return cls(kv, description)

    def vector(self, word: str) -> Optional[np.ndarray]:
        for form in (word, word.lower()):
            if form in self.kv.key_to_index:
                return np.asarray(self.kv[form], dtype=np.float32)
        return None

    def set_vocabulary(self, vocabulary: Sequence[str]) -> None:
        key = tuple(vocabulary)
        if key == self._vocab_key:
            return
        rows, missing = [], []
        for word in vocabulary:
            v = self.vector(word)
            (rows.append(v) if v is not None else missing.append(word))
        if not rows:
            raise ValueError("no word of the audio vocabulary has a vector")
        matrix = np.stack(rows)
        self._vocab_matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        self.vocabulary_missing = missing
        self._vocab_key = key
        self._best = {}

    def clear_caches(self) -> None:
        """Forget the per-word maxima (the vocabulary matrix stays)."""
        self._best = {}

    def max_similarity(self, words: Sequence[str], use_cache: bool = True) -> list[Optional[float]]:
        """Max cosine to the vocabulary for each word; None for a word without a vector."""
        if self._vocab_key is None:
            raise ValueError("call set_vocabulary() first")
        todo = list(dict.fromkeys(w for w in words if w not in self._best)) if use_cache else list(words)
        found = [(w, self.vector(w)) for w in todo]
        have = [(w, v) for w, v in found if v is not None]
        results: dict[str, Optional[float]] = {w: None for w, v in found if v is None}
        if have:
            m = np.stack([v for _, v in have])
            m = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
            best = (m @ self._vocab_matrix.T).max(axis=1)
            results.update({w: float(b) for (w, _), b in zip(have, best)})
        if not use_cache:
            return [results[w] for w in words]
        self._best.update(results)
        return [self._best[w] for w in words]
