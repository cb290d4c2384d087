"""The one error type of audio input."""


class AudioError(ValueError):
    """Audio that cannot be used: a missing file, undecodable or truncated data, no samples, NaN or Inf samples."""
