"""The sound events an addition anchor mixes in (AudioSpan, arXiv:2608.26431, App. B.3 "Addition"), and which of
them a recording may receive.

The paper renders 62 categories with a text-to-audio model; none runs here, so two sources stand in:

- a folder of labelled clips (``event_clips``): every WAV/FLAC file in it is one category, named by its file
  stem (``dog_barking.wav`` -> "dog barking");
- by default a small built-in set synthesized with numpy (``BUILTIN``). They are plain signal recipes, named for
  what they imitate (a 2 kHz beep pattern is "electronic beeping", a wailing sweep is "siren"); a clip's
  provenance says it is synthesized, never recorded audio.

Exclusion (B.3: "for each sample any category that could already occur in it is excluded"): a category is left
out when one of its keywords (for a folder clip: the words of its name) matches a word of the caption's dense
view that names sounds: every event's label and description and every segment's environment. Words are
compared after a light normalisation (lower case, a plural "s" and an "-ing" dropped, then a final "e"), so
"knocks", "knocking" and "knock" meet. A clip must also fit the placement's length rules (an added event spans
exactly its clip); a folder clip that does not is listed, not used.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

CLIP_SECONDS = 3.0
EVENTS_DIR = "audio/events"
CLIP_EXTENSIONS = (".wav", ".flac")
STOPWORDS = {"a", "an", "the", "of", "and", "or", "with", "in", "on", "sound", "sounds", "clip", "event"}


def _sine(freq: Any, t: np.ndarray, rate: int) -> np.ndarray:
    """A sine of constant or time-varying frequency (Hz per sample)."""
    freq = np.broadcast_to(np.asarray(freq, dtype=np.float64), t.shape)
    return np.sin(2 * np.pi * np.cumsum(freq) / rate)


def _beeping(t: np.ndarray, rate: int, rng: np.random.Generator) -> np.ndarray:
    """A 2 kHz tone switched 150 ms on, 100 ms off."""
    return _sine(2000.0, t, rate) * ((t % 0.25) < 0.15)


def _doorbell(t: np.ndarray, rate: int, rng: np.random.Generator) -> np.ndarray:
    """Two decaying bell notes a major third apart (E5 then C5), struck at 0 s and 0.7 s, repeated at 1.6 s."""
    out = np.zeros_like(t)
    for onset, freq in ((0.0, 659.25), (0.7, 523.25), (1.6, 659.25), (2.3, 523.25)):
        local = np.clip(t - onset, 0, None)
        note = sum(a * np.sin(2 * np.pi * k * freq * local) for k, a in ((1, 1.0), (2, 0.3), (3, 0.1)))
        out += (t >= onset) * note * np.exp(-local / 0.35)
    return out


def _telephone(t: np.ndarray, rate: int, rng: np.random.Generator) -> np.ndarray:
    """A 440 + 480 Hz pair in a double ring: 0.4 s on, 0.2 s off, 0.4 s on, 0.6 s off."""
    phase = t % 1.6
    on = (phase < 0.4) | ((phase >= 0.6) & (phase < 1.0))
    return (_sine(440.0, t, rate) + _sine(480.0, t, rate)) * on


def _knocking(t: np.ndarray, rate: int, rng: np.random.Generator) -> np.ndarray:
    """Two groups of three knocks: noise bursts with a damped 150 Hz thud."""
    out = np.zeros_like(t)
    for onset in (0.2, 0.45, 0.7, 1.8, 2.05, 2.3):
        local = np.clip(t - onset, 0, None)
        hit = rng.standard_normal(len(t)) * np.exp(-local / 0.008) + 2.0 * np.sin(2 * np.pi * 150 * local) * np.exp(
            -local / 0.03
        )
        out += (t >= onset) * hit
    return out


def _whistling(t: np.ndarray, rate: int, rng: np.random.Generator) -> np.ndarray:
    """Two rising whistles, 1.5 to 2.5 kHz over 1.2 s each, with a 6 Hz vibrato."""
    glide = 1500 + 1000 * ((t % 1.5) / 1.2).clip(0, 1) + 30 * np.sin(2 * np.pi * 6 * t)
    return _sine(glide, t, rate) * ((t % 1.5) < 1.2)


def _ticking(t: np.ndarray, rate: int, rng: np.random.Generator) -> np.ndarray:
    """A clock's tick and tock: a 3 kHz click every 0.5 s, alternating with a 2.2 kHz one."""
    out = np.zeros_like(t)
    for n, onset in enumerate(np.arange(0.05, t[-1], 0.5)):
        local = np.clip(t - onset, 0, None)
        out += (t >= onset) * np.sin(2 * np.pi * (3000 if n % 2 == 0 else 2200) * local) * np.exp(-local / 0.004)
    return out


