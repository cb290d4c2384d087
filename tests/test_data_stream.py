"""Long-file reading: blocks and prefixes equal the whole-file decode, without loading the whole file."""

import tracemalloc

import numpy as np
import pytest
import soundfile as sf
import soxr
from fixtures import damaged_audio as damaged

from audioreason.audio import AudioError, audio_info, iter_blocks, load_audio, read_prefix


@pytest.fixture(scope="module")
def stereo_wav(tmp_path_factory):
    """7 s of 22.05 kHz stereo PCM16, with an odd number of frames."""
    rng = np.random.default_rng(0)
    frames = 22050 * 7 + 123
    t = np.arange(frames) / 22050
    left = 0.4 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(frames)
    right = 0.3 * np.sin(2 * np.pi * 660 * t) + 0.05 * rng.standard_normal(frames)
    path = tmp_path_factory.mktemp("stream") / "stereo.wav"
    sf.write(str(path), np.stack([left, right], axis=1).astype(np.float32), 22050, subtype="PCM_16")
    return path


def whole(path, mono=True):
    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    return (data.mean(axis=1).astype(np.float32) if mono else data), rate


def test_info_reads_the_header(stereo_wav):
    info = audio_info(stereo_wav)
    assert (info.frames, info.sampling_rate, info.channels) == (22050 * 7 + 123, 22050, 2)
    assert info.duration == pytest.approx(7 + 123 / 22050)


def test_blocks_concatenate_to_the_whole_file_exactly(stereo_wav):
    mono, rate = whole(stereo_wav)
    blocks = list(iter_blocks(stereo_wav, 1.3))
    assert all(len(b) == round(1.3 * rate) for b in blocks[:-1])
    np.testing.assert_array_equal(np.concatenate(blocks), mono)
    # ...and equal what load_audio (torchcodec, else soundfile) decodes
    np.testing.assert_array_equal(np.concatenate(blocks), load_audio(stereo_wav)[0])
    stereo, _ = whole(stereo_wav, mono=False)
    np.testing.assert_array_equal(np.concatenate(list(iter_blocks(stereo_wav, 2.0, mono=False))), stereo)


def test_resampled_blocks_equal_whole_file_resampling(stereo_wav):
    mono, rate = whole(stereo_wav)
    expected = soxr.resample(mono, rate, 16000)
    streamed = np.concatenate(list(iter_blocks(stereo_wav, 0.7, 16000)))
    assert len(streamed) == len(expected)
    np.testing.assert_allclose(streamed, expected, atol=1e-6)
    np.testing.assert_allclose(streamed, load_audio(stereo_wav, 16000)[0], atol=1e-6)


def test_prefix_is_the_start_of_the_full_decode(stereo_wav):
    mono, rate = whole(stereo_wav)
    prefix, r = read_prefix(stereo_wav, 2.5)
    assert r == rate and len(prefix) == round(2.5 * rate)
    np.testing.assert_array_equal(prefix, mono[: len(prefix)])
    # Resampled: the start of the whole-file resample, not a resample that rings at the cut.
    full16 = soxr.resample(mono, rate, 16000)
    prefix16, r16 = read_prefix(stereo_wav, 2.5, 16000)
    assert r16 == 16000 and len(prefix16) == 40000
    np.testing.assert_allclose(prefix16, full16[:40000], atol=1e-6)
    naive = soxr.resample(mono[: round(2.5 * rate)], rate, 16000)
    assert np.abs(naive[-50:] - full16[39950:40000]).max() > 1e-4  # what the context avoids


def test_prefix_longer_than_the_file_is_the_whole_file(stereo_wav):
    mono, rate = whole(stereo_wav)
    prefix, _ = read_prefix(stereo_wav, 3600)
    np.testing.assert_array_equal(prefix, mono)
    prefix16, _ = read_prefix(stereo_wav, 3600, 16000)
    np.testing.assert_allclose(prefix16, soxr.resample(mono, rate, 16000), atol=1e-6)


def test_block_range(stereo_wav):
    mono, rate = whole(stereo_wav)
    part = np.concatenate(list(iter_blocks(stereo_wav, 1.0, start=2.0, stop=4.5)))
    np.testing.assert_array_equal(part, mono[2 * rate : int(4.5 * rate)])


def test_prefix_of_a_long_file_reads_only_the_prefix(tmp_path):
    # 10 minutes of 16 kHz mono: the whole decode would be 38 MB of float32.
    path = tmp_path / "long.wav"
    rate, minutes = 16000, 10
    with sf.SoundFile(str(path), "w", rate, 1, subtype="PCM_16") as f:
        chunk = (0.1 * np.sin(2 * np.pi * 300 * np.arange(rate * 60) / rate)).astype(np.float32)
        for _ in range(minutes):
            f.write(chunk)
    full_bytes = rate * 60 * minutes * 4
    tracemalloc.start()
    prefix, _ = read_prefix(path, 10.0)
    blocks = sum(len(b) for b in iter_blocks(path, 30.0))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(prefix) == 10 * rate and blocks == rate * 60 * minutes
    # A 30 s block and its mono copy are about 4 MB; the whole file would be 38 MB.
    assert peak < full_bytes / 4, f"peak {peak} bytes for a {full_bytes}-byte file"


