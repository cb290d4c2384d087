"""The text-only read of a raw MMAR or MMAU test-mini folder (``audioreason.data.catalog.text_items``, used by
`audioreason score` and `import` without ``datasets``) gives the items the builders build, field for field,
with the same validation report and the same policies, on real records (tests/fixtures) with audio, with
some of it missing, and with ids repeated."""

from __future__ import annotations

import copy

import pytest
from datasets import Audio
from fixtures.data_helpers import mmar_records, mmau_records, write_mmar_raw, write_mmau_raw

from audioreason.data import BenchmarkValidationError, load_benchmark, mmar, mmau_test_mini, records, text_items
from audioreason.inference.runner import _dataset_items, load_items_reported


def built(name, root, cache, **options):
    dataset, report = load_benchmark(name, root, cache_dir=str(cache), return_report=True, **options)
    return [dict(row) for row in dataset.cast_column("audio", Audio(decode=False))], report


def same_report(text_report, build_report):
    text, build = text_report.to_dict(), build_report.to_dict()
    for key in ("audio_backend", "audio_backend_reason"):  # the build names its decoder; the text read has none
        assert text.pop(key) == "" and build.pop(key)
    assert text == build


def test_the_fields_are_the_builders_features_in_order():
    assert records.MMAR_FIELDS == tuple(mmar.FEATURES)
    assert records.MMAU_FIELDS == tuple(mmau_test_mini.FEATURES)


@pytest.mark.parametrize(
    "name, write, rows", [("mmar", write_mmar_raw, mmar_records), ("mmau_test_mini", write_mmau_raw, mmau_records)]
)
def test_every_item_is_the_built_one(tmp_path, name, write, rows):
    root = write(tmp_path / "raw", rows())
    items, report = text_items(name, root)
    expected, expected_report = built(name, root, tmp_path / "cache")
    assert items == expected and [list(i) for i in items] == [list(i) for i in expected]
    assert all(i["audio"] == {"bytes": None, "path": str((root / i["audio_path"]).resolve())} for i in items)
    same_report(report, expected_report)


@pytest.mark.parametrize("policy", ["keep", "skip"])
def test_missing_audio_and_repeated_ids_follow_the_same_policies(tmp_path, policy):
    rows = copy.deepcopy(mmar_records()[:6])
    rows.append(copy.deepcopy(rows[1]))  # a repeated id
    root = write_mmar_raw(tmp_path / "raw", rows, skip_audio=[rows[0]["id"], rows[3]["id"]])
    options = {"on_missing_audio": policy, "on_repeated_id": "first"}
    items, report = text_items("mmar", root, **options)
    expected, expected_report = built("mmar", root, tmp_path / "cache", **options)
    assert items == expected
    assert [i["audio"] is None for i in items] == (
        [True, False, False, True, False, False] if policy == "keep" else [False] * 4
    )
    same_report(report, expected_report)
    assert report.ids("skipped")[0] == rows[1]["id"]  # the second record of the repeated id


def test_a_raise_policy_fails_with_the_builders_error(tmp_path):
    rows = mmar_records()[:3]
    root = write_mmar_raw(tmp_path / "raw", rows, skip_audio=[rows[2]["id"]])
    with pytest.raises(BenchmarkValidationError) as text_error:
        text_items("mmar", root)
    with pytest.raises(BenchmarkValidationError) as build_error:
        built("mmar", root, tmp_path / "cache")
    assert str(text_error.value) == str(build_error.value) and rows[2]["id"] in str(text_error.value)


def test_the_runner_reads_a_raw_folder_as_the_dataset_would(tmp_path):
    root = write_mmau_raw(tmp_path / "raw", mmau_records()[:8], skip_audio=[mmau_records()[4]["id"]])
    items, skipped = load_items_reported("mmau", str(root), limit=6, on_missing_audio="skip")
    expected, _ = _dataset_items("mmau", str(root), None, 6, "skip")
    assert items == expected and len(items) == 6
    assert skipped == [{"id": mmau_records()[4]["id"], "reason": skipped[0]["reason"]}]
    assert skipped[0]["reason"].startswith("missing_audio: ")


def test_audiospan_has_no_text_only_read(tmp_path):
    with pytest.raises(ValueError, match="no text-only read"):
        text_items("audiospan", tmp_path)
