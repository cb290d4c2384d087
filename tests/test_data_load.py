"""The one-line loader, the torchcodec-free fallback, resampling, the build scripts and the cards."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from datasets import Audio, load_dataset
from fixtures.audiospan_synth import write_audiospan_folder
from fixtures.data_helpers import assert_same_items, mmar_records, write_mmar_raw, write_mmau_raw

from audioreason.data import (
    BenchmarkNotFoundError,
    decode_audio,
    export_benchmark,
    load_benchmark,
    resolve_audio_backend,
    torchcodec_status,
)
from audioreason.data.hub_load import read_card_yaml

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "datasets_scripts"
LICENCES = {"mmar": "cc-by-nc-4.0", "mmau_test_mini": "cc-by-nc-4.0", "audiospan": "cc-by-nc-sa-4.0"}


@pytest.fixture(scope="module")
def mmar_raw(tmp_path_factory):
    return write_mmar_raw(tmp_path_factory.mktemp("mmar_raw"), mmar_records()[:6])


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


def test_raw_folder_then_hub_ready_folder(mmar_raw, cache, tmp_path):
    ds, report = load_benchmark("mmar", mmar_raw, cache_dir=cache, return_report=True)
    assert len(ds) == 6 and report.ok and isinstance(ds.features["audio"], Audio)
    out = export_benchmark("mmar", ds, tmp_path / "hub")
    again, no_report = load_benchmark("mmar", out, cache_dir=cache, return_report=True)
    assert no_report is None
    assert_same_items(ds, again)
    with pytest.raises(ValueError, match="one split"):
        load_benchmark("mmar", mmar_raw, split="train", cache_dir=cache)
    with pytest.raises(ValueError, match="unknown benchmark"):
        load_benchmark("mmlu", mmar_raw)


def test_a_report_with_issues_is_a_warning(tmp_path, cache):
    records = mmar_records()[:3]
    root = write_mmar_raw(tmp_path / "raw", records, skip_audio=[records[0]["id"]])
    with pytest.warns(UserWarning, match=r"missing_audio: 1 .*" + records[0]["id"]):
        ds = load_benchmark("mmar", root, cache_dir=cache, on_missing_audio="skip")
    assert len(ds) == 2


def test_hub_id_offline_gives_a_clear_error(cache):
    assert __import__("os").environ["HF_HUB_OFFLINE"] == "1"
    for backend in ("auto", "soundfile"):
        with pytest.raises(BenchmarkNotFoundError) as caught:
            load_benchmark("audiospan", "some-org/audiospan", cache_dir=cache, audio_backend=backend)
        message = str(caught.value)
        assert "'some-org/audiospan'" in message and "HF_HUB_OFFLINE=1" in message
        assert "raw audiospan folder" in message and "Hub-ready folder" in message


def test_local_paths_that_are_not_benchmarks(tmp_path):
    with pytest.raises(BenchmarkNotFoundError, match="folder not found"):
        load_benchmark("mmar", tmp_path / "missing" / "MMAR")
    with pytest.raises(BenchmarkNotFoundError, match="neither a raw mmar folder"):
        load_benchmark("mmar", tmp_path)


def test_resampling_to_the_rate_a_consumer_asks_for(mmar_raw, cache):
    native = load_benchmark("mmar", mmar_raw, cache_dir=cache)
    samples16, rate16 = decode_audio(native[0]["audio"])
    ds = load_benchmark("mmar", mmar_raw, cache_dir=cache, sampling_rate=8000)
    samples8, rate8 = decode_audio(ds[0]["audio"])  # resampled by torchcodec/FFmpeg
    assert (rate16, rate8) == (16000, 8000) and abs(len(samples8) - len(samples16) / 2) <= 2
    fallback = load_benchmark("mmar", mmar_raw, cache_dir=cache, sampling_rate=8000, audio_backend="soundfile")
    assert fallback.features["audio"] == Audio(sampling_rate=8000, decode=False)
    samples_sf, rate_sf = decode_audio(fallback[0]["audio"], 8000, backend="soundfile")  # resampled by soxr
    assert rate_sf == 8000 and len(samples_sf) == len(samples16) // 2
    # Two resamplers, one signal: close, not bit-identical.
    assert np.corrcoef(samples8[: len(samples_sf)], samples_sf[: len(samples8)])[0, 1] > 0.99


class _TorchcodecBlocker:
    """A meta-path finder that makes every torchcodec import fail like it does on a machine without
    torchcodec (ImportError) or without FFmpeg's shared libraries (RuntimeError at import)."""

    def __init__(self, error: Exception):
        self.error = error

    def find_spec(self, name, path=None, target=None):
        if name == "torchcodec" or name.startswith("torchcodec."):
            raise self.error
        return None


def _block_torchcodec(monkeypatch, failure: str = "import") -> None:
    for name in [
        m
        for m in sys.modules
        if m == "torchcodec" or m.startswith("torchcodec.") or m == "datasets.features._torchcodec"
    ]:
        monkeypatch.delitem(sys.modules, name)
    error = (
        ImportError("No module named 'torchcodec'")
        if failure == "import"
        else RuntimeError("Could not load libtorchcodec. Likely causes: FFmpeg is not properly installed")
    )
    monkeypatch.setattr(sys, "meta_path", [_TorchcodecBlocker(error)] + sys.meta_path)


