"""`audioreason score` on hostile run folders: a record repeated verbatim is scored once and counted, two
different records for one output are refused naming both lines, and a malformed outputs.jsonl or run.json is
one line on stderr naming the file, the line and the field (exit status 2), never a wrong number or a trace.

The run: 4 real MMAR items, condition full, the plain template (official string match), hand-written outputs:
items 1 and 2 right, items 3 and 4 wrong -> n 4, accuracy 2/4 = 0.5."""

import json
import subprocess
import sys

import pytest

from audioreason.cli import main
from audioreason.data.mmar import demo_metadata, write_raw_folder
from audioreason.inference.prompts import get_template

ITEMS = demo_metadata()[:4]  # gold: Open Grassland, Too little, Christmas, HELLO
REPLIES = ["Open Grassland", "Too little", "Easter", "WORLD"]  # right, right, wrong, wrong
MODEL = "hand-model"
TEMPLATE = get_template("plain")


def record(index, output=None, **changes):
    item_id = ITEMS[index]["id"]
    base = {
        "key": json.dumps([MODEL, "full", f"{TEMPLATE.name}@{TEMPLATE.hash}", item_id]),
        "id": item_id,
        "index": index,
        "model": MODEL,
        "adapter": "hand",
        "condition": "full",
        "template": TEMPLATE.to_dict(),
        "output": REPLIES[index] if output is None else output,
        "error": None,
    }
    return {**base, **changes}


def line(value):
    return json.dumps(value, ensure_ascii=False) + "\n"


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    return write_raw_folder(ITEMS, tmp_path_factory.mktemp("raw") / "mmar")


def run_folder(folder, raw, outputs, run=None):
    """A run folder as `audioreason run` writes it; ``outputs``: outputs.jsonl's content (str or bytes)."""
    folder.mkdir()
    content = outputs.encode("utf-8") if isinstance(outputs, str) else outputs
    (folder / "outputs.jsonl").write_bytes(content)
    if run is None:
        run = json.dumps(
            {
                "config": {
                    "model": MODEL,
                    "benchmark": "mmar",
                    "data": str(raw),
                    "benchmark_config": None,
                    "limit": None,
                    "conditions": ["full"],
                    "templates": ["plain"],
                },
                "models": {"main": {"name": MODEL, "adapter": "hand", "description": "hand-written"}},
                "status": "finished",
                "counts": {"units": 4, "ok": 4, "failed": 0},
            }
        )
    (folder / "run.json").write_text(run, encoding="utf-8")
    return folder


