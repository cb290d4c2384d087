"""Input conditions and the audio each one sends, cut to the model's maximum duration.

Conditions ("All That Glitters Is Not Audio", §2.1-2.2; AudioSpan anchor QA, §3.2):

- ``full``: the item's audio as the dataset gives it.
- ``none``: no audio input at all (not silence: the paper omits the audio to avoid the confounds of
  a silent clip); the same prompt, sent to the same audio model.
- ``tb``: the text backbone: the question and choices only, sent to a text LM (``--tb-model``).
- ``frag:N:k``: the k-th of N equal-duration contiguous fragments of the clip (N = 2..5, k = 0..N-1;
  ``audioreason.audio.fragments``: fragment k spans [k*m, (k+1)*m) with m = floor(L / N), the last one
  takes the remainder). ``frag:N`` expands to every k, ``frag`` to every N = 2..5 and k.
- ``anchored``: the item's anchored recording, for items that carry one (AudioSpan anchor items: an
  ``edit_manifest`` with an operation, or ``subset == "anchor"``; their audio column is the anchored
  copy). Other items are not run under it and are counted as not applicable.
- ``silence`` and ``shuffled``: the audio-reliance check (``AudioCheck``, ``audioreason run --audio-check N``):
  on N seeded items only, silence of the length the item's own clip sends, and another checked item's clip
  (a seeded derangement, so no item gets its own). The evaluation compares their outputs with ``full``'s
  (``audioreason.evaluation.reliance``).

The ``Condition`` type and the grammar of one condition's name are ``audioreason.text.conditions``'s (the
text-prior scorer reads the same names); ``expand_condition`` adds a run request's ``frag`` and ``frag:N``.

Maximum duration (AudioSpan App. C.1, Table 6): a clip longer than the model's limit is cut to its leading
prefix, ``min(limit, length)``, read without loading the rest (``audioreason.audio.read_prefix``); each
output records the seconds sent, the source length and whether it was cut. A fragment longer than the
limit is cut the same way.

Fragments of a local file are written once, in one streamed pass for N = 2..5 (14 WAV files at the
model's rate), into ``<fragment cache>/<key>/`` where the key hashes the file's path, size, modification
time and the rate; a finished folder is renamed into place atomically, so ranks that cut the same
recording at once never read a half-written one. Audio given as bytes (a Hub-ready dataset with embedded
audio) is decoded and split in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from ..audio.errors import AudioError
from ..text.conditions import CHECK_KINDS, KINDS, Condition, parse_condition
from .base import AudioInput

if TYPE_CHECKING:
    import numpy as np


def expand_condition(text: str) -> list[Condition]:
    """A run's request -> the conditions it names: one condition's name (``audioreason.text.conditions``), or
    ``frag`` / ``frag:N``, which expand to every fragment of N = 2..5 / of N. The runner cuts the paper's
    N = 2..5 only (``audio.fragments.PAPER_NS``)."""
    text = text.strip().lower()
    if text in KINDS:
        return [parse_condition(text)]
    parts = text.split(":")
    if parts[0] == "frag" and len(parts) <= 3:
        try:
            numbers = [int(p) for p in parts[1:]]
        except ValueError:
            numbers = None
        if numbers is not None:
            from ..audio.fragments import PAPER_NS

            ns = numbers[:1] or list(PAPER_NS)
            if any(n not in PAPER_NS for n in ns):
                raise ValueError(f"condition {text!r}: N must be one of {list(PAPER_NS)}")
            if len(numbers) == 2 and not 0 <= numbers[1] < numbers[0]:
                raise ValueError(f"condition {text!r}: k must be in 0..{numbers[0] - 1}")
            ks = {n: ([numbers[1]] if len(numbers) == 2 else list(range(n))) for n in ns}
            return [Condition("frag", n, k) for n in ns for k in ks[n]]
    raise ValueError(
        f"unknown condition {text!r}: use full, none, tb, anchored, silence, shuffled, frag, frag:N or "
        "frag:N:k (N=2..5)"
    )


def parse_conditions(texts: Sequence[str]) -> list[Condition]:
    """Conditions in the order given, expanded; a condition named twice is an error."""
    out: list[Condition] = []
    for text in texts:
        for condition in expand_condition(text):
            if condition in out:
                raise ValueError(f"condition {condition.name!r} given twice")
            out.append(condition)
    if not out:
        raise ValueError("give at least one condition")
    return out


@dataclass
class AudioCheck:
    """The items the silence and shuffled conditions run on: ``donors`` maps each checked item's id (in item
    order) to the id of the item whose clip it is sent under ``shuffled`` (None: there is no other item).
    ``asked``: the N asked (None: every item)."""

    donors: dict[str, Optional[str]]
    seed: int
    asked: Optional[int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "asked": self.asked,
            "items": len(self.donors),
            "seed": self.seed,
            "ids": list(self.donors),
            "donors": dict(self.donors),
        }


def with_audio_check(conditions: Sequence[Condition], n: int) -> list[Condition]:
    """``conditions`` with silence and shuffled added when ``n`` > 0 (the --audio-check items); the check
    compares with full, so either needs full among the conditions."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"audio check: the number of items must be a whole number >= 0 (0: off), got {n!r}")
    out = list(conditions)
    if n > 0:
        out += [Condition(kind) for kind in CHECK_KINDS if Condition(kind) not in out]
    if any(c.kind in CHECK_KINDS for c in out) and Condition("full") not in out:
        raise ValueError(
            "the audio check (silence, shuffled) compares outputs with the full condition's: add full to the conditions"
        )
    return out


