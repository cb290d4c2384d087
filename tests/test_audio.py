import ast
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from fixtures import damaged_audio as damaged

from audioreason.audio import AudioError, load_audio, synthesize_clip, write_audio
from audioreason.audio.header import Promise, read_promise
from audioreason.audio.io import decode_file


def test_synthesized_clip_is_deterministic_and_shaped():
    a = synthesize_clip("mix-sound-speech", 1.5, 16000, seed="item-1")
    b = synthesize_clip("mix-sound-speech", 1.5, 16000, seed="item-1")
    c = synthesize_clip("mix-sound-speech", 1.5, 16000, seed="item-2")
    assert a.shape == (24000,) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.isclose(np.abs(a).max(), 0.8)
    with pytest.raises(ValueError, match="unknown modality"):
        synthesize_clip("noise", 1.0)


def test_wav_round_trip_through_decoder(tmp_path):
    clip = synthesize_clip("music", 1.0, 16000, seed="x")
    path = write_audio(tmp_path / "a.wav", clip, 16000)
    samples, rate = load_audio(path)
    assert rate == 16000 and samples.shape == clip.shape
    # 16-bit PCM: within one quantisation step
    assert np.abs(samples - clip).max() <= 1 / 32768 + 1e-7
    _, _, decoder = decode_file(path)
    assert decoder in ("torchcodec", "soundfile")


def test_stereo_is_averaged_and_resampled(tmp_path):
    left = np.full(8000, 0.5, dtype=np.float32)
    right = np.full(8000, -0.1, dtype=np.float32)
    path = tmp_path / "stereo.wav"
    sf.write(str(path), np.stack([left, right], axis=1), 8000, subtype="FLOAT")
    samples, rate = load_audio(path, 16000)
    assert rate == 16000 and len(samples) == 16000
    assert np.allclose(samples[2000:-2000], 0.2, atol=1e-3)


def test_array_sources():
    tone = np.sin(np.arange(48000) / 48000 * 2 * np.pi * 440).astype(np.float32)
    samples, rate = load_audio({"array": tone, "sampling_rate": 48000}, 16000)
    assert (len(samples), rate) == (16000, 16000)
    samples, rate = load_audio((np.stack([tone, tone]), 48000))  # (channels, frames)
    assert (len(samples), rate) == (48000, 48000)


@pytest.mark.parametrize(
    "source, message",
    [
        ("/nonexistent/clip.wav", "not found"),
        ((np.array([0.1, np.nan, 0.2]), 16000), "NaN"),
        ((np.zeros(0), 16000), "no samples"),
        ((np.zeros(10), 0), "sampling rate"),
        (42, "unsupported audio source"),
    ],
)
def test_bad_audio_gives_clear_error(source, message):
    with pytest.raises(AudioError, match=message):
        load_audio(source)


def test_corrupt_file_gives_clear_error(tmp_path):
    path = tmp_path / "corrupt.wav"
    path.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunk")
    with pytest.raises(AudioError, match="cannot decode"):
        load_audio(path)


# --- one decoder -----------------------------------------------------------------------------------
PACKAGE = Path(__file__).resolve().parents[1] / "audioreason"
DECODER_LIBRARIES = {"torchcodec", "soundfile", "soxr"}


