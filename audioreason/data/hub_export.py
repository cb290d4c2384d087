"""Writing a Hub-ready folder: parquet shards with the audio embedded, or audio files plus a metadata
parquet (the audiofolder layout), and the dataset card whose YAML ``configs`` and ``dataset_info`` are
written from what was exported; ``push_folder`` publishes it."""

from __future__ import annotations

import hashlib
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

import datasets
from datasets import Audio, Features

from audioreason.base.hf_internals import info_yaml

from .features import TEST_SPLIT
from .hub_load import AUDIOFOLDER_METADATA, CARD_FILENAME

if TYPE_CHECKING:
    pass


@dataclass
class HubConfig:
    """One entry of the card's YAML ``configs:`` plus its ``dataset_info`` (features, split sizes)."""

    name: str
    data_files: list[dict[str, Any]]
    features: Features
    num_examples: dict[str, int]
    filters: Optional[list[list[Any]]] = None
    default: bool = False

    def yaml_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"config_name": self.name}
        if self.default:
            entry["default"] = True
        entry["data_files"] = self.data_files
        if self.filters:
            entry["filters"] = self.filters
        return entry


def _parse_size(size: Union[int, str]) -> int:
    if isinstance(size, int):
        return size
    text = size.strip().upper()
    for unit, factor in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3), ("B", 1)):
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


def _audio_bytes(dataset: datasets.Dataset) -> int:
    total = 0
    for value in dataset.cast_column("audio", Audio(decode=False))["audio"]:
        if value is None:
            continue
        if value.get("bytes") is not None:
            total += len(value["bytes"])
        elif value.get("path") and os.path.isfile(value["path"]):
            total += os.path.getsize(value["path"])
    return total


def _prepare_for_export(dataset: datasets.Dataset) -> datasets.Dataset:
    # Published features always say Audio() (decoding on), whatever backend built the dataset.
    return dataset.cast_column("audio", Audio())


def write_parquet_split(
    dataset: datasets.Dataset, out_dir: Path, data_dir: str, split: str, max_shard_size: Union[int, str] = "500MB"
) -> list[str]:
    """Write ``dataset`` as parquet shards with the audio bytes embedded (like push_to_hub does).

    Shards are ``<data_dir>/<split>-00000-of-0000N.parquet``; returns their paths relative to out_dir.
    """
    from datasets.table import embed_table_storage

    dataset = _prepare_for_export(dataset)
    max_bytes = _parse_size(max_shard_size)
    num_shards = max(1, math.ceil((_audio_bytes(dataset) + dataset.data.nbytes) / max_bytes))
    num_shards = min(num_shards, max(1, len(dataset)))
    target = out_dir / data_dir
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for index in range(num_shards):
        shard = dataset.shard(num_shards=num_shards, index=index, contiguous=True)
        # Embedding reads each file's bytes into the Arrow table: pure Arrow, no decoding.
        shard = (
            shard.with_format("arrow")
            .map(embed_table_storage, batched=True, keep_in_memory=True, desc=None)
            .with_format()
        )
        name = f"{split}-{index:05d}-of-{num_shards:05d}.parquet"
        shard.to_parquet(str(target / name))
        written.append(f"{data_dir}/{name}")
    return written


def write_parquet_config(
    out_dir: Path,
    config_name: str,
    splits: Mapping[str, datasets.Dataset],
    *,
    data_dir: Optional[str] = None,
    max_shard_size: Union[int, str] = "500MB",
    default: bool = False,
) -> HubConfig:
    """Parquet shards for every split of one config, and its card entry."""
    data_dir = data_dir or ("data" if config_name == "default" else f"data/{config_name}")
    data_files, features = [], None
    for split, dataset in splits.items():
        write_parquet_split(dataset, out_dir, data_dir, split, max_shard_size)
        data_files.append({"split": split, "path": f"{data_dir}/{split}-*"})
        features = _prepare_for_export(dataset).features
    return HubConfig(config_name, data_files, features, {s: len(d) for s, d in splits.items()}, default=default)


