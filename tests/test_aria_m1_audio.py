"""M1's "whole audio input" (ARIA §3.3.1, Eq. 1): long clips are embedded whole, files are streamed so
memory stays bounded, a fused CLAP uses its own fusion, and the 10-s random crop is an option."""

import numpy as np
import pytest
import soundfile as sf
import torch
from tiny_models import build_clap

from audioreason.audio import AudioError, synthesize_clip
from audioreason.backends import clap_audio
from audioreason.backends.clap import ClapBackend


@pytest.fixture(scope="module")
def clap(tiny_backbones_f64):
    from audioreason.backends import load_backend

    return load_backend("clap", tiny_backbones_f64["clap"])  # float64, 1-s windows


def fresh(backend):
    """The same loaded model with empty caches."""
    return ClapBackend(backend.model, backend.processor, backend.description)


def test_a_file_is_streamed_window_by_window(clap, tmp_path, monkeypatch):
    clip = synthesize_clip("mix-sound-music", 7.3, 16000, "long")
    path = tmp_path / "long.wav"
    sf.write(str(path), clip, 16000, subtype="FLOAT")
    from_array = fresh(clap).embed_sources([(clip, 16000)], "whole")[0]

    def no_whole_load(*args, **kwargs):
        raise AssertionError("a file must not be loaded whole")

    seen = []
    real = ClapBackend._embed_audio

    def spy(self, clips, *args, **kwargs):
        seen.append([len(c) for c in clips])
        return real(self, clips, *args, **kwargs)

    monkeypatch.setattr(clap_audio, "load_audio", no_whole_load)
    monkeypatch.setattr(ClapBackend, "_embed_audio", spy)
    from_file = fresh(clap).embed_sources([str(path)], "whole", batch_size=3)[0]
    # 7.3 s = seven 1-s windows and 0.3 s, embedded at most 3 windows at a time
    assert [n for batch in seen for n in batch] == [48000] * 7 + [14400]
    assert max(len(batch) for batch in seen) <= 3
    assert from_file == pytest.approx(from_array, abs=1e-6)  # streamed resampling equals the whole-file one


def test_whole_is_the_duration_weighted_window_mean(clap):
    clip = synthesize_clip("speech", 2.5, 48000, "w")
    b = fresh(clap)
    whole = b.embed_sources([(clip, 48000)], "whole")[0]
    windows = b.embed_audio([clip[:48000], clip[48000:96000], clip[96000:]], use_cache=False)
    expected = windows[0] + windows[1] + 0.5 * windows[2]
    assert whole == pytest.approx(expected / np.linalg.norm(expected), abs=1e-9)
    # a clip within one window is embedded as it is: both modes agree
    short = synthesize_clip("speech", 0.8, 48000, "s")
    assert b.embed_sources([(short, 48000)], "whole")[0] == pytest.approx(
        b.embed_sources([(short, 48000)], "random_crop")[0], abs=1e-9
    )


def test_errors_are_returned_per_source_and_not_cached(clap, tmp_path):
    b = fresh(clap)
    bad = np.ones(96000, dtype=np.float32)
    bad[60000] = np.nan
    good = synthesize_clip("sound", 1.2, 48000, "g")
    out = b.embed_sources([(good, 48000), "/nope.wav", (bad, 48000), (np.zeros(0), 48000), (good, 48000)], "whole")
    assert isinstance(out[1], AudioError) and "not found" in str(out[1])
    assert isinstance(out[2], AudioError) and "NaN" in str(out[2])
    assert isinstance(out[3], AudioError) and "no samples" in str(out[3])
    assert np.array_equal(out[0], out[4]) and len(b.whole_cache) == 1  # the repeated clip: embedded once


def test_a_fused_clap_uses_its_own_fusion_on_the_whole_clip(tmp_path):
    folder = build_clap(tmp_path / "fused", fusion=True)
    b = ClapBackend.load(str(folder), "tiny fused CLAP")
    assert b.fused
    clip = synthesize_clip("music", 3.0, 48000, "f")
    got = b.embed_sources([(clip, 48000)], "whole")[0]
    np.random.seed(0)  # the seeded crops of CLAP's fusion
    features = b.processor.feature_extractor(
        [clip], sampling_rate=48000, truncation="fusion", padding="repeatpad", return_tensors="pt"
    )
    assert bool(features["is_longer"].all())  # the clip is longer than one window: fusion really ran
    with torch.no_grad():
        a = b.model.get_audio_features(**features).pooler_output[0].double()
    assert got == pytest.approx((a / a.norm()).numpy(), abs=1e-6)


def test_unknown_mode_is_refused(clap):
    with pytest.raises(ValueError, match="mode"):
        clap.embed_sources([(np.ones(100), 48000)], "middle")
