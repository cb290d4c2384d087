"""Shared core of the benchmark loaders: the common schema, validation reports, the builder base
class, audio decoding of dataset values, and export to / reading of Hub-ready folders.

One schema for every benchmark (``CORE_FEATURES``), extended per benchmark by its own fields:

    id, audio, audio_path, question, choices, answer, answer_index, <benchmark fields...>

``audio_path`` is the audio file's path relative to the raw folder, as the metadata gives it (kept
because MMAR's file names differ from its ids for 46 items). ``answer_index`` is the first index of
``choices`` whose text equals ``answer`` exactly, or -1 when there is none (an open-ended item, or an
answer not among the choices, which the report lists).

Validation never drops silently: every problem becomes an ``Issue`` in the builder's
``ValidationReport``; items whose audio is missing are, by policy, an error that lists every one
(default), skipped and reported, or kept with ``audio=None`` and reported.

Audio: torchcodec (FFmpeg) decodes when it can be imported and loads its libraries; otherwise
(``ImportError``/``RuntimeError``/``OSError``) the builders store the audio column as
``Audio(decode=False)`` (``{"path", "bytes"}``) and ``decode_audio`` reads it with soundfile. The
fallback can be forced with ``audio_backend="soundfile"``.
"""
from __future__ import annotations

import glob
import hashlib
import io
import json
import math
import os
import shutil
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

import datasets
from datasets import Audio, Features, List, Value
from datasets.builder import Key

from ..audio.io import AudioError

TEST_SPLIT = "test"

# ----------------------------------------------------------------------------------------------
# Schema
# ----------------------------------------------------------------------------------------------

CORE_FEATURES: dict[str, Any] = {
    "id": Value("string"),
    "audio": Audio(),
    "audio_path": Value("string"),
    "question": Value("string"),
    "choices": List(Value("string")),
    "answer": Value("string"),
    "answer_index": Value("int32"),
}

# The Arrow layout of an Audio column; used to build without torchcodec (see with_audio_storage).
AUDIO_STORAGE = {"bytes": Value("binary"), "path": Value("string")}


def benchmark_features(extra: Mapping[str, Any]) -> Features:
    """The common core followed by a benchmark's own fields, in that order."""
    clash = set(extra) & set(CORE_FEATURES)
    if clash:
        raise ValueError(f"benchmark fields {sorted(clash)} would shadow the common schema")
    return Features({**CORE_FEATURES, **extra})


def with_audio_storage(features: Features) -> Features:
    """The same features with each Audio column as its plain {bytes, path} struct.

    ``Audio.encode_example`` imports torchcodec's encoder even for ``decode=False``, so a machine
    without working torchcodec builds this struct and casts it to ``Audio(decode=False)`` afterwards
    (the cast is pure Arrow).
    """
    return Features({k: (dict(AUDIO_STORAGE) if isinstance(v, Audio) else v) for k, v in features.items()})



# ----------------------------------------------------------------------------------------------
# Validation report
# ----------------------------------------------------------------------------------------------

ISSUE_KINDS: dict[str, str] = {
    "missing_audio": "the audio file the metadata names does not exist",
    "unreadable_audio": "the audio file exists but no reader opens it (treated as missing by the policy)",
    "answer_not_in_choices": "the answer text equals no choice (kept, answer_index = -1)",
    "duplicate_choices": "the same choice text occurs more than once (kept as-is)",
    "list_typed_category": "category given as a list (stored as one string, elements joined by '|')",
    "repeated_id": "the id occurs on more than one record",
    "missing_field": "a required field is absent or empty",
    "invalid_value": "a field has a value outside its documented set or type (kept as given where possible)",
    "skipped": "the record is not in the dataset (by the on_missing_audio / on_repeated_id policy)",
    # AudioSpan
    "unmapped_field": "a released field name that neither the schema nor FIELD_ALIASES knows (not stored)",
    "alias_conflict": "both a field and one of its aliases are present (the canonical name wins)",
    "conflicting_value": "item and recording (or edit manifest) metadata disagree (the item wins)",
    "answer_given_as_letter": "the MCQ answer was an option letter, mapped to the option text",
    "inferred_value": "a field was absent and was derived (e.g. format from the presence of choices)",
    "incomplete_chain": "an anchor chain lacks exactly one question at each of positions 1, 2, 3",
    "incomplete_native_set": "a recording lacks exactly one P, U and R question in a native format",
    "unexpected_choice_count": "an AudioSpan MCQ without exactly four options",
    "missing_rubric": "an open-ended item without rubric criteria",
    "missing_edit_manifest": "an anchor item whose recording has no edit manifest",
}


