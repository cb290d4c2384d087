"""Records that cross module borders. Plain dataclasses: easy to build in tests, easy to dump as JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Mapping, Optional

from audioreason.base.jsonl import JSON_KINDS, DataFileError, json_type

SLOT_NAMES = ("perception", "analysis", "reasoning", "answer")


@dataclass
class CoTSlots:
    """A model output parsed into the four ARIA slots.

    `perception` is the whole Perception section; `entities` and `description` are its two parts.
    A slot that is absent or empty is "" and is listed in `missing`.
    """

    entities: list[str] = field(default_factory=list)
    description: str = ""
    perception: str = ""
    analysis: str = ""
    reasoning: str = ""
    answer: str = ""
    missing: tuple[str, ...] = SLOT_NAMES + ("entities",)
    # How many times each slot header occurred (a model that echoes the template repeats them).
    repeated: dict[str, int] = field(default_factory=dict)
    # Text inside <think> blocks, kept apart; `source` says whether the slots came from the visible
    # text ("output") or, when it held no slot header at all, from the think blocks ("think").
    think: str = ""
    source: str = "output"

    @property
    def complete(self) -> bool:
        """All four slots present and the Perception slot lists at least one entity."""
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["missing"] = list(self.missing)
        return d


@dataclass(frozen=True)
class ExtractedAnswer:
    """The option an extractor chose from a model output, and how it got there.

    `index` is None when the output is unanswered; `method` names the rule that decided
    (e.g. "exact", "substring", "letter", "answer_regex", "content", "judge", "unanswered").
    """

    index: Optional[int]
    method: str
    candidate: Optional[str] = None
    choice: Optional[str] = None

    @property
    def answered(self) -> bool:
        return self.index is not None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# The run folder: outputs.jsonl's lines and run.json
# ---------------------------------------------------------------------------------------------


@dataclass
class OutputRecord:
    """One line of a run folder's ``outputs.jsonl`` (and of its shards): one model call on one item under one
    condition and template, written by the runner (``inference.runner``) or by an import
    (``inference.imports``), read by the resume and by ``audioreason score``. ``to_dict`` gives the keys in
    this order, the order of the line (resume and the tests compare lines byte for byte)."""

    key: str  # the unit's key (``inference.runner.unit_key``)
    id: str
    index: Optional[int]  # the item's position in the benchmark
    model: str
    adapter: str
    condition: str  # one condition's name (``text.conditions``)
    template: dict[str, Any]  # {name, hash}
    decoding: Optional[dict[str, Any]]
    output: Optional[str]  # the raw reply
    error: Optional[str]
    finish_reason: Optional[str]
    details: Optional[dict[str, Any]]
    audio: Optional[dict[str, Any]]  # seconds sent, source seconds, truncated, limit, rate, fragment, donor
    tokens: dict[str, Any]  # {prompt, completion}
    timings: Optional[dict[str, Any]]
    rank: Optional[int]

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], where: str = "record") -> "OutputRecord":
        """The record of a decoded line, after ``check_output_record``; fields a line lacks are None."""
        check_output_record(record, where)
        return cls(**{f.name: record.get(f.name) for f in fields(cls)})


def output_line(record: Mapping[str, Any]) -> str:
    """A record as its line of outputs.jsonl or of a shard (the one way they are written)."""
    return json.dumps(dict(record), ensure_ascii=False) + "\n"


def check_output_record(record: Mapping[str, Any], where: str) -> None:
    """A DataFileError naming ``where`` (file:line) and the field unless ``record`` has the fields of an output
    record that the scorers and the resume read, of the types the runner writes them with."""
    missing = [k for k in ("key", "id", "model", "condition", "template") if record.get(k) is None]
    if missing:
        raise DataFileError(f"{where}: the record has no {', '.join(missing)}")
    expected = {
        "key": (str,),
        "id": (str, int),
        "model": (str,),
        "condition": (str,),
        "template": (dict,),
        "output": (str, type(None)),
        "error": (str, type(None)),
        "audio": (dict, type(None)),
    }
    for name, types in expected.items():
        value = record.get(name)
        if not isinstance(value, types) or isinstance(value, bool):
            kinds = " or ".join(JSON_KINDS[t] for t in types)
            raise DataFileError(
                f"{where}: {name} is {json_type(value)}, not {kinds}" + (" {name, hash}" if name == "template" else "")
            )
    for name in ("name", "hash"):
        if not isinstance(record["template"].get(name), str):
            value = record["template"].get(name)
            state = "missing" if value is None else f"{json_type(value)}, not a string"
            raise DataFileError(f"{where}: template.{name} is {state}")


@dataclass
class RunSummary:
    """A finished session's ``run.json`` (the runner's ``gather`` or an import): what was run, with what, and
    how it went. The optional parts are written only by the writer that has them (``usage``, ``speed``,
    ``cost``, ``audio_check``: the runner; ``source``: an import; ``protocol`` and ``protocol_hash``:
    ``inference.protocol.with_protocol``) and left out when None. ``to_dict`` keeps this key order, the file's.
    ``from_dict`` reads any run.json, a running or interrupted session's too: parts it lacks are None, keys
    other than these (a live session's ``session``) are not kept."""

    identity: Optional[dict[str, Any]] = None  # what a resume must share: benchmark, decoding, models
    config: Optional[dict[str, Any]] = None
    models: Optional[dict[str, Any]] = None  # per role ("main", "tb"): name, adapter, description, ...
    templates: Optional[list[Any]] = None
    versions: Optional[dict[str, Any]] = None
    git: Optional[dict[str, Any]] = None
    started: Optional[str] = None
    finished: Optional[str] = None
    sessions: Optional[list[Any]] = None
    counts: Optional[dict[str, Any]] = None
    skipped_items: Optional[list[Any]] = None
    usage: Optional[dict[str, Any]] = None
    speed: Optional[dict[str, Any]] = None
    status: Optional[str] = None
    outputs: Optional[str] = None
    source: Optional[dict[str, Any]] = None
    cost: Optional[dict[str, Any]] = None
    audio_check: Optional[dict[str, Any]] = None
    protocol: Optional[dict[str, Any]] = None
    protocol_hash: Optional[str] = None

    OPTIONAL: ClassVar[tuple[str, ...]] = (
        "usage",
        "speed",
        "source",
        "cost",
        "audio_check",
        "protocol",
        "protocol_hash",
    )

    def to_dict(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if not (f.name in self.OPTIONAL and getattr(self, f.name) is None)
        }

    @classmethod
    def from_dict(cls, content: Mapping[str, Any]) -> "RunSummary":
        return cls(**{f.name: content.get(f.name) for f in fields(cls)})
