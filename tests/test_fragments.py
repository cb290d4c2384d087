"""Equal-duration fragments: hand-computed bounds, exact reconstruction from real files, streaming
(block size and resampling do not change a sample), short clips reported, bad input, damaged files, and
the benchmark's memory measurement."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr
from fixtures import damaged_audio as damaged

from audioreason.audio import AudioError, load_audio, synthesize_clip
from audioreason.audio import fragments as fr
from audioreason.audio.fragments import fragment_audio, fragment_bounds, resampled_length, split_samples

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _concat(result, n):
    parts = sorted((f for f in result.fragments if f.n == n), key=lambda f: f.k)
    return np.concatenate([sf.read(str(f.path), dtype="float32")[0] for f in parts])


def test_bounds_by_hand():
    # m = floor(L/N); the last fragment takes the remainder
    assert fragment_bounds(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert fragment_bounds(10, 2) == [(0, 5), (5, 10)]
    assert fragment_bounds(11, 5) == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 11)]
    assert fragment_bounds(3, 5) == [(0, 0), (0, 0), (0, 0), (0, 0), (0, 3)]
    assert fragment_bounds(0, 2) == [(0, 0), (0, 0)]
    assert fragment_bounds(7, 1) == [(0, 7)]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            fragment_bounds(10, bad)


def test_split_samples_views_concatenate_back():
    x = np.arange(17, dtype=np.float32)
    parts = split_samples(x, 4)
    assert [len(p) for p in parts] == [4, 4, 4, 5]
    np.testing.assert_array_equal(np.concatenate(parts), x)
    with pytest.raises(ValueError, match="mono"):
        split_samples(np.zeros((4, 2)), 2)


def test_resampled_length_matches_soxr():
    rng = np.random.default_rng(0)
    for source, target in ((44100, 16000), (32000, 16000), (8000, 16000), (48000, 16000)):
        for frames in (1, 2, 3, 441, 1001, 4097):
            x = rng.standard_normal(frames).astype(np.float32)
            assert len(soxr.resample(x, source, target)) == resampled_length(frames, source, target)
    assert resampled_length(123, 16000, 16000) == 123


def test_mono_wav_fragments_concatenate_to_the_original_samples(tmp_path):
    clip = synthesize_clip("mix-sound-speech", 1.0, 16000, seed="frag") * 0.9
    clip = np.concatenate([clip, clip[:7]])  # 16007 samples: no N divides it
    path = tmp_path / "clip.wav"
    sf.write(str(path), clip, 16000, subtype="FLOAT")
    result = fragment_audio(path, tmp_path / "out", sampling_rate=None)
    assert (result.sampling_rate, result.source_rate, result.channels, result.total_samples) == (16000, 16000, 1, 16007)
    assert len(result.fragments) == 14 and result.skipped == [] and result.clipped_samples == 0
    original, _ = load_audio(path)
    for n in (2, 3, 4, 5):
        np.testing.assert_array_equal(_concat(result, n), original)  # bit for bit
        got = [(f.start, f.stop) for f in sorted(result.fragments, key=lambda f: (f.n, f.k)) if f.n == n]
        assert got == fragment_bounds(16007, n)
    f30 = next(f for f in result.fragments if (f.n, f.k) == (3, 0))
    assert f30.condition == "frag:3:0" and f30.path.name == "clip_N3_k0.wav" and f30.num_samples == 5335
    assert sf.info(str(f30.path)).subtype == "FLOAT" and sf.info(str(f30.path)).samplerate == 16000
    # the default output rate is the paper's 16 kHz: same file, same samples
    again = fragment_audio(path, tmp_path / "out16")
    np.testing.assert_array_equal(_concat(again, 4), original)


def test_stereo_pcm_wav_is_downmixed_like_load_audio(tmp_path):
    rng = np.random.default_rng(1)
    stereo = rng.uniform(-0.9, 0.9, size=(24001, 2)).astype(np.float32)
    path = tmp_path / "stereo.wav"
    sf.write(str(path), stereo, 24000, subtype="PCM_16")
    result = fragment_audio(path, tmp_path / "out", sampling_rate=None, block_frames=1000)
    mono = sf.read(str(path), dtype="float32")[0].mean(axis=1)
    assert result.channels == 2 and result.total_samples == 24001
    for n in (2, 3, 4, 5):
        np.testing.assert_array_equal(_concat(result, n), mono)
    np.testing.assert_array_equal(_concat(result, 5), load_audio(path)[0])


def test_flac_input(tmp_path):
    clip = synthesize_clip("music", 0.77, 22050, seed="flac")
    path = tmp_path / "clip.flac"
    sf.write(str(path), clip, 22050, subtype="PCM_16")
    result = fragment_audio(path, tmp_path / "out", ns=(2, 5), sampling_rate=None, block_frames=4096)
    decoded = sf.read(str(path), dtype="float32")[0]
    assert len(result.fragments) == 7
    for n in (2, 5):
        np.testing.assert_array_equal(_concat(result, n), decoded)


@pytest.mark.parametrize("block_frames", [1, 777, 4096, 1 << 18])
def test_block_size_never_changes_a_sample_even_when_resampling(tmp_path, block_frames):
    rng = np.random.default_rng(2)
    stereo = (0.4 * rng.standard_normal((4410 * 3 + 5, 2))).astype(np.float32)
    path = tmp_path / "in.wav"
    sf.write(str(path), stereo, 44100, subtype="FLOAT")
    result = fragment_audio(path, tmp_path / "out", ns=(2, 3, 4, 5), sampling_rate=16000, block_frames=block_frames)
    whole = soxr.resample(stereo.mean(axis=1), 44100, 16000)  # one-shot resampling of the whole clip
    assert result.total_samples == len(whole) == resampled_length(len(stereo), 44100, 16000)
    for n in (2, 3, 4, 5):
        np.testing.assert_array_equal(_concat(result, n), whole)


def test_too_short_clip_reports_empty_fragments(tmp_path):
    path = tmp_path / "tiny.wav"
    sf.write(str(path), np.array([0.1, 0.2, 0.3], dtype=np.float32), 16000, subtype="FLOAT")
    result = fragment_audio(path, tmp_path / "out", ns=(2, 3, 4, 5), sampling_rate=None)
    written = {(f.n, f.k): f.num_samples for f in result.fragments}
    # N=2: (0,1), (1,3); N=3: one sample each; N=4, 5: floor(3/N) = 0, the last takes all 3
    assert written == {(2, 0): 1, (2, 1): 2, (3, 0): 1, (3, 1): 1, (3, 2): 1, (4, 3): 3, (5, 4): 3}
    skipped = {(s.n, s.k) for s in result.skipped}
    assert skipped == {(4, 0), (4, 1), (4, 2), (5, 0), (5, 1), (5, 2), (5, 3)}
    assert all("no sample" in s.reason and "3 samples" in s.reason for s in result.skipped)
    assert not (tmp_path / "out" / "tiny_N4_k0.wav").exists()
    assert result.to_dict()["skipped"][0]["condition"] == "frag:4:0"


def test_empty_file_writes_nothing(tmp_path):
    path = tmp_path / "empty.wav"
    sf.write(str(path), np.zeros(0, dtype=np.float32), 16000, subtype="FLOAT")
    result = fragment_audio(path, tmp_path / "out", ns=(2,))
    assert result.fragments == [] and len(result.skipped) == 2
    assert all(s.reason == "no sample: the clip is empty" for s in result.skipped)


def test_pcm16_output_counts_clipped_samples(tmp_path):
    path = tmp_path / "loud.wav"
    sf.write(str(path), np.array([0.5, 1.5, -2.0, 0.25] * 10, dtype=np.float32), 16000, subtype="FLOAT")
    result = fragment_audio(path, tmp_path / "out", ns=(2,), sampling_rate=None, subtype="pcm_16")
    assert result.clipped_samples == 20 and result.subtype == "PCM_16"
    samples = _concat(result, 2)
    assert samples.max() <= 1.0 and samples.min() >= -1.0
    assert sf.info(str(result.fragments[0].path)).subtype == "PCM_16"


def test_bad_input_gives_clear_errors(tmp_path):
    with pytest.raises(AudioError, match="not found"):
        fragment_audio(tmp_path / "missing.wav", tmp_path / "out")
    junk = tmp_path / "junk.m4a"
    junk.write_bytes(b"not audio at all" * 20)
    with pytest.raises(AudioError, match="cannot stream .*junk.m4a.*convert"):
        fragment_audio(junk, tmp_path / "out")
    good = tmp_path / "ok.wav"
    sf.write(str(good), np.zeros(100, dtype=np.float32), 16000, subtype="FLOAT")
    for kwargs, message in [
        (dict(ns=(2, 2)), "repeated"),
        (dict(ns=()), "at least one"),
        (dict(ns=(0,)), "positive"),
        (dict(subtype="MP3"), "cannot be written"),
        (dict(sampling_rate=0), "sampling_rate"),
        (dict(block_frames=0), "block_frames"),
    ]:
        with pytest.raises(ValueError, match=message):
            fragment_audio(good, tmp_path / "out", **kwargs)


def test_non_finite_samples_abort_and_remove_partial_files(tmp_path):
    x = np.zeros(5000, dtype=np.float32)
    x[4000] = np.nan
    path = tmp_path / "nan.wav"
    sf.write(str(path), x, 16000, subtype="FLOAT")
    with pytest.raises(AudioError, match="NaN or infinite sample at frame 4000"):
        fragment_audio(path, tmp_path / "out", sampling_rate=None, block_frames=1000)
    assert list((tmp_path / "out").iterdir()) == []


def test_sample_count_mismatch_aborts_and_cleans_up(tmp_path, monkeypatch):
    path = tmp_path / "a.wav"
    sf.write(str(path), np.zeros(1000, dtype=np.float32), 16000, subtype="FLOAT")
    monkeypatch.setattr(fr, "resampled_length", lambda frames, a, b: frames + 5)  # as if the header lied
    with pytest.raises(AudioError, match="expected 1005 output samples from 1000 frames, got 1000"):
        fragment_audio(path, tmp_path / "out", sampling_rate=None)
    assert list((tmp_path / "out").iterdir()) == []


CUT_READ = r": cannot read frames \d+ to \d+ of 48000 \(LibsndfileError"


@pytest.mark.parametrize(
    "maker, message",
    [
        (
            damaged.short_wav,
            r"short\.wav: truncated WAV: its header promises 48000 frames \(3\.000 s\), the file holds 23989",
        ),
        (damaged.flac_cut_mid_frame, r"cut_mid_frame\.flac" + CUT_READ),
        (damaged.flac_cut_at_frame_boundary, r"cut_at_frame\.flac" + CUT_READ),
    ],
)
@pytest.mark.parametrize("rate", [None, 8000])
def test_damaged_files_are_clear_errors_and_leave_no_fragment(tmp_path, maker, message, rate):
    path = maker(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(AudioError, match=message):
        fragment_audio(path, out, sampling_rate=rate, block_frames=1000)
    assert not out.exists() or list(out.iterdir()) == []


def test_the_benchmark_reports_its_workers_own_peak_memory(tmp_path):
    """benchmarks/fragments.py: the worker's peak RSS is its own, not the parent's (ru_maxrss of a process
    started by fork+exec begins at its parent's peak)."""
    spec = importlib.util.spec_from_file_location("fragments_benchmark", BENCHMARKS / "fragments.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    source = tmp_path / "in.wav"
    assert bench.write_long_wav(source, 30, 16000) == 480000
    ballast = np.ones(600 * 2**20 // 8)  # 600 MB touched by this process, the worker's parent
    parent_peak, measure = bench.peak_rss_mb()
    stats = bench.run_worker(source, tmp_path / "out", 16000, "FLOAT")
    del ballast
    assert measure == "VmHWM" and parent_peak > 600
    assert (stats["fragments"], stats["skipped"], stats["total_samples"]) == (14, 0, 480000)
    assert stats["peak_rss_measure"] == "VmHWM"
    # numpy, soundfile, soxr and a few 262,144-frame blocks: tens of MB, nowhere near the parent's 600
    assert 10 < stats["peak_rss_mb"] < 200
    # every N covers all 480,000 float32 samples once; 14 files with an 80-byte header (RIFF, fmt, fact, PEAK, data)
    assert stats["bytes_written"] == 4 * 480000 * 4 + 14 * 80
