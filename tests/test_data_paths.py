"""Audio paths named by metadata stay inside the raw folder: "../", absolute paths elsewhere and symlinks that
point out are refused and reported (``audio_outside_root``), never read, never exported; every builder reads
each audio header and reports a file no reader opens (a .txt given as audio) as ``unreadable_audio``.
Real files, real symlinks, the real /etc/hostname."""

import copy
import importlib.util
import json
import os
import re
from pathlib import Path

import datasets
import pytest
from datasets import Audio
from fixtures.audiospan_synth import write_audiospan_folder
from fixtures.data_helpers import RATE, mmar_records, mmau_records, write_mmar_raw, write_mmau_raw

from audioreason.audio import synthesize_clip, write_audio
from audioreason.data import (
    AudioSpanBuilder,
    BenchmarkValidationError,
    MMARBuilder,
    MMAUTestMiniBuilder,
    audio_paths,
    export_benchmark,
    load_benchmark,
    load_hub_folder,
)
from audioreason.data import load as load_module

SCRIPTS = Path(__file__).resolve().parents[1] / "datasets_scripts"
HOSTNAME = Path("/etc/hostname")
SECRET = b"SECRET-OUTSIDE-THE-RAW-FOLDER-7f3a9c"


def _secret_wav(path: Path) -> Path:
    """A valid WAV outside the raw folder whose bytes are easy to find in an export (the marker sits in a
    trailing RIFF chunk that soundfile skips)."""
    write_audio(path, synthesize_clip("sound", 0.25, RATE, seed="secret"), RATE)
    data = bytearray(path.read_bytes())
    chunk = b"junk" + len(SECRET).to_bytes(4, "little") + SECRET
    data += chunk
    data[4:8] = (len(data) - 8).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    return path


@pytest.fixture()
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    _secret_wav(folder / "secret.wav")
    (folder / "secret.txt").write_bytes(SECRET)
    return folder