def choose_audio_check(conditions: Sequence[Condition], ids: Sequence[str], n: int, seed: int) -> Optional[AudioCheck]:
    """The seeded ``n`` items (every item when ``n`` is 0 or at least their number) the check conditions run
    on, and each one's donor under shuffled: the checked items in a seeded order, each taking the next one's
    clip (a single checked item takes a seeded other item's). None when no check condition is run."""
    if not any(c.kind in CHECK_KINDS for c in conditions):
        return None
    import numpy as np

    rng = np.random.default_rng(seed)
    count = len(ids) if n <= 0 else min(n, len(ids))
    chosen = sorted(int(i) for i in rng.choice(len(ids), size=count, replace=False))
    donors: dict[int, Optional[int]] = {}
    if len(chosen) > 1:
        order = [int(i) for i in rng.permutation(chosen)]
        donors = {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}
    elif chosen:
        others = [i for i in range(len(ids)) if i != chosen[0]]
        donors = {chosen[0]: int(rng.choice(others)) if others else None}
    return AudioCheck(
        {str(ids[i]): None if donors[i] is None else str(ids[donors[i]]) for i in chosen}, seed, n if n > 0 else None
    )


def checked(condition: Condition, item_id: str, check_ids: Optional[Any]) -> bool:
    """Whether ``condition`` runs on the item: every condition does, but silence and shuffled only on the
    checked items (``check_ids``: the AudioCheck's ids)."""
    return condition.kind not in CHECK_KINDS or (check_ids is not None and str(item_id) in check_ids)


def has_anchored_variant(item: Mapping[str, Any]) -> bool:
    manifest = item.get("edit_manifest") or {}
    return item.get("subset") == "anchor" or bool(isinstance(manifest, Mapping) and manifest.get("operation"))


def not_applicable(condition: Condition, item: Mapping[str, Any], check: Optional[AudioCheck] = None) -> Optional[str]:
    """Why ``condition`` cannot be run on ``item`` (None when it can)."""
    if condition.kind == "anchored" and not has_anchored_variant(item):
        return "no anchored variant"
    if condition.kind == "shuffled" and check is not None and check.donors.get(str(item["id"])) is None:
        return "no other item's audio to send"
    return None


# ------------------------------------------------------------------------------------------------
# Audio values
# ------------------------------------------------------------------------------------------------


def local_path(value: Any) -> Optional[str]:
    """The local file behind a dataset audio value (a path, or {"path", "bytes"} without bytes), else None."""
    if isinstance(value, (str, os.PathLike)):
        return str(value)
    if isinstance(value, Mapping) and value.get("bytes") is None and value.get("path"):
        return str(value["path"])
    return None


def source_seconds(value: Any) -> Optional[float]:
    """The clip's length from its file header (None for in-memory audio or an unreadable file)."""
    from ..audio.stream import audio_info

    path = local_path(value)
    if path is None:
        return None
    try:
        return audio_info(path).duration
    except AudioError:
        return None


@dataclass(frozen=True)
class PreparedAudio:
    audio: Optional[AudioInput]
    info: dict[str, Any]  # what the output records: seconds, source_seconds, truncated, fragment...


