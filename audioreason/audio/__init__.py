"""Audio input: the one decoder (torchcodec with a soundfile fallback, held to what each file's header
promises), resampling, long-file streaming, fragments, and synthesized test signals.
Layer 2 (ARCHITECTURE.md): it may import only ``audioreason.base`` and ``audioreason.text``."""
from .errors import AudioError
from .fragments import FragmentResult, fragment_audio, fragment_bounds, split_samples
from .io import (AUDIO_BACKENDS, in_memory_audio, load_audio, resolve_audio_backend, torchcodec_status,
                 write_audio)
from .stream import AudioInfo, audio_info, iter_blocks, read_prefix, resample_blocks  # long files, streamed
from .synth import synthesize_clip

__all__ = ["AUDIO_BACKENDS", "AudioError", "AudioInfo", "FragmentResult", "audio_info", "fragment_audio",
           "fragment_bounds", "in_memory_audio", "iter_blocks", "load_audio", "read_prefix", "resample_blocks",
           "resolve_audio_backend", "split_samples", "synthesize_clip", "torchcodec_status", "write_audio"]
