"""MMAR: raw folder -> builder -> Hub-ready folder -> load_dataset(folder), on real metadata."""

import json

import numpy as np
import pytest
from datasets import Audio, List, Value, load_dataset
from fixtures.data_helpers import DATA, assert_same_items, mmar_records, soundfile_samples, write_mmar_raw

from audioreason.audio import load_audio, synthesize_clip, write_audio
from audioreason.data import MMARBuilder, audio_paths, build_demo_dataset, decode_audio, export_benchmark
from audioreason.data.hub_load import read_card_yaml
from audioreason.data.mmar import FEATURES, demo_metadata


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = write_mmar_raw(tmp_path_factory.mktemp("mmar_raw"))
    builder = MMARBuilder(data_dir=str(root), cache_dir=str(tmp_path_factory.mktemp("cache")))
    return root, builder, builder.build()


def test_builder_yields_the_common_schema_with_every_mmar_field(built):
    root, builder, ds = built
    records = mmar_records()
    assert builder.report.ok and builder.report.rows == builder.report.built == len(ds) == len(records)
    assert ds.features == FEATURES and list(ds.features)[:7] == [
        "id",
        "audio",
        "audio_path",
        "question",
        "choices",
        "answer",
        "answer_index",
    ]
    for item, raw in zip(ds.remove_columns("audio"), records):
        for key, value in raw.items():
            assert item[key] == value, key  # every MMAR field, under its own name
        assert item["choices"][item["answer_index"]] == raw["answer"]
    assert sorted({len(c) for c in ds["choices"]}) == [2, 3, 4, 5, 6]
    assert ds.features["rubric"].feature["choices"] == List(Value("int32"))  # nested, not a JSON string
    assert isinstance(ds[0]["rubric"][0], dict) and ds[0]["rubric"][0]["choices"] == [0, 1]


def test_audio_comes_from_audio_path_not_id(built):
    root, _, ds = built
    paths = audio_paths(ds)
    for item, path in zip(ds.remove_columns("audio"), paths):
        assert path == str((root / item["audio_path"]).resolve())
    odd = [it for it in ds.remove_columns("audio") if not it["audio_path"].endswith(f"/{it['id']}.wav")]
    assert len(odd) == 3  # e.g. ./audio/BV1wv4y1f7Mh_multi_segment.wav
    # Decoded samples equal the raw file's.
    for index in (0, 5):
        samples, rate = decode_audio(ds[index]["audio"], mono=False)
        expected, expected_rate = soundfile_samples(root / ds[index]["audio_path"])
        assert rate == expected_rate
        np.testing.assert_array_equal(samples, expected)


def test_round_trip_through_a_hub_ready_folder(built, tmp_path):
    _, _, ds = built
    out = export_benchmark("mmar", ds, tmp_path / "hub")
    shards = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    assert shards == ["data/test-00000-of-00001.parquet"]
    loaded = load_dataset(str(out), split="test", cache_dir=str(tmp_path / "cache"))
    assert loaded.features == ds.features
    assert_same_items(ds, loaded)
    # The audio is embedded: the folder works without the raw files.
    value = loaded.cast_column("audio", Audio(decode=False))[0]["audio"]
    assert value["bytes"] and "/" not in value["path"]
    card = read_card_yaml(out)
    assert card["license"] == "cc-by-nc-4.0" and card["configs"][0]["config_name"] == "default"
    assert "ma2025mmar" in (out / "README.md").read_text()


def test_shards_split_by_size(built, tmp_path):
    _, _, ds = built
    out = export_benchmark("mmar", ds, tmp_path / "hub", max_shard_size=60_000)  # clips are ~16 kB each
    shards = sorted(out.rglob("*.parquet"))
    assert len(shards) > 2 and shards[0].name.endswith(f"-of-{len(shards):05d}.parquet")
    loaded = load_dataset(str(out), split="test", cache_dir=str(tmp_path / "cache"))
    assert loaded.remove_columns("audio").to_list() == ds.remove_columns("audio").to_list()


def test_demo_sample_comes_from_the_builder(tmp_path):
    ds = build_demo_dataset(tmp_path)
    demo = demo_metadata()
    assert [it["id"] for it in ds] == [it["id"] for it in demo] and len(ds) == 12
    items = ds.remove_columns("audio").to_list()
    for item, raw in zip(items, demo):
        assert {k: item[k] for k in raw} == raw
    assert {len(it["choices"]) for it in items} == {2, 3, 4, 5, 6}
    # The same clips the demo synthesized before (its numbers cannot move).
    paths = audio_paths(ds)
    for path, item in zip(paths, demo):
        ref = write_audio(
            tmp_path / "reference" / f"{item['id']}.wav",
            synthesize_clip(item["modality"], 3.0, 16000, seed=item["id"]),
            16000,
        )
        np.testing.assert_array_equal(load_audio(path)[0], load_audio(ref)[0])
    assert len(list((tmp_path / "audio").glob("*.wav"))) == 12
    builder = MMARBuilder(data_dir=str(tmp_path), cache_dir=str(tmp_path / "datasets_cache"))
    assert builder.report.ok


def test_real_metadata_fits_the_schema_and_validates(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "MMAR-meta.jsonl").write_bytes((DATA / "MMAR-meta.jsonl").read_bytes())
    builder = MMARBuilder(data_dir=str(tmp_path / "raw"), cache_dir=str(tmp_path / "cache"), on_missing_audio="keep")
    # No audio here: all 1,000 are reported missing and nothing else is wrong with MMAR.
    assert builder.report.counts() == {"missing_audio": 1000}
    ds = builder.build()
    assert len(ds) == 1000 and ds[0]["audio"] is None
    raw = [json.loads(line) for line in (DATA / "MMAR-meta.jsonl").read_text("utf-8").splitlines()]
    assert ds.remove_columns("audio").select_columns(list(raw[0])).to_list() == raw
    assert sorted(set(len(c) for c in ds["choices"])) == [2, 3, 4, 5, 6]
    assert min(ds["answer_index"]) == 0