def score_error(folder, capsys):
    """The one line `audioreason score FOLDER` prints on stderr, having exited with status 1 (a data error)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["score", str(folder), "--scorers", "accuracy", "--no-progress"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (folder / "results.json").exists()
    return err.strip()


def test_records_repeated_verbatim_are_scored_once_and_counted(tmp_path, raw):
    # Items 1 and 2 three times each: 8 lines, 4 outputs. Scored as 8 the run read 6/8 = 0.75.
    outputs = "".join(line(record(i)) for i in (0, 0, 0, 1, 1, 1, 2, 3))
    folder = run_folder(tmp_path / "run", raw, outputs)
    done = subprocess.run(
        [sys.executable, "-m", "audioreason.cli", "score", str(folder), "--scorers", "accuracy", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "duplicates: 4 (records repeated verbatim in outputs.jsonl, each scored once)" in done.stdout
    results = json.loads((folder / "results.json").read_text())
    assert results["duplicates"] == 4
    (entry,) = results["scorers"]["accuracy"]["results"]
    assert (entry["rule"], entry["n"], entry["accuracy"]) == ("official_slot", 4, 0.5)
    assert entry["official_scorer_accuracy"] == 0.5
    assert [s["n"] for s in results["sets"]] == [4]
    rows = [json.loads(x) for x in (folder / "items.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [it["id"] for it in ITEMS]


def test_a_clean_run_reports_no_duplicates_and_reads_unusual_line_breaks(tmp_path, raw, capsys):
    # A reply may hold U+2028 or U+0085, which str.splitlines breaks at (written as is by the runner).
    outputs = "".join(line(record(i, output=REPLIES[i] + tail)) for i, tail in enumerate(["", "", "\u2028", "\x85"]))
    folder = run_folder(tmp_path / "run", raw, outputs)
    assert main(["score", str(folder), "--scorers", "accuracy", "--no-progress"]) == 0
    assert "duplicates" not in capsys.readouterr().out
    results = json.loads((folder / "results.json").read_text())
    (entry,) = results["scorers"]["accuracy"]["results"]
    assert (results["duplicates"], entry["n"], entry["accuracy"]) == (0, 4, 0.5)


def test_one_output_under_two_keys_is_refused_naming_both_lines(tmp_path, raw, capsys):
    other_key = json.dumps([MODEL, "full", "plain@0000", ITEMS[0]["id"]])
    outputs = "".join(line(r) for r in [record(0), record(1), record(2), record(3), record(0, key=other_key)])
    err = score_error(run_folder(tmp_path / "run", raw, outputs), capsys)
    assert err.endswith(
        f"{tmp_path / 'run' / 'outputs.jsonl'}:5: a second, different record for the output "
        f"(item '{ITEMS[0]['id']}', model 'hand-model', full/plain) of line 1; an outputs file holds "
        "one record per output (keep one of the two lines)"
    )


def test_one_key_with_two_different_records_is_refused_naming_both_lines(tmp_path, raw, capsys):
    outputs = "".join(line(r) for r in [record(0), record(1), record(1, output="Too little, I think"), record(2)])
    err = score_error(run_folder(tmp_path / "run", raw, outputs), capsys)
    assert f"outputs.jsonl:3: a second, different record for the key {record(1)['key']} of line 2;" in err


BAD_LINES = [  # line 3 of outputs.jsonl (line 2 is blank), and the message
    (line(record(1, template="plain")), "template is a string, not an object {name, hash}"),
    (line(record(1, template={"name": "plain"})), "template.hash is missing"),
    (line(record(1, template={"name": "plain", "hash": 7})), "template.hash is a number, not a string"),
    (line(record(1, output=5)), "output is a number, not a string or null"),
    (line(record(1, output=["Too", "little"])), "output is an array, not a string or null"),
    (line(record(1, error={"kind": "timeout"})), "error is an object, not a string or null"),
    (line(record(1, key=["a", "b"])), "key is an array, not a string"),
    (line(record(1, id=True)), "id is a boolean, not a string or an integer"),
    (line(record(1, condition=None)), "the record has no condition"),
    (line([record(1)]), "expected a JSON object, got an array"),
    (line(record(1))[:-30] + "\n", "not valid JSON (Expecting value)"),
    (line(record(1)).encode("utf-8").replace(b"Too", b"T\xffo"), "not valid UTF-8 (byte 0xff at column"),
]


@pytest.mark.parametrize("bad, message", BAD_LINES, ids=[m.split(" (")[0] for _, m in BAD_LINES])
def test_a_malformed_outputs_line_names_file_line_and_field(tmp_path, raw, capsys, bad, message):
    good = [line(record(0)).encode(), b"\n"]
    bad = bad.encode("utf-8") if isinstance(bad, str) else bad
    folder = run_folder(tmp_path / "run", raw, b"".join([*good, bad, line(record(2)).encode()]))
    err = score_error(folder, capsys)
    assert f"{folder / 'outputs.jsonl'}:3: {message}" in err


RUN_FILES = [
    ("half", "not valid JSON ("),
    ("[]", "expected a JSON object (the run file), got an array"),
    ('{"config": []}', "config is an array, not an object"),
    (
        '{"config": {"benchmark": "mmar", "data": "x", "limit": "3"}}',
        "config.limit is a string, not an integer or null",
    ),
    (
        '{"config": {"benchmark": "mmar", "data": "x"}, "models": {"main": "hand"}}',
        "models.main is a string, not an object",
    ),
    (b'{"status": "fin\xe9"}', "not valid UTF-8 (byte 0xe9 at position 16)"),
]


@pytest.mark.parametrize("content, message", RUN_FILES, ids=[m.split(" (")[0] for _, m in RUN_FILES])
def test_a_malformed_run_file_names_the_file(tmp_path, raw, capsys, content, message):
    folder = tmp_path / "run"
    run_folder(folder, raw, "".join(line(record(i)) for i in range(4)))
    if content == "half":
        full = (folder / "run.json").read_text()
        content = full[: len(full) // 2]
    (folder / "run.json").write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    err = score_error(folder, capsys)
    assert f"{folder / 'run.json'}: {message}" in err
