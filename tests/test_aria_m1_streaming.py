"""M1 reads only what CLAP uses and holds at most one batch (issue: a 1-hour file peaked at 2.1 GB, a 10-hour
one raised a MemoryError that on_audio_error="skip" did not catch).

Every source kind (a file, a file's bytes, a dataset's audio value, an in-memory array) in every mode
(whole windows, the seeded 10-s crop, a fused CLAP's fusion) gives the embedding the whole-clip
computation gives, without any whole-clip decode or resample: the whole-clip functions are patched to
fail, reads are counted, and Python/numpy allocations are measured with tracemalloc.
"""

import math
import tracemalloc

import numpy as np
import pytest
import soundfile as sf
import soxr
import torch
from tiny_models import build_clap

from audioreason.audio import AudioError, load_audio, stream, synthesize_clip
from audioreason.backends import clap_audio
from audioreason.backends.clap import ClapBackend
from audioreason.scorers.aria.scorer import AriaInputError, AriaScorer

GOOD = "[PERCEPTION]\nEntities: dog\n[ANALYSIS]\nclose.\n[REASONING]\nso.\n[ANSWER]\nDog barking"


@pytest.fixture(scope="module")
def clap(tiny_backbones_f64):
    from audioreason.backends import load_backend

    return load_backend("clap", tiny_backbones_f64["clap"])  # float64, 1-s windows


@pytest.fixture(scope="module")
def fused(tmp_path_factory):
    folder = build_clap(tmp_path_factory.mktemp("fused"), fusion=True)
    backend = ClapBackend.load(str(folder), "tiny fused CLAP")
    backend.model.to(torch.float64)
    return backend


def fresh(backend):
    return ClapBackend(backend.model, backend.processor, backend.description)


def long_file(path, seconds, rate=8000, seed="long"):
    clip = synthesize_clip("mix-sound-music", seconds, rate, seed)
    sf.write(str(path), clip, rate, subtype="FLOAT")
    return clip


@pytest.fixture
def refuse_whole_decode(monkeypatch):
    """Call it to make every whole-clip decode or resample fail from then on (references come first)."""

    def refuse(*args, **kwargs):
        raise AssertionError("a whole clip must not be decoded or resampled")

    def activate():
        monkeypatch.setattr(clap_audio, "load_audio", refuse)
        monkeypatch.setattr(soxr, "resample", refuse)

    return activate


@pytest.fixture
def frames_read(monkeypatch):
    """Source frames that soundfile reads, per call of soundfile_blocks."""
    reads = []
    real = stream.soundfile_blocks

    def counting(*args, **kwargs):
        reads.append(0)
        for block in real(*args, **kwargs):
            reads[-1] += len(block)
            yield block

    monkeypatch.setattr(stream, "soundfile_blocks", counting)
    return reads


def crop_reference(backend, clip48):
    """The seeded 10-s crop as transformers' rand_trunc takes it from the whole clip (the earlier path)."""
    return fresh(backend).embed_audio([clip48], use_cache=False)[0]


def fusion_reference(backend, clip48, seed=0):
    """CLAP's own fusion on the whole clip: the feature extractor's seeded crops and its global view."""
    np.random.seed(seed)
    features = backend.processor.feature_extractor(
        [clip48], sampling_rate=48000, truncation="fusion", padding="repeatpad", return_tensors="pt"
    )
    with torch.no_grad():
        vec = backend.model.get_audio_features(
            **{k: v.to(torch.float64) if v.is_floating_point() else v for k, v in features.items()}
        ).pooler_output[0]
    return (vec / vec.norm()).numpy()


def test_random_crop_reads_only_the_crop(clap, tmp_path, frames_read):
    clip = long_file(tmp_path / "long.wav", 180.0)  # 3 minutes at 8 kHz, CLAP windows of 1 s
    expected = crop_reference(clap, load_audio(str(tmp_path / "long.wav"), 48000)[0])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clap_audio, "load_audio", lambda *a, **k: pytest.fail("the file was decoded whole"))
        got = fresh(clap).embed_sources([str(tmp_path / "long.wav")], "random_crop")[0]
    assert got == pytest.approx(expected, abs=1e-6)
    # one 1-s window plus 0.5 s of resampler context on either side: 2 s of the 180 s file
    assert sum(frames_read) <= 2 * 8000 + 1 and len(clip) == 180 * 8000


