"""AudioSpan (Chu et al., 2026): long-form audio comprehension, 360 recordings of 10 min to 2.7 h.

The released files could not be read here, so this builder follows the paper (§3.2-3.3, Table 2,
App. B-C) and reads the raw layout below; released field names are mapped through ``FIELD_ALIASES``
(one dict, by record kind), and any field it does not know is kept in the item's ``extra`` JSON and
reported (``unmapped_field``), never dropped.

Raw layout::

    <root>/metadata/native.jsonl      native items, one per line: an MCQ and an OEQ for each of
                                      P/U/R per recording (1,080 + 1,080)
    <root>/metadata/anchor.jsonl      anchor MCQs, one per line: three per chain (P -> U -> R), one
                                      chain per anchored recording (1,080 = 360 x 3)
    <root>/metadata/recordings.jsonl  optional, one line per source recording: recording-level fields
    <root>/metadata/edits.jsonl       optional, one edit manifest per anchored recording
    <root>/audio/original/<recording_id>.<ext>   the source recording (native items)
    <root>/audio/anchored/<recording_id>.<ext>   its anchored copy (anchor items)
    <root>/review.jsonl               optional, the human review's decisions (§4.5; ``audioreason.data.review``)

Human review: when ``review.jsonl`` exists, the latest decision per item holds. A rejected item is left out; a
fixed one is built with its fixes (stem, options, criteria, reference answer; an MCQ's answer follows its correct
option's text); every outcome is in the report (review_rejected, review_chain_dropped, review_fixed,
review_unknown_item, a ``skipped`` for each item left out, the totals in ``report.review``), and each reviewed
item's ``extra`` records its decision under "review". An anchor chain with a rejected link is left out whole:
its Chain score (§3.2 Eq. 3) credits the longest correct prefix of all three links, so two surviving links would
score as a different, shorter chain. The review applies before the structure checks, so a native recording that
loses a level to it is reported as an incomplete native set. A line of review.jsonl that is not a decision, or a
fix that does not fit its item, stops the build with an error naming the line.

``<ext>`` is the first of .wav .flac .mp3 .ogg .opus .m4a .aac .webm that exists; a record may name
its file instead (``audio_file``, relative to <root>; ``anchored_audio_file`` on a recording). Every audio
path must resolve inside <root> (symlinks followed): one that leads out is refused, never read
(``audio_outside_root``); each file's header is read once (``unreadable_audio`` when no reader opens it).

Item fields (native and anchor), with the values accepted (normalized as shown):
    id, recording_id, question                         required strings
    format          MCQ | OEQ ("mcq", "multiple_choice", "open_ended"...); inferred from the presence
                    of choices when absent (reported as inferred_value); anchor items are MCQ
    cognitive_level perception | understanding | reasoning (P/U/R accepted); for anchor items
                    derived from link_position when absent (1 P, 2 U, 3 R)
    dimension       free string (Table 4: recognition, localization, counting, interpretation,
                    tracking, summarization, causal, relational, logical); null allowed
    choices         MCQ options: a list, or {"A": ..., "B": ...} (ordered by letter)
    answer          MCQ: the option text, or its letter ("B", "(B)"): mapped to the text and reported
    reference_answer, rubric   OEQ: the reference answer and the criteria, each
                    {text, importance essential|supporting, time_range [start, end] s or null,
                    localization bool}; a time may be seconds or "MM:SS" / "HH:MM:SS"
    pair_id         optional: shared by the MCQ and OEQ versions of one native question
    chain_id        anchor: defaults to recording_id (one chain per recording, Table 2)
    link_position   anchor: 1, 2, 3 (P, U, R)
    operation       anchor: addition | deletion | modification (or from the edit manifest)
    edit_manifest   anchor: inline, or from edits.jsonl / recordings.jsonl by recording_id:
                    {operation, positions [[start, end], ...] (1-3 spans), event_category, snr_db
                    (addition), deletion_mode silence|noise (deletion), attribute loudness|speed,
                    gain_db, speed_factor (modification), any other key kept in ``extra``}; with
                    ``anchor_from_manifests=True`` a recording of edits.jsonl without a pre-made anchored
                    copy is anchored at build time from its original and this manifest (cached; every
                    file it reads or writes inside <root>; see
                    ``audioreason.audio.anchor_files.anchor_from_manifests``)
    language (en|zh), duration_tier (S|M|L), duration_seconds, genre, topic
                    on the item or its recording (item wins; disagreement is reported)

Stored schema: the common core plus recording_id, subset (native_mcq | native_oeq | anchor), format,
language, duration_tier, duration_seconds (from the audio header when readable), genre, topic,
cognitive_level, dimension, pair_id, reference_answer, rubric, chain_id, link_position, operation,
edit_manifest, extra. For an OEQ, ``choices`` is [] and ``answer`` repeats the reference answer (so
``answer`` is always the gold text) with answer_index -1.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

import datasets
from datasets import Audio, List, Value

from audioreason.text.audiospan_fields import (
    ATTRIBUTES,
    DELETION_MODES,
    DIMENSIONS,
    FIELD_ALIASES,
    FORMATS,
    IMPORTANCE,
    LANGUAGES,
    LEVEL_BY_POSITION,
    LEVELS,
    OPERATIONS,
    TIERS,
)
from audioreason.text.timestamps import is_single_span as _is_single_span
from audioreason.text.timestamps import parse_record_span, parse_record_time

from .audio_files import AudioFiles
from .builder import BenchmarkBuilder, BenchmarkConfig
from .catalog import (  # the files that mark a raw folder, and where the audio is
    ANCHOR_FILE,
    ANCHORED_DIR,
    AUDIO_EXTENSIONS,
    EDITS_FILE,
    NATIVE_FILE,
    ORIGINAL_DIR,
)
from .features import TEST_SPLIT, benchmark_features
from .fields import as_text, check_choices
from .hub_export import HubConfig, prepare_out_dir, write_audiofolder_group, write_card
from .review import REVIEW_FILE, review_items
from .scan import SourceScan
from .validation import ValidationReport

RECORDINGS_FILE = "metadata/recordings.jsonl"

SUBSETS = ("native_mcq", "native_oeq", "anchor")
CONFIG_NAMES = ("all",) + SUBSETS

CRITERION = {
    "text": Value("string"),
    "importance": Value("string"),
    "time_range": List(Value("float64")),
    "localization": Value("bool"),
}
SPAN = {"start": Value("float64"), "end": Value("float64")}
EDIT_MANIFEST = {
    "operation": Value("string"),
    "positions": List(SPAN),
    "event_category": Value("string"),
    "snr_db": Value("float64"),
    "deletion_mode": Value("string"),
    "attribute": Value("string"),
    "gain_db": Value("float64"),
    "speed_factor": Value("float64"),
    "extra": Value("string"),
}

FEATURES = benchmark_features(
    {
        "recording_id": Value("string"),
        "subset": Value("string"),
        "format": Value("string"),
        "language": Value("string"),
        "duration_tier": Value("string"),
        "duration_seconds": Value("float64"),
        "genre": Value("string"),
        "topic": Value("string"),
        "cognitive_level": Value("string"),
        "dimension": Value("string"),
        "pair_id": Value("string"),
        "reference_answer": Value("string"),
        "rubric": List(CRITERION),
        "chain_id": Value("string"),
        "link_position": Value("int32"),
        "operation": Value("string"),
        "edit_manifest": EDIT_MANIFEST,
        "extra": Value("string"),
    }
)

# Our field names per record kind.
ITEM_FIELDS = (
    "id",
    "recording_id",
    "format",
    "cognitive_level",
    "dimension",
    "question",
    "choices",
    "answer",
    "reference_answer",
    "rubric",
    "pair_id",
    "chain_id",
    "link_position",
    "operation",
    "edit_manifest",
    "language",
    "duration_tier",
    "duration_seconds",
    "genre",
    "topic",
    "audio_file",
)
RECORDING_FIELDS = (
    "recording_id",
    "language",
    "duration_tier",
    "duration_seconds",
    "genre",
    "topic",
    "audio_file",
    "anchored_audio_file",
    "operation",
    "edit_manifest",
)
CRITERION_FIELDS = tuple(CRITERION)
MANIFEST_FIELDS = ("recording_id",) + tuple(k for k in EDIT_MANIFEST if k != "extra")
# What `audioreason construct` adds to each item (the evidence ids it relies on, how it was made): kept in
# ``extra`` like any field the schema lacks, but expected, so not reported as unmapped.
CONSTRUCTION_FIELDS = ("evidence", "provenance")
KNOWN_FIELDS = {
    "item": ITEM_FIELDS,
    "recording": RECORDING_FIELDS,
    "criterion": CRITERION_FIELDS,
    "manifest": MANIFEST_FIELDS,
}

CITATION = """@article{chu2026audiospan,
  title   = {{AudioSpan}: Spanning the Duration and Depth of Audio Comprehension},
  author  = {Chu, Yunfei and Gao, Meng and He, Haolin and Xu, Jin},
  journal = {arXiv preprint arXiv:2608.26431},
  year    = {2026}
}"""

_LETTER = re.compile(r"^\s*\(?\s*([A-Za-z])\s*[\).:]?\s*$")


# ----------------------------------------------------------------------------------------------
# Value parsing
# ----------------------------------------------------------------------------------------------


def _position(value: Any) -> Optional[int]:
    """A chain link position 1-3 from 1, 1.0, "1", or a level letter/name; None otherwise."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in LEVELS:
            return {v: k for k, v in LEVEL_BY_POSITION.items()}[LEVELS[text]]
        value = int(text) if text.isdigit() else None
    return value if isinstance(value, int) and value in LEVEL_BY_POSITION else None


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise ValueError(f"not a boolean: {value!r}")


