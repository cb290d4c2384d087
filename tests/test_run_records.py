"""The run folder's typed records (``base.schema``): an outputs.jsonl line and run.json, each written in the key
order the runner and the import have always written, and read back to the same bytes."""

import json

import pytest

from audioreason.base.jsonl import DataFileError
from audioreason.base.schema import OutputRecord, RunSummary, check_output_record, output_line

LINE = {
    "key": '["m", "full", "plain@abc", "q1"]',
    "id": "q1",
    "index": 0,
    "model": "m",
    "adapter": "transformers",
    "condition": "full",
    "template": {"name": "plain", "hash": "abc"},
    "decoding": {"max_new_tokens": 5},
    "output": "B — Rain\u2028",
    "error": None,
    "finish_reason": "stop",
    "details": None,
    "audio": {"seconds": 2.0, "truncated": True},
    "tokens": {"prompt": 10, "completion": 3},
    "timings": {"audio_s": 0.1, "generate_s": 0.5, "batch_size": 2},
    "rank": 0,
}


def test_an_output_record_keeps_the_line_order_and_bytes():
    record = OutputRecord.from_dict(LINE, "outputs.jsonl:1")
    assert list(record.to_dict()) == [
        "key",
        "id",
        "index",
        "model",
        "adapter",
        "condition",
        "template",
        "decoding",
        "output",
        "error",
        "finish_reason",
        "details",
        "audio",
        "tokens",
        "timings",
        "rank",
    ]
    assert output_line(record.to_dict()) == json.dumps(LINE, ensure_ascii=False) + "\n"
    assert "\u2028" in output_line(LINE) and output_line(LINE).count("\n") == 1  # one line, the text as is


@pytest.mark.parametrize(
    "change, message",
    [
        ({"id": True}, "outputs.jsonl:3: id is a boolean, not a string or an integer"),
        ({"model": None}, "outputs.jsonl:3: the record has no model"),
        ({"template": {"name": "plain"}}, "outputs.jsonl:3: template.hash is missing"),
    ],
)
def test_a_damaged_record_is_named_by_its_line_and_field(change, message):
    with pytest.raises(DataFileError, match=message.replace(".", r"\.")):
        OutputRecord.from_dict({**LINE, **change}, "outputs.jsonl:3")
    with pytest.raises(DataFileError):
        check_output_record({**LINE, **change}, "outputs.jsonl:3")


def test_a_run_summary_leaves_out_the_parts_its_writer_has_not():
    imported = RunSummary(
        identity={"benchmark": "mmar"},
        config={},
        models={},
        templates=[],
        versions={},
        git=None,
        started="s",
        finished="f",
        sessions=[],
        counts={"units": 1},
        skipped_items=[],
        status="finished",
        outputs="outputs.jsonl",
        source={"format": "jsonl"},
    ).to_dict()
    assert list(imported) == [
        "identity",
        "config",
        "models",
        "templates",
        "versions",
        "git",
        "started",
        "finished",
        "sessions",
        "counts",
        "skipped_items",
        "status",
        "outputs",
        "source",
    ]
    assert imported["git"] is None  # a required part is written even when null
    ran = RunSummary.from_dict(
        {
            **imported,
            "source": None,
            "usage": {"total": 0},
            "speed": {"n": 1},
            "cost": {"total": 0.5},
            "audio_check": {"ids": ["q1"]},
        }
    ).to_dict()
    assert list(ran) == [
        "identity",
        "config",
        "models",
        "templates",
        "versions",
        "git",
        "started",
        "finished",
        "sessions",
        "counts",
        "skipped_items",
        "usage",
        "speed",
        "status",
        "outputs",
        "cost",
        "audio_check",
    ]


def test_a_written_run_file_reads_back_to_the_same_bytes():
    content = {
        "identity": {"benchmark": "mmar"},
        "config": {"benchmark": "mmar"},
        "models": {"main": {"name": "m"}},
        "templates": [{"name": "plain"}],
        "versions": {"python": "3"},
        "git": {"commit": "c", "dirty": False},
        "started": "s",
        "finished": "f",
        "sessions": [{"ran": 2}],
        "counts": {"units": 2},
        "skipped_items": [],
        "usage": {"total": {}},
        "speed": {"samples_per_s": 1.0},
        "status": "finished",
        "outputs": "outputs.jsonl",
        "audio_check": {"ids": ["q1"]},
        "protocol": {"benchmark": {}},
        "protocol_hash": "h",
    }
    text = json.dumps(content, indent=2, ensure_ascii=False)
    assert json.dumps(RunSummary.from_dict(json.loads(text)).to_dict(), indent=2, ensure_ascii=False) == text


def test_a_live_sessions_run_file_reads_with_what_it_has():
    running = RunSummary.from_dict(
        {
            "identity": {"benchmark": "mmar"},
            "config": {"data": "d"},
            "status": "running",
            "started": "s",
            "session": {"units": 3},
        }
    )
    assert running.status == "running" and running.config == {"data": "d"} and running.counts is None
    assert "session" not in running.to_dict()
