"""What the transformers-based adapters share: loading options, decoding settings as ``generate`` arguments,
reading generated tokens back (text, token counts, finish reason), and batches that fall back to one
request at a time so that one bad request cannot take a batch down."""

from __future__ import annotations

import time
from typing import Any, Callable, Optional, Sequence

from .base import DecodingParams, Generation, GenerationRequest

DTYPES = ("auto", "float32", "float16", "bfloat16")


def load_options(
    dtype: str = "auto", device_map: Optional[str] = None, attn_implementation: Optional[str] = None
) -> dict[str, Any]:
    """``from_pretrained`` keyword arguments for the adapters' options (unset ones are left out)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    options: dict[str, Any] = {"dtype": dtype}
    if device_map:
        options["device_map"] = device_map
    if attn_implementation:
        options["attn_implementation"] = attn_implementation
    return options


def eos_token_ids(tokenizer: Any, *generation_configs: Any) -> list[int]:
    """Every end-of-sequence id the model's generation configs name (a thinker's and its parent's), else the
    tokenizer's: generation stops on any of them."""
    ids: list[int] = []
    for config in generation_configs:
        value = getattr(config, "eos_token_id", None) if config is not None else None
        for token in [value] if isinstance(value, int) else list(value or []):
            if token not in ids:
                ids.append(int(token))
    if not ids and tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
    return ids


def generate_kwargs(decoding: DecodingParams, eos_ids: Sequence[int], pad_id: Optional[int]) -> dict[str, Any]:
    """Greedy unless ``temperature`` > 0; the ids are passed explicitly so that every batch stops and pads
    the same way whatever the checkpoint's generation config says."""
    kwargs: dict[str, Any] = {
        "max_new_tokens": decoding.max_new_tokens,
        "do_sample": not decoding.greedy,
        "eos_token_id": list(eos_ids),
        "pad_token_id": pad_id if pad_id is not None else (eos_ids[0] if eos_ids else None),
    }
    if decoding.greedy:
        # Checkpoints ship sampling defaults (temperature, top_p, top_k) in their generation config; unset
        # them so that greedy decoding is exactly greedy and transformers does not warn about them.
        kwargs.update(temperature=None, top_p=None, top_k=None)
    else:
        kwargs.update(temperature=float(decoding.temperature), top_p=float(decoding.top_p))
    return kwargs


def seed_sampling(decoding: DecodingParams) -> None:
    """Seed torch before a sampled batch (reproducible for the same batching; greedy needs no seed)."""
    if not decoding.greedy and decoding.seed is not None:
        import torch

        torch.manual_seed(int(decoding.seed))


def read_generations(
    tokenizer: Any, new_tokens: Any, prompt_tokens: Sequence[int], eos_ids: Sequence[int], seconds: float
) -> list[Generation]:
    """One Generation per row of generated ids (the prompt already removed): the text up to the first
    end-of-sequence token (special tokens skipped), completion tokens counting that token, and
    finish_reason "stop" (an end token was generated) or "length" (max_new_tokens reached)."""
    eos = set(int(t) for t in eos_ids)
    out = []
    rows = new_tokens.tolist()
    for row, n_prompt in zip(rows, prompt_tokens):
        stop = next((i for i, token in enumerate(row) if token in eos), None)
        used = row if stop is None else row[: stop + 1]
        text = tokenizer.decode(used, skip_special_tokens=True)
        out.append(
            Generation(
                text=text,
                prompt_tokens=int(n_prompt),
                completion_tokens=len(used),
                finish_reason="length" if stop is None else "stop",
                seconds=seconds / len(rows),
            )
        )
    return out


def generate_and_read(
    model: Any, tokenizer: Any, inputs: Any, decoding: DecodingParams, eos_ids: Sequence[int], start: float
) -> list[Generation]:
    """``model.generate`` on tokenized, left-padded ``inputs`` (on the model's device), read back per row;
    ``start`` (a perf_counter value) is when the batch's preparation began, so each request's seconds
    include the processor's share."""
    import torch

    prompt_tokens = inputs["attention_mask"].sum(dim=1).tolist()
    seed_sampling(decoding)
    with torch.inference_mode():
        output = model.generate(**inputs, **generate_kwargs(decoding, eos_ids, tokenizer.pad_token_id))
    new_tokens = output[:, inputs["input_ids"].shape[1] :]
    return read_generations(tokenizer, new_tokens, prompt_tokens, eos_ids, time.perf_counter() - start)


def describe_error(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:500]


def generate_in_batches(
    requests: Sequence[GenerationRequest], run_batch: Callable[[Sequence[GenerationRequest]], list[Generation]]
) -> list[Generation]:
    """``run_batch`` on all requests; when it raises, each request alone, so that an error stays with the
    request that caused it (a Generation with ``error`` set) and the others are still answered."""
    if not requests:
        return []
    start = time.perf_counter()
    try:
        return run_batch(requests)
    except Exception as err:  # noqa: BLE001 - any failure becomes a counted per-request error
        _release_memory()
        if len(requests) == 1:
            return [Generation(text=None, error=describe_error(err), seconds=time.perf_counter() - start)]
    return [generation for request in requests for generation in generate_in_batches([request], run_batch)]


def _release_memory() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def move_inputs(inputs: Any, model: Any) -> Any:
    """Processor outputs on the model's device, floating tensors in the model's dtype (audio features)."""
    return inputs.to(model.device, dtype=model.dtype) if hasattr(inputs, "to") else inputs


__all__ = [
    "DTYPES",
    "describe_error",
    "eos_token_ids",
    "generate_and_read",
    "generate_in_batches",
    "generate_kwargs",
    "load_options",
    "move_inputs",
    "read_generations",
    "seed_sampling",
]
