"""Constrained decoding for the local judge: the verdict JSON as a regular expression, enforced token by
token with llguidance (https://github.com/guidance-ai/llguidance) inside transformers' ``generate``.

The criteria and their options are known before the judge is asked, so the reply is a small finite
language: for a criteria schema exactly

    [{"name": "<criterion 1 as written>", "score": <one of its options>, "justification": "<1..N chars>"}, ...]

with the names in the schema's order, one object per criterion, and for a one-score schema
``{"score": <option>, "justification": "..."}``. ``verdict_pattern`` writes that language as a regex;
llguidance compiles it against the tokenizer's vocabulary and, at each step, gives the bitmask of the tokens
that keep the reply inside it (a token that would leave it gets -inf). The justification is any JSON string
content without escapes or control characters, at most ``justification_chars`` characters, so the reply
always fits a token budget (``token_budget``) and ends with the end-of-sequence token once the closing
bracket is written. Every reply then parses and every score is one of its criterion's options;
``parse_verdict`` still checks it, as it checks any reply.

A ``JsonReplySchema`` with a ``pattern`` (rubric generation, ``rubric_pattern``; AudioSpan's rubric verdicts,
``audiospan_rubric``'s ``verdict_pattern``) is constrained the same way, one with a ``json_schema`` under
that schema; a schema with neither is generated unconstrained.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional, Sequence

from .verdicts import JUSTIFICATION_KEY, NAME_KEY, SCORE_KEY, ReplySchema, VerdictSchema, _format_number

CONSTRAINT_LIBRARY = "llguidance"
DEFAULT_JUSTIFICATION_CHARS = 160
# A grammar is its kind's prefix and its text (one string: the local judge groups and caches by it).
_GRAMMAR_KINDS = {"regex": "regex:", "json_schema": "json_schema:"}
_COMPACT_JSON = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
# JSON string content without escapes: no quote, no backslash, no control character.
_STRING_CHAR = r'[^"\\\x00-\x1f]'


def literal(text: str) -> str:
    """``text`` itself, as a regex."""
    return re.escape(text)


def json_string(max_chars: int, min_chars: int = 1) -> str:
    """A JSON string of ``min_chars`` to ``max_chars`` characters without escapes, as a regex."""
    return f'"{_STRING_CHAR}{{{min_chars},{max_chars}}}"'


def _options(allowed: Sequence[Any]) -> str:
    return "(" + "|".join(literal(_format_number(a)) for a in allowed) + ")"


def verdict_pattern(schema: VerdictSchema, justification_chars: int = DEFAULT_JUSTIFICATION_CHARS) -> str:
    """The exact reply ``schema`` accepts, as a regex (compact JSON, keys in the order name, score,
    justification; criterion names JSON-encoded as written)."""
    just = literal(f'"{JUSTIFICATION_KEY}": ') + json_string(justification_chars)
    if schema.kind == "score":
        return (
            literal(f'{{"{schema.score_field}": ')
            + _options(schema.allowed_scores)
            + literal(", ")
            + just
            + literal("}")
        )
    objects = [
        literal(f'{{"{NAME_KEY}": {json.dumps(c.name, ensure_ascii=False)}, "{SCORE_KEY}": ')
        + _options(c.allowed)
        + literal(", ")
        + just
        + literal("}")
        for c in schema.criteria
    ]
    return literal("[") + literal(", ").join(objects) + literal("]")


def rubric_pattern(k: int, name_chars: int = 80, point_chars: int = 300, note_chars: int = 200) -> str:
    """k rubric criteria ``{"name", "scoring_point", "note"}`` (MMAR's released rubric fields), as a regex.
    Distinct names are not expressible here; ``validate_rubric`` checks them afterwards."""
    one = (
        literal('{"name": ')
        + json_string(name_chars)
        + literal(', "scoring_point": ')
        + json_string(point_chars)
        + literal(', "note": ')
        + json_string(note_chars)
        + literal("}")
    )
    return literal("[") + literal(", ").join([one] * k) + literal("]")


def pattern_for(schema: Optional[ReplySchema], justification_chars: int = DEFAULT_JUSTIFICATION_CHARS) -> Optional[str]:
    """The regex a reply to ``schema`` is held to, or None (no schema, or a JSON schema without a pattern)."""
    if isinstance(schema, VerdictSchema):
        return verdict_pattern(schema, justification_chars)
    return getattr(schema, "pattern", None)


def grammar_for(schema: Optional[ReplySchema], justification_chars: int = DEFAULT_JUSTIFICATION_CHARS) -> Optional[str]:
    """The llguidance grammar a reply to ``schema`` is decoded under: its regex (``pattern_for``), else its JSON
    Schema (a ``JsonReplySchema`` with ``json_schema``: llguidance compiles the schema itself, with its
    ``maxLength`` and ``maxItems`` bounds), else None (free decoding)."""
    pattern = pattern_for(schema, justification_chars)
    if pattern is not None:
        return _GRAMMAR_KINDS["regex"] + pattern
    json_schema = getattr(schema, "json_schema", None)
    if json_schema is not None:
        # Keys in the schema's order: llguidance writes the reply's keys in that order. Compact separators and
        # no free whitespace: by default llguidance allows any amount between tokens, and a small model fills
        # its whole token budget with it.
        compact = {**json_schema, "x-guidance": _COMPACT_JSON}
        return _GRAMMAR_KINDS["json_schema"] + json.dumps(compact, separators=(",", ":"))
    return None


def token_budget(
    schema: Optional[ReplySchema], tokenizer: Any, justification_chars: int = DEFAULT_JUSTIFICATION_CHARS
) -> Optional[int]:
    """Enough new tokens for the longest reply the pattern allows (every free character one token, the
    fixed text as tokenized, plus the end token), so a constrained reply is never cut off."""
    if not isinstance(schema, VerdictSchema):
        return None
    filled = (
        VerdictSchema.from_criteria(
            [(c.name, (max(c.allowed, key=lambda a: len(_format_number(a))),)) for c in schema.criteria],
            match_names=False,
        )
        if schema.kind == "criteria"
        else schema
    )
    skeleton = verdict_pattern(filled, 1).replace(json_string(1), '""')
    fixed = len(tokenizer(re.sub(r"\\(.)", r"\1", skeleton), add_special_tokens=False).input_ids)
    return fixed + schema.k * justification_chars + 1


class GrammarCache:
    """llguidance's view of one tokenizer (built once: it walks the whole vocabulary) and compiled grammars."""

    def __init__(self, tokenizer: Any):
        try:
            import llguidance
            import llguidance.hf
        except ImportError as err:
            raise ValueError(f"constrained decoding needs llguidance (pip install llguidance==1.9.1): {err}") from None
        self._llg = llguidance
        self.tokenizer = llguidance.hf.from_tokenizer(tokenizer)
        self._grammars: dict[str, str] = {}

    def matcher(self, pattern: str) -> Any:
        """A fresh matcher of ``pattern``: a ``grammar_for`` string, or a bare regex."""
        grammar = self._grammars.get(pattern)
        if grammar is None:
            kind, text = "regex", pattern
            for name, prefix in _GRAMMAR_KINDS.items():
                if pattern.startswith(prefix):
                    kind, text = name, pattern[len(prefix) :]
                    break
            grammar = self._grammars[pattern] = self._llg.grammar_from(kind, text)
        matcher = self._llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        error = matcher.get_error()
        if error:
            raise ValueError(f"llguidance rejected the verdict grammar: {error}")
        return matcher


class GrammarLogitsProcessor:
    """A transformers logits processor holding one llguidance matcher per batch row (None: that row is
    unconstrained). Each step it feeds every row's last sampled token to its matcher and masks the
    scores with the matcher's allowed-token bitmask; a row whose grammar is complete may only end."""

    def __init__(self, matchers: Sequence[Optional[Any]], vocab_size: int, eos_ids: Sequence[int]):
        import llguidance.torch as llg_torch

        self._t = llg_torch
        self.matchers = list(matchers)
        self.vocab_size = vocab_size
        self.eos_ids = list(eos_ids)
        self.bitmask = llg_torch.allocate_token_bitmask(len(self.matchers), vocab_size)
        self._started = False
        self.violations = 0  # tokens a matcher refused (never expected: the mask allows only legal tokens)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if self._started:
            for row, matcher in enumerate(self.matchers):
                if matcher is not None and not matcher.is_stopped():
                    token = int(input_ids[row, -1])
                    if not matcher.consume_token(token):
                        self.violations += 1
        self._started = True
        constrained = [row for row, m in enumerate(self.matchers) if m is not None]
        if not constrained:
            return scores
        for row in constrained:
            matcher = self.matchers[row]
            if matcher.is_stopped():  # finished (or failed): only the end of sequence
                self.bitmask[row].zero_()
                for eos in self.eos_ids:
                    self.bitmask[row, eos // 32] |= torch.tensor(1 << (eos % 32), dtype=torch.int32)
            else:
                self._t.fill_next_token_bitmask(matcher, self.bitmask, row)
        rows = torch.tensor(constrained)
        # Unpack the 32-bit words into one allowed flag per token; the model's logits may be wider than the
        # tokenizer's vocabulary (padding rows): those are never allowed.
        bits = (self.bitmask[rows].unsqueeze(-1) >> torch.arange(32, dtype=torch.int32)) & 1
        allowed = bits.bool().flatten(1)[:, : self.vocab_size]
        width = min(scores.shape[-1], self.vocab_size)
        keep = torch.zeros((len(constrained), scores.shape[-1]), dtype=torch.bool, device=scores.device)
        keep[:, :width] = allowed[:, :width].to(scores.device)
        scores = scores.clone()
        scores[rows] = scores[rows].masked_fill(~keep, float("-inf"))
        return scores


__all__ = [
    "CONSTRAINT_LIBRARY",
    "DEFAULT_JUSTIFICATION_CHARS",
    "GrammarCache",
    "GrammarLogitsProcessor",
    "json_string",
    "literal",
    "pattern_for",
    "rubric_pattern",
    "token_budget",
    "verdict_pattern",
]
