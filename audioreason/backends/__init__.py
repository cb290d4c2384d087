"""Pretrained-model roles (CLAP, sentence embedder, causal LM, NLI, word vectors), resolved to weights
by one registry and loaded once per process.
Layer 3 (ARCHITECTURE.md): it may import layers 0-2 (base, text, audio)."""

from .registry import (
    OFFLINE_BACKBONES,
    PAPER_BACKBONES,
    ROLES,
    BackendUnavailable,
    load_backend,
    locate,
    resolve_backbones,
)

__all__ = [
    "OFFLINE_BACKBONES",
    "PAPER_BACKBONES",
    "ROLES",
    "BackendUnavailable",
    "load_backend",
    "locate",
    "resolve_backbones",
]
