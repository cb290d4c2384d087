"""Reading a Hub-ready folder (a README.md whose YAML ``configs:`` names the data files): with
``datasets.load_dataset`` when torchcodec is usable, else without it (parquet with
``Audio(decode=False)``; audiofolder layouts from their metadata parquet)."""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import datasets
from datasets import Audio, Features

from ..audio.io import resolve_audio_backend
from .audio_files import check_inside
from .features import TEST_SPLIT

CARD_FILENAME = "README.md"
AUDIOFOLDER_METADATA = "metadata.parquet"


def read_card_yaml(folder: Union[str, os.PathLike]) -> dict[str, Any]:
    """The YAML front matter of ``folder/README.md`` ({} when there is none)."""
    path = Path(folder) / CARD_FILENAME
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    import yaml

    end = text.find("\n---", 3)
    if end < 0:
        return {}
    data = yaml.safe_load(text[3:end]) or {}
    return data if isinstance(data, dict) else {}


def is_hub_folder(folder: Union[str, os.PathLike]) -> bool:
    """A folder whose README.md declares YAML ``configs:`` (what ``load_dataset(folder)`` reads)."""
    return bool(read_card_yaml(folder).get("configs"))


def pick_config(card: Mapping[str, Any], config: Optional[str], folder: Path) -> dict[str, Any]:
    """The card's ``configs`` entry named ``config``; without a name, the default one (or the only one)."""
    entries = card.get("configs") or []
    names = [e.get("config_name") for e in entries]
    if config is None:
        chosen = [e for e in entries if e.get("default")] or (entries if len(entries) == 1 else [])
        if not chosen:
            raise ValueError(f"{folder} has configs {names}; name one")
        return chosen[0]
    for entry in entries:
        if entry.get("config_name") == config:
            return entry
    raise ValueError(f"config {config!r} not in {folder} (configs: {names})")


def split_patterns(entry: Mapping[str, Any], split: str) -> list[str]:
    """The ``data_files`` patterns of ``split`` in a configs entry (a bare string or list means "train")."""
    data_files = entry.get("data_files")
    if isinstance(data_files, str):
        return [data_files] if split == "train" else []
    patterns: list[str] = []
    for item in data_files or []:
        if isinstance(item, str):
            if split == "train":
                patterns.append(item)
        elif item.get("split") == split:
            path = item.get("path")
            patterns.extend([path] if isinstance(path, str) else list(path))
    return patterns


def _resolve_patterns(folder: Path, patterns: Sequence[str]) -> list[Path]:
    """Files matching the card's data_files patterns, in pattern order (glob.glob: "x/**" matches files)."""
    found: list[Path] = []
    for pattern in patterns:
        for name in sorted(glob.glob(str(folder / pattern), recursive=True)):
            path = Path(name)
            if path.is_file() and path not in found:
                found.append(path)
    return found


def _load_audiofolder_without_torchcodec(folder: Path, entry: Mapping[str, Any], split: str) -> datasets.Dataset:
    """Read an audiofolder-layout config with no torchcodec at all.

    datasets' audiofolder builder encodes each row through Audio.encode_example, which imports
    torchcodec; here the metadata parquet is read directly and ``file_name`` becomes an
    ``Audio(decode=False)`` path, which decode_audio() reads with soundfile.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    patterns = split_patterns(entry, split)
    if not patterns:
        raise ValueError(f"config {entry.get('config_name')!r} has no split {split!r}")
    metadata_files = [p for p in _resolve_patterns(folder, patterns) if p.name == AUDIOFOLDER_METADATA]
    if not metadata_files:
        raise FileNotFoundError(f"no {AUDIOFOLDER_METADATA} under {folder} for patterns {patterns}")
    filters = entry.get("filters")
    expression = pq.filters_to_expression([tuple(f) for f in filters]) if filters else None
    parts = []
    for meta in metadata_files:
        table = pq.read_table(meta, filters=expression)
        features = Features.from_arrow_schema(pq.read_schema(meta))
        # Checked by load_hub_folder (check_inside) once the dataset exists, like every other layout.
        paths = [str(meta.parent / name) for name in table.column("file_name").to_pylist()]
        audio = pa.StructArray.from_arrays(
            [pa.array([None] * len(paths), pa.binary()), pa.array(paths, pa.string())], ["bytes", "path"]
        )
        position = table.column_names.index("file_name")
        table = table.remove_column(position).add_column(position, "audio", audio)
        out_features = Features(
            {
                ("audio" if k == "file_name" else k): (Audio(decode=False) if k == "file_name" else v)
                for k, v in features.items()
            }
        )
        parts.append(datasets.Dataset(table).cast(out_features))
    return datasets.concatenate_datasets(parts) if len(parts) > 1 else parts[0]


def load_hub_folder(
    folder: Union[str, os.PathLike],
    config: Optional[str] = None,
    split: str = TEST_SPLIT,
    *,
    audio_backend: str = "auto",
    cache_dir: Optional[str] = None,
) -> datasets.Dataset:
    """``load_dataset(folder, config, split=split)``, or its torchcodec-free equivalent.

    With torchcodec usable this is exactly what a user of the published dataset runs. Without it
    (or with audio_backend="soundfile"), parquet layouts still load through ``load_dataset`` and get
    ``Audio(decode=False)``; audiofolder layouts are read from their metadata parquet directly.

    Every audio value that is a file path (an audiofolder's files, a parquet row without embedded bytes)
    must resolve inside ``folder``, symlinks followed; otherwise ValueError names the items (nothing is
    decoded: only the Arrow column is read).
    """
    folder = Path(folder).expanduser().resolve()
    backend, _ = resolve_audio_backend(audio_backend)
    card = read_card_yaml(folder)
    entry = pick_config(card, config, folder)
    is_audiofolder = any(
        p.name == AUDIOFOLDER_METADATA for p in _resolve_patterns(folder, split_patterns(entry, split))
    )
    if backend == "soundfile" and is_audiofolder:
        dataset = _load_audiofolder_without_torchcodec(folder, entry, split)
    else:
        dataset = datasets.load_dataset(str(folder), entry["config_name"], split=split, cache_dir=cache_dir)
        if backend == "soundfile":
            dataset = dataset.cast_column("audio", Audio(decode=False))
    check_inside(dataset, folder, action="nothing was loaded")
    return dataset