@dataclass(frozen=True)
class Issue:
    kind: str
    item_id: str
    detail: str = ""


@dataclass
class ValidationReport:
    """Everything the builder found while reading a raw folder, with counts and ids per kind.

    ``rows`` is the number of records read, ``built`` the number of items in the built dataset (for
    AudioSpan: in the chosen config). Nothing is dropped without a ``skipped`` issue naming it.
    """

    benchmark: str
    source: str
    rows: int = 0
    built: int = 0
    audio_backend: str = ""
    audio_backend_reason: str = ""
    issues: list[Issue] = field(default_factory=list)

    def add(self, kind: str, item_id: str, detail: str = "") -> None:
        if kind not in ISSUE_KINDS:
            raise ValueError(f"unknown issue kind {kind!r}")
        self.issues.append(Issue(kind, str(item_id), detail))

    def counts(self) -> dict[str, int]:
        """Issues per kind, in ISSUE_KINDS order."""
        out: dict[str, int] = {}
        for kind in ISSUE_KINDS:
            n = sum(1 for i in self.issues if i.kind == kind)
            if n:
                out[kind] = n
        return out

    def ids(self, kind: str) -> list[str]:
        """Item ids with an issue of ``kind``, in the order found (an id may repeat)."""
        return [i.item_id for i in self.issues if i.kind == kind]

    def of_kind(self, kind: str) -> list[Issue]:
        return [i for i in self.issues if i.kind == kind]

    @property
    def ok(self) -> bool:
        return not self.issues

    def summary(self, max_ids: int = 8) -> str:
        """A few lines a person can read: totals, then one line per kind with the first ids."""
        lines = [f"{self.benchmark}: {self.rows} records read from {self.source}, {self.built} items built"
                 + (f" (audio: {self.audio_backend})" if self.audio_backend else "")]
        for kind, n in self.counts().items():
            ids = list(dict.fromkeys(self.ids(kind)))
            shown = ", ".join(ids[:max_ids]) + (f", ... (+{len(ids) - max_ids})" if len(ids) > max_ids else "")
            lines.append(f"  {kind}: {n} ({ISSUE_KINDS[kind]}): {shown}")
        if self.ok:
            lines.append("  no issues")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark, "source": self.source, "rows": self.rows, "built": self.built,
            "audio_backend": self.audio_backend, "audio_backend_reason": self.audio_backend_reason,
            "counts": self.counts(),
            "issues": [{"kind": i.kind, "id": i.item_id, "detail": i.detail} for i in self.issues],
        }

    def write_json(self, path: Union[str, os.PathLike]) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8")
        return path


class BenchmarkValidationError(ValueError):
    """A raw folder failed a policy (missing audio, repeated ids). ``.report`` has everything found."""

    def __init__(self, message: str, report: ValidationReport):
        super().__init__(message)
        self.report = report


# ----------------------------------------------------------------------------------------------
# Field checks shared by the builders
# ----------------------------------------------------------------------------------------------

def as_text(value: Any) -> Optional[str]:
    """None stays None; strings are kept as-is; numbers become their string form."""
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def check_choices(item_id: str, choices: Any, answer: Optional[str], report: ValidationReport,
                  *, require_answer_in_choices: bool = True) -> tuple[list[str], int]:
    """(choices as a list of strings, answer_index), reporting duplicates and a missing answer.

    Duplicate choices are kept (scorers compare choice text, so either copy is correct) and
    answer_index is then the FIRST matching index.
    """
    if choices is None:
        choices = []
    if not isinstance(choices, (list, tuple)):
        report.add("invalid_value", item_id, f"choices is a {type(choices).__name__}, not a list")
        choices = [choices]
    texts = []
    for c in choices:
        if not isinstance(c, str):
            report.add("invalid_value", item_id, f"choice {c!r} is not a string (stored as text)")
        texts.append(as_text(c) if c is not None else "")
    seen, dupes = set(), []
    for c in texts:
        if c in seen and c not in dupes:
            dupes.append(c)
        seen.add(c)
    if dupes:
        report.add("duplicate_choices", item_id, "; ".join(repr(d) for d in dupes))
    index = texts.index(answer) if answer is not None and answer in texts else -1
    if index < 0 and texts and require_answer_in_choices:
        report.add("answer_not_in_choices", item_id, f"answer {answer!r} not in {texts!r}")
    return texts, index


