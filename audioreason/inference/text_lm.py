"""The text backbone ("TB" condition of "All That Glitters Is Not Audio", §2.1): a text-only causal LM answers
the question and choices with no audio.

The paper evaluates "the original text-only backbone of the LALM, prior to multimodal training" (e.g. the
Qwen LLM an audio model was built on); any causal LM checkpoint serves (``AutoModelForCausalLM``). The
messages go through the tokenizer's chat template with the generation prompt; a tokenizer without one
(a base LM) gets the messages' text joined by blank lines. Greedy by default, left padding with attention
masks, ``takes_audio = False``: a request that carries audio is answered with an error, never with the
audio silently dropped.
"""

from __future__ import annotations

import time
from typing import Optional, Sequence

from .base import DecodingParams, Generation, GenerationRequest
from .hf import eos_token_ids, generate_and_read, generate_in_batches, load_options


class TextLMAdapter:
    """A causal LM behind the ``ModelAdapter`` interface, for the text-backbone condition."""

    kind = "text_lm"
    takes_audio = False
    max_audio_s = None
    sampling_rate = 16000  # unused: no audio is taken

    def __init__(
        self,
        model: str,
        *,
        dtype: str = "auto",
        device: Optional[str] = None,
        device_map: Optional[str] = None,
        attn_implementation: Optional[str] = None,
        gguf_file: Optional[str] = None,
    ):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        options = load_options(dtype, device_map, attn_implementation)
        extra = {"gguf_file": gguf_file} if gguf_file else {}
        self.tokenizer = AutoTokenizer.from_pretrained(model, **extra)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:  # many causal LMs ship without one; padding is masked anyway
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(model, **options, **extra)
        if device is not None and not device_map:
            self.model.to(device)
        self.model.eval()
        self.eos_ids = eos_token_ids(self.tokenizer, self.model.generation_config)
        self.name = model if not gguf_file else f"{model}/{gguf_file}"
        template = "chat template" if self.tokenizer.chat_template else "no chat template: messages joined"
        self.description = f"{self.name} (text LM, {type(self.model).__name__}, dtype {self.model.dtype}, {template})"

    def prompt_text(self, request: GenerationRequest) -> str:
        messages = [{"role": m["role"], "content": str(m["content"])} for m in request.messages]
        if self.tokenizer.chat_template:
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "\n\n".join(m["content"] for m in messages) + "\n\n"

    def generate(self, requests: Sequence[GenerationRequest], decoding: DecodingParams) -> list[Generation]:
        return generate_in_batches(list(requests), lambda batch: self._batch(batch, decoding))

    def _batch(self, requests: Sequence[GenerationRequest], decoding: DecodingParams) -> list[Generation]:
        if any(r.audio is not None for r in requests):
            raise ValueError("a text LM takes no audio: send the text-backbone condition's requests without audio")
        start = time.perf_counter()
        texts = [self.prompt_text(r) for r in requests]
        # Chat templates write their own special tokens; a bare prompt gets the tokenizer's (e.g. BOS).
        inputs = self.tokenizer(
            texts, return_tensors="pt", padding=True, add_special_tokens=not self.tokenizer.chat_template
        ).to(self.model.device)
        return generate_and_read(self.model, self.tokenizer, inputs, decoding, self.eos_ids, start)


__all__ = ["TextLMAdapter"]