def _hostile_mmar(tmp_path, outside):
    """Nine real MMAR records: 0, 7, 8 usable (7 a symlink inside the folder, 8 an absolute path inside it),
    1-5 leaving the folder five ways, 6 a text file given as audio."""
    assert HOSTNAME.is_file()
    records = copy.deepcopy(mmar_records()[:9])
    ids = [r["id"] for r in records]
    root = tmp_path / "raw"
    good = "./audio/" + Path(records[0]["audio_path"]).name
    records[1]["audio_path"] = "../outside/secret.wav"  # ../
    records[2]["audio_path"] = str(outside / "secret.wav")  # absolute, elsewhere
    records[3]["audio_path"] = str(HOSTNAME)  # absolute, a system file
    records[4]["audio_path"] = "./audio/link.wav"  # a symlink out of the folder
    records[5]["audio_path"] = "./audio/outdir/secret.wav"  # through a symlinked folder
    records[6]["audio_path"] = "./audio/notes.txt"  # text given as audio
    records[7]["audio_path"] = "./audio/inner_link.wav"  # a symlink inside: fine
    write_mmar_raw(root, records, skip_audio=ids[1:])
    records[8]["audio_path"] = str((root / records[8]["audio_path"]).resolve())  # absolute, inside: fine
    write_audio(root / records[8]["audio_path"], synthesize_clip("sound", 0.5, RATE, seed="8"), RATE)
    os.symlink(outside / "secret.wav", root / "audio" / "link.wav")
    os.symlink(outside, root / "audio" / "outdir")
    (root / "audio" / "notes.txt").write_text("meeting notes, not audio\n")
    os.symlink(root / good, root / "audio" / "inner_link.wav")
    (root / "MMAR-meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return root, ids


def test_paths_leaving_the_folder_are_refused_and_reported(tmp_path, outside):
    root, ids = _hostile_mmar(tmp_path, outside)
    report = MMARBuilder(data_dir=str(root), cache_dir=str(tmp_path / "cache")).report
    assert not report.ok
    assert report.ids("audio_outside_root") == ids[1:6]
    assert report.ids("unreadable_audio") == [ids[6]]
    assert "missing_audio" not in report.counts()
    details = {i.item_id: i.detail for i in report.of_kind("audio_outside_root")}
    assert all("outside the raw folder" in d for d in details.values())
    assert str(HOSTNAME) in details[ids[3]] and "secret.wav" in details[ids[4]]
    assert "audio_outside_root: 5" in report.summary()


def test_strict_mode_raises_naming_every_refused_path(tmp_path, outside):
    root, ids = _hostile_mmar(tmp_path, outside)
    builder = MMARBuilder(data_dir=str(root), cache_dir=str(tmp_path / "cache"))
    with pytest.raises(BenchmarkValidationError) as caught:
        builder.download_and_prepare()
    message = str(caught.value)
    assert "5 audio paths lead outside the raw folder" in message
    assert all(i in message for i in ids[1:7]) and "1 audio files are missing or unreadable" in message


def test_refused_files_are_never_read_and_never_built(tmp_path, outside, monkeypatch):
    from audioreason.data import audio_files

    opened = []
    real = audio_files.audio_info
    monkeypatch.setattr(audio_files, "audio_info", lambda path: opened.append(Path(path)) or real(path))
    root, ids = _hostile_mmar(tmp_path, outside)
    skipped = MMARBuilder(data_dir=str(root), cache_dir=str(tmp_path / "c1"), on_missing_audio="skip").build()
    real_root = root.resolve()
    assert opened and all(p.is_relative_to(real_root) for p in opened)
    assert skipped["id"] == [ids[0], ids[7], ids[8]]
    assert all(Path(p).resolve().is_relative_to(real_root) for p in audio_paths(skipped))
    kept = MMARBuilder(data_dir=str(root), cache_dir=str(tmp_path / "c2"), on_missing_audio="keep").build()
    audio = dict(zip(kept["id"], audio_paths(kept)))
    assert [i for i in ids if audio[i] is None] == ids[1:7]
    assert audio[ids[7]] == str(real_root / "audio" / Path(mmar_records()[0]["audio_path"]).name)


def test_mmau_reads_every_header_and_refuses_paths_out(tmp_path, outside):
    records = copy.deepcopy(mmau_records()[:4])
    ids = [r["id"] for r in records]
    records[1]["audio_id"] = "./test-mini-audios/readme.txt"
    records[2]["audio_id"] = "../outside/secret.wav"
    root = write_mmau_raw(tmp_path / "raw", records, skip_audio=ids[1:3])
    (root / "test-mini-audios" / "readme.txt").write_text("not audio")
    builder = MMAUTestMiniBuilder(data_dir=str(root), cache_dir=str(tmp_path / "cache"), on_missing_audio="skip")
    assert builder.report.ids("unreadable_audio") == [ids[1]]
    assert "readme.txt" in builder.report.of_kind("unreadable_audio")[0].detail
    assert builder.report.ids("audio_outside_root") == [ids[2]]
    assert builder.build()["id"] == [ids[0], ids[3]]


def test_audiospan_refuses_explicit_and_symlinked_recordings_out(tmp_path, outside):
    root = write_audiospan_folder(tmp_path / "raw")
    rows = [json.loads(line) for line in (root / "metadata/native.jsonl").read_text().splitlines()]
    rows[0]["audio_file"] = "../outside/secret.wav"
    (root / "metadata/native.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    anchored = root / "audio/anchored/zh-show-002.wav"
    anchored.unlink()
    os.symlink(outside / "secret.wav", anchored)
    report = AudioSpanBuilder(data_dir=str(root), cache_dir=str(tmp_path / "cache")).report
    assert report.ids("audio_outside_root") == [rows[0]["id"]] + [f"zh-show-002/anchor/{k}" for k in (1, 2, 3)]
    assert "unreadable_audio" not in report.counts() and "missing_audio" not in report.counts()


def _script(name):
    spec = importlib.util.spec_from_file_location(f"build_{name}", SCRIPTS / name / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files_holding(folder: Path, needle: bytes) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_the_build_script_exports_nothing_from_outside(tmp_path, outside):
    root, ids = _hostile_mmar(tmp_path, outside)
    code = _script("mmar").main(
        [str(root), str(tmp_path / "out"), "--on-missing-audio", "skip", "--cache-dir", str(tmp_path / "cache")]
    )
    assert code == 0
    assert _files_holding(tmp_path / "out", SECRET) == []
    loaded = datasets.load_dataset(str(tmp_path / "out"), split="test", cache_dir=str(tmp_path / "c2"))
    assert loaded["id"] == [ids[0], ids[7], ids[8]]


def test_export_refuses_a_file_swapped_for_a_symlink_after_the_build(tmp_path, outside, monkeypatch, capsys):
    """The build checked the file; by export time it points out of the folder: nothing is written."""
    root = write_mmar_raw(tmp_path / "raw", mmar_records()[:3])
    target = root / mmar_records()[1]["audio_path"]
    real_build = load_module.build_benchmark

    def build_then_swap(*args, **kwargs):
        built = real_build(*args, **kwargs)
        target.unlink()
        os.symlink(outside / "secret.wav", target)
        return built

    monkeypatch.setattr(load_module, "build_benchmark", build_then_swap)
    expected = rf"1 audio file\(s\) lie outside {re.escape(str(root.resolve()))}.*{mmar_records()[1]['id']}"
    assert _script("mmar").main([str(root), str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")]) == 1
    last = capsys.readouterr().err.splitlines()[-1]  # after the build's progress bar
    assert last.startswith("datasets_scripts/mmar/build.py: error: ValueError: ") and re.search(expected, last)
    assert not (tmp_path / "out").exists() or _files_holding(tmp_path / "out", SECRET) == []


def test_export_with_audio_root_checks_every_layout(tmp_path, outside):
    span_root = write_audiospan_folder(tmp_path / "span")
    span = AudioSpanBuilder(data_dir=str(span_root), cache_dir=str(tmp_path / "cache")).build()
    recording = span_root / "audio/original/en-talk-001.wav"
    recording.unlink()
    os.symlink(outside / "secret.wav", recording)
    with pytest.raises(ValueError, match="outside"):
        export_benchmark("audiospan", span, tmp_path / "out", audio_root=span_root)
    assert not (tmp_path / "out").exists() or _files_holding(tmp_path / "out", SECRET) == []


def test_a_hub_ready_folder_whose_audio_points_out_is_refused(tmp_path, outside):
    span_root = write_audiospan_folder(tmp_path / "span")
    span = AudioSpanBuilder(data_dir=str(span_root), cache_dir=str(tmp_path / "cache")).build()
    out = export_benchmark("audiospan", span, tmp_path / "hub")
    exported = next((out / "native" / "audio").iterdir())
    exported.unlink()
    os.symlink(outside / "secret.wav", exported)
    for backend in ("auto", "soundfile"):
        with pytest.raises(ValueError, match=f"outside {re.escape(str(out.resolve()))}"):
            load_benchmark("audiospan", out, audio_backend=backend, cache_dir=str(tmp_path / f"c-{backend}"))


def test_a_parquet_row_naming_a_system_file_is_refused(tmp_path):
    folder = tmp_path / "hub"
    features = datasets.Features({"id": datasets.Value("string"), "audio": Audio(decode=False)})
    rows = datasets.Dataset.from_dict(
        {"id": ["x"], "audio": [{"bytes": None, "path": str(HOSTNAME)}]}, features=features
    )
    (folder / "data").mkdir(parents=True)
    rows.to_parquet(str(folder / "data" / "test-00000-of-00001.parquet"))
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test-*\n---\n"
    )
    with pytest.raises(ValueError, match=rf"(?s)outside .*x: {HOSTNAME}"):
        load_hub_folder(folder, audio_backend="soundfile", cache_dir=str(tmp_path / "cache"))


def test_unresolvable_paths_are_missing_with_the_reason(tmp_path):
    records = copy.deepcopy(mmar_records()[:2])
    records[0]["audio_path"] = "./audio/a\u0000b.wav"  # a NUL byte
    records[1]["audio_path"] = "./audio/loop.wav"  # a symlink loop
    root = write_mmar_raw(tmp_path / "raw", records, skip_audio=[r["id"] for r in records])
    (root / "audio").mkdir(exist_ok=True)
    os.symlink(root / "audio" / "loop.wav", root / "audio" / "loop.wav")
    report = MMARBuilder(data_dir=str(root), cache_dir=str(tmp_path / "cache")).report
    assert report.ids("missing_audio") == [r["id"] for r in records]
    assert ["cannot be resolved" in i.detail for i in report.of_kind("missing_audio")] == [True, True]


def test_the_demo_writer_refuses_to_write_outside_its_folder(tmp_path):
    from audioreason.data.audio_files import AudioPathError
    from audioreason.data.mmar import write_raw_folder

    record = dict(mmar_records()[0], audio_path="../escaped.wav")
    with pytest.raises(AudioPathError, match="outside the raw folder"):
        write_raw_folder([record], tmp_path / "raw", seconds=0.1)
    assert not (tmp_path / "escaped.wav").exists() and not (tmp_path / "raw" / "MMAR-meta.jsonl").exists()
