"""Apply an anchor manifest to a recording, and verify an anchored file against its manifest, streaming
(AudioSpan, arXiv:2608.26431, App. B.3; recordings run to 2.7 h).

``apply_manifest`` reads the source once, in blocks of ``block_frames``, in its own sample format (16-bit
PCM is read as int16, 24/32-bit as int32, float as float): the audio outside every span is copied as
those raw samples, so it is bit-identical to the source by construction. Each span (seconds long) is
converted to float64, edited by ``audioreason.audio.anchors`` and converted back (ints rounded to
nearest, full-scale hits clipped and counted in ``output.clipped_samples``). Only one block and one span
are in memory. The output is a WAV (or FLAC for a .flac path) in the source's sample format; a source in
another encoding (MP3, Vorbis, 8-bit) is written as 32-bit float WAV of its decoded samples. The
anchored file's sha256 goes in the manifest, so ``apply`` again reproduces it bit for bit (same
library versions, recorded under ``tool``).

soundfile (libsndfile) does the streaming I/O, as in the rest of ``audioreason.audio``: it reads native
integer samples and seeks to exact frames; a WAV shorter than its header is refused before reading.

``verify_anchored`` checks an anchored file against its manifest and the source, streaming the same way:
the frame count, every sample outside the spans (must be identical), the file's sha256 against the
manifest's (a mismatch fails, naming the file and where its samples differ: outside the spans, or inside a
position whose samples differ from its edit re-applied here), and at each position the measured quantity
against the manifest within a stated tolerance (``TOLERANCES``):

==================  =====================================================================  =============
operation           measured                                                              tolerance
==================  =====================================================================  =============
addition            SNR: level(anchored - source) - level(source) over the span (the         ±0.1 dB
                    manifest's measure, rms or lufs); with the clip, the correlation of the
                    residual with the faded clip                                           >= 0.999
deletion silence    RMS of the span inside its edge fades                                  <= -90 dBFS
deletion noise      noise bed level: anchored - low-passed source, relative to the span's   ±0.5 dB
                    RMS and the bed's modulation; correlation of source and anchored above
                    1 kHz (the speech band is gone)                                       |r| <= 0.1
loudness            gain: level(anchored) - level(source) inside the ramps                 ±0.05 dB
speed               the edited span's frames against round(frames / speed_factor)          one frame
                    speed measured from the audio: the time scale that best aligns the       ±3 %
                    edited span's spectrogram with the source's (``anchor_speed``)
                    spectrogram correlation with the source time-stretched by the factor   >= 0.7
                    ... and it must exceed the correlation with the source resampled       (pitch kept)
==================  =====================================================================  =============
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Union

import numpy as np

from ..base.checksums import file_sha256
from . import anchors as ops
from .anchor_manifest import ManifestError, check_rate, read_manifest
from .errors import AudioError
from .header import check_held, read_promise

PathLike = Union[str, os.PathLike]
BLOCK_FRAMES = 1 << 18  # 262,144 frames: ~16 s at 16 kHz
MIN_SPAN_S = 0.5
NATIVE = {
    "PCM_16": ("int16", 2.0**15),
    "PCM_24": ("int32", 2.0**31),
    "PCM_32": ("int32", 2.0**31),
    "FLOAT": ("float32", 1.0),
    "DOUBLE": ("float64", 1.0),
}
FLAC_SUBTYPES = ("PCM_16", "PCM_24")
TOLERANCES = {
    "snr_db": 0.1,
    "clip_correlation": 0.999,
    "silence_dbfs": -90.0,
    "noise_db": 0.5,
    "hf_correlation": 0.1,
    "gain_db": 0.05,
    "speed_frames": 1,
    "speed_relative": 0.03,
    "speed_tie": 0.02,
    "speed_text": "±3 %",
    "stretch_correlation": 0.7,
}
HF_HZ = 1000.0


def library_versions() -> dict[str, str]:
    """Versions of what shapes the anchored bytes (recorded under ``tool.libraries``)."""
    from importlib.metadata import PackageNotFoundError, version

    import soundfile

    out = {}
    for name in ("numpy", "scipy", "pedalboard", "pyloudnorm", "soundfile", "soxr"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    out["libsndfile"] = soundfile.__libsndfile_version__
    return out


@dataclass(frozen=True)
class AudioFileInfo:
    path: str
    frames: int
    sampling_rate: int
    channels: int
    format: str
    subtype: str

    @property
    def dtype(self) -> str:
        return NATIVE.get(self.subtype, ("float32", 1.0))[0]

    @property
    def scale(self) -> float:
        return NATIVE.get(self.subtype, ("float32", 1.0))[1]


def file_info(path: PathLike) -> AudioFileInfo:
    """Header of a file soundfile can stream (AudioError otherwise, or for a WAV cut short)."""
    import soundfile as sf

    path = str(path)
    if not Path(path).is_file():
        raise AudioError(f"audio file not found: {path}")
    check_held(read_promise(path), path)
    try:
        info = sf.info(path)
    except RuntimeError as err:
        raise AudioError(f"{path}: cannot be streamed by soundfile ({err}); convert it to WAV or FLAC") from None
    if info.frames <= 0:
        raise AudioError(f"{path}: no frames")
    return AudioFileInfo(path, int(info.frames), int(info.samplerate), int(info.channels), info.format, info.subtype)


def _blocks(f: Any, start: int, stop: int, dtype: str, block_frames: int) -> Iterator[np.ndarray]:
    f.seek(start)
    position = start
    while position < stop:
        block = f.read(min(block_frames, stop - position), dtype=dtype, always_2d=True)
        if len(block) == 0:
            raise AudioError(f"{f.name}: the stream ended at frame {position} of {stop}; truncated or damaged")
        position += len(block)
        yield block


def _read(f: Any, start: int, stop: int, info: AudioFileInfo) -> np.ndarray:
    """Frames [start, stop) as float64 in [-1, 1]."""
    parts = list(_blocks(f, start, stop, info.dtype, max(stop - start, 1)))
    raw = np.concatenate(parts) if parts else np.zeros((0, info.channels), info.dtype)
    return raw.astype(np.float64) / info.scale


def _to_native(x: np.ndarray, info: AudioFileInfo) -> tuple[np.ndarray, int]:
    """float64 samples in the file's format, and how many hit full scale (clipped for integer formats)."""
    if info.dtype.startswith("int"):
        limits = np.iinfo(info.dtype)
        v = np.rint(x * info.scale)
        clipped = int(np.count_nonzero((v > limits.max) | (v < limits.min)))
        return np.clip(v, limits.min, limits.max).astype(info.dtype), clipped
    return x.astype(info.dtype), int(np.count_nonzero(np.abs(x) > 1.0))


