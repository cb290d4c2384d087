"""The inference runner: a benchmark's items x conditions x templates -> one output per (model, condition,
template, item), written as it finishes, resumable, split across processes with Accelerate.

    audioreason run --model qwen2-audio --benchmark mmar --data /data/MMAR --conditions full,none --out runs/q2a
    accelerate launch --multi_gpu --num_processes 4 -m audioreason run ...     # or: audioreason run --num-processes 4

Layout of ``--out``::

    run.json                 config, model descriptions, templates (name, hash, source), decoding, package
                             versions, git commit, each session (start, end, processes, units run, seconds
                             in the generation loop of the slowest process, items/s, audio seconds
                             and the real-time factor), speed (``inference.speed``), counts (done,
                             failed, not applicable, truncated, resumed, torn lines, duplicates, items
                             skipped at load by ``on_missing_audio="skip"``, named in skipped_items); while a
                             session runs its status is "running", and a session killed before it
                             finished is recorded by the next one as "interrupted" with its counts
                             (done, failed, total); with ``audio_check`` > 0, audio_check (the checked
                             item ids, each one's shuffled donor, the seed and the units' keys)
    run.lock                 the live run's pid, host and start time: a second run on the folder is
                             refused while it lives; a stale lock is taken over (``processes``)
    shards/rank-<r>.jsonl    each process appends every finished output to its own shard, flushed and
                             fsynced per batch (its outputs finish together), so a killed run loses at
                             most the batch in flight
    shards/rank-<r>.sent     a served model's requests, a line each ({"key", "audio_s"}) written just
                             before it is sent: the usage counts the requests of a lost batch too
    outputs.jsonl            the outputs of this command's units, gathered in item order (then condition,
                             then template order); a later command with other conditions keeps the earlier
                             outputs in the shards and gathers its own
    fragments/               the fragment cache (``frag:N:k`` conditions)

Work split: every process reads the shards, drops the keys already finished (an output without error), sorts
the rest by expected audio length then prompt length (longest first, so the largest batch comes first) and
takes every world_size-th unit from its rank on: equal counts and similar lengths per process. Within a
process, consecutive units of the same adapter and audio presence form the batches (length-sorted batches
pad little). While the model generates a batch, a second thread decodes the next two batches' audio and,
for adapters that have ``prepare`` (transformers: the processor call), computes its inputs
(``inference.prefetch``); the outputs are the same as one batch after the other. A unit that failed
(its output has ``error``) is run again on restart. A restart may use a different number of processes:
keys, not ranks, decide what is done.

Per-item record: key, id, index, model, adapter, condition, template {name, hash}, decoding, output (the raw
text), error, finish_reason, audio {seconds, source_seconds, truncated, max_audio_s, sampling_rate,
fragment}, tokens {prompt, completion}, timings {audio_s, generate_s, batch_size}, rank. Items whose
condition or template does not apply (``anchored`` without an anchored variant, an MCQ-only template
and an open-ended item) are not run and are counted in run.json by reason.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import inspect
import json
import os
import platform
import subprocess
import threading
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from audioreason.base.jsonl import JSON_KINDS, DataFileError, json_type, read_json_file, read_json_objects
from audioreason.base.schema import OutputRecord, RunSummary, check_output_record, output_line

from ..audio.errors import AudioError
from ..text.conditions import CHECK_KINDS, Condition
from .base import DecodingParams, Generation, GenerationRequest, ModelAdapter
from .conditions import (
    AudioCheck,
    AudioPreparer,
    checked,
    choose_audio_check,
    local_path,
    not_applicable,
    parse_conditions,
    with_audio_check,
)
from .hosted import cost_of, load_prices, usage_summary
from .prefetch import ClipCache, PreparedBatch, prefetched
from .processes import LAUNCHER_ENV, die_with_parent, lock_run_folder
from .prompts import DEFAULT_TEMPLATES, PromptTemplate, TemplateMismatch, parse_templates
from .protocol import run_protocol, with_protocol
from .speed import session_audio_seconds, speed_summary

RUN_FILE = "run.json"
OUTPUTS_FILE = "outputs.jsonl"
SHARD_DIR = "shards"

# Adapter kinds the runner can build by name + options: "module:callable" (a class, or a builder taking the
# model name first). The one factory for the CLI, sweeps and Python callers alike (make_adapter).
ADAPTERS = {
    "transformers": "audioreason.inference.transformers_audio:TransformersAudioAdapter",
    "text-lm": "audioreason.inference.text_lm:TextLMAdapter",
    "openai": "audioreason.inference.hosted:build_openai",  # OpenAIAudioAdapter, endpoint presets
    "cascade": "audioreason.inference.hosted:build_cascade",  # CascadeAdapter: ASR, then a text LM
}


@dataclass
class RunConfig:
    """Everything a run depends on. ``model_options`` go to the adapter (dtype, device_map,
    attn_implementation, preset, max_audio_s, ...; only those its constructor takes)."""

    model: str
    benchmark: str
    data: str
    out: str
    conditions: list[str] = field(default_factory=lambda: ["full"])
    templates: Optional[list[str]] = None  # default: the benchmark's (prompts.DEFAULT_TEMPLATES)
    benchmark_config: Optional[str] = None  # AudioSpan: all | native_mcq | native_oeq | anchor
    limit: Optional[int] = None
    batch_size: int = 1
    adapter: str = "transformers"
    tb_model: Optional[str] = None
    tb_adapter: str = "text-lm"
    model_options: dict[str, Any] = field(default_factory=dict)
    tb_options: Optional[dict[str, Any]] = None  # None: the main options less the audio ones
    prices: Optional[str] = None  # a prices file: run.json gets the cost (hosted.load_prices)
    decoding: DecodingParams = field(default_factory=DecodingParams)
    fragment_cache: Optional[str] = None  # default: <out>/fragments
    on_missing_audio: str = "raise"  # raw folders: raise | skip (counted in run.json) | keep
    audio_check: int = 0  # silence and shuffled on this many seeded items (0: off)
    audio_check_seed: int = 0
    progress: bool = True

    def to_dict(self) -> dict[str, Any]:
        from .hosted import public_options

        d = asdict(self)
        d["decoding"] = self.decoding.to_dict()
        d["model_options"] = public_options(self.model_options)  # no header values, no URL query values
        d["tb_options"] = None if self.tb_options is None else public_options(self.tb_options)
        return d


@dataclass(frozen=True)
class Unit:
    """One model call to make: an item under a condition with a template."""

    order: int
    item_index: int
    item_id: str
    condition: Condition
    template: PromptTemplate
    role: str  # "main" or "tb" (the text-backbone adapter)
    key: str
    messages: tuple[dict[str, str], ...]
    expected_seconds: float
    audio_index: Optional[int] = None  # the item whose clip it sends (shuffled: the donor); None: its own


def unit_key(model: str, condition: str, template: PromptTemplate, item_id: str) -> str:
    return json.dumps([model, condition, f"{template.name}@{template.hash}", item_id], ensure_ascii=False)


def make_adapter(kind: str, model: str, **options: Any) -> ModelAdapter:
    """Build a registered adapter. ``device`` (the runner's, per process) goes only to adapters that take it;
    any other option the adapter does not take is an error (never dropped: it would change the run unseen)."""
    cls, accepted = adapter_signature(kind)
    given = {k: v for k, v in options.items() if v is not None and (k != "device" or k in accepted)}
    unknown = unknown_options(accepted, given)
    if unknown:
        raise ValueError(f"the {kind} adapter takes no option {', '.join(map(repr, unknown))}")
    return cls(model, **given)


def adapter_signature(kind: str) -> tuple[Any, Mapping[str, inspect.Parameter]]:
    """The registered adapter class (or builder) of ``kind`` and the parameters it takes, without building it."""
    if kind not in ADAPTERS:
        raise ValueError(f"unknown adapter {kind!r}: choose from {', '.join(ADAPTERS)}")
    module, name = ADAPTERS[kind].split(":")
    cls = getattr(importlib.import_module(module), name)
    return cls, inspect.signature(cls).parameters


def adapter_option_types(kind: str) -> dict[str, Any]:
    """The type the adapter declares for each option it takes, without building it; a builder taking
    ``**options`` declares those of the constructors it hands them to (its ``forwards_options_to()``)."""
    from .option_types import declared_types

    builder, _ = adapter_signature(kind)
    return declared_types([*getattr(builder, "forwards_options_to", tuple)(), builder])


def unknown_options(accepted: Mapping[str, inspect.Parameter], given: Any) -> list[str]:
    """The options an adapter does not take; none for a builder taking ``**options`` (it checks its own)."""
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
        return []
    return sorted(set(given) - set(accepted))


# ------------------------------------------------------------------------------------------------
# Items and units
# ------------------------------------------------------------------------------------------------


def load_items(
    benchmark: str,
    data: str,
    config: Optional[str] = None,
    limit: Optional[int] = None,
    on_missing_audio: str = "raise",
) -> list[dict]:
    """The benchmark's items as dicts in dataset order, audio undecoded ({"path", "bytes"})."""
    return load_items_reported(benchmark, data, config, limit, on_missing_audio)[0]


def load_items_reported(
    benchmark: str,
    data: str,
    config: Optional[str] = None,
    limit: Optional[int] = None,
    on_missing_audio: str = "raise",
) -> tuple[list[dict], list[dict[str, str]]]:
    """(items, the items left out at load: [{"id", "reason"}]). ``on_missing_audio`` is the builder's
    policy for an item whose audio is missing, unreadable or outside the raw folder (raw folders only):
    "raise" (the load fails, listing every one), "skip" (left out and returned), "keep" (audio None: its
    audio conditions fail as counted errors). A raw MMAR or MMAU test-mini folder is read without
    ``datasets`` (``audioreason.data.catalog.text_items``: the same items, audio undecoded either way)."""
    import warnings

    from ..data.catalog import reads_text_only, text_items

    if config is None and reads_text_only(benchmark, data):
        items, report = text_items(benchmark, data, on_missing_audio=on_missing_audio)
        items = items if limit is None else items[:limit]
    else:
        items, report = _dataset_items(benchmark, data, config, limit, on_missing_audio)
    skipped: list[dict[str, str]] = []
    if report is not None:
        if not report.ok:
            warnings.warn(report.summary(), UserWarning, stacklevel=2)
        why = {
            i.item_id: f"{i.kind}: {i.detail}"
            for kind in ("missing_audio", "unreadable_audio", "audio_outside_root")
            for i in report.of_kind(kind)
        }
        skipped = [{"id": i.item_id, "reason": why.get(i.item_id, i.detail)} for i in report.of_kind("skipped")]
    seen: set[str] = set()
    for item in items:
        if item["id"] in seen:
            raise ValueError(f"item id {item['id']!r} occurs twice; outputs are keyed by id")
        seen.add(item["id"])
    return items, skipped


def _dataset_items(
    benchmark: str, data: str, config: Optional[str], limit: Optional[int], on_missing_audio: str
) -> tuple[list[dict], Any]:
    """The items through ``load_benchmark`` (a Hub-ready folder, a Hub id, AudioSpan), audio undecoded."""
    from datasets import Audio

    from ..data import load_benchmark

    options = {} if on_missing_audio == "raise" else {"on_missing_audio": on_missing_audio}
    try:
        dataset, report = load_benchmark(benchmark, data, config=config, return_report=True, **options)
    except TypeError as err:
        if options and "raw folders only" in str(err):
            raise ValueError(
                f"--on-missing-audio {on_missing_audio} (on_missing_audio) applies to raw benchmark "
                f"folders; {data} is "
                "a Hub-ready folder or Hub id (its audio is checked as each item runs, and a failure "
                "is counted)"
            ) from None
        raise
    dataset = dataset.cast_column("audio", Audio(decode=False))
    if limit is not None:
        dataset = dataset.select(range(min(limit, len(dataset))))
    return [dict(row) for row in dataset], report


def plan_units(
    items: Sequence[dict],
    conditions: Sequence[Condition],
    templates: Sequence[PromptTemplate],
    names: dict[str, str],
    preparer: AudioPreparer,
    check: Optional[AudioCheck] = None,
) -> tuple[list[Unit], dict[str, int]]:
    """(units in output order, not-applicable counts by reason). ``names`` maps role -> model name. The
    silence and shuffled conditions run on ``check``'s items only (the others are not counted: run.json
    names the checked ones)."""
    units: list[Unit] = []
    skipped: dict[str, int] = {}
    seconds_cache: dict[Any, float] = {}
    index_of = {str(item["id"]): n for n, item in enumerate(items)}
    for item_index, item in enumerate(items):
        for condition in conditions:
            if not checked(condition, str(item["id"]), check.donors if check else None):
                continue
            role = "tb" if condition.kind == "tb" else "main"
            donor = check.donors.get(str(item["id"])) if check and condition.kind == "shuffled" else None
            audio_index = index_of[donor] if donor is not None else None
            for template in templates:
                reason = not_applicable(condition, item, check)
                messages = None
                if reason is None:
                    try:
                        messages = template.messages(item)
                    except TemplateMismatch:
                        reason = f"template {template.name} does not fit the item's format"
                if reason is not None:
                    key = f"{condition.name}: {reason}"
                    skipped[key] = skipped.get(key, 0) + 1
                    continue
                audio = items[item_index if audio_index is None else audio_index].get("audio")
                cache_key = (local_path(audio) or f"item {item_index}", condition)
                if cache_key not in seconds_cache:
                    seconds_cache[cache_key] = preparer.expected_seconds(condition, audio)
                units.append(
                    Unit(
                        len(units),
                        item_index,
                        str(item["id"]),
                        condition,
                        template,
                        role,
                        unit_key(names[role], condition.name, template, str(item["id"])),
                        tuple(messages),
                        seconds_cache[cache_key],
                        audio_index,
                    )
                )
    return units, skipped


def length_sorted(units: Iterable[Unit]) -> list[Unit]:
    """Longest first (audio seconds, then prompt characters); ties keep output order. Units of one adapter
    and of one audio presence are kept together, so batches never mix them."""
    return sorted(
        units,
        key=lambda u: (
            u.role,
            not u.condition.sends_audio,
            -u.expected_seconds,
            -sum(len(m["content"]) for m in u.messages),
            u.order,
        ),
    )


def batches(units: Sequence[Unit], size: int) -> list[list[Unit]]:
    out: list[list[Unit]] = []
    for unit in units:
        if (
            out
            and len(out[-1]) < size
            and out[-1][0].role == unit.role
            and out[-1][0].condition.sends_audio == unit.condition.sends_audio
        ):
            out[-1].append(unit)
        else:
            out.append([unit])
    return out


# ------------------------------------------------------------------------------------------------
# Shards
# ------------------------------------------------------------------------------------------------


@dataclass
class ShardRead:
    records: list[dict]
    torn_lines: int = 0


def read_shards(folder: Path) -> ShardRead:
    """Every record in the shards. A last line without its newline (a process killed while writing) is
    torn: dropped and counted, its unit redone (the shard's writer cuts it); a bad line anywhere else is an
    error naming the file, the line and the field."""
    result = ShardRead([])
    for path in sorted(folder.glob("rank-*.jsonl")):
        try:
            lines, torn = read_json_objects(path, torn_last=True)
            for number, record in lines:
                check_output_record(record, f"{path}:{number}")
        except ValueError as err:
            raise DataFileError(f"{err} (the shard is damaged)") from None
        result.records.extend(record for _, record in lines)
        result.torn_lines += torn
    return result


def _cut_torn_line(path: Path) -> None:
    """Cut a torn last line left by a killed run, so the next line appended starts clean."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(path, "r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)


class ShardWriter:
    """Appends records to one process's shard, one line each, flushed and fsynced before returning."""

    def __init__(self, path: Path):
        _cut_torn_line(path)
        self.file = open(path, "a", encoding="utf-8")

    def write(self, record: dict) -> None:
        self.write_all([record])

    def write_all(self, records: Sequence[dict]) -> None:
        """A batch's records, one line each, with one flush and fsync (they are all finished at once)."""
        if not records:
            return
        self.file.write("".join(output_line(record) for record in records))
        self.file.flush()
        os.fsync(self.file.fileno())

    def close(self) -> None:
        self.file.close()


class SentJournal:
    """One process's journal of the requests a served model was sent (``shards/rank-<r>.sent``): a line
    {"key", "audio_s"} per request, written just before it goes out (``OpenAIAudioAdapter.on_send``), so the
    requests of a batch whose records a killed process never wrote are still counted (``usage_summary``).
    Each line is handed to the operating system at once, unbuffered: a killed process loses none of them
    (a machine that loses power may lose the last few; no fsync per request). Created on the first send."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: Optional[int] = None
        self._lock = threading.Lock()  # the adapter's event-loop thread writes; close() runs on the main one

    def sent(self, key: str, audio_s: float) -> None:
        line = (json.dumps({"key": key, "audio_s": audio_s}, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                _cut_torn_line(self.path)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(self._fd, line)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def journal_sends(adapters: Iterable[ModelAdapter], journal: Optional[SentJournal]) -> None:
    """Point each served adapter (a cascade's served LM too) at ``journal``; None detaches them. A local
    adapter sends nothing: its record is its one call."""
    for adapter in adapters:
        for part in (adapter, getattr(adapter, "lm", None)):
            if hasattr(part, "on_send"):
                part.on_send = None if journal is None else journal.sent


def read_sent(folder: Path) -> dict[str, dict[str, Any]]:
    """The journals of sent requests in ``folder``, per unit key: {"requests", "audio_s" (per request),
    "model", "condition"}. A torn last line (a write cut by a kill: that request was not sent yet) is
    dropped; a bad line anywhere else is a DataFileError naming the file and the line."""
    sent: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("rank-*.sent")):
        for number, line in read_json_objects(path, torn_last=True)[0]:
            key, audio_s = line.get("key"), line.get("audio_s")
            try:
                model, condition = json.loads(key)[:2]
            except (TypeError, ValueError):
                model = condition = None
            if (
                not isinstance(model, str)
                or not isinstance(condition, str)
                or isinstance(audio_s, bool)
                or not isinstance(audio_s, (int, float))
            ):
                raise DataFileError(
                    f'{path}:{number}: expected {{"key": a unit key, "audio_s": a number}} '
                    "(the journal of sent requests is damaged)"
                )
            entry = sent.setdefault(
                key, {"requests": 0, "audio_s": float(audio_s), "model": model, "condition": condition}
            )
            entry["requests"] += 1
    return sent


def select_records(records: Iterable[dict]) -> tuple[dict[str, dict], int]:
    """(record per key, duplicates): a successful record wins over failed ones; a second successful record
    for a key is a duplicate (counted; the first is kept); among failures the last is kept."""
    chosen: dict[str, dict] = {}
    duplicates = 0
    for record in records:
        key = record["key"]
        previous = chosen.get(key)
        if previous is None or (previous.get("error") is not None):
            chosen[key] = record
        elif record.get("error") is None:
            duplicates += 1
    return chosen, duplicates


# ------------------------------------------------------------------------------------------------
# Run file
# ------------------------------------------------------------------------------------------------


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("audioreason", "torch", "transformers", "accelerate", "datasets", "numpy", "soundfile", "soxr"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def git_commit() -> Optional[dict[str, Any]]:
    """The commit of the checkout the package runs from (None outside a git checkout)."""
    folder = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(dirty)}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _identity(config: RunConfig, adapters: dict[str, ModelAdapter]) -> dict[str, Any]:
    """What a resumed run must share with the outputs already in the folder: the benchmark, the decoding, and
    per model role ("main", "tb") the model's name and audio limit."""
    return {
        "benchmark": config.benchmark,
        "decoding": config.decoding.to_dict(),
        "models": {role: {"name": a.name, "max_audio_s": a.max_audio_s} for role, a in adapters.items()},
    }


# The parts of run.json that are read back (by a resume and by `audioreason score`), with their JSON types;
# each may be absent, and those in RUN_FILE_NULLABLE null (the runner writes them so).
RUN_FILE_FIELDS = {
    "identity": dict,
    "identity.models": dict,
    "config": dict,
    "config.benchmark": str,
    "config.data": str,
    "config.benchmark_config": str,
    "config.limit": int,
    "models": dict,
    "models.main": dict,
    "models.tb": dict,
    "counts": dict,
    "sessions": list,
    "status": str,
    "started": str,
}
RUN_FILE_NULLABLE = {"config.benchmark_config", "config.limit"}


def read_run_file(path: Path) -> dict[str, Any]:
    """A run folder's run.json; a DataFileError names the file and what is wrong (damaged JSON, not an object,
    a field of another type than the runner writes)."""
    content = read_json_file(path)
    if not isinstance(content, dict):
        raise DataFileError(f"{path}: expected a JSON object (the run file), got {json_type(content)}")
    for name, kind in RUN_FILE_FIELDS.items():
        parent, _, field_name = name.rpartition(".")
        holder = content.get(parent) if parent else content
        if not isinstance(holder, dict) or field_name not in holder:
            continue
        value = holder[field_name]
        if value is None and name in RUN_FILE_NULLABLE:
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            allowed = JSON_KINDS[kind] + (" or null" if name in RUN_FILE_NULLABLE else "")
            raise DataFileError(f"{path}: {name} is {json_type(value)}, not {allowed}")
    return content


def check_resumable(run_file: Path, identity: dict[str, Any]) -> tuple[Optional[dict], dict[str, Any]]:
    """(the previous run file, the identity to record), after checking that the benchmark, the decoding and
    each model role both sessions use match. A session may add a role (the tb condition later on)."""
    if not run_file.is_file():
        return None, identity
    previous = read_run_file(run_file)
    before = previous.get("identity", {})
    before_models = before.get("models", {})
    differs = {k: (before.get(k), identity[k]) for k in ("benchmark", "decoding") if before.get(k) != identity[k]}
    differs.update(
        {
            f"{role} model": (before_models[role], model)
            for role, model in identity["models"].items()
            if role in before_models and before_models[role] != model
        }
    )
    if differs:
        detail = "; ".join(f"{k}: {old} here before, {new} now" for k, (old, new) in differs.items())
        raise ValueError(
            f"{run_file.parent} holds outputs of a different run ({', '.join(differs)} differ: "
            f"{detail}); use another --out folder"
        )
    return previous, {**identity, "models": {**before_models, **identity["models"]}}


# ------------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------------


class Runner:
    """Runs ``units`` of one process and writes their records."""

    def __init__(
        self,
        adapters: dict[str, ModelAdapter],
        preparers: dict[str, AudioPreparer],
        items: Sequence[dict],
        decoding: DecodingParams,
        writer: ShardWriter,
        rank: int,
    ):
        self.adapters, self.preparers, self.items = adapters, preparers, items
        self.decoding, self.writer, self.rank = decoding, writer, rank
        self.clips = ClipCache()

    def run_batch(self, batch: Sequence[Unit]) -> list[dict]:
        """One batch start to end in this thread, nothing computed ahead."""
        return self.run_prepared(batch, self.prepare(batch, encode=False))

    def prepare(self, batch: Sequence[Unit], encode: bool = True) -> PreparedBatch:
        """Everything a batch needs before the model: each unit's clip (decoded and cut; kept for the other
        templates of the same item and condition) or its audio error, and, with ``encode`` and an adapter
        that has ``prepare``, the model's inputs. ``prefetch.prefetched`` calls it on its own thread for
        the next batch while the model generates this one."""
        role = batch[0].role
        adapter, preparer = self.adapters[role], self.preparers[role]
        ready = PreparedBatch()
        for unit in batch:
            start = time.perf_counter()
            source = unit.item_index if unit.audio_index is None else unit.audio_index
            clip = self.clips.get(
                preparer,
                unit.condition,
                unit.item_index,
                lambda: preparer.prepare(unit.condition, self.items[source].get("audio")),
            )
            if isinstance(clip, AudioError):
                no_audio = {
                    "seconds": 0.0,
                    "source_seconds": None,
                    "truncated": False,
                    "max_audio_s": preparer.max_audio_s,
                    "sampling_rate": preparer.sampling_rate,
                }
                ready.failed.append((unit, clip, no_audio, time.perf_counter() - start))
            else:
                ready.clips.append((unit, clip, time.perf_counter() - start))
        ready.requests = [GenerationRequest(u.key, list(u.messages), a.audio) for u, a, _ in ready.clips]
        if encode and ready.requests and hasattr(adapter, "prepare"):
            ready.inputs = adapter.prepare(ready.requests)
        return ready

    def run_prepared(self, batch: Sequence[Unit], ready: PreparedBatch) -> list[dict]:
        """Generate the prepared batch and write its records (audio failures first, as they were found)."""
        adapter = self.adapters[batch[0].role]
        records = [
            self.record(unit, adapter, Generation(text=None, error=f"audio: {err}"), info, seconds, 1)
            for unit, err, info, seconds in ready.failed
        ]
        if ready.requests:
            given = {"prepared": ready.inputs} if ready.inputs is not None else {}
            generations = adapter.generate(ready.requests, self.decoding, **given)
            if len(generations) != len(ready.requests):
                raise RuntimeError(
                    f"{adapter.name} returned {len(generations)} outputs for {len(ready.requests)} requests"
                )
            for (unit, audio, audio_s), generation in zip(ready.clips, generations):
                info = (
                    audio.info
                    if unit.audio_index is None
                    else {**audio.info, "donor": str(self.items[unit.audio_index]["id"])}
                )  # shuffled: whose clip
                records.append(self.record(unit, adapter, generation, info, audio_s, len(ready.clips)))
        self.writer.write_all(records)
        return records

    def record(
        self, unit: Unit, adapter: ModelAdapter, generation: Generation, audio: dict, audio_s: float, batch_size: int
    ) -> dict:
        return OutputRecord(
            key=unit.key,
            id=unit.item_id,
            index=unit.item_index,
            model=adapter.name,
            adapter=getattr(adapter, "kind", type(adapter).__name__),
            condition=unit.condition.name,
            template=unit.template.to_dict(),
            decoding=self.decoding.to_dict(),
            output=generation.text,
            error=generation.error,
            finish_reason=generation.finish_reason,
            details=generation.details or None,  # the adapter's own record (a cascade's transcript, retries)
            audio=audio,
            tokens={"prompt": generation.prompt_tokens, "completion": generation.completion_tokens},
            timings={
                "audio_s": round(audio_s, 6),
                "generate_s": round(generation.seconds, 6),
                "batch_size": batch_size,
            },
            rank=self.rank,
        ).to_dict()


def _adapters_for(
    config: RunConfig, conditions: Sequence[Condition], device: Optional[str], given: Optional[dict[str, ModelAdapter]]
) -> dict[str, ModelAdapter]:
    roles = {"tb" if c.kind == "tb" else "main" for c in conditions}
    if "tb" in roles and not config.tb_model and not (given and "tb" in given):
        raise ValueError("the tb condition needs a text backbone: set tb_model (--tb-model)")
    if given is not None:
        missing = roles - set(given)
        if missing:
            raise ValueError(f"conditions need adapters for {sorted(missing)}")
        return {role: given[role] for role in roles}
    options = {"device": device, **config.model_options}
    adapters: dict[str, ModelAdapter] = {}
    if "main" in roles:
        adapters["main"] = make_adapter(config.adapter, config.model, **options)
    if "tb" in roles:
        tb_options = (
            {k: v for k, v in options.items() if k not in ("preset", "max_audio_s")}
            if config.tb_options is None
            else {"device": device, **config.tb_options}
        )
        adapters["tb"] = make_adapter(config.tb_adapter, config.tb_model, **tb_options)
    for role, adapter in adapters.items():
        audio_conditions = [c.name for c in conditions if c.sends_audio and role == "main"]
        if audio_conditions and not adapter.takes_audio:
            raise ValueError(f"{adapter.name} takes no audio; conditions {audio_conditions} need an audio model")
    return adapters


def run(
    config: RunConfig,
    adapters: Optional[dict[str, ModelAdapter]] = None,
    on_batch: Optional[Callable[[int], None]] = None,
) -> Optional[dict[str, Any]]:
    """Run ``config`` in this process (one of ``accelerate launch``'s, or alone). ``adapters`` ({"main": ...,
    "tb": ...}) replaces building them from the config (tests, benchmarks, a sweep's model loaded once).
    ``on_batch(n)`` is told each finished batch's size (a sweep's own progress). Returns the run file's
    content on the main process (which writes it), None on the others."""
    import torch
    from accelerate import PartialState

    if os.environ.get(LAUNCHER_ENV) or os.environ.get("TORCHELASTIC_RUN_ID"):
        die_with_parent()  # a launched worker stops when its launcher does, however it is stopped
    # Without an accelerator, PartialState runs a launched process alone unless told it is a CPU run (then
    # the processes join one gloo group).
    state = PartialState(cpu=not torch.accelerator.is_available())
    try:
        with ExitStack() as held:
            return _run(config, adapters, state, held, on_batch)
    finally:
        if state.num_processes > 1:
            state.destroy_process_group()


def _run(
    config: RunConfig,
    given: Optional[dict[str, ModelAdapter]],
    state: Any,
    held: ExitStack,
    on_batch: Optional[Callable[[int], None]] = None,
) -> Optional[dict[str, Any]]:
    from ..data import benchmark_spec

    out = Path(config.out)
    benchmark = benchmark_spec(config.benchmark).name
    conditions = with_audio_check(parse_conditions(config.conditions), config.audio_check)
    templates = parse_templates(config.templates or [DEFAULT_TEMPLATES[benchmark]])
    if config.batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {config.batch_size}")
    if state.is_main_process:  # one live run per folder, taken before any model loads
        held.callback(lock_run_folder(out).release)
    started = _now()
    device = str(state.device) if not config.model_options.get("device_map") else None
    adapters = _adapters_for(config, conditions, device, given)
    fragments = Path(config.fragment_cache) if config.fragment_cache else out / "fragments"
    preparers = {role: AudioPreparer(a.sampling_rate, a.max_audio_s, fragments) for role, a in adapters.items()}
    with state.main_process_first():  # one process builds the datasets cache, the others read it
        items, skipped_at_load = load_items_reported(
            benchmark, config.data, config.benchmark_config, config.limit, config.on_missing_audio
        )
    names = {role: a.name for role, a in adapters.items()}
    check = choose_audio_check(conditions, [str(it["id"]) for it in items], config.audio_check, config.audio_check_seed)
    units, not_applicable_counts = plan_units(
        items, conditions, templates, names, preparers.get("main") or preparers["tb"], check
    )
    previous, identity = check_resumable(out / RUN_FILE, _identity(config, adapters))
    shard_dir = out / SHARD_DIR
    before = read_shards(shard_dir) if shard_dir.is_dir() else ShardRead([])
    finished = {k for k, r in select_records(before.records)[0].items() if r.get("error") is None}
    state.wait_for_everyone()  # everyone has read the run file and the shards before anyone writes
    pending = [u for u in units if u.key not in finished]
    if state.is_main_process:
        if previous is not None and previous.get("status") == "running":  # its session was killed
            previous = record_interrupted(out, previous, before.records)
        session = {
            "started": started,
            "world_size": state.num_processes,
            "units": len(units),
            "resumed": len(units) - len(pending),
            "shard_records": _outcomes(before.records),
        }
        write_run_file(
            out,
            {
                **(previous or {}),
                "identity": identity,
                "config": config.to_dict(),
                "status": "running",
                "started": (previous or {}).get("started", started),
                "session": session,
            },
        )
    mine = length_sorted(pending)[state.process_index :: state.num_processes]
    writer = ShardWriter(shard_dir / f"rank-{state.process_index}.jsonl")
    journal = SentJournal(shard_dir / f"rank-{state.process_index}.sent")
    journal_sends(adapters.values(), journal)
    runner = Runner(adapters, preparers, items, config.decoding, writer, state.process_index)
    progress = _progress(len(mine), config.progress and state.is_main_process, state.num_processes)
    loop_start = time.perf_counter()
    try:
        for batch in prefetched(runner, batches(mine, config.batch_size)):
            progress.update(len(batch))
            if on_batch is not None:
                on_batch(len(batch))
    finally:
        progress.close()
        journal_sends(adapters.values(), None)  # a caller's adapter may serve another run next
        journal.close()
        writer.close()
    from accelerate.utils import gather_object

    # The slowest process decides when the work is done: items/s = units run / its loop time.
    loop_seconds = max(gather_object([time.perf_counter() - loop_start]))
    state.wait_for_everyone()
    summary = None
    if state.is_main_process:
        summary = gather(
            out,
            units,
            not_applicable_counts,
            config,
            adapters,
            templates,
            identity,
            previous,
            started,
            len(finished & {u.key for u in units}),
            state.num_processes,
            before.torn_lines,
            loop_seconds,
            skipped_at_load,
            done_before=finished,
            check=check,
        )
    state.wait_for_everyone()  # no process leaves before the outputs are gathered
    return summary


def _progress(total: int, enabled: bool, world: int):
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        disable=not enabled,
        unit="item",
        dynamic_ncols=True,
        desc="generating" if world == 1 else f"generating (rank 0 of {world})",
    )


def gather(
    out: Path,
    units: Sequence[Unit],
    not_applicable_counts: dict[str, int],
    config: RunConfig,
    adapters: dict[str, ModelAdapter],
    templates: Sequence[PromptTemplate],
    identity: dict[str, Any],
    previous: Optional[dict],
    started: str,
    resumed: int,
    world: int,
    torn_at_start: int,
    loop_seconds: float,
    skipped_at_load: Sequence[dict] = (),
    done_before: Iterable[str] = (),
    check: Optional[AudioCheck] = None,
) -> dict[str, Any]:
    """Rank 0, after every process is done: outputs.jsonl in output order and run.json with the counts
    (``torn_at_start``: torn last lines the shards held when this session started, left by a killed run;
    ``skipped_at_load``: the items the loader left out, by the on_missing_audio policy; ``done_before``: the
    keys finished before this session, whose records this session's speed leaves out; ``check``: the
    audio-reliance check's items, written with its units' keys as ``audio_check``)."""
    shards = read_shards(out / SHARD_DIR)
    chosen, duplicates = select_records(shards.records)
    ordered = [chosen[u.key] for u in units if u.key in chosen]
    write_outputs(out, ordered)
    failed: dict[str, int] = {}
    for record in ordered:
        if record.get("error") is not None:
            kind = "audio" if str(record["error"]).startswith("audio:") else "model"
            failed[kind] = failed.get(kind, 0) + 1
    sessions = (previous or {}).get("sessions", [])
    ran = len(units) - resumed
    done_before = set(done_before)
    audio_s = session_audio_seconds(r for r in ordered if r["key"] not in done_before)
    sessions = sessions + [
        {
            "started": started,
            "finished": _now(),
            "world_size": world,
            "ran": ran,
            "generation_s": round(loop_seconds, 3),
            "items_per_s": round(ran / loop_seconds, 3) if ran and loop_seconds > 0 else None,
            "audio_s": audio_s,
            "real_time_factor": round(audio_s / loop_seconds, 3) if audio_s and loop_seconds > 0 else None,
        }
    ]
    usage = usage_summary(shards.records, {u.key for u in units}, read_sent(out / SHARD_DIR))
    summary = RunSummary(
        identity=identity,
        config=config.to_dict(),
        models={
            role: {
                "name": a.name,
                "adapter": getattr(a, "kind", type(a).__name__),
                "description": a.description,
                "max_audio_s": a.max_audio_s,
                "sampling_rate": a.sampling_rate,
            }
            for role, a in adapters.items()
        },
        templates=[{"name": t.name, "hash": t.hash, "source": t.source} for t in templates],
        versions=package_versions(),
        git=git_commit(),
        started=(previous or {}).get("started", started),
        finished=sessions[-1]["finished"],
        sessions=sessions,
        counts={
            "units": len(units),
            "written": len(ordered),
            "missing": len(units) - len(ordered),
            "ok": sum(1 for r in ordered if r.get("error") is None),
            "failed": sum(failed.values()),
            "failed_by_kind": failed,
            "not_applicable": not_applicable_counts,
            "truncated": sum(1 for r in ordered if (r.get("audio") or {}).get("truncated")),
            "resumed": resumed,
            "torn_lines": torn_at_start,
            "duplicates": duplicates,
            "skipped_at_load": len(skipped_at_load),
        },
        skipped_items=list(skipped_at_load),
        # every request made for this run's units in this folder, failed ones a rerun filled included, and
        # those a killed session sent but never recorded (its journal of sent requests)
        usage=usage,
        speed=speed_summary(ordered, sessions),
        status="finished" if len(ordered) == len(units) else "incomplete",
        outputs=OUTPUTS_FILE,
        cost=cost_of(usage, load_prices(config.prices)) if config.prices else None,
        audio_check=None
        if check is None
        else {**check.to_dict(), "units": [u.key for u in units if u.condition.kind in CHECK_KINDS]},
    ).to_dict()
    summary = with_protocol(summary, _run_protocol(config, units, templates, adapters))
    write_run_file(out, summary)
    return summary


def _run_protocol(
    config: RunConfig, units: Sequence[Unit], templates: Sequence[PromptTemplate], adapters: dict[str, ModelAdapter]
) -> dict[str, Any]:
    """This command's protocol block (``inference.protocol``): its items, templates, conditions, decoding."""
    from ..data import benchmark_spec

    return run_protocol(
        benchmark=benchmark_spec(config.benchmark).name,
        data=config.data,
        benchmark_config=config.benchmark_config,
        item_ids=dict.fromkeys(u.item_id for u in units),
        templates=[t.to_dict() for t in templates],
        conditions=[c.name for c in parse_conditions(config.conditions)],
        decoding=config.decoding.to_dict(),
        text_backbone=adapters["tb"].name if "tb" in adapters else None,
    )


def _outcomes(records: Iterable[dict]) -> dict[str, int]:
    ok = failed = 0
    for record in records:
        if record.get("error") is None:
            ok += 1
        else:
            failed += 1
    return {"ok": ok, "failed": failed}


def record_interrupted(out: Path, previous: dict[str, Any], records: Sequence[dict]) -> dict[str, Any]:
    """A run file still "running" when the next session starts (holding the lock) is a session that was
    killed: it is added to the sessions as interrupted, with its counts (total: its units; done: finished
    at its start plus those it wrote; failed: the failures it wrote), and written at once."""
    begun = previous.get("session") if isinstance(previous.get("session"), dict) else {}
    before = begun.get("shard_records") if isinstance(begun.get("shard_records"), dict) else {}
    sessions = previous.get("sessions") if isinstance(previous.get("sessions"), list) else []
    now = _outcomes(records)
    shards = list((out / SHARD_DIR).glob("rank-*.jsonl"))
    last = max((p.stat().st_mtime for p in shards), default=None)
    entry = {
        "started": begun.get("started"),
        "status": "interrupted",
        "world_size": begun.get("world_size"),
        "last_write": (
            _dt.datetime.fromtimestamp(last, _dt.timezone.utc).isoformat(timespec="seconds")
            if last is not None
            else None
        ),
        "counts": {
            "total": begun.get("units"),
            "done": begun.get("resumed", 0) + now["ok"] - before.get("ok", 0),
            "failed": now["failed"] - before.get("failed", 0),
        },
        "found": _now(),
    }
    updated = {k: v for k, v in previous.items() if k != "session"}
    updated.update(status="interrupted", sessions=sessions + [entry])
    write_run_file(out, updated)
    return updated


def write_outputs(out: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """outputs.jsonl, whole, replaced at once (a reader never sees half of it)."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (OUTPUTS_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for record in records:
            f.write(output_line(record))
    os.replace(tmp, out / OUTPUTS_FILE)


def write_run_file(out: Path, content: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (RUN_FILE + ".tmp")
    tmp.write_text(json.dumps(content, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, out / RUN_FILE)


__all__ = [
    "ADAPTERS",
    "OUTPUTS_FILE",
    "RUN_FILE",
    "SHARD_DIR",
    "RunConfig",
    "Runner",
    "ShardWriter",
    "Unit",
    "batches",
    "gather",
    "length_sorted",
    "load_items",
    "make_adapter",
    "plan_units",
    "read_shards",
    "read_sent",
    "run",
    "select_records",
    "unit_key",
    "write_outputs",
    "write_run_file",
]
