"""The anchor edit manifest: one versioned JSON object per anchored file (AudioSpan, arXiv:2608.26431,
App. B.3: "the operation itself defines the correct answer", so the manifest is the ground truth).

Schema ``audioreason.anchor_manifest`` version 1 (keys in this order when written)::

    schema, schema_version      "audioreason.anchor_manifest", 1
    recording_id                the source recording (optional)
    operation                   addition | deletion | modification
    event_category, snr_db      addition: the event's category and the target SNR in dB
    deletion_mode               deletion: silence | noise
    attribute, gain_db, speed_factor   modification: loudness (gain_db) | speed (playback speed; > 1 faster)
    parameters                  fade_s, snr_measure (rms | lufs), ramp_s, cutoff_hz, filter_order,
                                noise_db, mod_hz, mod_depth: every setting the operation used
    seed                        the seed of placement and of the noise bed (None when unused)
    positions                   1-3 spans in time order, each {start, end} in the EDITED (anchored) timeline,
                                original_start, original_end in the source's timeline (seconds), the same
                                four as *_frame sample indices (the exact truth; seconds are frame / rate),
                                shift_after_frames / shift_after (edited - original time of everything after
                                this span: non-zero only for a speed change), segment (placement's segment
                                id, or None) and, for addition, clip_gain_db (the gain the clip received)
    source                      path, sha256 (of the file's bytes), frames, sampling_rate, channels, format,
                                subtype
    event_clip                  addition: path, sha256, frames (at the source rate)
    output                      path, sha256 (of the anchored file's bytes), frames, format, subtype,
                                clipped_samples (samples of the edited spans that hit full scale)
    tool                        name, version, libraries (pedalboard, pyloudnorm, scipy, numpy, soundfile,
                                libsndfile, soxr versions): what ``apply`` needs to reproduce the bytes
    extra                       any key of a read manifest this schema does not know, kept as given

Question timestamps (positions, options) are in the edited timeline: the audio a model hears.

Reading (``read_manifest``) also accepts the field names of the AudioSpan loader's manifest aliases (one
table, ``audioreason.text.audiospan_fields.FIELD_ALIASES["manifest"]``: op/type, spans/windows, event/category,
snr, mode/mask, gain/volume_db, speed/factor/rate...), their value spellings (``OPERATIONS``,
``DELETION_MODES``, ``ATTRIBUTES`` there) and every span form the loader reads ([a, b], {start, end},
"MM:SS-MM:SS"). A position without ``original_start`` / ``original_end`` is a plan: its times are read as
original-timeline times (for a speed change the only timeline that exists before the edit).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from audioreason.text import audiospan_fields as fields
from audioreason.text.timestamps import is_single_span, parse_record_span, parse_record_time

SCHEMA = "audioreason.anchor_manifest"
SCHEMA_VERSION = 1
OPERATIONS = ("addition", "deletion", "modification")
DELETION_MODES = ("silence", "noise")
ATTRIBUTES = ("loudness", "speed")
# App. B.3's ranges, enforced when a manifest is created (``paper_ranges=True``), not when one is read.
PAPER_RANGES = {"snr_db": (6.0, 10.0), "abs_gain_db": (8.0, 12.0), "speed": (1.5, 3.0), "positions": (1, 3)}
TOP_KEYS = (
    "schema",
    "schema_version",
    "recording_id",
    "operation",
    "event_category",
    "snr_db",
    "deletion_mode",
    "attribute",
    "gain_db",
    "speed_factor",
    "parameters",
    "seed",
    "positions",
    "source",
    "event_clip",
    "output",
    "tool",
    "extra",
)
MAX_SECONDS = 1e6  # 11.6 days: a position beyond it is an error, not a frame index that overflows
OPERATION_KEYS = {
    "addition": ("event_category", "snr_db"),
    "deletion": ("deletion_mode",),
    "modification": ("attribute",),
}


class ManifestError(ValueError):
    """A manifest that cannot be applied or read: the message names the field."""


def default_parameters(operation: str, **overrides: Any) -> dict[str, Any]:
    """Every setting of ``operation`` with the module defaults of ``audioreason.audio.anchors``."""
    from . import anchors as ops

    common = {"fade_s": ops.FADE_S}
    per_op = {
        "addition": {"snr_measure": "rms"},
        "deletion": {
            "cutoff_hz": ops.LOWPASS_HZ,
            "filter_order": ops.LOWPASS_ORDER,
            "noise_db": ops.NOISE_DB,
            "mod_hz": ops.MOD_HZ,
            "mod_depth": ops.MOD_DEPTH,
        },
        "modification": {"ramp_s": ops.RAMP_S},
    }
    params = {**common, **per_op[operation]}
    unknown = set(overrides) - set(params)
    if unknown:
        raise ManifestError(f"unknown {operation} parameter(s) {sorted(unknown)}; known: {sorted(params)}")
    params.update(overrides)
    return params


def _number(name: str, value: Any, low: Optional[float] = None, high: Optional[float] = None) -> float:
    """``value`` as a float, refused (naming ``name``) unless a finite number within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ManifestError(f"{name} must be a finite number, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ManifestError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
    return float(value)


# Ranges a manifest value must lie in (read_manifest refuses anything else, naming the field): wide enough for
# any deliberate setting, narrow enough that no value overflows, divides by zero or makes a silent edit.
# Bounds that need the sampling rate (cutoff_hz and mod_hz below Nyquist) are checked by check_rate.
VALUE_RANGES = {"snr_db": (-100.0, 100.0), "gain_db": (-100.0, 100.0), "speed_factor": (0.1, 10.0)}
PARAMETER_RANGES = {
    "fade_s": (0.0, 10.0),
    "ramp_s": (0.0, 10.0),
    "cutoff_hz": (1.0, 1e6),
    "filter_order": (1, 10),
    "noise_db": (-100.0, 20.0),
    "mod_hz": (0.0, 1e6),
    "mod_depth": (0.0, 1.0),
}


def check_parameters(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters with every value checked against PARAMETER_RANGES (filter_order a whole number)."""
    out = dict(params)
    for key, (low, high) in PARAMETER_RANGES.items():
        if key not in out:
            continue
        value = _number(f"parameters.{key}", out[key], low, high)
        if key == "filter_order":
            if value != int(value):
                raise ManifestError(f"parameters.filter_order must be a whole number, got {out[key]!r}")
            value = int(value)
        out[key] = value
    if out.get("snr_measure", "rms") not in ("rms", "lufs"):
        raise ManifestError(f"parameters.snr_measure must be rms or lufs, got {out['snr_measure']!r}")
    return out


def check_rate(manifest: Mapping[str, Any], rate: int) -> None:
    """The bounds that need the source's sampling rate: cutoff_hz and mod_hz below Nyquist."""
    for key in ("cutoff_hz", "mod_hz"):
        value = manifest["parameters"].get(key)
        if value is not None and value >= rate / 2:
            raise ManifestError(
                f"parameters.{key} {value:g} Hz must be below the source's Nyquist frequency ({rate / 2:g} Hz)"
            )


def check_paper_ranges(manifest: Mapping[str, Any]) -> None:
    """ManifestError when a created manifest leaves App. B.3's ranges (1-3 positions, SNR 6-10 dB, gain
    ±8-12 dB, speed ×1.5-3 faster or slower)."""
    low, high = PAPER_RANGES["positions"]
    if not low <= len(manifest["positions"]) <= high:
        raise ManifestError(f"{len(manifest['positions'])} positions; App. B.3 applies an operation at {low}-{high}")
    op = manifest["operation"]
    if op == "addition" and not _within(manifest["snr_db"], PAPER_RANGES["snr_db"]):
        raise ManifestError(f"snr_db {manifest['snr_db']} is outside App. B.3's 6-10 dB")
    if (
        op == "modification"
        and manifest["attribute"] == "loudness"
        and not _within(abs(manifest["gain_db"]), PAPER_RANGES["abs_gain_db"])
    ):
        raise ManifestError(f"gain_db {manifest['gain_db']} is outside App. B.3's ±8-12 dB")
    if op == "modification" and manifest["attribute"] == "speed":
        factor = manifest["speed_factor"]
        if not _within(max(factor, 1 / factor), PAPER_RANGES["speed"]):
            raise ManifestError(
                f"speed_factor {factor} is outside App. B.3's ×1.5-3 (faster: 1.5..3, slower: 1/3..1/1.5)"
            )


def _within(value: float, bounds: tuple[float, float]) -> bool:
    return bounds[0] - 1e-9 <= value <= bounds[1] + 1e-9


def new_manifest(
    operation: str,
    positions: list[Any],
    *,
    recording_id: Optional[str] = None,
    event_category: Optional[str] = None,
    snr_db: Optional[float] = None,
    deletion_mode: Optional[str] = None,
    attribute: Optional[str] = None,
    gain_db: Optional[float] = None,
    speed_factor: Optional[float] = None,
    seed: Optional[int] = None,
    parameters: Optional[Mapping[str, Any]] = None,
    segments: Optional[list[Optional[str]]] = None,
    paper_ranges: bool = True,
) -> dict[str, Any]:
    """A plan: an unapplied manifest. ``positions`` are [start, end] seconds in the source's timeline (for
    addition the end is set by the clip when applied; give [start, None] or [start, end])."""
    raw: dict[str, Any] = {
        "operation": operation,
        "recording_id": recording_id,
        "event_category": event_category,
        "snr_db": snr_db,
        "deletion_mode": deletion_mode,
        "attribute": attribute,
        "gain_db": gain_db,
        "speed_factor": speed_factor,
        "seed": seed,
        "parameters": dict(parameters or {}),
        "positions": [
            {"original_start": p[0], "original_end": p[1], "segment": segments[i] if segments else None}
            for i, p in enumerate(positions)
        ],
    }
    manifest = read_manifest(raw)
    if paper_ranges:
        check_paper_ranges(manifest)
    return manifest


def _seconds(name: str, value: Any) -> float:
    """Seconds from a number or a time string ("12.5", "02:00", "01:04:00"), read as the loader reads them."""
    if isinstance(value, str):
        try:
            value = parse_record_time(value)
        except ValueError as err:
            raise ManifestError(f"{name}: {err}") from None
    return _number(name, value, 0.0, MAX_SECONDS)


def _aliases() -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The AudioSpan loader's manifest field aliases and value spellings (one table for both readers)."""
    values = {"operation": fields.OPERATIONS, "deletion_mode": fields.DELETION_MODES, "attribute": fields.ATTRIBUTES}
    return dict(fields.FIELD_ALIASES["manifest"]), values


def _enum(name: str, value: Any, spellings: Mapping[str, str], allowed: tuple[str, ...]) -> Optional[str]:
    if value is None:
        return None
    canonical = spellings.get(str(value).strip().lower())
    if canonical not in allowed:
        raise ManifestError(f"{name}={value!r} is not one of {allowed}")
    return canonical


def _position(n: int, raw: Any) -> dict[str, Any]:
    """One position in canonical form. A plan position gives only original times."""

    where = f"positions[{n}]"
    if isinstance(raw, Mapping) and ("original_start" in raw or "original_start_frame" in raw):
        out = dict(raw)
        for key in ("original_start", "original_end", "start", "end"):
            if out.get(key) is not None:
                out[key] = _seconds(f"{where}.{key}", out[key])
        for key in ("original_start_frame", "original_end_frame", "start_frame", "end_frame"):
            value = out.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ManifestError(f"{where}.{key} must be a whole number of frames >= 0, got {value!r}")
        return out
    if isinstance(raw, (list, tuple)) and len(raw) == 2 and raw[1] is None:  # addition plan: [start, None]
        return {"original_start": _seconds(f"{where}[0]", raw[0]), "original_end": None}
    try:
        span = parse_record_span(raw)
    except ValueError as err:
        raise ManifestError(f"{where}: {err}") from None
    if span is None:
        raise ManifestError(f"{where} is empty")
    span = [_seconds(f"{where}.{key}", t) for key, t in zip(("start", "end"), span)]
    extra = {k: v for k, v in raw.items() if k not in ("start", "end")} if isinstance(raw, Mapping) else {}
    return {"original_start": span[0], "original_end": span[1], **extra}


def read_manifest(raw: Union[Mapping[str, Any], str, os.PathLike]) -> dict[str, Any]:
    """A manifest in canonical form from a dict, a JSON file path or JSON text (aliases accepted, see the
    module docstring). Raises ManifestError naming the field for anything it cannot use."""
    if isinstance(raw, (str, os.PathLike)) and not str(raw).lstrip().startswith("{"):
        path = Path(raw)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ManifestError(f"manifest not found: {path}") from None
        except json.JSONDecodeError as err:
            raise ManifestError(f"{path}: not valid JSON ({err.msg} at line {err.lineno})") from None
    elif isinstance(raw, str):
        raw = json.loads(raw)
    if not isinstance(raw, Mapping):
        raise ManifestError(f"a manifest is a JSON object, got {type(raw).__name__}")
    version = raw.get("schema_version")
    if version is not None and version != SCHEMA_VERSION:
        raise ManifestError(f"schema_version {version!r}: this audioreason reads version {SCHEMA_VERSION}")
    aliases, spellings = _aliases()
    fields: dict[str, Any] = {}
    extra = dict(raw.get("extra") or {})
    for key, value in raw.items():
        if key == "extra":
            continue
        name = key if key in TOP_KEYS else aliases.get(key, aliases.get(key.lower()))
        if name is None or name not in TOP_KEYS:
            extra[key] = value
        elif name in fields:
            raise ManifestError(f"{key!r} and another key both give {name!r}")
        else:
            fields[name] = value
    operation = _enum("operation", fields.get("operation"), spellings["operation"], OPERATIONS)
    if operation is None:
        raise ManifestError("operation is missing (addition, deletion or modification)")
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "recording_id": fields.get("recording_id"),
        "operation": operation,
    }
    for key in ("event_category", "snr_db", "deletion_mode", "attribute", "gain_db", "speed_factor"):
        out[key] = fields.get(key)
    out["deletion_mode"] = _enum("deletion_mode", out["deletion_mode"], spellings["deletion_mode"], DELETION_MODES)
    out["attribute"] = _enum("attribute", out["attribute"], spellings["attribute"], ATTRIBUTES)
    for key in ("snr_db", "gain_db", "speed_factor"):
        if out[key] is not None:
            out[key] = _number(key, out[key], *VALUE_RANGES[key])
    for key in ("recording_id", "event_category"):
        if out[key] is not None and not isinstance(out[key], str):
            raise ManifestError(f"{key} must be a string, got {out[key]!r}")
    _check_operation_fields(out)
    given = fields.get("parameters")
    if given is not None and not isinstance(given, Mapping):
        raise ManifestError(f"parameters must be an object, got {given!r}")
    out["parameters"] = check_parameters(default_parameters(operation, **(given or {})))
    seed = fields.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ManifestError(f"seed must be a whole number >= 0, got {seed!r}")
    out["seed"] = seed
    positions = fields.get("positions")
    if positions is None or (isinstance(positions, (list, tuple)) and not positions):
        raise ManifestError("positions is missing or empty")
    if is_single_span(positions):  # the loader's rule, so both read alike
        positions = [positions]
    out["positions"] = [_position(n, p) for n, p in enumerate(positions)]
    for key in ("source", "event_clip", "output", "tool"):
        out[key] = dict(fields[key]) if isinstance(fields.get(key), Mapping) else None
    out["extra"] = extra or None
    return out


def _check_operation_fields(m: Mapping[str, Any]) -> None:
    op = m["operation"]
    missing = [k for k in OPERATION_KEYS[op] if m.get(k) is None]
    if op == "modification" and m.get("attribute") == "loudness" and m.get("gain_db") is None:
        missing.append("gain_db")
    if op == "modification" and m.get("attribute") == "speed" and m.get("speed_factor") is None:
        missing.append("speed_factor")
    if missing:
        raise ManifestError(f"{op} needs {', '.join(missing)}")
    if op == "modification" and m["attribute"] == "speed" and not m["speed_factor"] > 0:
        raise ManifestError(f"speed_factor must be positive, got {m['speed_factor']}")
    own = {
        "addition": ("event_category", "snr_db"),
        "deletion": ("deletion_mode",),
        "modification": ("attribute", "gain_db" if m.get("attribute") == "loudness" else "speed_factor"),
    }[op]
    foreign = [
        k
        for k in ("event_category", "snr_db", "deletion_mode", "attribute", "gain_db", "speed_factor")
        if k not in own and m.get(k) is not None
    ]
    if foreign:
        raise ManifestError(f"{op} manifest gives {', '.join(foreign)}, which belong to another operation or attribute")


def manifest_json(manifest: Mapping[str, Any]) -> str:
    """The manifest as written: keys in schema order, None values and an empty extra left out."""
    ordered = {k: manifest[k] for k in TOP_KEYS if manifest.get(k) is not None}
    try:  # NaN or Infinity would make a file no JSON reader takes
        return json.dumps(ordered, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError as err:
        raise ManifestError(f"the manifest holds a value JSON cannot write ({err})") from None


def write_manifest(manifest: Mapping[str, Any], path: Union[str, os.PathLike]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(manifest_json(manifest), encoding="utf-8")
    return path