# ---------------------------------------------------------------------------------------------
# Spans and timeline
# ---------------------------------------------------------------------------------------------


def _resolve(
    path: Optional[PathLike],
    recorded: Optional[Mapping[str, Any]],
    base_dir: Optional[Path],
    what: str,
    within: Optional[PathLike] = None,
) -> str:
    """The file to use: ``path`` when given (the caller's choice), else the manifest's ``what.path`` read from
    ``base_dir``; a manifest's path that leaves ``within`` (after resolving ``..`` and links) is refused."""
    if path is None:
        path = (recorded or {}).get("path")
        if not path or not isinstance(path, str):
            raise ManifestError(f"no {what} file: give one, or a manifest whose {what}.path names it")
        if base_dir is not None and not Path(path).is_absolute():
            path = base_dir / path
        if within is not None and not _inside(Path(path), Path(within)):
            raise ManifestError(
                f"{what}.path {recorded['path']!r} leaves {str(within)!r}; a manifest's {what} "
                f"must lie inside that folder"
            )
    return str(path)


def _inside(path: Path, folder: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def _check_checksum(path: str, recorded: Optional[Mapping[str, Any]], what: str) -> str:
    digest = file_sha256(path)
    expected = (recorded or {}).get("sha256")
    if expected and expected != digest:
        raise ManifestError(
            f"{what} {path}: sha256 {digest} differs from the manifest's {expected}; this is not "
            f"the file the manifest was made from"
        )
    return digest


def original_spans(
    manifest: Mapping[str, Any], rate: int, frames: int, clip_frames: Optional[int] = None
) -> list[tuple[int, int]]:
    """[start, end) source frames of each position, checked: in time order, not overlapping, inside the file
    and at least MIN_SPAN_S long; for addition the end is start + clip frames (a given end must agree)."""
    spans = []
    for n, p in enumerate(manifest["positions"]):
        start = p.get("original_start_frame")
        start = int(start) if start is not None else int(round(p["original_start"] * rate))
        end = p.get("original_end_frame")
        end = (
            int(end)
            if end is not None
            else (None if p.get("original_end") is None else int(round(p["original_end"] * rate)))
        )
        if manifest["operation"] == "addition":
            if clip_frames is None:
                raise ManifestError("addition needs the event clip")
            if end is not None and abs(end - (start + clip_frames)) > max(1, round(0.001 * rate)):
                raise ManifestError(
                    f"positions[{n}] is {(end - start) / rate:.3f} s long but the clip lasts "
                    f"{clip_frames / rate:.3f} s; an added event spans exactly its clip"
                )
            end = start + clip_frames
        if end is None:
            raise ManifestError(f"positions[{n}] has no end")
        if end - start < MIN_SPAN_S * rate:
            raise ManifestError(f"positions[{n}] lasts {(end - start) / rate:.3f} s; spans are at least {MIN_SPAN_S} s")
        if start < 0 or end > frames:
            raise ManifestError(
                f"positions[{n}] [{start / rate:.3f}, {end / rate:.3f}] s leaves the recording "
                f"(0 to {frames / rate:.3f} s)"
            )
        if spans and start < spans[-1][1]:
            raise ManifestError(
                f"positions[{n}] starts before positions[{n - 1}] ends: positions must be in "
                "time order and must not overlap"
            )
        spans.append((start, end))
    return spans


def _edited_length(manifest: Mapping[str, Any], frames: int) -> int:
    if manifest["operation"] == "modification" and manifest["attribute"] == "speed":
        return ops.stretched_frames(frames, manifest["speed_factor"])
    return frames


def _positions(
    manifest: Mapping[str, Any], spans: list[tuple[int, int]], rate: int, extra: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    out, shift = [], 0
    for (start, end), old, more in zip(spans, manifest["positions"], extra):
        new_start = start + shift
        new_end = new_start + _edited_length(manifest, end - start)
        shift = new_end - end
        out.append(
            {
                "start": new_start / rate,
                "end": new_end / rate,
                "original_start": start / rate,
                "original_end": end / rate,
                "start_frame": new_start,
                "end_frame": new_end,
                "original_start_frame": start,
                "original_end_frame": end,
                "shift_after_frames": shift,
                "shift_after": shift / rate,
                "segment": old.get("segment"),
                **more,
            }
        )
    return out


# ---------------------------------------------------------------------------------------------
# Apply
# ---------------------------------------------------------------------------------------------


def _clip_samples(clip_path: str, rate: int) -> np.ndarray:
    """The event clip, mono, at ``rate`` (streamed soxr resampling when its rate differs; soundfile first,
    so no torch is loaded for a WAV or FLAC clip)."""
    from .stream import iter_blocks

    blocks = list(iter_blocks(clip_path, 60.0, rate))
    return np.concatenate(blocks).astype(np.float64) if blocks else np.zeros(0)


def edit_span(
    manifest: Mapping[str, Any], index: int, local: np.ndarray, rate: int, clip: Optional[np.ndarray] = None
) -> tuple[np.ndarray, dict[str, Any]]:
    """(edited span, what to record for this position) for position ``index`` of ``manifest``."""
    params, op = manifest["parameters"], manifest["operation"]
    if op == "addition":
        mixed, gain = ops.add_event(
            local, clip, rate, manifest["snr_db"], measure=params["snr_measure"], fade_s=params["fade_s"]
        )
        return mixed, {"clip_gain_db": gain}
    if op == "deletion":
        if manifest["deletion_mode"] == "silence":
            return ops.silence_span(local, rate, fade_s=params["fade_s"]), {}
        rng = np.random.default_rng([int(manifest.get("seed") or 0), index])
        return ops.smear_span(
            local,
            rate,
            rng,
            cutoff_hz=params["cutoff_hz"],
            order=params["filter_order"],
            noise_db=params["noise_db"],
            mod_hz=params["mod_hz"],
            mod_depth=params["mod_depth"],
            fade_s=params["fade_s"],
        ), {}
    if manifest["attribute"] == "loudness":
        return ops.change_loudness(local, rate, manifest["gain_db"], ramp_s=params["ramp_s"]), {}
    return ops.change_speed(local, rate, manifest["speed_factor"], fade_s=params["fade_s"]), {}


class NotReproduced(ManifestError):
    """The anchored bytes made here are not the ones the manifest's output.sha256 names; nothing was written.
    ``completed`` is the manifest as made here (its output.sha256 the bytes this machine makes)."""

    def __init__(self, message: str, completed: dict[str, Any]):
        super().__init__(message)
        self.completed = completed


def _output_subtype(info: AudioFileInfo, output: Path) -> tuple[str, str]:
    fmt = "FLAC" if output.suffix.lower() == ".flac" else "WAV"
    if output.suffix.lower() not in (".wav", ".flac"):
        raise ManifestError(f"output {output}: write .wav or .flac")
    subtype = info.subtype if info.subtype in NATIVE else "FLOAT"
    if fmt == "FLAC" and subtype not in FLAC_SUBTYPES:
        raise ManifestError(f"output {output}: FLAC cannot hold {subtype} samples without loss; write .wav")
    return fmt, subtype


def apply_manifest(
    manifest: Union[Mapping[str, Any], PathLike],
    *,
    source: Optional[PathLike] = None,
    output: Optional[PathLike] = None,
    clip: Optional[PathLike] = None,
    base_dir: Optional[PathLike] = None,
    read_root: Optional[PathLike] = None,
    block_frames: int = BLOCK_FRAMES,
) -> dict[str, Any]:
    """Write the anchored file and return the completed manifest (positions in both timelines, checksums,
    output, tool). ``source`` / ``clip`` / ``output`` default to the manifest's paths, relative ones read
    from ``base_dir`` (a manifest file's folder when ``manifest`` is a path). The manifest's output path
    must lie inside ``base_dir`` (the working folder without one), and with ``read_root`` its source and
    clip paths inside that folder. A source or clip whose sha256 differs from the manifest's is refused.
    Raises ManifestError / AudioError before writing anything when the manifest does not fit the source.

    The file is written aside first: when the manifest records an output sha256 and the new bytes differ,
    the output path is left as it was and NotReproduced is raised (with the completed manifest)."""
    import soundfile as sf

    from ..version import __version__

    if base_dir is None and isinstance(manifest, (str, os.PathLike)):
        base_dir = Path(manifest).parent
    base = Path(base_dir) if base_dir is not None else None
    m = read_manifest(manifest)
    source_path = _resolve(source, m["source"], base, "source", read_root)
    out_path = Path(_resolve(output, m["output"], base, "output", base if base is not None else Path.cwd()))
    info = file_info(source_path)
    rate = info.sampling_rate
    if m["source"] and m["source"].get("sampling_rate") not in (None, rate):
        raise ManifestError(f"the manifest's source is at {m['source']['sampling_rate']} Hz, {source_path} at {rate}")
    check_rate(m, rate)
    source_sha = _check_checksum(source_path, m["source"], "source")
    clip_samples, clip_record = None, None
    if m["operation"] == "addition":
        clip_path = _resolve(clip, m["event_clip"], base, "event_clip", read_root)
        clip_sha = _check_checksum(clip_path, m["event_clip"], "event clip")
        clip_samples = _clip_samples(clip_path, rate)
        clip_record = {
            "path": str(clip if clip is not None else (m["event_clip"] or {}).get("path", clip_path)),
            "sha256": clip_sha,
            "frames": len(clip_samples),
        }
    spans = original_spans(m, rate, info.frames, None if clip_samples is None else len(clip_samples))
    fmt, subtype = _output_subtype(info, out_path)
    if out_path.resolve() == Path(source_path).resolve():
        raise ManifestError(f"output {out_path} would overwrite the source")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    records, clipped, cursor = [], 0, 0
    tmp = out_path.with_name(out_path.name + ".partial")
    try:
        with (
            sf.SoundFile(source_path) as fin,
            sf.SoundFile(str(tmp), "w", samplerate=rate, channels=info.channels, format=fmt, subtype=subtype) as fout,
        ):
            for index, (start, end) in enumerate(spans):
                for block in _blocks(fin, cursor, start, info.dtype, block_frames):
                    fout.write(block)
                try:
                    edited, record = edit_span(m, index, _read(fin, start, end, info), rate, clip_samples)
                except ValueError as err:
                    raise ManifestError(f"positions[{index}]: {err}") from None
                native, hits = _to_native(edited, info)
                fout.write(native)
                clipped += hits
                records.append(record)
                cursor = end
            for block in _blocks(fin, cursor, info.frames, info.dtype, block_frames):
                fout.write(block)
        made_sha = file_sha256(tmp)
        expected = (m["output"] or {}).get("sha256")
        if not expected or expected == made_sha:
            os.replace(tmp, out_path)
    finally:
        if tmp.exists():
            tmp.unlink()
    positions = _positions(m, spans, rate, records)
    done = dict(m)
    done["positions"] = positions
    recorded_source = (m["source"] or {}).get("path") if source is None else str(source)
    done["source"] = {
        "path": recorded_source or source_path,
        "sha256": source_sha,
        "frames": info.frames,
        "sampling_rate": rate,
        "channels": info.channels,
        "format": info.format,
        "subtype": info.subtype,
    }
    done["event_clip"] = clip_record
    out_frames = info.frames + positions[-1]["shift_after_frames"]
    recorded_output = (m["output"] or {}).get("path") if output is None else str(output)
    done["output"] = {
        "path": recorded_output or str(out_path),
        "sha256": made_sha,
        "frames": out_frames,
        "format": fmt,
        "subtype": subtype,
        "clipped_samples": clipped,
    }
    done["tool"] = {"name": "audioreason", "version": __version__, "libraries": library_versions()}
    if expected and expected != made_sha:
        old = (m["tool"] or {}).get("libraries") or {}
        changed = {k: (old.get(k), v) for k, v in done["tool"]["libraries"].items() if old.get(k) != v}
        kept = "the file there was left as it was" if out_path.exists() else "nothing was written"
        raise NotReproduced(
            f"{out_path}: the bytes made here (sha256 {made_sha}) are not the manifest's "
            f"{expected}; {kept}; library versions that differ (manifest, here): "
            f"{changed or 'none'}",
            done,
        )
    return done


def anchor_recording(
    source: PathLike,
    output: PathLike,
    operation: str,
    positions: list[Any],
    *,
    clip: Optional[PathLike] = None,
    paper_ranges: bool = True,
    **fields: Any,
) -> dict[str, Any]:
    """Plan and apply in one call: ``new_manifest(operation, positions, **fields)`` written to ``output``
    from ``source`` (and ``clip`` for addition). Returns the completed manifest."""
    from .anchor_manifest import new_manifest

    plan = new_manifest(operation, positions, paper_ranges=paper_ranges, **fields)
    return apply_manifest(plan, source=source, output=output, clip=clip)


def anchor_from_manifests(
    root: PathLike,
    manifests: list[Mapping[str, Any]],
    *,
    original_dir: str = "audio/original",
    anchored_dir: str = "audio/anchored",
    extensions: tuple[str, ...] = (".wav", ".flac"),
) -> dict[str, tuple[str, dict[str, Any]]]:
    """Anchor the originals of a raw AudioSpan folder from their manifests (the loader's build-time path).

    For each manifest (one per recording, read through ``read_manifest``, so released names work), with
    ``recording_id``: when ``<root>/<anchored_dir>/<recording_id><ext>`` exists and no cache note of ours
    sits beside it, it is a pre-made copy and is left alone ("pre-made"); otherwise the manifest is applied
    to ``<root>/<original_dir>/<recording_id><ext>`` (the first of ``extensions``) and written to
    ``<anchored_dir>/<recording_id>.wav`` with its completed manifest beside it as
    ``<recording_id>.anchor.json``. That note is the cache: a later build whose manifest is unchanged
    reuses the file ("cached"); a changed manifest anchors again ("made"). Clip paths are read from
    ``root`` and must lie inside it (a recording_id is a file name, never a path). A manifest whose output
    sha256 the result does not match (nothing is written then), or that does not apply, raises a
    ManifestError naming the recording. Returns {recording_id: (status, completed manifest or the plan)}.
    """
    root = Path(root)
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for raw in manifests:
        plan = read_manifest(raw)
        rid = plan.get("recording_id")
        if not rid:
            raise ManifestError("a manifest without recording_id cannot be matched to its original")
        if rid in (".", "..") or Path(rid).name != rid or "\\" in rid:
            raise ManifestError(
                f"recording_id {rid!r} is not a file name; the anchored copy would leave {anchored_dir}"
            )
        folder = root / anchored_dir
        target, note = folder / f"{rid}.wav", folder / f"{rid}.anchor.json"
        premade = [folder / f"{rid}{ext}" for ext in extensions if (folder / f"{rid}{ext}").is_file()]
        key = json.dumps(json.loads(json.dumps(raw, default=str)), sort_keys=True)
        if premade and not note.is_file():
            out[rid] = ("pre-made", plan)
            continue
        if note.is_file() and target.is_file():
            cached = json.loads(note.read_text(encoding="utf-8"))
            if cached.get("plan") == key and cached["manifest"]["output"]["sha256"] == file_sha256(target):
                out[rid] = ("cached", cached["manifest"])
                continue
        originals = [
            root / original_dir / f"{rid}{ext}" for ext in extensions if (root / original_dir / f"{rid}{ext}").is_file()
        ]
        if not originals:
            raise ManifestError(f"recording {rid!r}: no original in {original_dir} to anchor from")
        try:
            done = apply_manifest(plan, source=originals[0], output=target, base_dir=root, read_root=root)
        except (ManifestError, AudioError) as err:
            raise ManifestError(f"recording {rid!r}: {err}") from None
        done["source"]["path"] = str(originals[0].relative_to(root))
        done["output"]["path"] = str(target.relative_to(root))
        note.write_text(json.dumps({"plan": key, "manifest": done}, indent=2), encoding="utf-8")
        out[rid] = ("made", done)
    return out


# ---------------------------------------------------------------------------------------------
# Verify
# ---------------------------------------------------------------------------------------------


def _check(
    position: int, quantity: str, expected: Any, measured: Any, tolerance: str, ok: bool, detail: Optional[str] = None
) -> dict[str, Any]:
    """One row of the report; ``detail`` says in words what a failed check found."""
    if isinstance(measured, float):
        measured = round(measured, 6) if math.isfinite(measured) else str(measured)
    return {
        "position": position,
        "quantity": quantity,
        "expected": expected,
        "measured": measured,
        "tolerance": tolerance,
        "ok": bool(ok),
        "detail": None if ok else detail,
    }


def _highpass(x: np.ndarray, rate: int) -> np.ndarray:
    from scipy.signal import butter, sosfiltfilt

    return sosfiltfilt(butter(4, HF_HZ, btype="highpass", fs=rate, output="sos"), ops.as_frames(x), axis=0)


def measure_position(
    manifest: Mapping[str, Any],
    index: int,
    source_span: np.ndarray,
    anchored_span: np.ndarray,
    rate: int,
    clip: Optional[np.ndarray] = None,
) -> list[dict[str, Any]]:
    """The checks of one position: source and anchored samples of its span (original and edited frames)."""
    op, params, n = manifest["operation"], manifest["parameters"], index + 1
    if op == "addition":
        measure = params["snr_measure"]
        residual = anchored_span - source_span
        snr = ops.level_db(residual, rate, measure) - ops.level_db(source_span, rate, measure)
        checks = [
            _check(
                n,
                f"snr_db ({measure})",
                manifest["snr_db"],
                snr,
                f"±{TOLERANCES['snr_db']} dB",
                abs(snr - manifest["snr_db"]) <= TOLERANCES["snr_db"],
            )
        ]
        if clip is not None:
            r = ops.correlation(residual, ops.faded_clip(clip, rate, params["fade_s"]))
            checks.append(
                _check(
                    n,
                    "clip_correlation",
                    1.0,
                    r,
                    f">= {TOLERANCES['clip_correlation']}",
                    r is not None and r >= TOLERANCES["clip_correlation"],
                )
            )
        return checks
    if op == "deletion":
        fade = ops.edge_frames(len(source_span), rate, params["fade_s"])
        inner = slice(fade, len(source_span) - fade)
        if manifest["deletion_mode"] == "silence":
            level = ops.level_db(np.abs(anchored_span[inner]), rate)
            return [
                _check(
                    n,
                    "interior_rms_dbfs",
                    "silence",
                    level,
                    f"<= {TOLERANCES['silence_dbfs']} dBFS",
                    level <= TOLERANCES["silence_dbfs"],
                )
            ]
        t = np.arange(len(source_span)) / rate
        envelope = 1 - params["mod_depth"] * (1 - np.cos(2 * np.pi * params["mod_hz"] * t)) / 2
        bed = anchored_span - ops.lowpass(source_span, rate, params["cutoff_hz"], params["filter_order"])
        noise = (
            10 * math.log10(float(np.mean(bed[inner] ** 2)))
            - 10 * math.log10(float(np.mean(source_span**2)))
            - 10 * math.log10(float(np.mean(envelope[inner] ** 2)))
        )
        r = ops.correlation(_highpass(source_span, rate)[inner], _highpass(anchored_span, rate)[inner])
        return [
            _check(
                n,
                "noise_db",
                manifest["parameters"]["noise_db"],
                noise,
                f"±{TOLERANCES['noise_db']} dB",
                abs(noise - params["noise_db"]) <= TOLERANCES["noise_db"],
            ),
            _check(
                n,
                f"correlation above {HF_HZ:g} Hz",
                0.0,
                r,
                f"|r| <= {TOLERANCES['hf_correlation']}",
                r is not None and abs(r) <= TOLERANCES["hf_correlation"],
            ),
        ]
    if manifest["attribute"] == "loudness":
        fade = ops.edge_frames(len(source_span), rate, params["ramp_s"])
        inner = slice(fade, len(source_span) - fade)
        gain = ops.level_db(anchored_span[inner], rate) - ops.level_db(source_span[inner], rate)
        return [
            _check(
                n,
                "gain_db",
                manifest["gain_db"],
                gain,
                f"±{TOLERANCES['gain_db']} dB",
                abs(gain - manifest["gain_db"]) <= TOLERANCES["gain_db"],
            )
        ]
    return _speed_checks(n, manifest["speed_factor"], source_span, anchored_span, rate)


def _speed_checks(
    n: int, factor: float, source_span: np.ndarray, anchored_span: np.ndarray, rate: int
) -> list[dict[str, Any]]:
    """The span's length, and its speed and pitch measured from the audio (``anchor_speed``)."""
    from .anchor_speed import measure_speed

    expected_frames = ops.stretched_frames(len(source_span), factor)
    length_ok = abs(len(anchored_span) - expected_frames) <= TOLERANCES["speed_frames"]
    checks = [
        _check(
            n,
            "span_frames",
            expected_frames,
            len(anchored_span),
            "one frame",
            length_ok,
            f"position {n}: the edited span has {len(anchored_span)} frames, not {expected_frames}",
        )
    ]
    m = measure_speed(source_span, anchored_span, rate, factor)
    where = f"position {n} (speed x{factor:g})"
    if m.speed is None:
        silent = not np.any(anchored_span)
        detail = (
            f"{where}: the edited span is silent (zeroed); no time-stretched source in it"
            if silent
            else f"{where}: the edited span is too short to measure"
        )
        return checks + [_check(n, "speed_factor (measured)", factor, None, TOLERANCES["speed_text"], False, detail)]
    resampled = m.resample_correlation is not None and m.resample_correlation >= (m.at_factor or 0.0)
    speed_ok = abs(m.speed / factor - 1) <= TOLERANCES["speed_relative"] or (
        m.at_factor is not None and m.at_factor >= m.stretch_correlation - TOLERANCES["speed_tie"]
    )
    return checks + [
        _check(
            n,
            "speed_factor (measured)",
            factor,
            m.speed,
            TOLERANCES["speed_text"],
            speed_ok,
            f"{where}: the edited span plays the source at x{m.speed:.3g}",
        ),
        _check(
            n,
            "stretch_correlation",
            1.0,
            m.at_factor,
            f">= {TOLERANCES['stretch_correlation']}",
            m.at_factor is not None and m.at_factor >= TOLERANCES["stretch_correlation"] and not resampled,
            f"{where}: the edited span matches the source resampled (pitch-shifted), not time-stretched "
            f"(resample correlation {m.resample_correlation:.3f})"
            if resampled
            else f"{where}: the edited span is not the source time-stretched (spectrogram correlation "
            f"{m.at_factor if m.at_factor is None else round(m.at_factor, 3)})",
        ),
        _check(
            n,
            "resample_correlation",
            f"< {_round(m.at_factor)}",
            m.resample_correlation,
            "below stretch_correlation",
            not resampled,
            f"{where}: the edited span matches the source resampled (pitch-shifted), not time-stretched",
        ),
    ]


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 3)


def verify_anchored(
    manifest: Union[Mapping[str, Any], PathLike],
    *,
    anchored: Optional[PathLike] = None,
    source: Optional[PathLike] = None,
    clip: Optional[PathLike] = None,
    base_dir: Optional[PathLike] = None,
    block_frames: int = BLOCK_FRAMES,
) -> dict[str, Any]:
    """Check an anchored file against its (completed) manifest and the source; see the module docstring.

    Returns {"ok", "checks": [per-file checks], "positions": [per-position checks], "outside_differing":
    samples outside the spans that differ from the source, "sha256_match"}. The clip is optional (without
    it the clip-correlation check is left out, and said so in ``notes``)."""
    import soundfile as sf

    if base_dir is None and isinstance(manifest, (str, os.PathLike)):
        base_dir = Path(manifest).parent
    base = Path(base_dir) if base_dir is not None else None
    m = read_manifest(manifest)
    if not m["output"] or m["positions"][0].get("start_frame") is None:
        raise ManifestError(
            "verify needs a completed manifest (the one apply writes): this one has no output or no edited positions"
        )
    anchored_path = _resolve(anchored, m["output"], base, "output")
    source_path = _resolve(source, m["source"], base, "source")
    a_info, s_info = file_info(anchored_path), file_info(source_path)
    _check_checksum(source_path, m["source"], "source")
    rate, notes = s_info.sampling_rate, []
    clip_samples = None
    if m["operation"] == "addition":
        try:
            clip_samples = _clip_samples(_resolve(clip, m["event_clip"], base, "event_clip"), rate)
        except (ManifestError, AudioError) as err:
            notes.append(f"clip correlation not checked: {err}")
    checks = [
        _check(
            0,
            "frames",
            m["output"]["frames"],
            a_info.frames,
            "exact",
            a_info.frames == m["output"]["frames"],
            f"{anchored_path}: {a_info.frames} frames, the manifest says {m['output']['frames']}",
        ),
        _check(
            0,
            "sampling_rate",
            rate,
            a_info.sampling_rate,
            "exact",
            a_info.sampling_rate == rate,
            f"{anchored_path}: {a_info.sampling_rate} Hz, the source {rate} Hz",
        ),
        _check(
            0,
            "channels",
            s_info.channels,
            a_info.channels,
            "exact",
            a_info.channels == s_info.channels,
            f"{anchored_path}: {a_info.channels} channels, the source {s_info.channels}",
        ),
    ]
    sha, expected_sha = file_sha256(anchored_path), m["output"].get("sha256")
    sha_match = sha == expected_sha if expected_sha else None
    if not expected_sha:
        notes.append("the manifest records no output sha256: the file's bytes are not checked")
    if not all(c["ok"] for c in checks):
        if expected_sha:
            checks.append(_sha_check(anchored_path, sha, expected_sha, "its shape differs (above)"))
        return {
            "ok": False,
            "checks": checks,
            "positions": [],
            "outside_differing": None,
            "sha256_match": sha_match,
            "notes": notes + ["the anchored file's shape differs from the manifest: positions not measured"],
        }
    position_checks, differing, first_differing, reapplied = [], 0, None, {}
    with sf.SoundFile(source_path) as fs, sf.SoundFile(anchored_path) as fa:
        s_cursor = a_cursor = 0
        pieces = [
            (p["original_start_frame"], p["original_end_frame"], p["start_frame"], p["end_frame"])
            for p in m["positions"]
        ] + [(s_info.frames, s_info.frames, a_info.frames, a_info.frames)]
        for index, (s0, s1, a0, a1) in enumerate(pieces):
            if s0 - s_cursor != a0 - a_cursor:
                raise ManifestError(f"positions[{index}]: the manifest's timelines disagree before this span")
            at = a_cursor
            for sb, ab in zip(
                _blocks(fs, s_cursor, s0, s_info.dtype, block_frames),
                _blocks(fa, a_cursor, a0, a_info.dtype, block_frames),
            ):
                unequal = np.flatnonzero(
                    np.any(sb.astype(np.float64) / s_info.scale != ab.astype(np.float64) / a_info.scale, axis=1)
                )
                if len(unequal) and first_differing is None:
                    first_differing = at + int(unequal[0])
                differing += int(
                    np.count_nonzero(sb.astype(np.float64) / s_info.scale != ab.astype(np.float64) / a_info.scale)
                )
                at += len(ab)
            if index < len(m["positions"]):
                src, anc = _read(fs, s0, s1, s_info), _read(fa, a0, a1, a_info)
                position_checks += measure_position(m, index, src, anc, rate, clip_samples)
                if expected_sha and sha != expected_sha:
                    reapplied[index + 1] = _reapplied_difference(m, index, src, anc, rate, clip_samples, a_info)
            s_cursor, a_cursor = s1, a1
    checks.append(
        _check(
            0,
            "outside_differing_samples",
            0,
            differing,
            "exact",
            differing == 0,
            f"{anchored_path}: {differing} samples outside the spans differ from the source, the "
            f"first at {_at(first_differing, rate)}",
        )
    )
    if expected_sha:
        where = []
        if differing:
            where.append(f"outside the spans from {_at(first_differing, rate)}")
        for n, found in reapplied.items():
            if found is None:
                where.append(f"position {n} not re-applied here (no clip)")
            elif found[0]:
                where.append(
                    f"position {n} ({found[0]} samples differ from the edit re-applied here, the first at "
                    f"{_at(found[1], rate)})"
                )
        checks.append(
            _sha_check(
                anchored_path,
                sha,
                expected_sha,
                "; ".join(where)
                or "every sample matches the source and the edits re-applied here: the bytes "
                "differ outside the samples (header or metadata) or only in library versions",
            )
        )
    ok = all(c["ok"] for c in checks + position_checks)
    return {
        "ok": ok,
        "checks": checks,
        "positions": position_checks,
        "outside_differing": differing,
        "sha256_match": sha_match,
        "notes": notes,
    }


def _at(frame: Optional[int], rate: int) -> str:
    return "n/a" if frame is None else f"{frame / rate:.3f} s (frame {frame})"


def _sha_check(path: str, sha: str, expected: str, where: str) -> dict[str, Any]:
    return _check(
        0,
        "sha256",
        expected,
        sha,
        "exact",
        sha == expected,
        f"{path}: sha256 {sha} differs from the manifest's {expected}; content differs: {where}",
    )


def _reapplied_difference(
    manifest: Mapping[str, Any],
    index: int,
    source_span: np.ndarray,
    anchored_span: np.ndarray,
    rate: int,
    clip: Optional[np.ndarray],
    info: AudioFileInfo,
) -> Optional[tuple[int, Optional[int]]]:
    """(samples of the anchored span that differ from the edit re-applied here, the first one's frame in the
    anchored file); None when the edit cannot be re-applied (an addition without its clip)."""
    if manifest["operation"] == "addition" and clip is None:
        return None
    try:
        edited, _ = edit_span(manifest, index, source_span, rate, clip)
    except ValueError:
        return None
    native = _to_native(edited, info)[0].astype(np.float64) / info.scale
    if native.shape != anchored_span.shape:
        return anchored_span.size, manifest["positions"][index]["start_frame"]
    unequal = np.flatnonzero(np.any(native != anchored_span, axis=1))
    first = manifest["positions"][index]["start_frame"] + int(unequal[0]) if len(unequal) else None
    return int(np.count_nonzero(native != anchored_span)), first


__all__ = [
    "BLOCK_FRAMES",
    "TOLERANCES",
    "NotReproduced",
    "anchor_from_manifests",
    "anchor_recording",
    "apply_manifest",
    "edit_span",
    "file_info",
    "file_sha256",
    "measure_position",
    "original_spans",
    "verify_anchored",
]
