"""Running models over benchmarks: adapters behind one interface (``base``), prompts and conditions, and the
Accelerate runner that writes per-item outputs."""
from .base import AudioInput, DecodingParams, Generation, GenerationRequest, ModelAdapter

__all__ = ["AudioInput", "DecodingParams", "Generation", "GenerationRequest", "ModelAdapter"]
