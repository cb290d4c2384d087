"""The run side of the protocol fingerprint (``audioreason.base.protocol``), written into run.json by the
runner and by `audioreason import`: what made the outputs, the model under test aside.

    {"benchmark": {"name", "config", "metadata": {file: sha256} | null, "metadata_unavailable": why | null},
     "items": {"n", "sha256"}, "templates": [{"name", "hash"}], "conditions": [...], "decoding": {...} | null,
     "text_backbone": name | null, "source": "audioreason run" | "import (FORMAT)", "audioreason": version}

``benchmark.metadata``: the sha256 of each metadata file the benchmark was read from, by its name inside the
data folder (a raw folder: MMAR-meta.json, mmau-test-mini.json, AudioSpan's metadata/*.jsonl; a Hub-ready
folder: its README.md and the test split's data files); a Hub id has no local file (null, and
``metadata_unavailable`` says so). The folder's own path is not part of it: the same files elsewhere are the
same protocol.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from audioreason.base.checksums import file_sha256
from audioreason.base.protocol import ids_digest, protocol_hash

RUN_SOURCE = "audioreason run"


def benchmark_metadata(benchmark: str, data: str, config: Optional[str] = None) -> tuple[Optional[dict], Optional[str]]:
    """({file name inside ``data``: sha256}, None), or (None, why no file could be hashed)."""
    from audioreason.data import benchmark_spec, is_raw_folder

    folder = Path(data).expanduser()
    if not folder.is_dir():
        return None, f"{data} is not a local folder (a Hub id): no metadata file to hash"
    if is_raw_folder(benchmark, folder):
        names = [m for m in benchmark_spec(benchmark).raw_markers if (folder / m).is_file()]
        return {name: file_sha256(folder / name) for name in names}, None
    # A Hub-ready folder is read through datasets anyway; a raw one (above) never imports it (text commands).
    from audioreason.data.features import TEST_SPLIT
    from audioreason.data.hub_load import CARD_FILENAME, is_hub_folder, pick_config, read_card_yaml, split_patterns

    if is_hub_folder(folder):
        try:
            entry = pick_config(read_card_yaml(folder), config, folder)
        except ValueError as err:
            return None, str(err)
        found = [
            Path(p)
            for pattern in split_patterns(entry, TEST_SPLIT)
            for p in sorted(glob.glob(str(folder / pattern), recursive=True))
            if Path(p).is_file()
        ]
        names = [CARD_FILENAME, *dict.fromkeys(str(p.relative_to(folder)) for p in found)]
    else:
        return None, f"{data} is neither a raw {benchmark} folder nor a Hub-ready folder"
    return {name: file_sha256(folder / name) for name in names}, None


def run_protocol(
    *,
    benchmark: str,
    data: str,
    benchmark_config: Optional[str],
    item_ids: Iterable[Any],
    templates: Sequence[Mapping[str, Any]],
    conditions: Sequence[str],
    decoding: Optional[Mapping[str, Any]],
    text_backbone: Optional[str] = None,
    source: str = RUN_SOURCE,
) -> dict[str, Any]:
    """The run side's block (the module docstring)."""
    from audioreason.version import __version__

    metadata, why = benchmark_metadata(benchmark, data, benchmark_config)
    return {
        "benchmark": {"name": benchmark, "config": benchmark_config, "metadata": metadata, "metadata_unavailable": why},
        "items": ids_digest(list(item_ids)),
        "templates": [{"name": t["name"], "hash": t["hash"]} for t in templates],
        "conditions": list(conditions),
        "decoding": None if decoding is None else dict(decoding),
        "text_backbone": text_backbone,
        "source": source,
        "audioreason": __version__,
    }


def with_protocol(summary: dict[str, Any], block: Mapping[str, Any]) -> dict[str, Any]:
    """run.json's content with its ``protocol`` block and ``protocol_hash``."""
    return {**summary, "protocol": dict(block), "protocol_hash": protocol_hash(block)}


__all__ = ["RUN_SOURCE", "benchmark_metadata", "run_protocol", "with_protocol"]