def category_text(item_id: str, value: Any, report: ValidationReport) -> Optional[str]:
    """A category as one string; a list is joined with "|" (MMAR's multi-value convention), reported."""
    if isinstance(value, list):
        texts = [as_text(v) for v in value if v is not None]
        report.add("list_typed_category", item_id, f"{value!r} stored as {'|'.join(texts)!r}")
        return "|".join(texts)
    return as_text(value)


def core_fields(raw: Any, row: int, root: Path, report: ValidationReport,
                audio_field: str) -> Optional[dict[str, Any]]:
    """The common-schema fields of one metadata record (id, audio, audio_path, question, choices, answer,
    answer_index; audio = the absolute path when the file exists, else None), with every problem
    reported. A record that is not an object is reported and skipped (None)."""
    if not isinstance(raw, Mapping):
        report.add("invalid_value", f"row-{row}", f"record is a {type(raw).__name__}, not an object (not built)")
        report.add("skipped", f"row-{row}", "not an object")
        return None
    item_id = record_id(raw, row, report)
    question = required_text(raw, "question", item_id, report)
    answer = required_text(raw, "answer", item_id, report)
    choices, answer_index = check_choices(item_id, raw.get("choices"), answer, report)
    if not choices:
        report.add("missing_field", item_id, "choices")
    audio_path = as_text(raw.get(audio_field))
    audio: Optional[str] = None
    if not audio_path:
        report.add("missing_field", item_id, audio_field)
        report.add("missing_audio", item_id, f"no {audio_field}")
    else:
        path = resolve_audio(root, audio_path)
        if path.is_file():
            audio = str(path)
        else:
            report.add("missing_audio", item_id, str(path))
    return {"id": item_id, "audio": audio, "audio_path": audio_path, "question": question,
            "choices": choices, "answer": answer, "answer_index": answer_index}


def record_id(raw: Mapping[str, Any], row: int, report: ValidationReport, key: str = "id") -> str:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        fallback = f"row-{row}"
        report.add("missing_field", fallback, f"no {key!r}; the item is named by its row")
        return fallback
    return as_text(value)


def required_text(raw: Mapping[str, Any], key: str, item_id: str, report: ValidationReport) -> str:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        report.add("missing_field", item_id, key)
        return "" if value is None else value
    if not isinstance(value, str):
        report.add("invalid_value", item_id, f"{key} is a {type(value).__name__} (stored as text)")
    return as_text(value)


def resolve_audio(root: Path, relative: Optional[str]) -> Path:
    """An audio path from the metadata, relative to the raw folder root ("./audio/x.wav" works)."""
    path = Path(relative) if relative else Path()
    return path if path.is_absolute() else (root / path)


# ----------------------------------------------------------------------------------------------
# Audio backends and decoding of dataset values
# ----------------------------------------------------------------------------------------------

AUDIO_BACKENDS = ("auto", "torchcodec", "soundfile")


def torchcodec_status() -> tuple[bool, str]:
    """(usable, why): torchcodec imports and loads its FFmpeg libraries (decoder and encoder)."""
    try:
        from torchcodec.decoders import AudioDecoder  # noqa: F401
        from torchcodec.encoders import AudioEncoder  # noqa: F401
    except (ImportError, RuntimeError, OSError) as err:
        return False, f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return True, "torchcodec loads its FFmpeg libraries"


def resolve_audio_backend(requested: str = "auto") -> tuple[str, str]:
    """("torchcodec" | "soundfile", reason) for a requested backend ("auto" probes torchcodec)."""
    if requested not in AUDIO_BACKENDS:
        raise ValueError(f"audio_backend must be one of {AUDIO_BACKENDS}, got {requested!r}")
    if requested == "soundfile":
        return "soundfile", "requested (audio_backend='soundfile')"
    usable, why = torchcodec_status()
    if requested == "torchcodec":
        if not usable:
            raise RuntimeError(f"audio_backend='torchcodec' but torchcodec is unusable: {why}. Install the "
                               "FFmpeg shared libraries (see install.sh) or use audio_backend='soundfile'.")
        return "torchcodec", why
    return ("torchcodec", why) if usable else ("soundfile", f"torchcodec unusable ({why}); soundfile fallback")


