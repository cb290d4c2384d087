"""Validation reports on crafted bad MMAR / MMAU folders: every problem counted with its ids, nothing
dropped silently, policies (raise / skip / keep / first) doing what they say."""

import copy
import json

import pytest
from fixtures.data_helpers import mmar_records, mmau_records, write_mmar_raw, write_mmau_raw

from audioreason.audio import AudioError
from audioreason.data import BenchmarkValidationError, MMARBuilder, MMAUTestMiniBuilder, decode_audio


def bad_mmar_records():
    """Six real records, each broken in one documented way, plus a repeated id."""
    records = copy.deepcopy(mmar_records()[:6])
    ids = [r["id"] for r in records]
    records[1]["answer"] = "None of these"  # answer not among the choices
    records[2]["choices"] = records[2]["choices"] + [records[2]["choices"][0]]  # a duplicate choice
    records[3]["category"] = ["Semantic Layer", "Perception Layer"]  # list-typed category
    records[4]["cue"] = "one cue as a string"  # malformed fields
    records[4]["rubric"][0]["choices"] = "0-1"
    del records[4]["rubric"][1]["name"]
    repeat = copy.deepcopy(records[5])
    repeat["question"] = "the same id again"
    records.append(repeat)  # a repeated id
    return records, ids


@pytest.fixture()
def bad_mmar(tmp_path):
    records, ids = bad_mmar_records()
    root = write_mmar_raw(tmp_path / "raw", records, skip_audio=[ids[0]])  # a missing audio file
    with open(root / "MMAR-meta.jsonl", "a", encoding="utf-8") as f:
        f.write("42\n")  # not an object
    return root, ids, tmp_path / "cache"


def test_report_lists_every_problem_with_ids(bad_mmar):
    root, ids, cache = bad_mmar
    report = MMARBuilder(data_dir=str(root), cache_dir=str(cache)).report
    assert report.rows == 8
    counts = report.counts()
    assert counts["missing_audio"] == 1 and report.ids("missing_audio") == [ids[0]]
    assert str(root / "audio") in report.of_kind("missing_audio")[0].detail
    assert report.ids("answer_not_in_choices") == [ids[1]]
    assert report.ids("duplicate_choices") == [ids[2]]
    assert report.ids("list_typed_category") == [ids[3]]
    assert report.ids("repeated_id") == [ids[5]]
    invalid = report.of_kind("invalid_value")
    assert {i.item_id for i in invalid} == {ids[4], "row-7"}
    assert any("cue" in i.detail for i in invalid) and any("rubric[0].choices" in i.detail for i in invalid)
    assert report.of_kind("missing_field")[0].detail == "rubric[1].name"
    assert report.ids("skipped") == ["row-7"]  # the non-object line is named, not lost
    summary = report.summary()
    assert "missing_audio: 1" in summary and ids[1] in summary and "8 records read" in summary
    assert report.to_dict()["counts"] == counts


def test_default_policy_raises_with_the_full_list(bad_mmar):
    root, ids, cache = bad_mmar
    builder = MMARBuilder(data_dir=str(root), cache_dir=str(cache))
    with pytest.raises(BenchmarkValidationError) as caught:
        builder.download_and_prepare()
    message = str(caught.value)
    assert "1 audio files are missing or unreadable" in message and ids[0] in message and str(root / "audio") in message
    assert "ids occur on more than one record" in message and ids[5] in message
    assert caught.value.report is builder.report


def test_skip_builds_the_rest_and_reports_skipped_ids(bad_mmar):
    root, ids, cache = bad_mmar
    builder = MMARBuilder(data_dir=str(root), cache_dir=str(cache), on_missing_audio="skip", on_repeated_id="keep")
    ds = builder.build()
    assert len(ds) == builder.report.built == 6  # 8 lines - the missing audio - the non-object
    assert ids[0] not in ds["id"]
    assert builder.report.ids("skipped") == ["row-7", ids[0]]
    items = {it["id"]: it for it in ds.remove_columns("audio")}
    assert items[ids[1]]["answer_index"] == -1 and items[ids[1]]["answer"] == "None of these"
    assert items[ids[2]]["choices"][-1] == items[ids[2]]["choices"][0]  # kept as given
    assert items[ids[3]]["category"] == "Semantic Layer|Perception Layer"
    assert items[ids[4]]["cue"] == ["one cue as a string"] and items[ids[4]]["rubric"][0]["choices"] == []
    assert ds["id"].count(ids[5]) == 2