def test_the_crop_follows_the_seed(clap, tmp_path):
    long_file(tmp_path / "long.wav", 30.0)
    b = fresh(clap)
    first, again, other = (b.embed_sources([str(tmp_path / "long.wav")], "random_crop", seed=s)[0] for s in (0, 0, 1))
    clip48 = load_audio(str(tmp_path / "long.wav"), 48000)[0]
    np.random.seed(1)
    start = np.random.randint(0, len(clip48) - 48000 + 1)
    assert np.array_equal(first, again) and not np.allclose(first, other)
    assert other == pytest.approx(fresh(clap).embed_audio([clip48[start : start + 48000]])[0], abs=1e-6)


@pytest.mark.parametrize("rate", [44100, 48000])
def test_arrays_are_read_block_by_block_in_every_mode(clap, fused, rate, refuse_whole_decode):
    clip = synthesize_clip("mix-sound-music", 12.3, rate, f"a{rate}")
    clip48 = soxr.resample(clip, rate, 48000).astype(np.float32) if rate != 48000 else clip
    expected = (_window_mean(clap, clip48), _crop_reference_array(clap, clip48), fusion_reference(fused, clip48))
    refuse_whole_decode()
    whole = fresh(clap).embed_sources([(clip, rate)], "whole", batch_size=4)[0]
    crop = fresh(clap).embed_sources([{"array": clip, "sampling_rate": rate}], "random_crop")[0]
    fusion = fresh(fused).embed_sources([(np.stack([clip, clip], axis=1), rate)], "whole")[0]  # stereo: averaged
    assert whole == pytest.approx(expected[0], abs=1e-6)
    assert crop == pytest.approx(expected[1], abs=1e-6)
    assert fusion == pytest.approx(expected[2], abs=1e-6)


def _window_mean(backend, clip48):
    starts = range(0, len(clip48), 48000)
    vecs = fresh(backend).embed_audio([clip48[s : s + 48000] for s in starts], use_cache=False)
    weights = np.array([min(48000, len(clip48) - s) / 48000 for s in starts])
    mean = (weights[:, None] * vecs).sum(axis=0)
    return mean / np.linalg.norm(mean)


def _crop_reference_array(backend, clip48):
    np.random.seed(0)
    start = np.random.randint(0, len(clip48) - 48000 + 1)
    return fresh(backend).embed_audio([clip48[start : start + 48000]], use_cache=False)[0]


@pytest.mark.parametrize(
    "samples",
    [
        30000,  # shorter than the window: repeat-padded, four copies of one mel
        48000 + 300,  # longer than the window by less than a hop: CLAP's own corner case, no fusion
        48000 + 480 * 2,  # two frames more than a window: the crop ranges hold 2, 1 and 0 starts
        48000 * 3 + 77,  # fusion proper
        48000 * 12 + 5,  # a global view that skips frames
    ],
)
def test_fusion_equals_clap_fusion_on_the_whole_clip(fused, samples):
    clip = synthesize_clip("music", samples / 48000, 48000, "f")[:samples]
    assert len(clip) == samples
    for seed in (0, 3):
        got = fresh(fused).embed_sources([(clip, 48000)], "whole", seed=seed)[0]
        assert got == pytest.approx(fusion_reference(fused, clip, seed), abs=1e-6)


def test_a_fused_file_is_streamed(fused, tmp_path, frames_read, monkeypatch):
    long_file(tmp_path / "long.wav", 40.0, 16000)
    expected = fusion_reference(fused, load_audio(str(tmp_path / "long.wav"), 48000)[0])
    seen = []
    real = ClapBackend._embed_audio

    def spy(self, clips, *args, **kwargs):
        seen.extend(len(c) for c in clips)
        return real(self, clips, *args, **kwargs)

    monkeypatch.setattr(ClapBackend, "_embed_audio", spy)
    monkeypatch.setattr(clap_audio, "load_audio", lambda *a, **k: pytest.fail("the file was decoded whole"))
    got = fresh(fused).embed_sources([str(tmp_path / "long.wav")], "whole")[0]
    assert got == pytest.approx(expected, abs=1e-6)
    assert not seen  # the feature extractor never gets the 40-s clip: the fused features are built from frames
    assert sum(frames_read) == 40 * 16000  # read once, in blocks