def _torchcodec_decode(source: Any) -> tuple[np.ndarray, int]:
    from torchcodec.decoders import AudioDecoder

    samples = AudioDecoder(source).get_all_samples()
    return samples.data.numpy().T, int(samples.sample_rate)


def _soundfile_decode(source: Any) -> tuple[np.ndarray, int]:
    import soundfile as sf

    data, rate = sf.read(source, dtype="float32", always_2d=True)
    return data, int(rate)


def _decode_with(source: Any, backend: str, what: str) -> tuple[np.ndarray, int]:
    order = {"auto": ("torchcodec", "soundfile"), "torchcodec": ("torchcodec",),
             "soundfile": ("soundfile",)}[backend]
    errors = []
    for name in order:
        try:
            if isinstance(source, (bytes, bytearray)):
                src = bytes(source) if name == "torchcodec" else io.BytesIO(source)
            else:
                src = source
            return (_torchcodec_decode if name == "torchcodec" else _soundfile_decode)(src)
        except (ImportError, RuntimeError, OSError, ValueError) as err:
            errors.append(f"{name}: {type(err).__name__}: {err}")
    raise AudioError(f"cannot decode {what}: " + "; ".join(errors))


def decode_audio(value: Any, sampling_rate: Optional[int] = None, *, mono: bool = True,
                 backend: str = "auto") -> tuple[np.ndarray, int]:
    """(float32 samples, rate) from any audio value a benchmark dataset holds.

    Accepts a decoded torchcodec ``AudioDecoder`` (datasets 5), an ``Audio(decode=False)`` dict
    (``{"path", "bytes"}``: embedded bytes or a local file), a ``{"array", "sampling_rate"}`` dict, or
    a path. Channels are averaged when ``mono`` (else (frames, channels)); the result is resampled
    with soxr to ``sampling_rate`` when given. ``backend`` chooses the decoder for bytes and paths
    ("auto": torchcodec, then soundfile).
    """
    if backend not in AUDIO_BACKENDS:
        raise ValueError(f"backend must be one of {AUDIO_BACKENDS}, got {backend!r}")
    if value is None:
        raise AudioError("this item has no audio (its file was missing when the dataset was built)")
    if hasattr(value, "get_all_samples"):
        samples = value.get_all_samples()
        data, rate = samples.data.numpy().T, int(samples.sample_rate)
    elif isinstance(value, Mapping):
        if value.get("array") is not None:
            data, rate = np.asarray(value["array"], dtype=np.float32), value.get("sampling_rate")
            if rate is None:
                raise AudioError("audio dict has an 'array' but no 'sampling_rate'")
            if data.ndim == 2 and data.shape[0] <= 8 < data.shape[1]:
                data = data.T  # (channels, frames) as torchcodec gives it
        elif value.get("bytes") is not None:
            data, rate = _decode_with(value["bytes"], backend, f"embedded audio {value.get('path')!r}")
        elif value.get("path"):
            path = str(value["path"])
            if not Path(path).is_file():
                raise AudioError(f"audio file not found: {path}")
            data, rate = _decode_with(path, backend, path)
        else:
            raise AudioError("audio dict has neither 'array', 'bytes' nor 'path'")
    elif isinstance(value, (str, os.PathLike)):
        if not Path(value).is_file():
            raise AudioError(f"audio file not found: {value}")
        data, rate = _decode_with(str(value), backend, str(value))
    else:
        raise AudioError(f"unsupported audio value of type {type(value).__name__}")
    data = np.asarray(data, dtype=np.float32)
    if data.ndim == 2 and mono:
        data = data.mean(axis=1)
    if data.size == 0:
        raise AudioError("audio has no samples")
    if not np.isfinite(data).all():
        raise AudioError(f"audio has {int((~np.isfinite(data)).sum())} NaN or infinite samples")
    rate = int(rate)
    if sampling_rate and int(sampling_rate) != rate:
        import soxr

        data = soxr.resample(data, rate, int(sampling_rate)).astype(np.float32)
        rate = int(sampling_rate)
    return np.ascontiguousarray(data), rate