def _siren(t: np.ndarray, rate: int, rng: np.random.Generator) -> np.ndarray:
    """A wail: a tone sweeping 650-1350 Hz and back, one cycle every 1.5 s, with its second harmonic."""
    freq = 1000 - 350 * np.cos(2 * np.pi * t / 1.5)
    return _sine(freq, t, rate) + 0.3 * _sine(2 * freq, t, rate)


def _car_horn(t: np.ndarray, rate: int, rng: np.random.Generator) -> np.ndarray:
    """Two honks of a 420 + 520 Hz pair with odd harmonics (a buzzy, square-like tone): 0.5 s and 0.9 s."""
    on = ((t >= 0.3) & (t < 0.8)) | ((t >= 1.3) & (t < 2.2))
    tone = sum(_sine(k * f, t, rate) / k for f in (420.0, 520.0) for k in (1, 3, 5))
    return tone * on


BuiltinMaker = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class Builtin:
    category: str
    keywords: tuple[str, ...]
    make: BuiltinMaker
    recipe: str  # what the numpy recipe is, for provenance


BUILTIN: tuple[Builtin, ...] = (
    Builtin("electronic beeping", ("beep", "alarm", "buzzer"), _beeping, "2 kHz tone, 150 ms on / 100 ms off"),
    Builtin("doorbell chime", ("doorbell", "chime", "bell", "ding"), _doorbell, "decaying E5-C5 bell notes"),
    Builtin("telephone ringing", ("telephone", "phone", "ring", "ringtone"), _telephone, "440 + 480 Hz rings"),
    Builtin("knocking", ("knock",), _knocking, "noise bursts with a 150 Hz thud, two groups of three"),
    Builtin("whistling", ("whistle",), _whistling, "rising 1.5-2.5 kHz glides with vibrato"),
    Builtin("clock ticking", ("clock", "tick", "tock"), _ticking, "alternating 3 / 2.2 kHz clicks, 2 per second"),
    Builtin("siren", ("siren", "ambulance", "police"), _siren, "650-1350 Hz wail, 1.5 s cycle"),
    Builtin("car horn", ("horn", "honk", "car", "traffic"), _car_horn, "two honks of 420 + 520 Hz with harmonics"),
)