def _copy_file(source: Path, target: Path, link: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        return
    if link == "hardlink":
        try:
            os.link(source, target)
            return
        except OSError:
            pass  # other filesystem: copy instead
    shutil.copy2(source, target)


def write_audiofolder_group(out_dir: Path, group: str, dataset: datasets.Dataset, *, link: str = "copy") -> None:
    """``<group>/metadata.parquet`` plus ``<group>/audio/<file>``, each audio file stored once.

    The metadata has a ``file_name`` column where ``audio`` was (relative to ``<group>/``), which
    datasets' audiofolder turns back into an Audio column; its parquet schema carries the exact
    features, so nested fields round-trip. Used where many items share one long recording.
    """
    if link not in ("copy", "hardlink"):
        raise ValueError(f"link must be 'copy' or 'hardlink', got {link!r}")
    group_dir = out_dir / group
    raw_audio = dataset.cast_column("audio", Audio(decode=False))["audio"]
    names: dict[str, str] = {}  # source key -> file name in the group
    used: set[str] = set()
    file_names = []
    for value in raw_audio:
        if value is None:
            raise ValueError("an item has no audio; the audiofolder layout needs a file for every item")
        key = value["path"] if value.get("bytes") is None else hashlib.sha256(value["bytes"]).hexdigest()
        if key not in names:
            base = Path(value.get("path") or "audio.wav").name
            stem, suffix = os.path.splitext(base)
            name, n = base, 1
            while name in used:  # two different sources with one base name
                name, n = f"{stem}-{n}{suffix}", n + 1
            used.add(name)
            names[key] = name
            target = group_dir / "audio" / name
            if value.get("bytes") is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(value["bytes"])
            else:
                _copy_file(Path(value["path"]), target, link)
        file_names.append(f"audio/{names[key]}")
    columns = list(dataset.features)
    position = columns.index("audio")
    metadata = dataset.remove_columns("audio").add_column("file_name", file_names)
    order = [c if c != "audio" else "file_name" for c in columns]
    metadata = metadata.select_columns(order)
    assert metadata.column_names[position] == "file_name"
    metadata.to_parquet(str(group_dir / AUDIOFOLDER_METADATA))


def render_card(card_text: Optional[str], configs: Sequence[HubConfig]) -> str:
    """The card with its YAML ``configs`` and ``dataset_info`` written from what was exported.

    Every other YAML key (licence, language, pretty_name...) and the body are kept from
    ``card_text``.
    """
    import yaml
    from huggingface_hub import DatasetCard

    card = DatasetCard(card_text if card_text else "---\n{}\n---\n")
    data = card.data.to_dict()
    data["configs"] = [c.yaml_entry() for c in configs]
    infos = []
    for c in configs:
        info = datasets.DatasetInfo(features=c.features)
        info.splits = datasets.SplitDict()
        for split, n in c.num_examples.items():
            info.splits.add(datasets.SplitInfo(name=split, num_examples=n))
        entry = {"config_name": c.name, **info_yaml(info)}
        infos.append(entry)
    data["dataset_info"] = infos
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    return f"---\n{front}---\n{card.text}"


def write_card(out_dir: Path, card_text: Optional[str], configs: Sequence[HubConfig]) -> Path:
    path = Path(out_dir) / CARD_FILENAME
    path.write_text(render_card(card_text, configs), encoding="utf-8")
    return path


def check_out_dir(out_dir: Union[str, os.PathLike], overwrite: bool, how: str = "pass overwrite=True") -> Path:
    """The resolved output folder; FileExistsError when it holds anything and ``overwrite`` is off (``how``
    says how to allow it: the library's keyword, or the command line's flag)."""
    out = Path(out_dir).expanduser().resolve()
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out} is a file; give a folder")
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise FileExistsError(f"{out} is not empty; {how} to replace it")
    return out


def prepare_out_dir(out_dir: Union[str, os.PathLike], overwrite: bool) -> Path:
    out = check_out_dir(out_dir, overwrite)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def export_parquet_folder(
    dataset: Union[datasets.Dataset, Mapping[str, datasets.Dataset]],
    out_dir: Union[str, os.PathLike],
    *,
    card: Optional[str] = None,
    overwrite: bool = False,
    max_shard_size: Union[int, str] = "500MB",
) -> Path:
    """A Hub-ready folder with one config ("default"): parquet shards with embedded audio + README.md.

    ``dataset`` is the "test" split, or a mapping split -> Dataset. ``load_dataset(out_dir)`` reads it
    back; ``push_folder`` (or ``huggingface_hub.upload_folder``) publishes it as is.
    """
    splits = {TEST_SPLIT: dataset} if isinstance(dataset, datasets.Dataset) else dict(dataset)
    out = prepare_out_dir(out_dir, overwrite)
    config = write_parquet_config(out, "default", splits, max_shard_size=max_shard_size, default=True)
    write_card(out, card, [config])
    return out


def licence_notice(card_text: str) -> str:
    """What a dataset card says about its licence: the YAML ``license`` and the body's "Licence and
    attribution" section (printed before anything is published openly)."""
    from huggingface_hub import DatasetCard

    card = DatasetCard(card_text)
    licence = card.data.to_dict().get("license", "not stated in the card")
    lines, inside = [], False
    for line in card.text.splitlines():
        if line.startswith("## "):
            inside = line[3:].strip().lower().startswith("licen")
            continue
        if inside:
            lines.append(line)
    section = "\n".join(lines).strip() or "(the card has no licence section)"
    return f"licence: {licence}\n{section}"


def push_folder(
    folder: Union[str, os.PathLike], repo_id: str, *, private: bool = True, token: Optional[str] = None, api: Any = None
) -> str:
    """Publish a Hub-ready folder as the dataset repo ``repo_id`` (created if needed); returns its URL.

    Private by default: the benchmarks' licences (CC BY-NC, CC BY-NC-SA; AudioSpan's audio may not be
    redistributed) leave opening a copy to its owner, so ``private=False`` must be asked for. ``api``: an
    ``huggingface_hub.HfApi`` (default: one made with ``token``)."""
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    if private and not api.repo_info(repo_id, repo_type="dataset").private:
        # create_repo(exist_ok=True) leaves an existing repo as it is: never upload into an open one by default.
        raise PermissionError(
            f"the dataset repo {repo_id} already exists and is public: nothing was uploaded "
            "(make it private on the Hub, or publish openly on purpose: private=False; --public on the command "
            "line)"
        )
    api.upload_folder(
        repo_id=repo_id, folder_path=str(folder), repo_type="dataset", commit_message="Upload with audioreason.data"
    )
    return f"https://huggingface.co/datasets/{repo_id}"
