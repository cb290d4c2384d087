"""Audio input: decoding with a soundfile fallback, resampling, and synthesized test signals."""
from .io import AudioError, load_audio, write_audio
from .synth import synthesize_clip

__all__ = ["AudioError", "load_audio", "write_audio", "synthesize_clip"]
