"""The base of the benchmark builders: a ``datasets.GeneratorBasedBuilder`` that reads a raw folder into
the common schema, validates it before building (``builder.report``), applies the missing-audio and
repeated-id policies (the reading and the policies are ``scan``'s, which needs no ``datasets``), and keys the
datasets cache on the raw files and on the code that shapes the items.

Every audio path is resolved inside the raw folder and its header read (``audio_files``): a path that
leads outside the folder is refused and never read. Items whose audio is missing, unreadable or outside the
folder are, by policy, an error that lists every one (default), skipped and reported, or kept with
``audio=None`` and reported.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

import datasets
from datasets import Audio, Features
from datasets.builder import Key

from ..audio.io import resolve_audio_backend
from .features import TEST_SPLIT, with_audio_storage
from .scan import SourceScan, apply_policies, check_policies, raise_on_policies

# The modules whose code shapes a built item (with each benchmark's own): a change to any rebuilds.
ITEM_CODE = tuple(
    str(Path(__file__).with_name(name))
    for name in ("builder.py", "features.py", "fields.py", "audio_files.py", "scan.py", "records.py", "review.py")
)


@dataclass
class BenchmarkConfig(datasets.BuilderConfig):
    """Options shared by the benchmark builders.

    on_missing_audio: what to do with an item whose audio is missing, unreadable (no reader opens its
        header) or outside the raw folder (refused, never read): "raise" (default: download_and_prepare
        fails listing every one), "skip" (build the rest; each skipped id is reported), "keep" (keep the
        item with audio=None, e.g. for text-only baselines; reported).
    on_repeated_id: "raise" (default), "keep" (all records kept, reported), "first" (the first
        record of each id kept, the others reported as skipped).
    audio_backend: "auto" (torchcodec if usable, else soundfile), "torchcodec", "soundfile".
    metadata_file: the metadata file name inside the raw folder (each builder has a default).
    source_fingerprint: set by the builder from the raw files, so a changed folder is rebuilt
        instead of read from a stale cache.
    """

    on_missing_audio: str = "raise"
    on_repeated_id: str = "raise"
    audio_backend: str = "auto"
    metadata_file: Optional[str] = None
    source_fingerprint: str = ""


def _code_hash(*modules: str) -> str:
    digest = hashlib.sha256()
    for module in modules:
        digest.update(Path(module).read_bytes())
    return digest.hexdigest()[:16]


def _fingerprint(scan: SourceScan, options: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(sorted((k, str(v)) for k, v in options.items())).encode())
    for path in scan.files:
        digest.update(str(path).encode())
        digest.update(path.read_bytes())
    for path in sorted(set(scan.audio_files)):
        try:
            stat = path.stat()
            digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}".encode())
        except OSError:
            digest.update(f"{path}|missing".encode())
    return digest.hexdigest()[:20]


class BenchmarkBuilder(datasets.GeneratorBasedBuilder):
    """Reads a benchmark's raw folder (metadata + audio) into the common schema.

    Usage (any subclass)::

        builder = MMARBuilder(data_dir="path/to/raw", cache_dir=..., on_missing_audio="skip")
        print(builder.report.summary())          # available right away: validation needs no build
        builder.download_and_prepare()
        dataset = builder.as_dataset(split="test")

    Subclasses set BENCHMARK, FEATURES, DEFAULT_METADATA_FILE and implement ``scan_source``.
    """

    BUILDER_CONFIG_CLASS = BenchmarkConfig
    VERSION = datasets.Version("1.0.0")
    BENCHMARK = ""
    FEATURES: Features
    DEFAULT_METADATA_FILE = ""
    DESCRIPTION = ""
    HOMEPAGE = ""
    LICENSE = ""
    CITATION = ""
    # Options read from the keyword arguments before the config exists (the scan needs them).
    SCAN_OPTIONS: tuple[str, ...] = ("metadata_file",)

    def __init__(self, *args: Any, data_dir: Optional[Union[str, os.PathLike]] = None, **kwargs: Any):
        if data_dir is None:
            raise ValueError(f"{type(self).__name__} needs data_dir=<the raw {self.BENCHMARK} folder>")
        root = Path(data_dir).expanduser().resolve()
        if not root.is_dir():
            raise FileNotFoundError(f"{self.BENCHMARK} raw folder not found: {root}")
        defaults = {f.name: f.default for f in fields(self.BUILDER_CONFIG_CLASS)}
        check_policies(*(kwargs.get(policy, defaults[policy]) for policy in ("on_missing_audio", "on_repeated_id")))
        backend, why = resolve_audio_backend(kwargs.get("audio_backend", defaults["audio_backend"]))
        kwargs["audio_backend"] = backend
        options = {name: kwargs.get(name, defaults.get(name)) for name in self.SCAN_OPTIONS}
        if options.get("metadata_file") is None:
            options["metadata_file"] = self.DEFAULT_METADATA_FILE
        scan = self.scan_source(root, options)
        scan.report.audio_backend, scan.report.audio_backend_reason = backend, why
        kwargs["source_fingerprint"] = _fingerprint(scan, options)
        # The cache is keyed on this code too, so a changed builder never serves a stale build.
        kwargs.setdefault("hash", self.code_hash())
        self.root = root
        self.report = scan.report
        self._scanned = scan.items
        super().__init__(*args, data_dir=str(root), **kwargs)
        self._items = apply_policies(
            self.select_items(self._scanned), self.report, self.config.on_missing_audio, self.config.on_repeated_id
        )
        self.report.built = len(self._items)

    @classmethod
    def code_hash(cls) -> str:
        """A hash of the code that shapes this benchmark's items (the datasets cache is keyed on it)."""
        return _code_hash(*ITEM_CODE, sys.modules[cls.__module__].__file__)

    # -- subclass hooks ------------------------------------------------------------------------
    def scan_source(self, root: Path, options: Mapping[str, Any]) -> SourceScan:
        """Read the raw folder into items and a validation report: each benchmark's builder defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define scan_source()")  # abstract hook

    def select_items(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The items of the chosen config (all of them unless a subclass has configs)."""
        return items

    # -- datasets hooks ------------------------------------------------------------------------
    def _info(self) -> datasets.DatasetInfo:
        features = self.FEATURES
        if self.config.audio_backend == "soundfile":
            features = with_audio_storage(features)
        return datasets.DatasetInfo(
            description=self.DESCRIPTION,
            features=features,
            homepage=self.HOMEPAGE,
            license=self.LICENSE,
            citation=self.CITATION,
        )

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        raise_on_policies(self.report, self.root, self.config.on_missing_audio, self.config.on_repeated_id)
        return [datasets.SplitGenerator(name=TEST_SPLIT, gen_kwargs={})]

    def _generate_examples(self) -> Iterable[tuple[Key, dict[str, Any]]]:
        expected = set(self.FEATURES)
        for index, item in enumerate(self._items):
            if set(item) != expected:  # a builder bug, never a data problem
                raise AssertionError(f"item fields {sorted(set(item) ^ expected)} differ from the schema")
            record = dict(item)
            if self.config.audio_backend == "soundfile" and record["audio"] is not None:
                record["audio"] = {"bytes": None, "path": record["audio"]}
            yield Key(0, index), record

    def as_dataset(self, split: Optional[str] = None, *args: Any, **kwargs: Any):
        dataset = super().as_dataset(split, *args, **kwargs)
        if self.config.audio_backend == "soundfile":
            dataset = dataset.cast_column("audio", Audio(decode=False))
        return dataset

    def build(self, split: str = TEST_SPLIT, **prepare_kwargs: Any) -> datasets.Dataset:
        """download_and_prepare() then as_dataset(split)."""
        self.download_and_prepare(**prepare_kwargs)
        return self.as_dataset(split=split)
