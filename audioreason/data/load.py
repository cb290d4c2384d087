"""Load a benchmark by short name from a raw folder, a Hub-ready folder, or a Hub id, in one line::

    from audioreason.data import load_benchmark
    ds = load_benchmark("mmar", "/data/MMAR")                     # raw: MMAR-meta.jsonl + audio/
    ds = load_benchmark("audiospan", "hub/audiospan", config="anchor")   # a Hub-ready folder
    ds = load_benchmark("mmau_test_mini", "org/mmau-test-mini", sampling_rate=16000)   # a Hub id

What the path is decides the route:
1. a folder holding the benchmark's raw metadata (MMAR-meta.jsonl, mmau-test-mini.json,
   metadata/native.jsonl or metadata/anchor.jsonl) -> the benchmark's builder (validated; a report
   with issues is raised as a UserWarning, or returned with ``return_report=True``);
2. a folder whose README.md declares YAML ``configs:`` -> ``load_dataset(folder)``;
3. anything else that is not a local path -> ``load_dataset(hub_id)``; without a Hub (offline,
   HF_HUB_OFFLINE=1) this raises BenchmarkNotFoundError saying so and what to pass instead.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, Union

import datasets
from datasets import Audio

from ..audio.io import resolve_audio_backend
from .audio_files import check_inside
from .audiospan import AudioSpanBuilder
from .audiospan import export_hub_folder as _export_audiospan
from .builder import BenchmarkBuilder
from .catalog import benchmark_spec, is_raw_folder
from .features import TEST_SPLIT
from .hub_export import check_out_dir, export_parquet_folder
from .hub_load import is_hub_folder, load_hub_folder, pick_config, read_card_yaml, split_patterns
from .mmar import MMARBuilder
from .mmau_test_mini import MMAUTestMiniBuilder
from .validation import ValidationReport


class BenchmarkNotFoundError(FileNotFoundError):
    """Neither a usable local folder nor a reachable Hub dataset."""


def _export_parquet(
    dataset: datasets.Dataset, out_dir: Any, *, card: Optional[str] = None, overwrite: bool = False, **options: Any
) -> Path:
    return export_parquet_folder(dataset, out_dir, card=card, overwrite=overwrite, **options)


BUILDERS: dict[str, type[BenchmarkBuilder]] = {
    "mmar": MMARBuilder,
    "mmau_test_mini": MMAUTestMiniBuilder,
    "audiospan": AudioSpanBuilder,
}
EXPORTS: dict[str, Callable[..., Path]] = {
    "mmar": _export_parquet,
    "mmau_test_mini": _export_parquet,
    "audiospan": _export_audiospan,
}


def build_benchmark(
    name: str,
    raw_dir: Union[str, os.PathLike],
    *,
    config: Optional[str] = None,
    split: str = TEST_SPLIT,
    cache_dir: Optional[str] = None,
    **options: Any,
) -> tuple[datasets.Dataset, ValidationReport]:
    """Build a benchmark from its raw folder: (the split as a Dataset, the validation report).

    ``options`` go to the builder (on_missing_audio, on_repeated_id, audio_backend, metadata_file,
    and for AudioSpan field_aliases).
    """
    spec = benchmark_spec(name)
    if split != TEST_SPLIT:
        raise ValueError(f"{spec.name} has one split, {TEST_SPLIT!r}; got {split!r}")
    builder = BUILDERS[spec.name](data_dir=str(raw_dir), config_name=config, cache_dir=cache_dir, **options)
    return builder.build(split), builder.report


def export_benchmark(
    name: str,
    dataset: datasets.Dataset,
    out_dir: Union[str, os.PathLike],
    *,
    card: Optional[str] = None,
    overwrite: bool = False,
    audio_root: Optional[Union[str, os.PathLike]] = None,
    **options: Any,
) -> Path:
    """Write a built benchmark as a Hub-ready folder (MMAR, MMAU: parquet shards with embedded audio;
    AudioSpan: audio files plus metadata). ``card`` is the dataset card text (its YAML ``configs`` and
    ``dataset_info`` are rewritten from what was written); default: the benchmark's shipped card
    (``audioreason.dataset_card_path(name)``).

    ``audio_root``: the raw folder the dataset was built from. Given, every audio file is resolved again
    (symlinks followed) and the export is refused, before anything is written, when one lies outside it
    (the build refused such paths; a file swapped for a symlink since then is caught here). The build
    scripts always pass it.
    """
    spec = benchmark_spec(name)
    if audio_root is not None:
        check_inside(dataset, audio_root, action="nothing was exported")
    if card is None:
        from audioreason.base.bundled import dataset_card_path

        card = Path(dataset_card_path(spec.name)).read_text(encoding="utf-8")
    return EXPORTS[spec.name](dataset, out_dir, card=card, overwrite=overwrite, **options)


def build_for_export(
    name: str,
    raw_dir: Union[str, os.PathLike],
    out_dir: Union[str, os.PathLike],
    *,
    overwrite: bool = False,
    how: str = "pass overwrite=True",
    cache_dir: Optional[str] = None,
    **options: Any,
) -> tuple[datasets.Dataset, ValidationReport]:
    """The whole benchmark (AudioSpan: every config) built from its raw folder for ``export_benchmark`` into
    ``out_dir``: (the split as a Dataset, the validation report), as ``build_benchmark`` gives them.

    A non-empty ``out_dir`` is refused (FileExistsError; ``how`` says how to allow it) before the build, not
    after it, unless ``overwrite``. ``options`` go to the builder. The first step of
    ``datasets_scripts/<name>/build.py``."""
    spec = benchmark_spec(name)
    check_out_dir(out_dir, overwrite, how=how)
    config = "all" if spec.name == "audiospan" else None
    return build_benchmark(spec.name, raw_dir, config=config, cache_dir=cache_dir, **options)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _looks_like_local_path(text: str) -> bool:
    """A Hub id is "name" or "org/name"; anything else (./x, /x, ~/x, a/b/c, a\\b) is a local path."""
    return text.startswith((".", "/", "~")) or "\\" in text or text.count("/") > 1


def _not_found(name: str, hub_id: str, err: BaseException) -> BenchmarkNotFoundError:
    spec = benchmark_spec(name)
    why = (
        "the Hugging Face Hub is disabled here (HF_HUB_OFFLINE=1)"
        if _offline()
        else "the Hugging Face Hub could not be reached or has no such dataset"
    )
    return BenchmarkNotFoundError(
        f"cannot load {spec.name!r} from {hub_id!r}: it is not a local folder, and {why}. Pass a raw "
        f"{spec.name} folder (with {' or '.join(spec.raw_markers)}), a Hub-ready folder (README.md with "
        f"YAML configs:), or a Hub id that can be reached. "
        f"[{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}]"
    )


def _load_hub_id(
    name: str, hub_id: str, config: Optional[str], split: str, backend: str, cache_dir: Optional[str]
) -> datasets.Dataset:
    try:
        if backend == "torchcodec":
            return datasets.load_dataset(hub_id, config, split=split, cache_dir=cache_dir)
        # Without torchcodec, fetch the card and the chosen config's files, then read them locally.
        from huggingface_hub import hf_hub_download, snapshot_download

        readme = Path(hf_hub_download(hub_id, "README.md", repo_type="dataset"))
        entry = pick_config(read_card_yaml(readme.parent), config, readme.parent)
        folder = snapshot_download(
            hub_id, repo_type="dataset", allow_patterns=["README.md", *split_patterns(entry, split)]
        )
        return load_hub_folder(folder, entry["config_name"], split, audio_backend="soundfile", cache_dir=cache_dir)
    except (ConnectionError, OSError) as err:
        if isinstance(err, BenchmarkNotFoundError):
            raise
        # datasets and huggingface_hub raise ConnectionError / OfflineModeIsEnabled (a ConnectionError),
        # DatasetNotFoundError (FileNotFoundError) or LocalEntryNotFoundError for an unreachable id.
        raise _not_found(name, hub_id, err) from err


def load_benchmark(
    name: str,
    path_or_hub_id: Union[str, os.PathLike],
    split: str = TEST_SPLIT,
    *,
    config: Optional[str] = None,
    sampling_rate: Optional[int] = None,
    audio_backend: str = "auto",
    source: str = "auto",
    cache_dir: Optional[str] = None,
    return_report: bool = False,
    **builder_options: Any,
):
    """Load benchmark ``name`` (mmar, mmau_test_mini, audiospan) from a raw folder, a Hub-ready
    folder or a Hub id, as a ``datasets.Dataset`` in the common schema.

    sampling_rate: decode the audio at this rate (torchcodec resamples; on the soundfile fallback
        the column is Audio(decode=False, sampling_rate=...) and ``decode_audio(value, rate)`` resamples).
    audio_backend: "auto" | "torchcodec" | "soundfile" (the torchcodec-free path, forced).
    source: "auto" (decide from the path), "raw", "folder" (Hub-ready) or "hub".
    config: AudioSpan's all / native_mcq / native_oeq / anchor (default all).
    return_report: also return the ValidationReport (None unless built from a raw folder).
    builder_options: on_missing_audio, on_repeated_id, metadata_file, field_aliases (raw folders only).
    """
    spec = benchmark_spec(name)
    if source not in ("auto", "raw", "folder", "hub"):
        raise ValueError(f"source must be auto, raw, folder or hub; got {source!r}")
    backend, _ = resolve_audio_backend(audio_backend)
    text = os.fspath(path_or_hub_id)
    path = Path(text).expanduser()
    report: Optional[ValidationReport] = None
    if source != "hub" and path.is_dir():
        raw = is_raw_folder(spec.name, path)
        if source == "raw" or (source == "auto" and raw):
            dataset, report = build_benchmark(
                spec.name,
                path,
                config=config,
                split=split,
                cache_dir=cache_dir,
                audio_backend=audio_backend,
                **builder_options,
            )
            if not report.ok and not return_report:
                warnings.warn(report.summary(), UserWarning, stacklevel=2)
        elif is_hub_folder(path):
            if builder_options:
                raise TypeError(f"options {sorted(builder_options)} apply to raw folders only")
            dataset = load_hub_folder(path, config, split, audio_backend=backend, cache_dir=cache_dir)
        else:
            raise BenchmarkNotFoundError(
                f"{path} is neither a raw {spec.name} folder (expected {' or '.join(spec.raw_markers)}) nor a "
                "Hub-ready folder (README.md with YAML configs:)"
            )
    elif source in ("raw", "folder") or (source == "auto" and _looks_like_local_path(text)):
        raise BenchmarkNotFoundError(f"{spec.name} folder not found: {path}")
    else:
        if builder_options:
            raise TypeError(f"options {sorted(builder_options)} apply to raw folders only")
        dataset = _load_hub_id(spec.name, text, config, split, backend, cache_dir)
    if backend == "soundfile":
        dataset = dataset.cast_column("audio", Audio(sampling_rate=sampling_rate, decode=False))
    elif sampling_rate:
        dataset = dataset.cast_column("audio", Audio(sampling_rate=sampling_rate))
    return (dataset, report) if return_report else dataset