def test_bad_input(tmp_path):
    with pytest.raises(AudioError, match="not found"):
        read_prefix(tmp_path / "nope.wav", 1.0)
    with pytest.raises(AudioError, match="not found"):
        list(iter_blocks(tmp_path / "nope.wav", 1.0))
    garbage = tmp_path / "garbage.wav"
    garbage.write_bytes(b"not audio at all" * 10)
    with pytest.raises(AudioError, match="cannot read the header"):
        audio_info(garbage)
    good = tmp_path / "ok.wav"
    sf.write(str(good), np.zeros(1600, np.float32), 16000)
    with pytest.raises(ValueError):
        list(iter_blocks(good, 0))
    with pytest.raises(ValueError):
        read_prefix(good, -1)


def test_formats_soundfile_cannot_open_are_read_in_ranges_by_torchcodec(tmp_path):
    try:
        import torch
        from torchcodec.decoders import AudioDecoder
        from torchcodec.encoders import AudioEncoder

        signal = (0.3 * np.sin(2 * np.pi * 440 * np.arange(16000 * 5) / 16000)).astype(np.float32)
        path = tmp_path / "clip.m4a"
        AudioEncoder(torch.from_numpy(signal[None]), sample_rate=16000).to_file(str(path))
    except (ImportError, RuntimeError, OSError, ValueError) as err:
        pytest.skip(f"torchcodec cannot encode AAC here: {err}")
    with pytest.raises(RuntimeError):
        sf.info(str(path))  # libsndfile does not read MP4/AAC
    info = audio_info(path)
    assert info.reader == "torchcodec" and info.sampling_rate == 16000 and info.duration == pytest.approx(5.0)
    decoded = AudioDecoder(str(path)).get_all_samples().data.numpy()[0]  # includes the encoder's end padding
    blocks = np.concatenate(list(iter_blocks(path, 1.3)))
    assert len(blocks) == info.frames
    np.testing.assert_array_equal(blocks, decoded[: len(blocks)])
    prefix, rate = read_prefix(path, 2.0)
    assert rate == 16000
    np.testing.assert_array_equal(prefix, decoded[: len(prefix)])
    assert abs(len(prefix) - 32000) <= 1024  # within one AAC frame of 2 s


# --- damaged files: a clear AudioError, never a raw libsndfile error or a silently short stream ------
def test_a_wav_shorter_than_its_header_is_a_clear_error(tmp_path):
    short = damaged.short_wav(tmp_path, channels=2)
    # 192,044 bytes cut to 96,022: 95,978 data bytes after the 44-byte header hold 23,994 stereo frames of 4 bytes
    message = r"short\.wav: truncated WAV: its header promises 48000 frames \(3\.000 s\), the file holds 23994"
    with pytest.raises(AudioError, match=message):
        audio_info(short)
    with pytest.raises(AudioError, match=message):
        list(iter_blocks(short, 0.5))
    with pytest.raises(AudioError, match=message):
        read_prefix(short, 0.2)  # even a prefix the file holds: the file is not what it says


@pytest.mark.parametrize("maker", [damaged.flac_cut_mid_frame, damaged.flac_cut_at_frame_boundary])
def test_a_cut_flac_is_a_clear_error_once_the_stream_reaches_the_cut(tmp_path, maker):
    path = maker(tmp_path)
    assert audio_info(path).frames == damaged.FRAMES  # the header cannot tell: only reading can
    name = path.name.replace(".", r"\.")
    with pytest.raises(AudioError, match=rf"{name}: cannot read frames \d+ to \d+ of 48000 \(LibsndfileError: "):
        list(iter_blocks(path, 0.25))
    with pytest.raises(AudioError, match=rf"{name}: cannot read frames"):
        read_prefix(path, 2.9, 8000)
    if maker is damaged.flac_cut_at_frame_boundary:  # the first 8,192 frames are intact and readable
        prefix, rate = read_prefix(path, 0.25)
        np.testing.assert_array_equal(prefix, whole(tmp_path / f"whole-{path.name}")[0][:4000])


def test_a_stream_that_ends_before_its_header_says_is_a_clear_error(tmp_path, monkeypatch):
    # A reader that returns nothing before the promised end (as libsndfile does on some cut files).
    path = tmp_path / "a.wav"
    sf.write(str(path), damaged.noise(8000), 16000, subtype="PCM_16")
    real_read = sf.SoundFile.read

    def read_stopping_at_5000(self, frames=-1, *args, **kwargs):
        return real_read(self, max(0, min(frames, 5000 - self.tell())), *args, **kwargs)

    monkeypatch.setattr(sf.SoundFile, "read", read_stopping_at_5000)
    with pytest.raises(AudioError, match=r"a\.wav: the stream ended at frame 5000 of 8000"):
        list(iter_blocks(path, 0.1))
