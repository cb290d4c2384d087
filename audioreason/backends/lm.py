"""A small causal LM for ARIA M3 (substantiveness scores) and M4 (answer perplexities).

Speed-ups, each with an exact slow path (``reuse_prefix=False``) used by the benchmark and tests:
  * M3's few-shot prefix is run once; its key/value cache is copied into every batch;
  * M3 prompts are generated in batches, left-padded between the cached prefix and the prompt;
  * M4's three contexts (P; P,A; P,A,R) share their prefix: one forward pass over the longest context
    and three copies of the answer, under a tree-shaped attention mask, instead of three passes.
An M3 prompt is tokenized as one string (``prompt_ids``): a BPE merges across the point where the prefix
ends ("\n\n" + "Step" is not "\n\nStep"), so the cached prefix is used only up to the last token that
every prompt of a batch really shares (the cache is cropped there) and the model sees exactly the whole
prompt's token ids. M4 contexts are tokenized piece by piece (one piece per slot line), on both paths.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Optional, Sequence

import torch
from transformers import StoppingCriteria


class _StopWhen(StoppingCriteria):
    """Per-row stop once the generated text (after ``start``) matches ``pattern``."""

    def __init__(self, pattern: re.Pattern, tokenizer, start: int):
        self.pattern, self.tokenizer, self.start = pattern, tokenizer, start

    def __call__(self, input_ids: torch.LongTensor, scores, **kwargs) -> torch.BoolTensor:
        texts = self.tokenizer.batch_decode(input_ids[:, self.start :], skip_special_tokens=True)
        return torch.tensor([bool(self.pattern.search(t)) for t in texts], dtype=torch.bool)


class CausalLM:
    role = "lm"

    def __init__(self, model, tokenizer, description: str, max_input_tokens: int = 1024):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.description = description
        self.max_input_tokens = max_input_tokens  # ARIA Table 11 (M3)
        probe_plain = tokenizer("a", add_special_tokens=False).input_ids
        probe_special = tokenizer("a").input_ids
        # Special tokens the tokenizer puts first (a BOS), if any; never an appended EOS.
        self.start_ids: list[int] = (
            probe_special[: len(probe_special) - len(probe_plain)]
            if probe_special[-len(probe_plain) :] == probe_plain
            else []
        )
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.pad_id = int(pad if pad is not None else 0)
        self._prefix_cache: dict[str, tuple[list[int], object]] = {}

    @classmethod
    def load(cls, path: str, description: str) -> "CausalLM":
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
        return cls(model, tokenizer, description)

    def _logits_at(self, rows: Sequence[Sequence[int]], **forward) -> list[torch.Tensor]:
        """Logits only at the given positions of each batch row: the body runs once, and the output
        head (vocabulary-sized, as costly as several layers) only where a score is read."""
        hidden = self.model.get_decoder()(**forward).last_hidden_state
        head = self.model.get_output_embeddings()
        return [head(hidden[b, list(positions)]) for b, positions in enumerate(rows)]

    def ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False).input_ids if text else []

    # ------------------------------------------------------------------ perplexity (M4)
    @staticmethod
    def _nll(logits: torch.Tensor, targets: list[int]) -> float:
        """Mean negative log-likelihood of ``targets`` predicted by the last len(targets) rows of logits."""
        return float(torch.nn.functional.cross_entropy(logits.float(), torch.tensor(targets)).item())

    def _pieces(
        self, segments: Sequence[str], cue: str, target: str, max_segment_tokens: int
    ) -> tuple[list[list[int]], list[int], list[int], bool]:
        target_ids, cue_ids = self.ids(target), self.ids(cue)
        if not target_ids:
            raise ValueError("the gold answer is empty: perplexity needs at least one token")
        if not cue_ids:
            raise ValueError("the cue before the gold answer must not be empty")
        pieces = [self.ids(seg) for seg in segments]
        truncated = any(len(p) > max_segment_tokens for p in pieces)
        return [p[:max_segment_tokens] for p in pieces], cue_ids, target_ids, truncated

    @staticmethod
    def _perplexity(rows: torch.Tensor, target_ids: list[int]) -> float:
        """exp(mean cross-entropy) of the target tokens, from the logit rows that predict them."""
        return math.exp(float(torch.nn.functional.cross_entropy(rows.double(), torch.tensor(target_ids))))

    @torch.inference_mode()
    def cumulative_perplexities(
        self,
        requests: Sequence[tuple[Sequence[str], str, str]],
        max_segment_tokens: int = 512,
        batch_size: int = 8,
        reuse_prefix: bool = True,
    ) -> list[tuple[list[float], bool]]:
        """For each (segments, cue, target): PPL(target | segments[:k], cue) for k = 1..len(segments),
        the perplexity over the target tokens only, and whether a segment was cut to
        ``max_segment_tokens`` tokens.

        With ``reuse_prefix`` one forward pass per item scores all k: the sequence is the full context
        followed by one copy of cue+target per k, and a tree-shaped attention mask (with matching
        position ids) lets copy k see only the first k segments. Items are batched, right-padded.
        Without it, each context is run separately (the straightforward loop).
        """
        prepared = [self._pieces(*req[:3], max_segment_tokens) for req in requests]
        if not reuse_prefix:
            results = []
            for pieces, cue_ids, target_ids, truncated in prepared:
                context, ppl = list(self.start_ids), []
                for piece in pieces:
                    context += piece
                    logits = self.model(torch.tensor([context + cue_ids + target_ids])).logits[0]
                    first = len(context) + len(cue_ids) - 1  # the row predicting the first target token
                    ppl.append(self._perplexity(logits[first : first + len(target_ids)], target_ids))
                results.append((ppl, truncated))
            return results
        dtype = next(self.model.parameters()).dtype
        order = sorted(range(len(prepared)), key=lambda j: sum(map(len, prepared[j][0])))  # less padding
        results: dict[int, tuple[list[float], bool]] = {}
        for i in range(0, len(order), batch_size):
            members = order[i : i + batch_size]
            chunk = [prepared[j] for j in members]
            layouts = [self._tree(*item[:3]) for item in chunk]
            width = max(len(ids) for ids, _, _, _ in layouts)
            ids = torch.full((len(chunk), width), self.pad_id, dtype=torch.long)
            positions = torch.zeros((len(chunk), width), dtype=torch.long)
            allowed = torch.eye(width, dtype=torch.bool).repeat(len(chunk), 1, 1)  # pads see themselves only
            for b, (seq, pos, allow, _) in enumerate(layouts):
                n = len(seq)
                ids[b, :n], positions[b, :n], allowed[b, :n, :n] = torch.tensor(seq), torch.tensor(pos), allow
            mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min)
            wanted = [
                [s + len(item[1]) - 1 + k for s in starts for k in range(len(item[2]))]
                for item, (_, _, _, starts) in zip(chunk, layouts)
            ]
            picked = self._logits_at(wanted, input_ids=ids, attention_mask=mask[:, None], position_ids=positions)
            for j, (_, cue_ids, target_ids, truncated), rows, (_, _, _, starts) in zip(members, chunk, picked, layouts):
                t = len(target_ids)  # rows hold, per copy, the t positions predicting the target
                ppl = [self._perplexity(rows[k * t : (k + 1) * t], target_ids) for k in range(len(starts))]
                results[j] = (ppl, truncated)
        return [results[j] for j in range(len(prepared))]

    def _tree(self, pieces: list[list[int]], cue_ids: list[int], target_ids: list[int]):
        """Token ids, position ids, attention pattern and copy starts for the shared-prefix layout."""
        context, ends = list(self.start_ids), []
        for piece in pieces:
            context += piece
            ends.append(len(context))
        tail = cue_ids + target_ids
        seq = context + tail * len(ends)
        n, t = len(seq), len(tail)
        allow = torch.tril(torch.ones(n, n, dtype=torch.bool))
        allow[len(context) :] = False
        positions, starts = list(range(len(context))), []
        for k, end in enumerate(ends):
            s = len(context) + k * t
            allow[s : s + t, :end] = True  # copy k sees the first k segments...
            allow[s : s + t, s : s + t] = torch.tril(torch.ones(t, t, dtype=torch.bool))  # ...and itself, causally
            positions += list(range(end, end + t))
            starts.append(s)
        return seq, positions, allow, starts

    # ------------------------------------------------------------------ prompts (M3)
    def prompt_ids(self, prefix: str, body: str, tail: str) -> list[int]:
        """Token ids of ``prefix + body + tail`` tokenized as one string, after the tokenizer's start
        tokens. A body too long for ``max_input_tokens`` is cut at a token boundary (its first tokens, as
        text) and the prompt tokenized again, whole; the prefix and tail are never cut."""
        ids = self.start_ids + self.ids(prefix + body + tail)
        body_ids, keep = self.ids(body), None
        while len(ids) > self.max_input_tokens and keep != 0:
            keep = max((len(body_ids) if keep is None else keep) - (len(ids) - self.max_input_tokens), 0)
            cut = self.tokenizer.decode(body_ids[:keep], clean_up_tokenization_spaces=False)
            ids = self.start_ids + self.ids(prefix + cut + tail)
        return ids

    def _prefix(self, prefix: str):
        if prefix not in self._prefix_cache:
            from transformers import DynamicCache

            ids = list(self.start_ids) + self.ids(prefix)
            cache = DynamicCache()
            with torch.inference_mode():
                self.model(torch.tensor([ids]), cache=cache, use_cache=True)
            self._prefix_cache[prefix] = (ids, cache)
        return self._prefix_cache[prefix]

    def _shared_prefix(self, prefix: str, prompts: Sequence[list[int]], min_new: int = 1):
        """(k, cache): the prefix's cached key/values for the first k token ids, k being the longest start
        that the cached prefix and every prompt share (leaving ``min_new`` ids of each to run), repeated
        for each prompt. Keys/values at a position depend only on the ids up to it, so cropping is exact."""
        prefix_ids, cache = self._prefix(prefix)
        k = len(prefix_ids)
        for p in prompts:
            k = min(k, len(p) - min_new)
            while k > 0 and p[:k] != prefix_ids[:k]:
                k -= 1
        batch_cache = copy.deepcopy(cache)
        if k < len(prefix_ids):
            batch_cache.crop(k - len(prefix_ids))  # this transformers crops by a negative count
        if len(prompts) > 1:
            batch_cache.batch_repeat_interleave(len(prompts))
        return max(k, 0), batch_cache

    @torch.inference_mode()
    def generate(
        self,
        prefix: str,
        bodies: Sequence[str],
        tail: str,
        max_new_tokens: int = 10,
        sample_seed: Optional[int] = None,
        batch_size: int = 8,
        reuse_prefix: bool = True,
        stop: Optional[re.Pattern] = None,
    ) -> list[str]:
        """Continuations of prefix + body + tail (tokenized whole by ``prompt_ids``).

        Greedy unless ``sample_seed`` is given (then sampled at temperature 1 from that seed). On the
        batched path a row stops early once its text matches ``stop`` (the caller guarantees that later
        tokens could not change what it reads from the reply); batches hold prompts of similar length.
        """
        sampling = (
            dict(do_sample=True, temperature=1.0, top_k=0, top_p=1.0)
            if sample_seed is not None
            else dict(do_sample=False)
        )
        prompts = [self.prompt_ids(prefix, b, tail) for b in bodies]
        outputs: dict[int, str] = {}
        step = batch_size if reuse_prefix else 1
        order = sorted(range(len(prompts)), key=lambda j: len(prompts[j])) if reuse_prefix else range(len(prompts))
        order = list(order)
        for i in range(0, len(order), step):
            members = order[i : i + step]
            chunk = [prompts[j] for j in members]
            if sample_seed is not None:
                torch.manual_seed(sample_seed + i)
            if reuse_prefix:
                k, cache = self._shared_prefix(prefix, chunk)
                width = max(len(p) - k for p in chunk)
                rows = [p[:k] + [self.pad_id] * (width - len(p) + k) + p[k:] for p in chunk]
                mask = [[1] * k + [0] * (width - len(p) + k) + [1] * (len(p) - k) for p in chunk]
                criteria = [_StopWhen(stop, self.tokenizer, len(rows[0]))] if stop is not None else None
                out = self.model.generate(
                    input_ids=torch.tensor(rows),
                    attention_mask=torch.tensor(mask),
                    cache=cache,
                    max_new_tokens=max_new_tokens,
                    pad_token_id=self.pad_id,
                    stopping_criteria=criteria,
                    **sampling,
                )
                new = out[:, len(rows[0]) :]
            else:
                full = chunk[0]
                out = self.model.generate(
                    input_ids=torch.tensor([full]),
                    attention_mask=torch.ones(1, len(full), dtype=torch.long),
                    max_new_tokens=max_new_tokens,
                    pad_token_id=self.pad_id,
                    **sampling,
                )
                new = out[:, len(full) :]
            outputs.update(zip(members, self.tokenizer.batch_decode(new, skip_special_tokens=True)))
        return [outputs[j] for j in range(len(prompts))]

    def _digit_ids(self) -> tuple[list[int], int]:
        digits = [self.ids(str(d)) for d in range(10)]
        dot = self.ids(".")
        if any(len(d) != 1 for d in digits) or len(dot) != 1:
            raise ValueError("logprob scoring needs a tokenizer with one token per digit and for '.'")
        return [d[0] for d in digits], dot[0]

    @torch.inference_mode()
    def digit_scores(
        self, prefix: str, bodies: Sequence[str], tail: str, batch_size: int = 8, reuse_prefix: bool = True
    ) -> list[float]:
        """Expected score in [0, 1] read from the next-token distribution, in one forward pass.

        The prompt is continued with " 0."; p0, p1 are the probabilities of "0" and "1" as the first
        digit, q_d those of each tenths digit after "0.":  score = (p1 + p0 * sum_d q_d d/10) / (p0 + p1).
        """
        digit_ids, dot_id = self._digit_ids()
        prompts = [self.prompt_ids(prefix, b, tail + " 0.") for b in bodies]
        for p in prompts:
            if p[-2:] != [digit_ids[0], dot_id]:
                raise ValueError(f"logprob scoring needs the prompt to end in the tokens '0' '.' (ends {p[-2:]})")
        scores: dict[int, float] = {}
        step = batch_size if reuse_prefix else 1
        order = (
            sorted(range(len(prompts)), key=lambda j: len(prompts[j])) if reuse_prefix else list(range(len(prompts)))
        )
        for i in range(0, len(order), step):
            members = order[i : i + step]
            chunk = [prompts[j] for j in members]
            if reuse_prefix:
                k, cache = self._shared_prefix(prefix, chunk, min_new=3)  # the rows read must be run
                rests = [p[k:] for p in chunk]
                width = max(len(r) for r in rests)
                rows = [r + [self.pad_id] * (width - len(r)) for r in rests]
                mask = [[1] * (k + len(r)) + [0] * (width - len(r)) for r in rests]
                picked = self._logits_at(
                    [[len(r) - 3, len(r) - 1] for r in rests],
                    input_ids=torch.tensor(rows),
                    attention_mask=torch.tensor(mask),
                    cache=cache,
                    use_cache=True,
                )
            else:
                full = chunk[0]
                logits = self.model(torch.tensor([full])).logits[0]
                picked = [logits[[len(full) - 3, len(full) - 1]]]
            for j, row in zip(members, picked):
                row = row.double()
                first = torch.softmax(row[0], dim=-1)  # predicts the digit before "."
                tenths = torch.softmax(row[1][digit_ids], dim=-1)  # the digit after "0."
                p0, p1 = float(first[digit_ids[0]]), float(first[digit_ids[1]])
                expected = float((tenths * torch.arange(10)).sum()) / 10
                scores[j] = (p1 + p0 * expected) / (p0 + p1) if p0 + p1 > 0 else float("nan")
        return [scores[j] for j in range(len(prompts))]
