"""Audio input: the one decoder (torchcodec with a soundfile fallback, held to what each file's header
promises), resampling, long-file streaming, fragments, and synthesized test signals.
Layer 2 (ARCHITECTURE.md): it may import only ``audioreason.base`` and ``audioreason.text``."""

from audioreason.base.lazy import lazy_exports

# Each name's module (numpy, soundfile, torchcodec) is imported on first use: ``errors`` needs none of them.
_NAMES = {
    "AudioError": ".errors",
    "FragmentResult": ".fragments",
    "fragment_audio": ".fragments",
    "fragment_bounds": ".fragments",
    "split_samples": ".fragments",
    "AUDIO_BACKENDS": ".io",
    "in_memory_audio": ".io",
    "load_audio": ".io",
    "resolve_audio_backend": ".io",
    "torchcodec_status": ".io",
    "write_audio": ".io",
    "AudioInfo": ".stream",
    "audio_info": ".stream",
    "iter_blocks": ".stream",
    "read_prefix": ".stream",
    "resample_blocks": ".stream",
    "synthesize_clip": ".synth",
}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
__all__ = sorted(_NAMES)