def _float(value: Any) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, str):
        value = re.sub(r"\s*(db|x|×)\s*$", "", value.strip(), flags=re.IGNORECASE)
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"not a finite number: {value!r}")
    return number


# ----------------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------------


def _read_jsonl(path: Path) -> list[Any]:
    records = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{number}: not valid JSON ({err.msg})") from err
    return records


class _Reader:
    """Normalizes the records of one raw folder, writing every finding to ``report``."""

    def __init__(self, root: Path, aliases: Mapping[str, Mapping[str, str]], report: ValidationReport):
        self.root, self.aliases, self.report = root, aliases, report
        self.pending: list[tuple[str, str]] = []

    # -- names ---------------------------------------------------------------------------------
    def rename(self, raw: Mapping[str, Any], kind: str, owner: Optional[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(fields under our names, unknown fields). Canonical names win over aliases (reported).

        With ``owner=None`` the findings wait in ``self.pending`` until ``flush(owner)`` (an item's
        id is only known after renaming).
        """
        notes: list[tuple[str, str]] = []
        known, aliases = KNOWN_FIELDS[kind], self.aliases.get(kind, {})
        out: dict[str, Any] = {k: v for k, v in raw.items() if k in known}
        unknown: dict[str, Any] = {}
        for key, value in raw.items():
            if key in known:
                continue
            target = aliases.get(key) or aliases.get(key.lower())
            if target is None and key.lower() in known:
                target = key.lower()
            if target is None:
                unknown[key] = value
            elif target in out:
                notes.append(("alias_conflict", f"{kind} field {key!r} and {target!r} both given; kept {target!r}"))
            else:
                out[target] = value
        if kind != "manifest":  # manifests keep unknown keys in their own `extra`, by design
            notes.extend(
                ("unmapped_field", f"{kind} field {key!r} (kept in extra)")
                for key in unknown
                if not (kind == "item" and key in CONSTRUCTION_FIELDS)
            )
        if owner is None:
            self.pending.extend(notes)
        else:
            for issue, detail in notes:
                self.report.add(issue, owner, detail)
        return out, unknown

    def flush(self, owner: str) -> None:
        for issue, detail in self.pending:
            self.report.add(issue, owner, detail)
        self.pending = []

    def enum(self, owner: str, name: str, value: Any, mapping: Mapping[str, str]) -> Optional[str]:
        if value is None or value == "":
            return None
        text = as_text(value).strip()
        canonical = mapping.get(text.lower())
        if canonical is None:
            self.report.add("invalid_value", owner, f"{name}={value!r} is not one of {sorted(set(mapping.values()))}")
            return text
        return canonical

    # -- recordings and manifests --------------------------------------------------------------
    def recordings(self, path: Path) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for row, raw in enumerate(_read_jsonl(path) if path.is_file() else []):
            if not isinstance(raw, Mapping):
                self.report.add("invalid_value", f"recordings:row-{row}", "not an object")
                continue
            fields_, unknown = self.rename(raw, "recording", f"recordings:row-{row}")
            rid = as_text(fields_.get("recording_id"))
            if not rid:
                self.report.add("missing_field", f"recordings:row-{row}", "recording_id")
                continue
            if rid in out:
                self.report.add("repeated_id", f"recording:{rid}", "recordings.jsonl lists it twice (first kept)")
                continue
            out[rid] = fields_
        return out

    def manifest(self, owner: str, raw: Any) -> Optional[dict[str, Any]]:
        if raw is None:
            return None
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError:
                self.report.add("invalid_value", owner, "edit_manifest is a string that is not JSON")
                return None
        if not isinstance(raw, Mapping):
            self.report.add("invalid_value", owner, f"edit_manifest is a {type(raw).__name__}")
            return None
        fields_, unknown = self.rename(raw, "manifest", owner)
        manifest: dict[str, Any] = {
            "operation": self.enum(owner, "edit_manifest.operation", fields_.get("operation"), OPERATIONS),
            "positions": [],
            "event_category": as_text(fields_.get("event_category")),
            "snr_db": None,
            "deletion_mode": None,
            "attribute": None,
            "gain_db": None,
            "speed_factor": None,
            "extra": json.dumps(unknown, ensure_ascii=False, sort_keys=True) if unknown else None,
        }
        positions = fields_.get("positions")
        if positions is None:
            self.report.add("missing_field", owner, "edit_manifest.positions")
            positions = []
        if _is_single_span(positions):
            positions = [positions]
        for n, span in enumerate(positions):
            try:
                parsed = parse_record_span(span)
            except ValueError as err:
                self.report.add("invalid_value", owner, f"edit_manifest.positions[{n}]: {err}")
                continue
            if parsed is not None:
                manifest["positions"].append({"start": parsed[0], "end": parsed[1]})
        if not 1 <= len(manifest["positions"]) <= 3:
            self.report.add(
                "invalid_value",
                owner,
                f"edit_manifest has {len(manifest['positions'])} positions (the paper applies each operation at 1-3)",
            )
        for key in ("snr_db", "gain_db", "speed_factor"):
            try:
                manifest[key] = _float(fields_.get(key))
            except (TypeError, ValueError):
                self.report.add("invalid_value", owner, f"edit_manifest.{key}={fields_.get(key)!r}")
        manifest["deletion_mode"] = self.enum(
            owner, "edit_manifest.deletion_mode", fields_.get("deletion_mode"), DELETION_MODES
        )
        manifest["attribute"] = self.enum(owner, "edit_manifest.attribute", fields_.get("attribute"), ATTRIBUTES)
        return manifest

    def edits(self, path: Path) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for row, raw in enumerate(_read_jsonl(path) if path.is_file() else []):
            owner = f"edits:row-{row}"
            if not isinstance(raw, Mapping):
                self.report.add("invalid_value", owner, "not an object")
                continue
            rid = raw.get("recording_id")
            if rid is None:
                for alias, target in self.aliases.get("manifest", {}).items():
                    if target == "recording_id" and alias in raw:
                        rid = raw[alias]
                        break
            if rid is None:
                self.report.add("missing_field", owner, "recording_id")
                continue
            rid = as_text(rid)
            body = {
                k: v
                for k, v in raw.items()
                if k != "recording_id" and self.aliases.get("manifest", {}).get(k) != "recording_id"
            }
            if rid in out:
                self.report.add("repeated_id", f"edits:{rid}", "edits.jsonl lists it twice (first kept)")
                continue
            out[rid] = self.manifest(f"edits:{rid}", body)
        return out

    # -- audio ---------------------------------------------------------------------------------
    def find_audio(self, owner: str, folder: str, recording_id: str, explicit: Optional[str]) -> str:
        """The audio path relative to root, as stored in audio_path: the record's own, else the first
        ``<folder>/<recording_id><ext>`` that exists (checked later, by ``AudioFiles.check``)."""
        if explicit:
            return explicit
        found = [
            f"{folder}/{recording_id}{ext}"
            for ext in AUDIO_EXTENSIONS
            if (self.root / folder / f"{recording_id}{ext}").is_file()
        ]
        if len(found) > 1:
            self.report.add(
                "invalid_value",
                owner,
                f"several audio files for {recording_id} in {folder}: "
                f"{[Path(p).name for p in found]} (took {Path(found[0]).name})",
            )
        return found[0] if found else f"{folder}/{recording_id}{AUDIO_EXTENSIONS[0]}"


def _merge_recording_value(
    reader: _Reader, owner: str, name: str, item_value: Any, recording: Mapping[str, Any]
) -> Any:
    recording_value = recording.get(name)
    if item_value is None or item_value == "":
        return recording_value
    if recording_value not in (None, "") and str(recording_value).strip().lower() != str(item_value).strip().lower():
        reader.report.add("conflicting_value", owner, f"{name}: item {item_value!r}, recording {recording_value!r}")
    return item_value


def _criteria(reader: _Reader, owner: str, value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, list):
        reader.report.add("invalid_value", owner, f"rubric is a {type(value).__name__}, not a list")
        return []
    out = []
    for n, raw in enumerate(value):
        where = f"rubric[{n}]"
        if isinstance(raw, str):
            raw = {"text": raw}
        if not isinstance(raw, Mapping):
            reader.report.add("invalid_value", owner, f"{where} is not an object")
            continue
        fields_, unknown = reader.rename(raw, "criterion", owner)
        text = as_text(fields_.get("text"))
        if not text:
            reader.report.add("missing_field", owner, f"{where}.text")
        importance = reader.enum(owner, f"{where}.importance", fields_.get("importance"), IMPORTANCE)
        if importance is None:
            reader.report.add("missing_field", owner, f"{where}.importance")
        try:
            time_range = parse_record_span(fields_.get("time_range"))
        except ValueError as err:
            reader.report.add("invalid_value", owner, f"{where}.time_range: {err} (stored as null)")
            time_range = None
        localization = fields_.get("localization")
        if localization is None:
            localization = False
            reader.report.add("inferred_value", owner, f"{where}.localization absent: false")
        else:
            try:
                localization = _bool(localization)
            except ValueError as err:
                reader.report.add("invalid_value", owner, f"{where}.localization: {err} (stored as false)")
                localization = False
        if localization and time_range is None:
            reader.report.add("invalid_value", owner, f"{where} is a localization criterion without time_range")
        out.append({"text": text, "importance": importance, "time_range": time_range, "localization": localization})
    return out


def _choices_and_answer(reader: _Reader, owner: str, choices: Any, answer: Any) -> tuple[Any, Optional[str]]:
    """Choices as a list (a letter-keyed dict is ordered by letter) and the answer as option text."""
    if isinstance(choices, Mapping):
        keys = sorted(choices, key=lambda k: str(k))
        choices = [choices[k] for k in keys]
    answer_text = as_text(answer)
    if isinstance(choices, list) and answer_text is not None and answer_text not in [as_text(c) for c in choices]:
        match = _LETTER.match(answer_text)
        if match:
            index = ord(match.group(1).upper()) - ord("A")
            if 0 <= index < len(choices):
                reader.report.add("answer_given_as_letter", owner, f"{answer_text!r} -> {as_text(choices[index])!r}")
                answer_text = as_text(choices[index])
    return choices, answer_text


# ----------------------------------------------------------------------------------------------
# One item record, part by part (AudioSpanBuilder._item calls them in this order)
# ----------------------------------------------------------------------------------------------


@dataclass
class _Record:
    """One item record being read: its fields under our names, its id (every finding is filed under it) and
    its recording's id and fields (from recordings.jsonl; {} when it has none there)."""

    reader: _Reader
    item_id: str
    fields: dict[str, Any]
    recording_id: str
    recording: Mapping[str, Any]

    @property
    def report(self) -> ValidationReport:
        return self.reader.report

    def merged(self, name: str) -> Any:
        """A field the item or its recording may give (the item's wins; a disagreement is reported)."""
        return _merge_recording_value(self.reader, self.item_id, name, self.fields.get(name), self.recording)


def _item_id(reader: _Reader, fields_: Mapping[str, Any], source: str, row: int) -> str:
    """The item's id, or its file and row when it has none; the renaming's findings are filed under it."""
    item_id = as_text(fields_.get("id"))
    if not item_id:
        item_id = f"{source}:row-{row}"
        reader.report.add("missing_field", item_id, "id; the item is named by its file and row")
    reader.flush(item_id)
    return item_id


def _recording(
    reader: _Reader, item_id: str, fields_: Mapping[str, Any], recordings: Mapping[str, Mapping[str, Any]]
) -> tuple[str, Mapping[str, Any]]:
    """The item's recording id ("" when absent) and that recording's fields."""
    report = reader.report
    recording_id = as_text(fields_.get("recording_id"))
    if not recording_id:
        report.add("missing_field", item_id, "recording_id")
        recording_id = ""
    recording = recordings.get(recording_id, {})
    if recordings and recording_id and recording_id not in recordings:
        report.add("missing_field", item_id, f"recording {recording_id!r} not in recordings.jsonl")
    return recording_id, recording


def _question(record: _Record) -> str:
    question = as_text(record.fields.get("question"))
    if not question:
        record.report.add("missing_field", record.item_id, "question")
        question = question or ""
    return question


def _format_and_subset(record: _Record, source: str) -> tuple[str, str]:
    """MCQ or OEQ (inferred from the presence of choices when absent; anchor items are MCQ) and the subset."""
    reader, report, item_id = record.reader, record.report, record.item_id
    fmt = reader.enum(item_id, "format", record.fields.get("format"), FORMATS)
    if fmt is None:
        fmt = "MCQ" if record.fields.get("choices") else "OEQ"
        if source == "anchor":
            fmt = "MCQ"
        else:
            report.add("inferred_value", item_id, f"format absent: {fmt} (from the presence of choices)")
    if source == "anchor" and fmt != "MCQ":
        report.add("invalid_value", item_id, f"anchor items are MCQ, got format {fmt!r}")
    subset = "anchor" if source == "anchor" else ("native_mcq" if fmt == "MCQ" else "native_oeq")
    return fmt, subset


def _gold(record: _Record, fmt: str) -> tuple[list[str], Optional[str], int, Optional[str]]:
    """(choices, answer, answer_index, reference_answer). An MCQ's answer is option text; an OEQ has no
    choices and its answer is the reference answer (taken from ``answer`` when it has none)."""
    reader, report, item_id, fields_ = record.reader, record.report, record.item_id, record.fields
    choices_raw, answer = _choices_and_answer(reader, item_id, fields_.get("choices"), fields_.get("answer"))
    reference = as_text(fields_.get("reference_answer"))
    if fmt == "OEQ":
        if choices_raw:
            report.add("invalid_value", item_id, "an OEQ with choices (kept as given)")
        choices, answer_index = check_choices(item_id, choices_raw, None, report, require_answer_in_choices=False)
        if reference is None and answer is not None:
            reference = answer
            report.add("inferred_value", item_id, "reference_answer absent: taken from answer")
        if not reference:
            report.add("missing_field", item_id, "reference_answer")
        answer = reference
    else:
        choices, answer_index = check_choices(item_id, choices_raw, answer, report)
        if not choices:
            report.add("missing_field", item_id, "choices")
        elif len(choices) != 4:
            report.add("unexpected_choice_count", item_id, f"{len(choices)} options")
        if answer is None:
            report.add("missing_field", item_id, "answer")
    return choices, answer, answer_index, reference


def _rubric(record: _Record, fmt: str) -> list[dict[str, Any]]:
    """The rubric's criteria; an OEQ without any is reported."""
    rubric = _criteria(record.reader, record.item_id, record.fields.get("rubric"))
    if fmt == "OEQ" and not rubric:
        record.report.add("missing_rubric", record.item_id)
    return rubric


def _chain_link(record: _Record, level: Optional[str]) -> tuple[Optional[str], Optional[int], Optional[str]]:
    """An anchor item's (chain_id, link_position, cognitive_level): the chain defaults to the recording, and
    the link position and the level each stand in for the other when absent (1 P, 2 U, 3 R)."""
    report, item_id, fields_ = record.report, record.item_id, record.fields
    chain_id = as_text(fields_.get("chain_id"))
    if not chain_id:
        chain_id = record.recording_id
        report.add("inferred_value", item_id, "chain_id absent: the recording id")
    link_position = _position(fields_.get("link_position"))
    if link_position is None and fields_.get("link_position") is not None:
        report.add(
            "invalid_value",
            item_id,
            f"link_position={fields_.get('link_position')!r} is not 1, 2 or 3 (stored as null)",
        )
    if link_position is None and level in LEVELS.values():
        link_position = {v: k for k, v in LEVEL_BY_POSITION.items()}[level]
        report.add("inferred_value", item_id, f"link_position absent: {link_position} (from {level})")
    if level is None and link_position is not None:
        level = LEVEL_BY_POSITION[link_position]
        report.add("inferred_value", item_id, f"cognitive_level absent: {level} (link {link_position})")
    elif level is not None and link_position is not None and LEVEL_BY_POSITION[link_position] != level:
        report.add("conflicting_value", item_id, f"link_position {link_position} but level {level!r}")
    return chain_id, link_position, level


def _edit_manifest_and_operation(
    record: _Record, edits: Mapping[str, Mapping[str, Any]]
) -> tuple[Optional[Mapping[str, Any]], Optional[str]]:
    """An anchor item's edit manifest (inline, else edits.jsonl's, else its recording's) and operation (the
    item's or its recording's, else the manifest's; a disagreement with the manifest is reported)."""
    reader, report, item_id, fields_ = record.reader, record.report, record.item_id, record.fields
    recording_id, recording = record.recording_id, record.recording
    inline = fields_.get("edit_manifest")
    manifest = reader.manifest(item_id, inline) if inline is not None else None
    if manifest is None:
        manifest = edits.get(recording_id)
    if manifest is None and recording.get("edit_manifest") is not None:
        manifest = reader.manifest(f"recording:{recording_id}", recording["edit_manifest"])
    operation = reader.enum(item_id, "operation", fields_.get("operation") or recording.get("operation"), OPERATIONS)
    if manifest is None:
        report.add("missing_edit_manifest", item_id, f"recording {recording_id!r}")
    else:
        if operation is None:
            operation = manifest["operation"]
        elif manifest["operation"] and manifest["operation"] != operation:
            report.add(
                "conflicting_value", item_id, f"operation {operation!r}, edit manifest {manifest['operation']!r}"
            )
    if operation is None:
        report.add("missing_field", item_id, "operation")
    return manifest, operation


def _dimension(record: _Record) -> Optional[str]:
    """The dimension, lower-cased; one outside Table 4's is kept and reported."""
    dimension = as_text(record.fields.get("dimension"))
    if dimension is not None:
        dimension = dimension.strip().lower()
        if dimension not in DIMENSIONS:
            record.report.add(
                "invalid_value", record.item_id, f"dimension={dimension!r} is not one of Table 4's {DIMENSIONS}"
            )
    return dimension


def _language_and_tier(record: _Record) -> tuple[Optional[str], Optional[str]]:
    """The language and duration tier, from the item or its recording."""
    reader, item_id = record.reader, record.item_id
    language = reader.enum(item_id, "language", record.merged("language"), LANGUAGES)
    tier = reader.enum(item_id, "duration_tier", record.merged("duration_tier"), TIERS)
    for name, value in (("language", language), ("duration_tier", tier)):
        if value is None:
            record.report.add("missing_field", item_id, name)
    return language, tier


def _audio(record: _Record, source: str, audio_files: AudioFiles) -> tuple[str, Optional[Path], Optional[float]]:
    """(audio_path as stored, the checked file or None, duration_seconds): the original recording for a native
    item, the anchored copy for an anchor item; the duration from the header, else the declared one."""
    reader, item_id, fields_, recording = record.reader, record.item_id, record.fields, record.recording
    if source == "anchor":
        folder, explicit = ANCHORED_DIR, fields_.get("audio_file") or recording.get("anchored_audio_file")
    else:
        folder, explicit = ORIGINAL_DIR, fields_.get("audio_file") or recording.get("audio_file")
    audio_path = reader.find_audio(item_id, folder, record.recording_id, as_text(explicit))
    path, header = audio_files.check(item_id, audio_path)
    duration = None if header is None else header.duration
    declared = record.merged("duration_seconds")
    if duration is None and declared is not None:
        try:
            duration = parse_record_time(declared)
        except ValueError:
            record.report.add("invalid_value", item_id, f"duration_seconds={declared!r}")
    return audio_path, path, duration


# ----------------------------------------------------------------------------------------------
# The builder
# ----------------------------------------------------------------------------------------------


@dataclass
class AudioSpanConfig(BenchmarkConfig):
    """BenchmarkConfig plus ``field_aliases``: {kind: {released name: our name}} merged over
    FIELD_ALIASES for one build (it enters the cache key)."""

    field_aliases: Optional[dict[str, dict[str, str]]] = None
    # Anchor the originals from metadata/edits.jsonl at build time where no pre-made anchored copy exists
    # (audioreason.audio.anchor_files.anchor_from_manifests; cached beside the copies it writes).
    anchor_from_manifests: bool = False


def _config(name: str, description: str) -> AudioSpanConfig:
    return AudioSpanConfig(name=name, version=datasets.Version("1.0.0"), description=description)


class AudioSpanBuilder(BenchmarkBuilder):
    """Builds AudioSpan from the raw layout above. Configs: all (default), native_mcq, native_oeq, anchor."""

    BENCHMARK = "audiospan"
    BUILDER_CONFIG_CLASS = AudioSpanConfig
    FEATURES = FEATURES
    DEFAULT_METADATA_FILE = NATIVE_FILE
    BUILDER_CONFIGS = [
        _config("all", "every item: native MCQ, native OEQ and anchor MCQ chains"),
        _config("native_mcq", "native multiple-choice questions (Accuracy)"),
        _config("native_oeq", "native open-ended questions with rubric criteria (Rubric)"),
        _config("anchor", "anchor MCQ chains over the anchored recordings (Chain)"),
    ]
    DEFAULT_CONFIG_NAME = "all"
    SCAN_OPTIONS = ("metadata_file", "field_aliases", "anchor_from_manifests")
    DESCRIPTION = (
        "AudioSpan: 3,240 questions over 360 long recordings (10 min to 2.7 h, English and Chinese) "
        "at three cognitive levels: native MCQ and rubric-graded OEQ, and anchor MCQ chains over "
        "an anchored copy of each recording."
    )
    HOMEPAGE = "https://huggingface.co/datasets/holvan/AudioSpan"
    LICENSE = "cc-by-nc-sa-4.0"
    CITATION = CITATION

    @staticmethod
    def aliases(extra: Optional[Mapping[str, Mapping[str, str]]] = None) -> dict[str, dict[str, str]]:
        """FIELD_ALIASES with ``extra`` merged over it."""
        unknown = set(extra or {}) - set(KNOWN_FIELDS)
        if unknown:
            raise ValueError(f"field_aliases kinds must be among {sorted(KNOWN_FIELDS)}, got {sorted(unknown)}")
        merged = {kind: dict(mapping) for kind, mapping in FIELD_ALIASES.items()}
        for kind, mapping in (extra or {}).items():
            merged.setdefault(kind, {}).update(mapping)
        return merged

    def select_items(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        name = self.config.name
        if name == "all":
            return items
        if name not in SUBSETS:
            raise ValueError(f"AudioSpan config must be one of {CONFIG_NAMES}, got {name!r}")
        return [it for it in items if it["subset"] == name]

    def scan_source(self, root: Path, options: Mapping[str, Any]) -> SourceScan:
        native_path = root / (options.get("metadata_file") or NATIVE_FILE)
        anchor_path = root / ANCHOR_FILE
        if not native_path.is_file() and not anchor_path.is_file():
            raise FileNotFoundError(
                f"AudioSpan metadata not found under {root}: expected {NATIVE_FILE} and/or "
                f"{ANCHOR_FILE} (see audioreason.data.audiospan for the layout)"
            )
        report = ValidationReport("audiospan", str(root))
        reader = _Reader(root, self.aliases(options.get("field_aliases")), report)
        recordings = reader.recordings(root / RECORDINGS_FILE)
        edits = reader.edits(root / EDITS_FILE)
        if options.get("anchor_from_manifests") and (root / EDITS_FILE).is_file():
            from ..audio.anchor_files import anchor_from_manifests

            for rid, (status, manifest) in anchor_from_manifests(root, _read_jsonl(root / EDITS_FILE)).items():
                if status != "pre-made":  # rows carry the completed manifest: positions in the anchored timeline
                    edits[rid] = reader.manifest(f"edits:{rid}", manifest)
                    report.add("inferred_value", f"recording:{rid}", f"anchored audio {status} from its edit manifest")
        metadata_files = [
            p for p in (native_path, anchor_path, root / RECORDINGS_FILE, root / EDITS_FILE) if p.is_file()
        ]
        items: list[dict[str, Any]] = []
        audio_files = AudioFiles(root, report)
        for source, path in (("native", native_path), ("anchor", anchor_path)):
            records = _read_jsonl(path) if path.is_file() else []
            report.rows += len(records)
            for row, raw in enumerate(records):
                item = self._item(reader, source, row, raw, recordings, edits, audio_files)
                if item is not None:
                    items.append(item)
        if (root / REVIEW_FILE).is_file():
            metadata_files.append(root / REVIEW_FILE)
            items = review_items(items, root / REVIEW_FILE, report)
        self._check_structure(reader, items)
        return SourceScan(items, report, metadata_files, audio_files.candidates)

    # -- one record ----------------------------------------------------------------------------
    def _item(
        self,
        reader: _Reader,
        source: str,
        row: int,
        raw: Any,
        recordings: Mapping[str, Mapping[str, Any]],
        edits: Mapping[str, Mapping[str, Any]],
        audio_files: AudioFiles,
    ) -> Optional[dict[str, Any]]:
        """One record of ``source`` (native or anchor) as an item, every finding in the report; None (reported
        and skipped) for a record that is not an object. The helpers run in this order, which is the order of
        the report's findings for the item."""
        report = reader.report
        if not isinstance(raw, Mapping):
            report.add("invalid_value", f"{source}:row-{row}", "record is not an object (not built)")
            report.add("skipped", f"{source}:row-{row}", "not an object")
            return None
        fields_, unknown = reader.rename(raw, "item", None)
        item_id = _item_id(reader, fields_, source, row)
        record = _Record(reader, item_id, fields_, *_recording(reader, item_id, fields_, recordings))
        question = _question(record)
        fmt, subset = _format_and_subset(record, source)
        choices, answer, answer_index, reference = _gold(record, fmt)
        rubric = _rubric(record, fmt)
        level = reader.enum(item_id, "cognitive_level", fields_.get("cognitive_level"), LEVELS)
        chain_id = link_position = operation = manifest = None
        if source == "anchor":
            chain_id, link_position, level = _chain_link(record, level)
            manifest, operation = _edit_manifest_and_operation(record, edits)
        if level is None:
            report.add("missing_field", item_id, "cognitive_level")
        dimension = _dimension(record)
        language, tier = _language_and_tier(record)
        audio_path, path, duration = _audio(record, source, audio_files)
        return {
            "id": item_id,
            "audio": str(path) if path is not None else None,
            "audio_path": audio_path,
            "question": question,
            "choices": choices,
            "answer": answer,
            "answer_index": answer_index,
            "recording_id": record.recording_id,
            "subset": subset,
            "format": fmt,
            "language": language,
            "duration_tier": tier,
            "duration_seconds": duration,
            "genre": as_text(record.merged("genre")),
            "topic": as_text(record.merged("topic")),
            "cognitive_level": level,
            "dimension": dimension,
            "pair_id": as_text(fields_.get("pair_id")),
            "reference_answer": reference if fmt == "OEQ" else as_text(fields_.get("reference_answer")),
            "rubric": rubric,
            "chain_id": chain_id,
            "link_position": link_position,
            "operation": operation,
            "edit_manifest": manifest,
            "extra": json.dumps(unknown, ensure_ascii=False, sort_keys=True) if unknown else None,
        }

    # -- structure across records --------------------------------------------------------------
    @staticmethod
    def _check_structure(reader: _Reader, items: list[dict[str, Any]]) -> None:
        report = reader.report
        chains: dict[str, list[dict[str, Any]]] = {}
        native: dict[tuple[str, str], list[Optional[str]]] = {}
        for item in items:
            if item["subset"] == "anchor":
                chains.setdefault(item["chain_id"], []).append(item)
            else:
                native.setdefault((item["recording_id"], item["format"]), []).append(item["cognitive_level"])
        for chain_id, links in chains.items():
            positions = sorted(p for p in (it["link_position"] for it in links) if p is not None)
            if positions != [1, 2, 3] or len(links) != 3:
                report.add(
                    "incomplete_chain",
                    chain_id,
                    f"positions {positions} over {len(links)} items ({', '.join(it['id'] for it in links)})",
                )
            recordings = {it["recording_id"] for it in links}
            if len(recordings) > 1:
                report.add("conflicting_value", chain_id, f"chain spans recordings {sorted(recordings)}")
        for (recording_id, fmt), levels in native.items():
            if sorted(str(level) for level in levels) != ["perception", "reasoning", "understanding"]:
                report.add("incomplete_native_set", recording_id, f"{fmt}: levels {levels}")


# ----------------------------------------------------------------------------------------------
# Hub-ready folder
# ----------------------------------------------------------------------------------------------


def hub_configs_for(counts: Mapping[str, int], features: Any) -> list[HubConfig]:
    """The card's configs for an export holding ``counts`` items per subset.

    Native items live under ``native/`` (the original recordings), anchor items under ``anchor/``
    (the anchored copies); native_mcq and native_oeq select their rows with a ``filters`` entry.
    """
    configs = []
    groups = [
        g
        for g, subsets in (("native", ("native_mcq", "native_oeq")), ("anchor", ("anchor",)))
        if any(counts.get(s) for s in subsets)
    ]
    total = sum(counts.values())
    configs.append(
        HubConfig(
            "all",
            [{"split": TEST_SPLIT, "path": [f"{g}/**" for g in groups]}],
            features,
            {TEST_SPLIT: total},
            default=True,
        )
    )
    for subset in SUBSETS:
        if not counts.get(subset):
            continue
        group = "anchor" if subset == "anchor" else "native"
        filters = None if subset == "anchor" else [["subset", "==", subset]]
        configs.append(
            HubConfig(
                subset,
                [{"split": TEST_SPLIT, "path": f"{group}/**"}],
                features,
                {TEST_SPLIT: counts[subset]},
                filters=filters,
            )
        )
    return configs


def export_hub_folder(
    dataset: datasets.Dataset, out_dir: Any, *, card: Optional[str] = None, overwrite: bool = False, link: str = "copy"
) -> Path:
    """A Hub-ready AudioSpan folder: audio files plus metadata, each recording stored once.

    Layout: ``native/metadata.parquet`` + ``native/audio/<recording>.<ext>`` (originals) and
    ``anchor/metadata.parquet`` + ``anchor/audio/<recording>.<ext>`` (anchored copies); the card's
    configs are all (default), native_mcq, native_oeq and anchor. Parquet shards with embedded audio
    would copy each multi-hour recording into six rows. ``link="hardlink"`` avoids copying on one
    filesystem. ``dataset`` is the "all" config (or any subset of it).
    """
    from datasets.packaged_modules.audiofolder.audiofolder import AudioFolder

    if "subset" not in dataset.column_names:
        raise ValueError("export_hub_folder expects an AudioSpan dataset (no 'subset' column)")
    suffixes = {Path(p or "").suffix.lower() for p in dataset["audio_path"]}
    unsupported = sorted(s for s in suffixes if s not in AudioFolder.EXTENSIONS)
    if unsupported:
        raise ValueError(
            f"audio formats {unsupported} are not read by datasets' audiofolder; convert those "
            "recordings (e.g. to FLAC) before exporting"
        )
    out = prepare_out_dir(out_dir, overwrite)
    subsets = dataset["subset"]
    counts = {s: subsets.count(s) for s in SUBSETS}
    for group, members in (("native", ("native_mcq", "native_oeq")), ("anchor", ("anchor",))):
        indices = [i for i, s in enumerate(subsets) if s in members]
        if indices:
            write_audiofolder_group(out, group, dataset.select(indices), link=link)
    features = dataset.cast_column("audio", Audio()).features
    write_card(out, card, hub_configs_for(counts, features))
    return out
