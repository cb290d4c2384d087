"""Audio input: decoding with a soundfile fallback, resampling, long-file streaming, fragments, and
synthesized test signals."""
from .fragments import FragmentResult, fragment_audio, fragment_bounds, split_samples
from .io import AudioError, load_audio, write_audio
from .stream import AudioInfo, audio_info, iter_blocks, read_prefix  # long files: prefix and blocks
from .synth import synthesize_clip

__all__ = ["AudioError", "AudioInfo", "FragmentResult", "audio_info", "fragment_audio", "fragment_bounds",
           "iter_blocks", "load_audio", "read_prefix", "split_samples", "synthesize_clip", "write_audio"]
