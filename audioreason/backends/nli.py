"""Natural-language inference (ARIA M5): probability that a premise entails a hypothesis.

Each side is cut to its first ``max_tokens`` tokens before the pair is built: the tokenizer's own pair
truncation ("longest_first") works on the whole pair, in memory that grows with the square of its length
(a 30 KB slot: 250 MB; 1 MB: past 6 GB). The cut keeps every token the pair truncation would keep, so the
probabilities are those of tokenizing the whole pair (see ``_head``).
"""

from __future__ import annotations

import re
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

    def _head(self, text: str, keep: int) -> tuple[str, bool]:
        """(the start of ``text`` that tokenizes to its first ``keep`` tokens, whether it was cut): prefixes of
        growing length are tokenized, so memory does not grow with the text. Only tokens that end before the
        prefix's last whitespace count (the cut word may tokenize differently alone); a prefix without
        whitespace drops its last 16 tokens instead. A text under 8 characters a token is kept whole."""
        size = 8 * keep
        while size < len(text):
            piece = text[:size]
            ends = [
                end
                for _, end in self.tokenizer(piece, add_special_tokens=False, return_offsets_mapping=True)[
                    "offset_mapping"
                ]
            ]
            space = re.search(r"\s\S*\Z", piece)
            safe = [e for e in ends if e <= space.start()] if space else ends[:-16]
            if len(safe) >= keep:
                return text[: safe[keep - 1]], True
            size *= 2
        return text, False

    def _cut(self, premise: str, hypothesis: str) -> tuple[str, str]:
        """Both sides cut to at most ``max_tokens`` tokens (more than the pair keeps of either). When both are
        cut, the longer text keeps one token more, so "longest_first" still gives an odd leftover position to
        the longer side (by characters here; exact for the default roberta-large-mnli, whose pair leaves an
        even number of positions)."""
        a, cut_a = self._head(premise, self.max_tokens)
        b, cut_b = self._head(hypothesis, self.max_tokens)
        if cut_a and cut_b and len(premise) != len(hypothesis):
            if len(premise) > len(hypothesis):
                a = self._head(premise, self.max_tokens + 1)[0]
            else:
                b = self._head(hypothesis, self.max_tokens + 1)[0]
        return a, b

    @classmethod
    def load(cls, path: str, description: str) -> "NLIModel":
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        return cls(
            AutoModelForSequenceClassification.from_pretrained(path), AutoTokenizer.from_pretrained(path), description
        )

    def clear_caches(self) -> None:
        self.cache.clear()

    @torch.inference_mode()
    def _probabilities(self, pairs: list[tuple[str, str]]) -> list[float]:
        pairs = [self._cut(p, h) for p, h in pairs]
        batch = self.tokenizer(
            [p for p, _ in pairs],
            [h for _, h in pairs],
            padding=True,
            truncation=True,
            max_length=self.max_tokens,
            return_tensors="pt",
        )
        probs = torch.softmax(self.model(**batch).logits.double(), dim=-1)[:, self.entailment_index]
        return probs.tolist()

    def entailment(self, pairs: Sequence[tuple[str, str]], batch_size: int = 16, use_cache: bool = True) -> np.ndarray:
        """P(entailment) for each (premise, hypothesis); repeated pairs are scored once."""
        pairs = [(str(p), str(h)) for p, h in pairs]
        todo = list(dict.fromkeys(p for p in pairs if p not in self.cache)) if use_cache else pairs
        results = []
        for i in range(0, len(todo), batch_size):
            results.extend(self._probabilities(todo[i : i + batch_size]))
        if not use_cache:
            return np.asarray(results, dtype=np.float64)
        self.cache.update(zip(todo, results))
        return np.asarray([self.cache[p] for p in pairs], dtype=np.float64)