def test_only_the_audio_package_imports_decoders():
    """One decoder: torchcodec, soundfile and soxr are imported under audioreason/audio/ and nowhere else."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "audio":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            offenders += [f"{path.relative_to(PACKAGE)}: {n}" for n in names if n.split(".")[0] in DECODER_LIBRARIES]
    assert offenders == []


def test_the_data_loaders_decode_with_the_audio_decoder():
    import audioreason.data as data
    from audioreason import audio

    assert data.decode_audio is audio.load_audio
    assert data.resolve_audio_backend is audio.resolve_audio_backend
    assert data.torchcodec_status is audio.torchcodec_status


@pytest.mark.parametrize("backend", ["auto", "torchcodec", "soundfile"])
def test_every_backend_decodes_paths_bytes_and_dataset_values_alike(tmp_path, backend):
    stereo = damaged.noise(channels=2)
    path = tmp_path / "stereo.flac"
    sf.write(str(path), stereo, damaged.RATE, subtype="PCM_16")
    expected = sf.read(str(path), dtype="float32")[0]
    for source in (path, str(path), {"path": str(path), "bytes": None}, {"path": "x.flac", "bytes": path.read_bytes()}):
        samples, rate = load_audio(source, mono=False, backend=backend)
        assert rate == damaged.RATE
        np.testing.assert_array_equal(samples, expected)
    mono, _ = load_audio(path.read_bytes(), backend=backend)  # bare bytes: a file's content
    np.testing.assert_array_equal(mono, expected.mean(axis=1))
    assert decode_file(path, backend=backend)[2] == ("torchcodec" if backend != "soundfile" else "soundfile")
    with pytest.raises(ValueError, match="backend must be one of"):
        load_audio(path, backend="ffmpeg")
    with pytest.raises(AudioError, match="no audio"):
        load_audio(None, backend=backend)


# --- damaged files ---------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["auto", "torchcodec", "soundfile"])
def test_a_wav_shorter_than_its_header_is_a_clear_error(tmp_path, backend):
    path = damaged.short_wav(tmp_path)
    # 48,022 bytes: a 44-byte header and 47,978 data bytes, 23,989 whole frames of 2 bytes
    message = r"short\.wav'?: truncated WAV: its header promises 48000 frames \(3\.000 s\), the file holds 23989"
    with pytest.raises(AudioError, match=message):
        load_audio(path, backend=backend)
    with pytest.raises(AudioError, match=message):  # embedded bytes, as in a dataset loaded from parquet
        load_audio({"path": "short.wav", "bytes": path.read_bytes()}, backend=backend)


@pytest.mark.parametrize("backend", ["auto", "torchcodec", "soundfile"])
def test_a_flac_cut_at_a_frame_boundary_is_a_clear_error(tmp_path, backend):
    # FFmpeg decodes the 8,192 samples before the cut without a word; libsndfile fails to seek.
    path = damaged.flac_cut_at_frame_boundary(tmp_path)
    with pytest.raises(AudioError, match=r"cannot decode .*cut_at_frame\.flac") as error:
        load_audio(path, backend=backend)
    if backend != "soundfile":
        assert "torchcodec: AudioError: decoded 8192 of the 48000 frames its FLAC header promises" in str(error.value)
    if backend != "torchcodec":
        assert "soundfile: LibsndfileError" in str(error.value)


@pytest.mark.parametrize("backend", ["auto", "torchcodec", "soundfile"])
def test_a_flac_cut_mid_frame_is_a_clear_error(tmp_path, backend):
    path = damaged.flac_cut_mid_frame(tmp_path)
    with pytest.raises(AudioError, match=r"cannot decode .*cut_mid_frame\.flac"):
        load_audio(path, backend=backend)
    with pytest.raises(AudioError, match="cannot decode embedded audio 'x.flac'"):
        load_audio({"path": "x.flac", "bytes": path.read_bytes()}, backend=backend)


def test_a_datasets_decoder_of_a_damaged_file_is_a_clear_error(tmp_path):
    from datasets import Audio

    cut = damaged.flac_cut_at_frame_boundary(tmp_path)
    for feature in (Audio(), Audio(sampling_rate=8000)):  # decoded at the file's rate, and resampled by FFmpeg
        for value in ({"path": str(cut), "bytes": None}, {"path": "x.flac", "bytes": cut.read_bytes()}):
            with pytest.raises(AudioError, match=r"decoded (8192 of the 48000|409\d of the 24000) frames"):
                load_audio(feature.decode_example(value))
    short = damaged.short_wav(tmp_path)
    with pytest.raises(AudioError, match="truncated WAV"):
        load_audio(Audio().decode_example({"path": str(short), "bytes": None}))
    # complete files pass, at their rate and resampled (FFmpeg's resampled length differs by rounding)
    for frames, rate, target in ((48000, 16000, None), (88207, 44100, 16000), (1001, 22050, 16000)):
        path = tmp_path / f"ok-{frames}.flac"
        sf.write(str(path), damaged.noise(frames), rate, subtype="PCM_16")
        samples, got = load_audio(Audio(sampling_rate=target).decode_example({"path": str(path), "bytes": None}))
        assert got == (target or rate) and abs(len(samples) - frames * got / rate) < 1


def test_header_promises_golden(tmp_path):
    short = damaged.short_wav(tmp_path)
    assert read_promise(short) == Promise("WAV", 48000, 16000, 23989)
    assert read_promise(short.read_bytes()) == Promise("WAV", 48000, 16000, 23989)
    stereo_float = tmp_path / "f.wav"  # FLOAT WAVs carry fact and PEAK chunks before the data
    sf.write(str(stereo_float), damaged.noise(1001, channels=2), 8000, subtype="FLOAT")
    assert read_promise(stereo_float) == Promise("WAV", 1001, 8000, 1001)
    rf64 = tmp_path / "r.wav"
    sf.write(str(rf64), damaged.noise(5000), 16000, format="RF64", subtype="PCM_24")
    assert rf64.read_bytes()[:4] == b"RF64" and read_promise(rf64) == Promise("WAV", 5000, 16000, 5000)
    rf64.write_bytes(rf64.read_bytes()[:-3000])  # 1,000 frames of 3 bytes gone
    assert read_promise(rf64) == Promise("WAV", 5000, 16000, 4000)
    flac = tmp_path / "a.flac"
    sf.write(str(flac), damaged.noise(12345), 22050, subtype="PCM_16")
    assert read_promise(flac) == Promise("FLAC", 12345, 22050, None)
    # an ID3v2 tag before "fLaC" (10-byte header, syncsafe size 0x7F + 2 * 128 = 383 bytes)
    tagged = tmp_path / "tagged.flac"
    tagged.write_bytes(b"ID3\x04\x00\x00\x00\x00\x02\x7f" + b"\x00" * 383 + flac.read_bytes())
    assert read_promise(tagged) == Promise("FLAC", 12345, 22050, None)
    ogg = tmp_path / "a.ogg"
    sf.write(str(ogg), damaged.noise(16000), 16000, format="OGG", subtype="VORBIS")
    assert read_promise(ogg) is None  # no exact length to hold a decode to


def test_headers_that_declare_no_length_are_not_checked(tmp_path):
    path = tmp_path / "stream.wav"
    sf.write(str(path), damaged.noise(1600), 16000, subtype="PCM_16")
    data = bytearray(path.read_bytes())
    assert data[36:40] == b"data"
    data[40:44] = b"\xff\xff\xff\xff"  # a writer that could not seek back to fill in the size
    path.write_bytes(bytes(data))
    assert read_promise(path) is None
    assert len(load_audio(path)[0]) == 1600
    flac = tmp_path / "unknown.flac"
    sf.write(str(flac), damaged.noise(1600), 16000, subtype="PCM_16")
    data = bytearray(flac.read_bytes())
    data[21] &= 0xF0  # STREAMINFO's 36-bit total samples: 0 means unknown
    data[22:26] = b"\x00\x00\x00\x00"
    flac.write_bytes(bytes(data))
    assert read_promise(flac) is None
