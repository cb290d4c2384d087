"""The critic's memory bank (AudioSpan, arXiv:2608.26431 §4.5 / App. B.4): when a gate flags a candidate, the
critic names the shortcut it exploited from a fixed catalogue and stores a lesson under that name; the
generator's later prompts carry the lessons, so generation is steered away from that specific pattern.

One bank per pipeline (native and anchor lessons are kept apart: a lesson about anchor option design says
nothing about native stems). On disk it is one JSON Lines file, ``memory_bank.jsonl``, one lesson a line:
``{"pipeline", "level", "shortcut", "lesson", "candidate_id", "order"}``.

Resume: a lesson is keyed by (pipeline, candidate id), so re-running a stage whose critic reply is cached adds
nothing twice; a torn last line (a writer killed mid-line) is dropped and the file rewritten without it. The
lessons a prompt sees are those of candidates generated *before* the one being written (``before`` = its
order), so a rerun builds the same prompt whatever the file already holds, and the call cache answers it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Union

from audioreason.base.jsonl import DataFileError, read_json_objects

from .question_space import LEVEL_ORDER

BANK_FILE = "memory_bank.jsonl"
PIPELINES = ("native", "anchor")
SHORTCUTS = (
    "specificity bias",
    "semantic leakage",
    "elimination by absurdity",
    "common-sense giveaway",
    "transcript sufficiency",
)
# What each shortcut means, for the critic's prompt (our wording of App. B.4's catalogue).
SHORTCUT_MEANINGS = {
    "specificity bias": "the correct option is conspicuously more detailed or specific than the distractors",
    "semantic leakage": "the stem's wording hints at or repeats the content of the correct option",
    "elimination by absurdity": "the distractors are implausible, so the answer is left by elimination",
    "common-sense giveaway": "world knowledge or priors settle the answer without the recording",
    "transcript sufficiency": "the words spoken settle the answer; no acoustic information is needed",
}
DEFAULT_CAP = 8
MAX_LESSON_CHARS = 600


@dataclass(frozen=True)
class Lesson:
    pipeline: str
    level: str
    shortcut: str
    lesson: str
    candidate_id: str
    order: int

    def __post_init__(self):
        if self.pipeline not in PIPELINES:
            raise ValueError(f"unknown pipeline {self.pipeline!r}; expected one of {', '.join(PIPELINES)}")
        if self.level not in LEVEL_ORDER:
            raise ValueError(f"unknown cognitive level {self.level!r}")
        if self.shortcut not in SHORTCUTS:
            raise ValueError(f"unknown shortcut {self.shortcut!r}; the catalogue: {', '.join(SHORTCUTS)}")
        if not self.lesson.strip():
            raise ValueError("an empty lesson")
        if isinstance(self.order, bool) or not isinstance(self.order, int):
            raise ValueError(f"order must be an integer, not {self.order!r}")

    @classmethod
    def from_dict(cls, data: dict) -> "Lesson":
        fields = ("pipeline", "level", "shortcut", "lesson", "candidate_id", "order")
        missing = [f for f in fields if f not in data]
        if missing:
            raise ValueError(f"a lesson without {missing[0]!r}")
        return cls(**{f: data[f] for f in fields})


class MemoryBank:
    """Lessons per pipeline, kept in memory and (with a ``path``) appended to ``memory_bank.jsonl``."""

    def __init__(self, path: Union[str, Path, None] = None):
        self.path = Path(path) if path is not None else None
        self._lessons: list[Lesson] = []
        self._keys: set[tuple[str, str]] = set()
        if self.path is not None and self.path.exists():
            self._load()

    def _load(self) -> None:
        rows, torn = read_json_objects(self.path, torn_last=True)
        for number, row in rows:
            try:
                lesson = Lesson.from_dict(row)
            except (TypeError, ValueError) as err:
                raise DataFileError(f"{self.path}:{number}: {err}") from None
            self._remember(lesson)
        if torn:  # drop the torn line so the next append starts on a line of its own
            self._rewrite()

    def _remember(self, lesson: Lesson) -> bool:
        key = (lesson.pipeline, lesson.candidate_id)
        if key in self._keys:
            return False
        self._keys.add(key)
        self._lessons.append(lesson)
        return True

    def _rewrite(self) -> None:
        temp = self.path.with_name(self.path.name + ".tmp")
        temp.write_text("".join(_line(lesson) for lesson in self._lessons), encoding="utf-8")
        os.replace(temp, self.path)

    def add(self, lesson: Lesson) -> bool:
        """Store a lesson; False (nothing written) when this candidate's lesson is already in the bank."""
        if not self._remember(lesson):
            return False
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(_line(lesson))
                f.flush()
                os.fsync(f.fileno())
        return True

    def lessons(self, pipeline: Optional[str] = None) -> list[Lesson]:
        """Every lesson (of one pipeline), in the order stored."""
        return [x for x in self._lessons if pipeline is None or x.pipeline == pipeline]

    def for_prompt(
        self, pipeline: str, level: str, *, before: Optional[int] = None, cap: int = DEFAULT_CAP
    ) -> list[Lesson]:
        """The lessons a generator prompt carries: this pipeline's, this level's, from candidates generated
        before order ``before`` (None: all), most recent first, at most ``cap``."""
        if pipeline not in PIPELINES:
            raise ValueError(f"unknown pipeline {pipeline!r}")
        chosen = [
            x
            for x in self._lessons
            if x.pipeline == pipeline and x.level == level and (before is None or x.order < before)
        ]
        chosen.sort(key=lambda x: (x.order, x.candidate_id), reverse=True)
        return chosen[: max(cap, 0)]

    def prompt_text(self, pipeline: str, level: str, *, before: Optional[int] = None, cap: int = DEFAULT_CAP) -> str:
        """The lessons as prompt text ("" when there are none)."""
        chosen = self.for_prompt(pipeline, level, before=before, cap=cap)
        if not chosen:
            return ""
        lines = ["Lessons from earlier rejected questions (avoid these shortcuts):"]
        lines += [f"- [{x.shortcut}] {x.lesson}" for x in chosen]
        return "\n".join(lines)

    def counts(self) -> dict:
        """Lessons per pipeline and shortcut, for construction.json."""
        out: dict = {}
        for x in self._lessons:
            out.setdefault(x.pipeline, {}).setdefault(x.shortcut, 0)
            out[x.pipeline][x.shortcut] += 1
        return out


def _line(lesson: Lesson) -> str:
    return json.dumps(asdict(lesson), ensure_ascii=False) + "\n"