class AudioPreparer:
    """Turns (condition, dataset audio value) into the clip a model receives, at ``sampling_rate``, cut to
    ``max_audio_s`` (None: no limit)."""

    def __init__(self, sampling_rate: int, max_audio_s: Optional[float], fragment_cache: Optional[Path] = None):
        if max_audio_s is not None and not max_audio_s > 0:
            raise ValueError(f"max_audio_s must be positive or None, got {max_audio_s!r}")
        self.sampling_rate = int(sampling_rate)
        self.max_audio_s = max_audio_s
        self.fragment_cache = Path(fragment_cache) if fragment_cache is not None else None

    def prepare(self, condition: Condition, value: Any) -> PreparedAudio:
        """The clip for ``condition`` (None for none/tb; under shuffled ``value`` is the donor item's audio).
        Raises ``AudioError`` when the audio is missing, unreadable, or the fragment has no sample."""
        import numpy as np

        if not condition.sends_audio:
            return PreparedAudio(
                None,
                {
                    "seconds": 0.0,
                    "source_seconds": None,
                    "truncated": False,
                    "max_audio_s": self.max_audio_s,
                    "sampling_rate": None,
                },
            )
        if value is None:
            raise AudioError("the item has no audio (its file was missing when the dataset was built)")
        fragment, truncated = None, False
        if condition.kind == "frag":
            samples, source, fragment = self._fragment(value, condition.n, condition.k)
        else:
            samples, source, truncated = self._whole(value)
        if self.max_audio_s is not None:
            keep = int(round(self.max_audio_s * self.sampling_rate))
            if len(samples) > keep:
                samples, truncated = samples[:keep], True
        if condition.kind == "silence":  # as long as the item's clip as sent, every sample zero
            samples = np.zeros(len(samples), dtype=np.float32)
        audio = AudioInput(np.ascontiguousarray(samples, dtype=np.float32), self.sampling_rate, source, truncated)
        info = {
            "seconds": audio.seconds,
            "source_seconds": source,
            "truncated": truncated,
            "max_audio_s": self.max_audio_s,
            "sampling_rate": self.sampling_rate,
        }
        if fragment is not None:
            info["fragment"] = fragment
        return PreparedAudio(audio, info)

    def _whole(self, value: Any) -> tuple[np.ndarray, float, bool]:
        """(samples, source seconds, already cut to the limit)."""
        from ..audio.io import load_audio
        from ..audio.stream import audio_info, read_prefix

        path = local_path(value)
        if path is not None:
            duration = audio_info(path).duration
            if self.max_audio_s is not None and duration > self.max_audio_s:
                # Only the prefix is decoded; the extra context read_prefix takes keeps it equal to the
                # start of the whole-file resample.
                samples, _ = read_prefix(path, self.max_audio_s, self.sampling_rate)
                return samples, duration, True
            samples, _ = load_audio(path, self.sampling_rate)
            return samples, duration, False
        samples, rate = load_audio(value, self.sampling_rate)
        return samples, len(samples) / rate, False

    def _fragment(self, value: Any, n: int, k: int) -> tuple[np.ndarray, float, dict[str, Any]]:
        import numpy as np

        from ..audio.fragments import split_samples
        from ..audio.io import load_audio

        path = local_path(value)
        rate = self.sampling_rate
        if path is None or self.fragment_cache is None:
            whole, _ = load_audio(value if path is None else path, rate)
            pieces = split_samples(whole, n)
            starts = np.cumsum([0] + [len(p) for p in pieces])
            samples, start, stop = pieces[k], int(starts[k]), int(starts[k + 1])
        else:
            manifest = self._cached_fragments(Path(path))
            entry = next((f for f in manifest["fragments"] if f["n"] == n and f["k"] == k), None)
            if entry is None:
                skipped = next(s for s in manifest["skipped"] if s["n"] == n and s["k"] == k)
                raise AudioError(f"fragment frag:{n}:{k} of {path}: {skipped['reason']}")
            samples, _ = load_audio(entry["path"], rate)
            start, stop = entry["start"], entry["stop"]
        if len(samples) == 0:
            raise AudioError(f"fragment frag:{n}:{k} has no sample (the clip is shorter than {n} samples)")
        fragment = {"n": n, "k": k, "start_s": start / rate, "end_s": stop / rate}
        return samples, (stop - start) / rate, fragment

    def _cached_fragments(self, path: Path) -> dict[str, Any]:
        """The fragments of ``path`` for N = 2..5 at the model's rate, cut once and kept in the cache."""
        from ..audio.fragments import PAPER_NS, fragment_audio

        try:
            stat = path.stat()
        except OSError:  # gone since the items were loaded: a counted audio failure, as under full
            raise AudioError(f"audio file not found: {path}") from None
        key = hashlib.sha256(
            f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{self.sampling_rate}".encode()
        ).hexdigest()[:20]
        folder = self.fragment_cache / key
        manifest = folder / "manifest.json"
        if not manifest.is_file():
            self.fragment_cache.mkdir(parents=True, exist_ok=True)
            staging = self.fragment_cache / f".{key}.{os.getpid()}"
            shutil.rmtree(staging, ignore_errors=True)
            result = fragment_audio(path, staging, ns=PAPER_NS, sampling_rate=self.sampling_rate, stem="clip")
            record = result.to_dict()
            for entry in record["fragments"]:  # paths inside the final folder, not the staging one
                entry["path"] = str(folder / Path(entry["path"]).name)
            (staging / "manifest.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
            try:
                os.rename(staging, folder)
            except OSError:  # another process finished first: keep its folder
                shutil.rmtree(staging, ignore_errors=True)
        return json.loads(manifest.read_text(encoding="utf-8"))

    def expected_seconds(self, condition: Condition, value: Any) -> float:
        """The seconds this condition will send, from the file header alone (0 when unknown or no audio):
        the key length-sorted batching uses."""
        if not condition.sends_audio:
            return 0.0
        seconds = source_seconds(value) or 0.0
        if condition.kind == "frag":
            seconds /= condition.n
        return min(seconds, self.max_audio_s) if self.max_audio_s is not None else seconds


__all__ = [
    "AudioCheck",
    "AudioPreparer",
    "PreparedAudio",
    "checked",
    "choose_audio_check",
    "expand_condition",
    "has_anchored_variant",
    "local_path",
    "not_applicable",
    "parse_conditions",
    "source_seconds",
    "with_audio_check",
]