def test_memory_is_flat_in_the_length_in_every_mode(clap, fused, tmp_path):
    """Python and numpy allocations (tracemalloc) while a file is embedded: the same for 20 s as for 80 s,
    and below what the whole 80-s clip takes at 48 kHz (15.4 MB; the feature extractor's float64 copy of it
    30.7 MB more)."""
    peaks = {}
    for seconds in (20.0, 80.0):
        path = tmp_path / f"{seconds:g}.wav"
        long_file(path, seconds)
        for name, backend, mode in (
            ("whole", clap, "whole"),
            ("random_crop", clap, "random_crop"),
            ("fused", fused, "whole"),
        ):
            b = fresh(backend)
            tracemalloc.start()
            out = b.embed_sources([str(path)], mode, batch_size=4)[0]
            peaks[name, seconds] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            assert not isinstance(out, AudioError)
    for name in ("whole", "random_crop", "fused"):
        assert peaks[name, 80.0] < peaks[name, 20.0] + 0.5, peaks
    # one 10-s block at 48 kHz (1.9 MB) and its resampling, 4 windows of 1 s and their features
    assert max(peaks.values()) < 8, peaks


def test_bytes_and_dataset_values_are_streamed_from_the_file(clap, tmp_path, refuse_whole_decode):
    import datasets

    clip = long_file(tmp_path / "a.wav", 12.5, 16000)
    sources = [
        str(tmp_path / "a.wav"),
        {"bytes": (tmp_path / "a.wav").read_bytes(), "path": "a.wav"},
        (tmp_path / "a.wav").read_bytes(),
    ]
    ds = datasets.Dataset.from_dict({"audio": [str(tmp_path / "a.wav")]}).cast_column("audio", datasets.Audio())
    decoder = ds[0]["audio"]
    decoder.get_all_samples = lambda: pytest.fail("the dataset's decoder decoded the whole file")
    sources.append(decoder)
    refuse_whole_decode()
    for mode in ("whole", "random_crop"):
        vecs = fresh(clap).embed_sources(sources, mode)
        assert all(v == pytest.approx(vecs[0], abs=1e-6) for v in vecs[1:]), mode
    assert len(clip) == 200000


def test_a_memory_error_is_an_audio_error_of_that_item(tiny_backbones, tmp_path, monkeypatch):
    """Whatever still runs out of memory on one clip fails that clip, as any unreadable audio does."""
    long_file(tmp_path / "ok.wav", 2.0)
    long_file(tmp_path / "huge.wav", 2.0)
    real = clap_audio.iter_blocks

    def blocks(source, *args, **kwargs):
        if str(source).endswith("huge.wav"):
            raise MemoryError()
        return real(source, *args, **kwargs)

    monkeypatch.setattr(clap_audio, "iter_blocks", blocks)
    kwargs = dict(backbones=tiny_backbones, m3_mode="logprob", vocabulary=["dog"])
    audio = [str(tmp_path / "ok.wav"), str(tmp_path / "huge.wav")]
    for m1_audio in ("whole", "random_crop"):
        r = AriaScorer(on_audio_error="skip", m1_audio=m1_audio, **kwargs).score(
            [GOOD, GOOD], ["Dog barking"] * 2, [["Dog barking", "Rain"]] * 2, audio=audio, return_items=True
        )
        assert r["counts"]["audio_errors"] == 1 and math.isnan(r["items"][1]["M1"])
        assert math.isfinite(r["items"][0]["M1"])
        with pytest.raises(AriaInputError, match=r"item 1: .*huge.wav.*out of memory"):
            AriaScorer(m1_audio=m1_audio, **kwargs).score(
                [GOOD, GOOD], ["Dog barking"] * 2, [["Dog barking", "Rain"]] * 2, audio=audio
            )


def test_a_source_without_a_stable_key_is_never_cached_nor_shared(clap, monkeypatch):
    """A source with nothing to hash (a remote dataset decoder) was keyed by id(), which Python reuses once an
    object is freed: a later clip could get an earlier clip's cached embedding."""
    import audioreason.backends.clap as clap_module

    monkeypatch.setattr(clap_module, "source_key", lambda src: ("unhashable", 7))  # every source: one reused id
    backend = fresh(clap)
    rain, music = (synthesize_clip(kind, 3.0, 16000, kind) for kind in ("speech", "music"))
    first, second = backend.embed_sources([(rain, 16000), (music, 16000)], "whole", batch_size=2)
    later = backend.embed_sources([(music, 16000)], "whole")[0]
    assert not np.allclose(first, second) and np.allclose(later, second) and backend.whole_cache == {}
