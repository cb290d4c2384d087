"""Running models over benchmarks: adapters behind one interface (``base``), prompts and conditions, and the
Accelerate runner that writes per-item outputs.
Layer 8 (ARCHITECTURE.md): it may import layers 0-7 (the data builders, audio, backends, judges)."""

from .base import AudioInput, DecodingParams, Generation, GenerationRequest, ModelAdapter

__all__ = ["AudioInput", "DecodingParams", "Generation", "GenerationRequest", "ModelAdapter"]