def synthesize_event(category: str, rate: int, seconds: float = CLIP_SECONDS) -> np.ndarray:
    """The built-in clip of ``category``: float32 mono, peak 0.8, 10 ms fades, the same samples every time."""
    maker = next((b for b in BUILTIN if b.category == category), None)
    if maker is None:
        raise ValueError(f"no built-in event {category!r}; built-in: {', '.join(b.category for b in BUILTIN)}")
    n = int(round(seconds * rate))
    t = np.arange(n) / rate
    digest = hashlib.sha256(f"anchor-event|{category}|{rate}".encode()).digest()
    clip = maker.make(t, rate, np.random.default_rng(int.from_bytes(digest[:8], "little")))
    fade = min(int(0.01 * rate), n // 4)
    if fade:
        ramp = 0.5 - 0.5 * np.cos(np.pi * (np.arange(fade) + 0.5) / fade)
        clip[:fade] *= ramp
        clip[n - fade :] *= ramp[::-1]
    return (0.8 * clip / np.abs(clip).max()).astype(np.float32)


# ----------------------------------------------------------------------------------------- exclusion
def normalize_word(word: str) -> str:
    """A word for matching: lower case, "-ing" or a plural "s" dropped, then a final "e"."""
    w = word.lower()
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def words(text: str) -> set[str]:
    return {normalize_word(w) for w in re.findall(r"[^\W\d_]+", text or "") if w.lower() not in STOPWORDS}


def present_sound_words(caption_dict: Mapping[str, Any]) -> set[str]:
    """The normalised words of every dense event's label and description and every segment's environment."""
    found: set[str] = set()
    for seg in caption_dict.get("dense") or []:
        found |= words(str(seg.get("environment") or ""))
        for event in seg.get("events") or []:
            found |= words(f"{event.get('label', '')} {event.get('description', '')}")
    return found


@dataclass(frozen=True)
class EventChoice:
    """One category a recording may receive: where its clip comes from (a built-in recipe or a file)."""

    category: str
    keywords: frozenset
    source: str  # "builtin" or the folder clip's path
    recipe: Optional[str] = None


def catalogue(event_clips: Optional[Path] = None) -> list[EventChoice]:
    """The categories on offer: the folder's clips (sorted by name) or the built-in set."""
    if event_clips is None:
        return [
            EventChoice(
                b.category, frozenset(words(b.category) | {normalize_word(k) for k in b.keywords}), "builtin", b.recipe
            )
            for b in BUILTIN
        ]
    folder = Path(event_clips)
    if not folder.is_dir():
        raise ValueError(f"event clips folder {folder} is not a folder")
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in CLIP_EXTENSIONS)
    if not files:
        raise ValueError(f"event clips folder {folder} holds no {' or '.join(CLIP_EXTENSIONS)} file")
    out = []
    for path in files:
        category = " ".join(re.split(r"[_\-\s]+", path.stem)).strip()
        keys = words(category)
        if not keys:
            raise ValueError(f"event clip {path.name}: its name gives no category word")
        out.append(EventChoice(category, frozenset(keys), str(path)))
    return out


def allowed_events(choices: Sequence[EventChoice], present: Iterable[str]) -> tuple[list[EventChoice], list[str]]:
    """(the categories not already present, the excluded category names)."""
    present = set(present)
    kept = [c for c in choices if not (c.keywords & present)]
    return kept, [c.category for c in choices if c.keywords & present]


def slug(category: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-") or "event"


def materialize(choice: EventChoice, bench_dir: Path, rate: int, seconds: float = CLIP_SECONDS) -> Path:
    """The clip's file inside ``BENCH/audio/events`` (so the benchmark holds what its manifests name): the built-in
    clip written at the recording's rate, or the folder clip copied (unchanged)."""
    from audioreason.audio.io import write_audio

    folder = Path(bench_dir) / EVENTS_DIR
    if choice.source == "builtin":
        path = folder / f"builtin-{slug(choice.category)}-{rate}hz.wav"
        if not path.is_file():
            write_audio(path, synthesize_event(choice.category, rate, seconds), rate)
        return path
    source = Path(choice.source)
    path = folder / source.name
    if not path.is_file() or path.read_bytes() != source.read_bytes():
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, path)
    return path


def clip_seconds(path: Path, rate: int) -> float:
    """A clip's length once resampled to ``rate`` (what the anchored span will last), from its header."""
    from audioreason.audio.anchor_files import file_info

    info = file_info(path)
    return round(info.frames * rate / info.sampling_rate) / rate


__all__ = [
    "BUILTIN",
    "CLIP_SECONDS",
    "EventChoice",
    "allowed_events",
    "catalogue",
    "clip_seconds",
    "materialize",
    "normalize_word",
    "present_sound_words",
    "synthesize_event",
    "words",
]
