"""Natural-language inference (ARIA M5): probability that a premise entails a hypothesis."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch


class NLIModel:
    role = "nli"

    def __init__(self, model, tokenizer, description: str, max_tokens: int = 512):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.description = description
        self.max_tokens = max_tokens
        labels = {int(i): str(name).lower() for i, name in model.config.id2label.items()}
        found = [i for i, name in labels.items() if name.startswith("entail")]
        if len(found) != 1:
            raise ValueError(f"NLI model labels {labels} have no single 'entailment' label")
        self.entailment_index = found[0]
        self.cache: dict[tuple[str, str], float] = {}

    @classmethod
    def load(cls, path: str, description: str) -> "NLIModel":
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        return cls(AutoModelForSequenceClassification.from_pretrained(path), AutoTokenizer.from_pretrained(path),
                   description)

    def clear_caches(self) -> None:
        self.cache.clear()

    @torch.inference_mode()
    def _probabilities(self, pairs: list[tuple[str, str]]) -> list[float]:
        batch = self.tokenizer([p for p, _ in pairs], [h for _, h in pairs], padding=True, truncation=True,
                               max_length=self.max_tokens, return_tensors="pt")
        probs = torch.softmax(self.model(**batch).logits.double(), dim=-1)[:, self.entailment_index]
        return probs.tolist()

    def entailment(self, pairs: Sequence[tuple[str, str]], batch_size: int = 16, use_cache: bool = True) -> np.ndarray:
        """P(entailment) for each (premise, hypothesis); repeated pairs are scored once."""
        pairs = [(str(p), str(h)) for p, h in pairs]
        todo = list(dict.fromkeys(p for p in pairs if p not in self.cache)) if use_cache else pairs
        results = []
        for i in range(0, len(todo), batch_size):
            results.extend(self._probabilities(todo[i:i + batch_size]))
        if not use_cache:
            return np.asarray(results, dtype=np.float64)
        self.cache.update(zip(todo, results))
        return np.asarray([self.cache[p] for p in pairs], dtype=np.float64)