def test_keep_keeps_items_without_audio(bad_mmar):
    root, ids, cache = bad_mmar
    ds = MMARBuilder(data_dir=str(root), cache_dir=str(cache), on_missing_audio="keep", on_repeated_id="first").build()
    item = ds[ds["id"].index(ids[0])]
    assert item["audio"] is None and item["question"]
    with pytest.raises(AudioError, match="no audio"):
        decode_audio(item["audio"])
    assert ds["id"].count(ids[5]) == 1
    assert ds[ds["id"].index(ids[5])]["question"] != "the same id again"  # the first record kept


def test_policy_changes_rebuild_instead_of_reusing_the_cache(bad_mmar):
    root, ids, cache = bad_mmar
    kept = MMARBuilder(data_dir=str(root), cache_dir=str(cache), on_missing_audio="keep", on_repeated_id="keep")
    skipped = MMARBuilder(data_dir=str(root), cache_dir=str(cache), on_missing_audio="skip", on_repeated_id="keep")
    assert len(kept.build()) == 7 and len(skipped.build()) == 6
    # Adding the missing file changes the source fingerprint, so the next build sees it.
    records, _ = bad_mmar_records()
    write_mmar_raw(root, records)
    (root / "MMAR-meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    again = MMARBuilder(data_dir=str(root), cache_dir=str(cache), on_missing_audio="skip", on_repeated_id="keep")
    assert "missing_audio" not in again.report.counts() and len(again.build()) == 7


def test_unusable_folders_give_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="raw folder not found"):
        MMARBuilder(data_dir=str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="MMAR-meta.jsonl"):
        MMARBuilder(data_dir=str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="needs data_dir"):
        MMARBuilder()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "MMAR-meta.jsonl").write_text('{"id": "a"}\n{"id": \n', "utf-8")
    with pytest.raises(ValueError, match=r"MMAR-meta.jsonl:2: not valid JSON"):
        MMARBuilder(data_dir=str(tmp_path / "broken"))
    with pytest.raises(ValueError, match="on_missing_audio must be one of"):
        MMARBuilder(data_dir=str(tmp_path / "broken"), on_missing_audio="ignore")
    (tmp_path / "notalist").mkdir()
    (tmp_path / "notalist" / "mmau-test-mini.json").write_text('{"id": "x"}', "utf-8")
    with pytest.raises(ValueError, match="expected a JSON array"):
        MMAUTestMiniBuilder(data_dir=str(tmp_path / "notalist"))


def test_mmau_bad_folder(tmp_path):
    clean = [
        r for r in mmau_records() if isinstance(r["category"], str) and len(set(r["choices"])) == len(r["choices"])
    ]
    records = copy.deepcopy(clean[:5])
    ids = [r["id"] for r in records]
    records[0]["category"] = ["Reasoning", "Information Extraction"]
    records[1]["answer"] = "not an option"
    del records[2]["question"]
    records[3]["audio_id"] = "./test-mini-audios/elsewhere.wav"
    root = write_mmau_raw(tmp_path / "raw", records, skip_audio=[ids[3]])
    builder = MMAUTestMiniBuilder(data_dir=str(root), cache_dir=str(tmp_path / "cache"), on_missing_audio="skip")
    report = builder.report
    assert report.ids("list_typed_category") == [ids[0]]
    assert report.ids("answer_not_in_choices") == [ids[1]]
    assert report.of_kind("missing_field")[0].item_id == ids[2]
    assert report.ids("missing_audio") == [ids[3]] and report.ids("skipped") == [ids[3]]
    ds = builder.build()
    assert ds["id"] == [ids[0], ids[1], ids[2], ids[4]]
    assert ds[0]["category"] == "Reasoning|Information Extraction" and ds[1]["answer_index"] == -1
    assert ds[2]["question"] == ""
    path = report.write_json(tmp_path / "report.json")
    saved = json.loads(path.read_text())
    assert saved["counts"]["skipped"] == 1 and saved["issues"][0]["id"] == ids[0]
