"""AudioSpan from a tiny synthetic raw folder (2 recordings, native MCQ + OEQ, an anchor chain each):
schema, configs, renamed fields, bad folders, and the audio-files-plus-metadata Hub folder."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from datasets import load_dataset
from fixtures.audiospan_synth import EDITS, write_audiospan_folder
from fixtures.data_helpers import assert_same_items, soundfile_samples

from audioreason.data import AudioSpanBuilder, audio_paths, export_benchmark
from audioreason.data.audiospan import FEATURES
from audioreason.data.hub_load import read_card_yaml
from audioreason.text.audiospan_fields import FIELD_ALIASES
from audioreason.text.timestamps import parse_record_span, parse_record_time

CARD = Path(__file__).resolve().parents[1] / "datasets_scripts" / "audiospan" / "README.md"


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    return write_audiospan_folder(tmp_path_factory.mktemp("audiospan_raw"))


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def built(raw, cache):
    builder = AudioSpanBuilder(data_dir=str(raw), cache_dir=cache)
    return builder, builder.build()


def test_items_follow_the_paper_layout(built, raw):
    builder, ds = built
    assert builder.report.ok, builder.report.summary()
    assert ds.features == FEATURES and len(ds) == 18
    items = {it["id"]: it for it in ds.remove_columns("audio")}
    mcq, oeq = items["en-talk-001/native/P/mcq"], items["en-talk-001/native/P/oeq"]
    assert (mcq["subset"], mcq["format"], mcq["answer"], mcq["answer_index"]) == (
        "native_mcq",
        "MCQ",
        "option C (P)",
        2,
    )
    assert mcq["pair_id"] == oeq["pair_id"] and mcq["audio_path"] == "audio/original/en-talk-001.wav"
    assert (oeq["subset"], oeq["choices"], oeq["answer_index"]) == ("native_oeq", [], -1)
    assert oeq["answer"] == oeq["reference_answer"]
    assert oeq["rubric"][1] == {
        "text": "Locates it",
        "importance": "essential",
        "time_range": [1.5, 2.5],
        "localization": True,
    }
    assert oeq["rubric"][0]["time_range"] is None
    assert (oeq["language"], oeq["duration_tier"], oeq["genre"]) == ("en", "S", "podcast")
    assert oeq["duration_seconds"] == pytest.approx(4.0)
    chain = sorted(
        (it for it in items.values() if it["chain_id"] == "en-talk-001/chain"), key=lambda it: it["link_position"]
    )
    assert [(c["link_position"], c["cognitive_level"]) for c in chain] == [
        (1, "perception"),
        (2, "understanding"),
        (3, "reasoning"),
    ]
    manifest = chain[0]["edit_manifest"]  # from edits.jsonl; its unknown key kept in extra
    assert manifest["operation"] == chain[0]["operation"] == "addition"
    assert manifest["positions"] == [{"start": 0.5, "end": 0.9}, {"start": 2.5, "end": 2.9}]
    assert (manifest["event_category"], manifest["snr_db"]) == ("dog bark", 8.0)
    assert json.loads(manifest["extra"]) == {"seed": 7}
    inline = items["zh-show-002/anchor/2"]["edit_manifest"]  # given inline on the items
    assert (inline["operation"], inline["deletion_mode"], inline["positions"]) == (
        "deletion",
        "silence",
        [{"start": 1.0, "end": 1.6}],
    )
    # Anchor items carry the anchored copy, native items the original.
    paths = dict(zip(ds["id"], audio_paths(ds)))
    assert paths["zh-show-002/anchor/1"].endswith("audio/anchored/zh-show-002.wav")
    anchored, _ = soundfile_samples(raw / "audio/anchored/zh-show-002.wav")
    assert np.abs(anchored[int(1.1 * 16000) : int(1.5 * 16000)]).max() == 0  # the silenced span


def test_configs_select_their_subset(raw, cache):
    sizes = {}
    for config in ("all", "native_mcq", "native_oeq", "anchor"):
        builder = AudioSpanBuilder(data_dir=str(raw), cache_dir=cache, config_name=config)
        ds = builder.build()
        sizes[config] = len(ds)
        assert config == "all" or set(ds["subset"]) == {config}
        assert builder.report.built == len(ds) and builder.report.rows == 18
    assert sizes == {"all": 18, "native_mcq": 6, "native_oeq": 6, "anchor": 6}


def test_released_field_names_map_through_field_aliases(built, tmp_path, cache):
    renamed = write_audiospan_folder(tmp_path / "renamed", renamed=True)
    native = json.loads((renamed / "metadata/native.jsonl").read_text().splitlines()[1])
    assert {"qid", "audio_id", "level", "criteria", "reference"} <= set(native)  # really renamed
    assert {"criterion", "weight", "time_span"} <= set(native["criteria"][0])
    builder = AudioSpanBuilder(data_dir=str(renamed), cache_dir=cache)
    # Letter answers ("C") are mapped to the option text, and reported.
    assert builder.report.counts() == {"answer_given_as_letter": 12}
    _, original = built
    assert builder.build().remove_columns("audio").to_list() == original.remove_columns("audio").to_list()
    assert FIELD_ALIASES["item"]["qid"] == "id" and FIELD_ALIASES["criterion"]["time_span"] == "time_range"


def test_extra_aliases_for_one_build(raw, tmp_path, cache):
    folder = tmp_path / "custom"
    shutil.copytree(raw, folder)
    lines = (folder / "metadata/native.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows:
        row["taxonomy_level"] = row.pop("cognitive_level")
    (folder / "metadata/native.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    plain = AudioSpanBuilder(data_dir=str(folder), cache_dir=cache)
    assert plain.report.counts()["unmapped_field"] == 12 and plain.report.counts()["missing_field"] == 12
    mapped = AudioSpanBuilder(
        data_dir=str(folder), cache_dir=cache, field_aliases={"item": {"taxonomy_level": "cognitive_level"}}
    )
    assert mapped.report.ok
    assert plain.config_id != mapped.config_id  # the mapping is part of the cache key
    ds = plain.build()
    kept = json.loads(ds[0]["extra"])
    assert kept == {"taxonomy_level": rows[0]["taxonomy_level"]}  # unknown fields are kept, not dropped
    with pytest.raises(ValueError, match="field_aliases kinds"):
        AudioSpanBuilder(data_dir=str(folder), cache_dir=cache, field_aliases={"items": {}})


def _rewrite(path: Path, edit) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = edit(rows)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def test_bad_folder_is_reported(raw, tmp_path, cache):
    folder = tmp_path / "bad"
    shutil.copytree(raw, folder)
    (folder / "audio/anchored/zh-show-002.wav").unlink()  # missing anchored copy
    (folder / "audio/original/en-talk-001.wav").write_bytes(b"RIFF garbage")  # unreadable audio

    def native(rows):
        rows[0]["duration_tier"] = "XL"  # invalid value
        rows[0]["language"] = "zh"  # conflicts with recording
        rows[0]["answer"] = "B"  # a letter
        rows[2]["choices"] = rows[2]["choices"][:3]  # 3 options
        rows[3]["rubric"] = []  # OEQ without rubric
        rows[5]["rubric"][1]["time_range"] = "soon"  # unparsable time
        rows[5]["rubric"][2]["importance"] = "nice to have"
        rows[4]["cognitive_level"] = "Q"
        del rows[6]["format"]  # inferred from choices
        rows.append(dict(rows[1]))  # repeated id
        return rows

    def anchor(rows):
        del rows[1]  # chain loses position 2
        rows[0]["edit_manifest"] = {"op": "add", "spans": [[1, 2], [3, 4], [5, 6], [7, 8]]}
        rows[2]["mood"] = "tense"  # unknown field
        return rows

    _rewrite(folder / "metadata/native.jsonl", native)
    _rewrite(folder / "metadata/anchor.jsonl", anchor)
    report = AudioSpanBuilder(data_dir=str(folder), cache_dir=cache).report
    counts = report.counts()
    assert report.ids("missing_audio") == ["zh-show-002/anchor/1", "zh-show-002/anchor/2", "zh-show-002/anchor/3"]
    unreadable = report.ids("unreadable_audio")  # every native item of en-talk-001, the repeat included
    assert len(unreadable) == counts["unreadable_audio"] == 7
    assert {i.split("/native/")[0] for i in unreadable} == {"en-talk-001"}
    assert report.ids("answer_given_as_letter") == ["en-talk-001/native/P/mcq"]
    assert report.ids("unexpected_choice_count") == ["en-talk-001/native/U/mcq"]
    assert report.ids("missing_rubric") == ["en-talk-001/native/U/oeq"]
    assert report.ids("incomplete_chain") == ["en-talk-001/chain"]
    assert report.ids("repeated_id") == ["en-talk-001/native/P/oeq"]
    assert report.ids("inferred_value") == ["zh-show-002/native/P/mcq"]
    assert report.ids("unmapped_field") == ["zh-show-002/anchor/1"]
    conflicts = report.of_kind("conflicting_value")  # the item's language and tier differ from its recording's
    assert [(c.item_id, c.detail.split(":")[0]) for c in conflicts] == [
        ("en-talk-001/native/P/mcq", "language"),
        ("en-talk-001/native/P/mcq", "duration_tier"),
    ]
    invalid = " | ".join(i.detail for i in report.of_kind("invalid_value"))
    for needle in (
        "duration_tier='XL'",
        "cognitive_level='Q'",
        "time_range",
        "importance='nice to have'",
        "4 positions",
    ):
        assert needle in invalid
    # en-talk-001's MCQs now have levels P, U and 'Q', its OEQs P twice (the repeat): not one each of P, U, R.
    assert [(i.item_id, i.detail[:4]) for i in report.of_kind("incomplete_native_set")] == [
        ("en-talk-001", "MCQ:"),
        ("en-talk-001", "OEQ:"),
    ]
    ds = AudioSpanBuilder(data_dir=str(folder), cache_dir=cache, on_missing_audio="skip", on_repeated_id="keep").build()
    # chain link removed, repeat added, 3 anchor items without audio and en-talk-001's 7 native items
    # (its original is unreadable) skipped
    assert len(ds) == 18 - 1 + 1 - 3 - 7
    assert not set(ds["id"]) & set(unreadable)
    ok = AudioSpanBuilder(data_dir=str(folder), cache_dir=cache, on_missing_audio="keep", on_repeated_id="keep")
    items = {it["id"]: it for it in ok.build().remove_columns("audio")}
    item = items["en-talk-001/native/P/mcq"]
    assert item["duration_tier"] == "XL" and item["language"] == "zh"  # kept as given, and reported
    anchor1 = items["en-talk-001/anchor/1"]
    assert anchor1["operation"] == "addition" and len(anchor1["edit_manifest"]["positions"]) == 4


def test_missing_metadata_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="metadata/native.jsonl"):
        AudioSpanBuilder(data_dir=str(tmp_path))


def test_round_trip_through_audio_files_plus_metadata(built, raw, tmp_path):
    _, ds = built
    out = export_benchmark("audiospan", ds, tmp_path / "hub", card=CARD.read_text())
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "anchor/audio/en-talk-001.wav",
        "anchor/audio/zh-show-002.wav",
        "anchor/metadata.parquet",
        "native/audio/en-talk-001.wav",
        "native/audio/zh-show-002.wav",
        "native/metadata.parquet",
    ]  # each recording stored once per path
    card = read_card_yaml(out)
    with open(CARD, encoding="utf-8") as f:
        declared = yaml.safe_load(f.read().split("---")[1])
    assert card["configs"] == declared["configs"]  # the published card says what was written
    assert card["license"] == "cc-by-nc-sa-4.0" and "chu2026audiospan" in (out / "README.md").read_text()
    cache = str(tmp_path / "cache")
    loaded_all = load_dataset(str(out), split="test", cache_dir=cache)  # default config: all
    assert_same_items(ds, loaded_all, key="id")
    for config in ("native_mcq", "native_oeq", "anchor"):
        loaded = load_dataset(str(out), config, split="test", cache_dir=cache)
        expected = ds.select([i for i, s in enumerate(ds["subset"]) if s == config])
        assert_same_items(expected, loaded)


def test_export_refuses_formats_audiofolder_cannot_read(raw, tmp_path, cache):
    folder = tmp_path / "m4a"
    shutil.copytree(raw, folder)
    for path in list((folder / "audio").rglob("*.wav")):
        path.rename(path.with_suffix(".m4a"))  # still WAV inside: readable here, refused at export
    ds = AudioSpanBuilder(data_dir=str(folder), cache_dir=cache).build()
    assert ds[0]["audio_path"].endswith(".m4a")
    with pytest.raises(ValueError, match=r"\['.m4a'\].*convert"):
        export_benchmark("audiospan", ds, tmp_path / "hub")


def test_time_parsing():
    assert parse_record_time(12) == 12.0 and parse_record_time("522.640 s") == pytest.approx(522.64)
    assert (
        parse_record_time("12:30") == 750
        and parse_record_time("64:00") == 3840
        and parse_record_time("01:04:00") == 3840
    )
    assert parse_record_span([1, 2.5]) == [1.0, 2.5] and parse_record_span({"start": "00:41", "end": "00:45"}) == [
        41,
        45,
    ]
    assert parse_record_span("12:30-12:45") == [750, 765] and parse_record_span("12:30 – 12:45") == [750, 765]
    assert parse_record_span(None) is None and parse_record_span([]) is None
    for bad in ("soon", -1, True, "1:2:3:4"):
        with pytest.raises(ValueError):
            parse_record_time(bad)
    with pytest.raises(ValueError, match="ends before"):
        parse_record_span([5, 1])
    assert EDITS["en-talk-001"]["operation"] == "addition"


def test_a_recording_shorter_than_its_header_is_reported_unreadable(raw, tmp_path, cache):
    folder = tmp_path / "cut"
    shutil.copytree(raw, folder)
    original = folder / "audio/original/en-talk-001.wav"
    data = original.read_bytes()
    original.write_bytes(data[: len(data) // 2])  # an interrupted copy: the header still promises every frame
    report = AudioSpanBuilder(data_dir=str(folder), cache_dir=cache).report
    unreadable = report.of_kind("unreadable_audio")
    assert len(unreadable) == 6 and {i.item_id.split("/native/")[0] for i in unreadable} == {"en-talk-001"}
    assert all("en-talk-001.wav: truncated WAV: its header promises" in i.detail for i in unreadable)
