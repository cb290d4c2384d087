"""MMAU test-mini: raw folder -> builder -> Hub-ready folder -> load_dataset(folder), on real metadata."""

import json

import pytest
from datasets import load_dataset
from fixtures.data_helpers import DATA, assert_same_items, mmau_records, write_mmau_raw

from audioreason.data import MMAUTestMiniBuilder, export_benchmark
from audioreason.data.mmau_test_mini import FEATURES


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = write_mmau_raw(tmp_path_factory.mktemp("mmau_raw"))
    builder = MMAUTestMiniBuilder(data_dir=str(root), cache_dir=str(tmp_path_factory.mktemp("cache")))
    return root, builder, builder.build()


def test_builder_keeps_irregular_items_and_reports_them(built):
    _, builder, ds = built
    records = mmau_records()
    report = builder.report
    assert len(ds) == report.built == report.rows == len(records)
    lists = [r["id"] for r in records if isinstance(r["category"], list)]
    dupes = [r["id"] for r in records if len(set(r["choices"])) != len(r["choices"])]
    assert report.counts() == {"duplicate_choices": len(dupes), "list_typed_category": len(lists)}
    assert report.ids("list_typed_category") == lists and report.ids("duplicate_choices") == dupes
    assert ds.features == FEATURES
    items = {it["id"]: it for it in ds.remove_columns("audio")}
    for raw in records:
        item = items[raw["id"]]
        assert item["audio_path"] == raw["audio_id"]
        assert item["choices"] == raw["choices"]  # duplicates kept as released
        assert item["answer_index"] == raw["choices"].index(raw["answer"])  # the first match
        assert item["category"] == ("|".join(raw["category"]) if isinstance(raw["category"], list) else raw["category"])
        for key in ("question", "answer", "dataset", "task", "split", "sub-category", "difficulty"):
            assert item[key] == raw[key]
    assert sorted({len(c) for c in ds["choices"]}) == [2, 4, 5, 8]


def test_round_trip_through_a_hub_ready_folder(built, tmp_path):
    _, _, ds = built
    out = export_benchmark("mmau_test_mini", ds, tmp_path / "hub")
    loaded = load_dataset(str(out), split="test", cache_dir=str(tmp_path / "cache"))
    assert loaded.features == ds.features
    assert_same_items(ds, loaded)


def test_real_metadata_report(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "mmau-test-mini.json").write_bytes((DATA / "mmau-test-mini.json").read_bytes())
    builder = MMAUTestMiniBuilder(
        data_dir=str(tmp_path / "raw"), cache_dir=str(tmp_path / "cache"), on_missing_audio="keep"
    )
    assert builder.report.counts() == {"missing_audio": 1000, "duplicate_choices": 27, "list_typed_category": 13}
    ds = builder.build()
    assert len(ds) == 1000
    raw = json.loads((DATA / "mmau-test-mini.json").read_text("utf-8"))
    assert ds["id"] == [r["id"] for r in raw]
    assert set(ds["category"]) == {"Reasoning", "Information Extraction"}
    assert min(ds["answer_index"]) == 0  # every answer is among its choices