def audio_paths(dataset: datasets.Dataset, column: str = "audio") -> list[Optional[str]]:
    """The local file path behind each item's audio (None for an item built without audio).

    Raises for embedded audio (a dataset loaded from parquet shards): use ``decode_audio`` there.
    """
    values = dataset.cast_column(column, Audio(decode=False))[column]
    out = []
    for value in values:
        if value is None:
            out.append(None)
        elif value.get("bytes") is not None:
            raise ValueError("this dataset embeds its audio bytes (no local files); decode with decode_audio()")
        else:
            out.append(value["path"])
    return out


# ----------------------------------------------------------------------------------------------
# Builder base
# ----------------------------------------------------------------------------------------------

MISSING_AUDIO_POLICIES = ("raise", "skip", "keep")
REPEATED_ID_POLICIES = ("raise", "keep", "first")


@dataclass
class BenchmarkConfig(datasets.BuilderConfig):
    """Options shared by the benchmark builders.

    on_missing_audio: "raise" (default: download_and_prepare fails listing every missing file),
        "skip" (build the rest; each skipped id is reported), "keep" (keep the item with audio=None,
        e.g. for text-only baselines; reported).
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


@dataclass
class SourceScan:
    """What a builder read from a raw folder: normalized items (audio = absolute path or None)."""

    items: list[dict[str, Any]]
    report: ValidationReport
    files: list[Path]  # metadata files, for the fingerprint
    audio_files: list[Path]


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
        for policy, allowed in (("on_missing_audio", MISSING_AUDIO_POLICIES),
                                ("on_repeated_id", REPEATED_ID_POLICIES)):
            value = kwargs.get(policy, defaults[policy])
            if value not in allowed:
                raise ValueError(f"{policy} must be one of {allowed}, got {value!r}")
        backend, why = resolve_audio_backend(kwargs.get("audio_backend", defaults["audio_backend"]))
        kwargs["audio_backend"] = backend
        options = {name: kwargs.get(name, defaults.get(name)) for name in self.SCAN_OPTIONS}
        if options.get("metadata_file") is None:
            options["metadata_file"] = self.DEFAULT_METADATA_FILE
        scan = self.scan_source(root, options)
        scan.report.audio_backend, scan.report.audio_backend_reason = backend, why
        kwargs["source_fingerprint"] = _fingerprint(scan, options)
        # The cache is keyed on this code too, so a changed builder never serves a stale build.
        kwargs.setdefault("hash", _code_hash(__file__, sys.modules[type(self).__module__].__file__))
        self.root = root
        self.report = scan.report
        self._scanned = scan.items
        super().__init__(*args, data_dir=str(root), **kwargs)
        self._items = self._apply_policies(self.select_items(self._scanned))
        self.report.built = len(self._items)

    def scan_metadata_file(self, root: Path, options: Mapping[str, Any], read, normalize, title: str,
                           layout: str) -> SourceScan:
        """The scan of a benchmark with one metadata file (MMAR, MMAU): read it, normalise each record
        into the schema (``normalize`` reports problems and returns None for a record it drops), and list
        the audio files the items name."""
        metadata = root / options["metadata_file"]
        if not metadata.is_file():
            raise FileNotFoundError(f"{title} metadata not found: {metadata} ({layout})")
        report = ValidationReport(self.BENCHMARK, str(metadata))
        records = read(metadata)
        report.rows = len(records)
        items = [it for row, raw in enumerate(records)
                 if (it := normalize(raw, row, root, report)) is not None]
        audio_files = [resolve_audio(root, it["audio_path"]) for it in items if it["audio_path"]]
        return SourceScan(items, report, [metadata], audio_files)

    # -- subclass hooks ------------------------------------------------------------------------
    def scan_source(self, root: Path, options: Mapping[str, Any]) -> SourceScan:
        """Read the raw folder into items and a validation report: each benchmark's builder defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define scan_source()")  # abstract hook

    def select_items(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The items of the chosen config (all of them unless a subclass has configs)."""
        return items

    # -- policies ------------------------------------------------------------------------------
    def _apply_policies(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        report, config = self.report, self.config
        counts: dict[str, int] = {}
        for item in items:
            counts[item["id"]] = counts.get(item["id"], 0) + 1
        # The report lists repeated ids once per extra record, whatever the policy.
        seen: set[str] = set()
        kept = []
        for item in items:
            if counts[item["id"]] > 1 and item["id"] in seen:
                report.add("repeated_id", item["id"], f"{counts[item['id']]} records")
                if config.on_repeated_id == "first":
                    report.add("skipped", item["id"], "repeated id (on_repeated_id='first')")
                    continue
            seen.add(item["id"])
            kept.append(item)
        out = []
        for item in kept:
            if item["audio"] is None and config.on_missing_audio == "skip":
                report.add("skipped", item["id"], "missing or unreadable audio (on_missing_audio='skip')")
                continue
            out.append(item)
        return out

    def _raise_on_policies(self) -> None:
        problems = []
        missing = self.report.of_kind("missing_audio") + self.report.of_kind("unreadable_audio")
        if self.config.on_missing_audio == "raise" and missing:
            problems.append(f"{len(missing)} audio files are missing or unreadable (on_missing_audio='raise'; "
                            "use 'skip' to build the rest or 'keep' for items without audio):\n"
                            + "\n".join(f"  {i.item_id}: {i.detail}" for i in missing))
        if self.config.on_repeated_id == "raise" and self.report.of_kind("repeated_id"):
            repeated = list(dict.fromkeys(self.report.ids("repeated_id")))
            problems.append(f"{len(repeated)} ids occur on more than one record (on_repeated_id='raise'; "
                            f"use 'keep' or 'first'): {', '.join(repeated)}")
        if problems:
            raise BenchmarkValidationError(f"{self.BENCHMARK} raw folder {self.root} failed validation:\n"
                                           + "\n".join(problems), self.report)

    # -- datasets hooks ------------------------------------------------------------------------
    def _info(self) -> datasets.DatasetInfo:
        features = self.FEATURES
        if self.config.audio_backend == "soundfile":
            features = with_audio_storage(features)
        return datasets.DatasetInfo(description=self.DESCRIPTION, features=features, homepage=self.HOMEPAGE,
                                    license=self.LICENSE, citation=self.CITATION)

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        self._raise_on_policies()
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


# ----------------------------------------------------------------------------------------------
# Hub-ready folders
# ----------------------------------------------------------------------------------------------

CARD_FILENAME = "README.md"
AUDIOFOLDER_METADATA = "metadata.parquet"


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
    for unit, factor in (("GB", 10 ** 9), ("MB", 10 ** 6), ("KB", 10 ** 3), ("B", 1)):
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


def write_parquet_split(dataset: datasets.Dataset, out_dir: Path, data_dir: str, split: str,
                        max_shard_size: Union[int, str] = "500MB") -> list[str]:
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
        shard = shard.with_format("arrow").map(embed_table_storage, batched=True, keep_in_memory=True,
                                                desc=None).with_format()
        name = f"{split}-{index:05d}-of-{num_shards:05d}.parquet"
        shard.to_parquet(str(target / name))
        written.append(f"{data_dir}/{name}")
    return written


def write_parquet_config(out_dir: Path, config_name: str, splits: Mapping[str, datasets.Dataset], *,
                         data_dir: Optional[str] = None, max_shard_size: Union[int, str] = "500MB",
                         default: bool = False) -> HubConfig:
    """Parquet shards for every split of one config, and its card entry."""
    data_dir = data_dir or ("data" if config_name == "default" else f"data/{config_name}")
    data_files, features = [], None
    for split, dataset in splits.items():
        write_parquet_split(dataset, out_dir, data_dir, split, max_shard_size)
        data_files.append({"split": split, "path": f"{data_dir}/{split}-*"})
        features = _prepare_for_export(dataset).features
    return HubConfig(config_name, data_files, features, {s: len(d) for s, d in splits.items()},
                     default=default)


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


def write_audiofolder_group(out_dir: Path, group: str, dataset: datasets.Dataset, *,
                            link: str = "copy") -> None:
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
        entry = {"config_name": c.name, **info._to_yaml_dict()}
        infos.append(entry)
    data["dataset_info"] = infos
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    return f"---\n{front}---\n{card.text}"


def write_card(out_dir: Path, card_text: Optional[str], configs: Sequence[HubConfig]) -> Path:
    path = Path(out_dir) / CARD_FILENAME
    path.write_text(render_card(card_text, configs), encoding="utf-8")
    return path


def prepare_out_dir(out_dir: Union[str, os.PathLike], overwrite: bool) -> Path:
    out = Path(out_dir).expanduser().resolve()
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise FileExistsError(f"{out} is not empty; pass overwrite=True to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


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


def _pick_config(card: Mapping[str, Any], config: Optional[str], folder: Path) -> dict[str, Any]:
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


def _split_patterns(entry: Mapping[str, Any], split: str) -> list[str]:
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

    patterns = _split_patterns(entry, split)
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
        paths = []
        for name in table.column("file_name").to_pylist():
            relative = os.path.normpath(name)
            if os.path.isabs(relative) or relative.startswith(".."):
                raise ValueError(f"{meta}: file_name {name!r} must stay inside its folder")
            paths.append(str(meta.parent / relative))
        audio = pa.StructArray.from_arrays(
            [pa.array([None] * len(paths), pa.binary()), pa.array(paths, pa.string())], ["bytes", "path"])
        position = table.column_names.index("file_name")
        table = table.remove_column(position).add_column(position, "audio", audio)
        out_features = Features({("audio" if k == "file_name" else k): (Audio(decode=False) if k == "file_name" else v)
                                 for k, v in features.items()})
        parts.append(datasets.Dataset(table).cast(out_features))
    return datasets.concatenate_datasets(parts) if len(parts) > 1 else parts[0]


def load_hub_folder(folder: Union[str, os.PathLike], config: Optional[str] = None, split: str = TEST_SPLIT, *,
                    audio_backend: str = "auto", cache_dir: Optional[str] = None) -> datasets.Dataset:
    """``load_dataset(folder, config, split=split)``, or its torchcodec-free equivalent.

    With torchcodec usable this is exactly what a user of the published dataset runs. Without it
    (or with audio_backend="soundfile"), parquet layouts still load through ``load_dataset`` and get
    ``Audio(decode=False)``; audiofolder layouts are read from their metadata parquet directly.
    """
    folder = Path(folder).expanduser().resolve()
    backend, _ = resolve_audio_backend(audio_backend)
    card = read_card_yaml(folder)
    entry = _pick_config(card, config, folder)
    if backend == "torchcodec":
        return datasets.load_dataset(str(folder), entry["config_name"], split=split, cache_dir=cache_dir)
    is_audiofolder = any(p.name == AUDIOFOLDER_METADATA
                         for p in _resolve_patterns(folder, _split_patterns(entry, split)))
    if is_audiofolder:
        return _load_audiofolder_without_torchcodec(folder, entry, split)
    dataset = datasets.load_dataset(str(folder), entry["config_name"], split=split, cache_dir=cache_dir)
    return dataset.cast_column("audio", Audio(decode=False))


def default_card(builder_cls: type[BenchmarkBuilder]) -> str:
    """A minimal card (licence, description, citation) for an export made without a card file."""
    import yaml

    front = yaml.safe_dump({"license": builder_cls.LICENSE, "pretty_name": builder_cls.BENCHMARK},
                           sort_keys=False)
    return (f"---\n{front}---\n# {builder_cls.BENCHMARK}\n\n{builder_cls.DESCRIPTION}\n\n"
            f"Source: {builder_cls.HOMEPAGE}\n\n## Citation\n\n```bibtex\n{builder_cls.CITATION}\n```\n")


def export_parquet_folder(dataset: Union[datasets.Dataset, Mapping[str, datasets.Dataset]],
                          out_dir: Union[str, os.PathLike], *, card: Optional[str] = None,
                          overwrite: bool = False, max_shard_size: Union[int, str] = "500MB") -> Path:
    """A Hub-ready folder with one config ("default"): parquet shards with embedded audio + README.md.

    ``dataset`` is the "test" split, or a mapping split -> Dataset. ``load_dataset(out_dir)`` reads it
    back; ``push_folder`` (or ``huggingface_hub.upload_folder``) publishes it as is.
    """
    splits = {TEST_SPLIT: dataset} if isinstance(dataset, datasets.Dataset) else dict(dataset)
    out = prepare_out_dir(out_dir, overwrite)
    config = write_parquet_config(out, "default", splits, max_shard_size=max_shard_size, default=True)
    write_card(out, card, [config])
    return out


def push_folder(folder: Union[str, os.PathLike], repo_id: str, *, private: bool = False,
                token: Optional[str] = None) -> str:
    """Publish a Hub-ready folder as the dataset repo ``repo_id`` (created if needed); returns its URL."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="dataset",
                      commit_message="Upload with audioreason.data")
    return f"https://huggingface.co/datasets/{repo_id}"