@pytest.mark.parametrize("failure", ["import", "ffmpeg"])
def test_both_torchcodec_failures_fall_back_to_soundfile(monkeypatch, failure, mmar_raw):
    wav = next((mmar_raw / "audio").glob("*.wav"))
    expected, rate = decode_audio(str(wav))
    _block_torchcodec(monkeypatch, failure)
    usable, why = torchcodec_status()
    assert not usable and why.startswith("ImportError" if failure == "import" else "RuntimeError")
    assert resolve_audio_backend("auto")[0] == "soundfile"
    with pytest.raises(RuntimeError, match="torchcodec is unusable"):
        resolve_audio_backend("torchcodec")
    samples, got_rate = decode_audio(str(wav))  # auto: torchcodec fails, soundfile decodes
    assert got_rate == rate
    np.testing.assert_array_equal(samples, expected)


def test_the_whole_path_works_without_torchcodec(monkeypatch, mmar_raw, tmp_path):
    reference = load_benchmark("mmar", mmar_raw, cache_dir=str(tmp_path / "c0"))
    expected = [decode_audio(v["audio"]) for v in reference]
    span_raw = write_audiospan_folder(tmp_path / "span_raw")
    _block_torchcodec(monkeypatch)
    # raw folder -> builder (struct column, cast to Audio(decode=False)) -> soundfile decoding
    ds, report = load_benchmark("mmar", mmar_raw, cache_dir=str(tmp_path / "c1"), return_report=True)
    assert report.audio_backend == "soundfile" and "torchcodec unusable" in report.audio_backend_reason
    assert ds.features["audio"] == Audio(decode=False)
    assert ds.remove_columns("audio").to_list() == reference.remove_columns("audio").to_list()
    for item, (samples, rate) in zip(ds, expected):
        got, got_rate = decode_audio(item["audio"])
        assert got_rate == rate
        np.testing.assert_array_equal(got, samples)
    # -> Hub-ready parquet folder (published as Audio()) -> loaded back without torchcodec
    out = export_benchmark("mmar", ds, tmp_path / "hub")
    assert read_card_yaml(out)["dataset_info"][0]["features"][1] == {"name": "audio", "dtype": "audio"}
    loaded = load_benchmark("mmar", out, cache_dir=str(tmp_path / "c2"))
    assert loaded.features["audio"] == Audio(decode=False)
    assert_same_items(ds, loaded)
    # AudioSpan's audiofolder layout, read from its metadata parquet without datasets' encoder
    span, _ = load_benchmark("audiospan", span_raw, cache_dir=str(tmp_path / "c3"), return_report=True)
    span_out = export_benchmark("audiospan", span, tmp_path / "span_hub")
    for config, size in (("all", 18), ("native_oeq", 6), ("anchor", 6)):
        part = load_benchmark("audiospan", span_out, config=config, cache_dir=str(tmp_path / "c4"))
        assert len(part) == size and part.features == span.features
        expected_part = (
            span if config == "all" else span.select([i for i, s in enumerate(span["subset"]) if s == config])
        )
        assert_same_items(expected_part, part)


def _script(name):
    spec = importlib.util.spec_from_file_location(f"build_{name}", SCRIPTS / name / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _card_yaml(name):
    text = (SCRIPTS / name / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---")[1]), text


@pytest.mark.parametrize("name", ["mmar", "mmau_test_mini", "audiospan"])
def test_build_scripts_write_what_their_cards_declare(name, tmp_path, capsys):
    raw = {
        "mmar": lambda p: write_mmar_raw(p, mmar_records()[:3]),
        "mmau_test_mini": lambda p: write_mmau_raw(p),
        "audiospan": write_audiospan_folder,
    }[name](tmp_path / "raw")
    code = _script(name).main(
        [
            str(raw),
            str(tmp_path / "out"),
            "--report",
            str(tmp_path / "report.json"),
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    assert code == 0 and (tmp_path / "report.json").is_file()
    printed = capsys.readouterr().out
    assert "records read" in printed and "wrote" in printed
    written = read_card_yaml(tmp_path / "out")
    declared, _ = _card_yaml(name)
    assert written["configs"] == declared["configs"] and written["license"] == LICENCES[name]
    assert written["dataset_info"]
    config = declared["configs"][0]["config_name"]
    loaded = load_dataset(str(tmp_path / "out"), config, split="test", cache_dir=str(tmp_path / "cache2"))
    assert len(loaded) > 0 and isinstance(loaded.features["audio"], Audio)
    assert _script(name).main([str(raw), str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")]) == 1
    assert "is not empty; pass --overwrite to replace it" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["mmar", "mmau_test_mini", "audiospan"])
def test_cards_are_complete(name):
    meta, text = _card_yaml(name)
    assert meta["license"] == LICENCES[name]
    assert meta["configs"] and meta["pretty_name"] and meta["task_categories"]
    licence_words = {"cc-by-nc-4.0": "CC BY-NC 4.0", "cc-by-nc-sa-4.0": "CC BY-NC-SA 4.0"}[LICENCES[name]]
    assert licence_words in text
    for section in ("## Licence and attribution", "## Schema", "## Building this folder", "## Citation", "```bibtex"):
        assert section in text, section
