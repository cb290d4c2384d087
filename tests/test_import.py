"""`audioreason import FORMAT FILE`, round-tripped through `audioreason score` (the CLI entry point) with
hand-checked accuracies, and its one-line errors.

The files are under tests/data/imports/ (README.md there says which project's documented schema each is
written from); their items are the first 5 records of tests/fixtures/mmar_subset.jsonl and
mmau_test_mini_subset.json (real MMAR / MMAU test-mini records). The official scorer's verdicts below are
worked by hand from its rule (MMAR code/evaluation.py = MMAU evaluation.py `string_match`: every word of the
gold answer in the reply, and no word of a wrong choice that is not also in the gold):

MMAR items (gold): 1 "Because she held her breath to finish the whole song" (B), 2 "Yes" (A), 3 "3" (D),
4 "United Kingdom" (B), 5 "Mono first, stereo later" (C; the choice "Stereo first, mono later" has the same
words, so the official rule skips it as a wrong choice).
MMAU items (gold): 1 "Man" (A), 2 "A woman" (B), 3 "Radio" (A), 4 "Sound effects" (A), 5 "No, it is not
present." (C).
"""

import json

import pytest
from fixtures.data_helpers import DATA, mmar_records, mmau_records, write_mmar_raw, write_mmau_raw

from audioreason.base.schema import check_output_record
from audioreason.cli import main
from audioreason.inference.imports import EMPTY_ERROR
from audioreason.inference.runner import read_run_file
from audioreason.scorers.mmar_rubrics.declaration import reply_parts

FILES = DATA / "imports"
MMAR_IDS = [r["id"] for r in mmar_records()[:5]]
MMAU_IDS = [r["id"] for r in mmau_records()[:5]]


@pytest.fixture(scope="module")
def mmar_data(tmp_path_factory):
    return write_mmar_raw(tmp_path_factory.mktemp("imp") / "mmar", mmar_records()[:5])


@pytest.fixture(scope="module")
def mmau_data(tmp_path_factory):
    return write_mmau_raw(tmp_path_factory.mktemp("imp") / "mmau", mmau_records()[:5])


@pytest.fixture(scope="module")
def mmau_metadata_only(tmp_path_factory):
    """The benchmark's metadata without its audio, as a user of predictions made elsewhere may hold it."""
    return write_mmau_raw(tmp_path_factory.mktemp("imp") / "mmau-meta", mmau_records()[:5], skip_audio=MMAU_IDS)


def cli(capsys, *argv):
    """(exit status, stdout, stderr) of the CLI entry point."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as stop:
        status = stop.code
    out, err = capsys.readouterr()
    return status, out, err


def imported(capsys, fmt, file, benchmark, data, out, *extra):
    status, printed, err = cli(
        capsys, "import", fmt, file, "--benchmark", benchmark, "--data", data, "--out", out, *extra
    )
    assert status == 0, err
    return read_run_file(out / "run.json"), [json.loads(line) for line in (out / "outputs.jsonl").open()], printed


def scored(capsys, out, *extra):
    status, printed, err = cli(capsys, "score", out, "--scorers", "accuracy", "--no-progress", *extra)
    assert status == 0, err
    results = json.loads((out / "results.json").read_text())
    return (
        {(e["model"], e["condition"], e["rule"]): e for e in results["scorers"]["accuracy"]["results"]},
        results,
        printed,
    )


def test_mmar_results_file_round_trips_with_the_official_accuracy(tmp_path, capsys, mmar_data):
    run, records, printed = imported(
        capsys, "mmar", FILES / "mmar_results.jsonl", "mmar", mmar_data, tmp_path / "run", "--model", "their-model"
    )
    for n, record in enumerate(records):
        check_output_record(record, f"outputs.jsonl:{n + 1}")  # the runner's own record check
    assert [r["id"] for r in records] == MMAR_IDS and {r["template"]["name"] for r in records} == {"external"}
    assert records[2]["output"] == "3"  # the first of the two rows for item 3 is kept
    assert records[0]["details"]["thinking_prediction"].startswith("The singer keeps")
    source = run["source"]
    assert source["format"] == "mmar" and source["file"] == "mmar_results.jsonl" and len(source["sha256"]) == 64
    assert source["counts"] == {
        "rows": 7,
        "imported": 5,
        "unmatched": 1,
        "duplicates": 1,
        "empty": 0,
        "no_prediction": 0,
        "gold_differs": 0,
        "matched_by_doc_order": 0,
    }
    assert source["unmatched"] == [{"id": "not-an-mmar-item_00-00-00_00-00-10", "where": "line 6"}]
    assert source["duplicates"][0] == {
        "id": MMAR_IDS[2],
        "where": "line 7",
        "first": "line 3",
        "model": "their-model",
        "condition": "full",
        "same_output": False,
    }
    assert "unmatched: 1" in printed and "duplicates: 1" in printed
    assert run["status"] == "finished" and run["models"]["main"]["name"] == "their-model"
    by_set, results, printed = scored(capsys, tmp_path / "run")
    entry = by_set[("their-model", "full", "hybrid")]
    # official: 1 right, 2 "No" wrong, 3 right, 4 "United States" wrong ("states"), 5 right -> 3/5
    assert (entry["official_scorer_correct"], entry["n"], entry["official_scorer_accuracy"]) == (3, 5, 0.6)
    assert results["missing_outputs"] == 0 and "accuracy: official MMAR/MMAU scorer  0.6000" in printed
    # the report and the explorer read it as any scored run
    status, _, err = cli(capsys, "report", tmp_path / "run", "-o", tmp_path / "report.html")
    assert status == 0 and "their-model" in (tmp_path / "report.html").read_text(), err
    from audioreason.report.item_page import item_detail
    from audioreason.report.leaderboard import leaderboard
    from audioreason.report.runs import open_run

    view = open_run(tmp_path / "run")
    assert any("their-model" in row for row in leaderboard([view]))
    assert "United States" in json.dumps(item_detail(view, records[3]["key"])["raw"])


def test_thinking_prediction_is_the_reasoning_mmar_rubrics_judges():
    record = {"output": "3", "details": {"thinking_prediction": "Three instruments enter."}}
    assert reply_parts(record) == ("Three instruments enter.", "3")  # evaluation_rubrics.py's two fields
    assert reply_parts({"output": "I hear three.\nAnswer: 3"}) == ("I hear three.\nAnswer: 3", "3")


def test_mmau_results_file_counts_empty_and_absent_predictions(tmp_path, capsys, mmau_data):
    run, records, printed = imported(
        capsys, "mmau", FILES / "mmau_results.json", "mmau_test_mini", mmau_data, tmp_path / "run", "--model", "m"
    )
    counts = run["source"]["counts"]
    assert (counts["rows"], counts["imported"], counts["empty"], counts["no_prediction"]) == (5, 4, 1, 1)
    assert run["source"]["no_prediction"] == [{"id": MMAU_IDS[4], "where": "entry 4"}]
    assert run["source"]["prediction_fields"] == {"model_output": 4, "model_prediction": 0}
    assert run["source"]["missing"] == [{"model": "m", "condition": "full", "ids": [MMAU_IDS[4]]}]
    assert records[3]["error"] == EMPTY_ERROR and records[3]["output"] == ""
    assert run["status"] == "incomplete" and run["counts"]["failed"] == 1
    assert "empty: 1" in printed and "no_prediction: 1" in printed and "missing: 1" in printed
    by_set, results, _ = scored(capsys, tmp_path / "run")
    entry = by_set[("m", "full", "hybrid")]
    # evaluation.py skips the row without model_output; "Man" right, "The speaker is a woman." right,
    # "Fire truck" wrong, "" wrong -> 2/4; the fifth item is missing, not scored
    assert (entry["official_scorer_correct"], entry["n"], entry["official_scorer_accuracy"]) == (2, 4, 0.5)
    assert entry["failed"] == 1 and entry["missing"] == 1 and results["missing_outputs"] == 1


def test_plain_jsonl_with_models_and_conditions(tmp_path, capsys, mmar_data):
    run, records, _ = imported(capsys, "jsonl", FILES / "predictions.jsonl", "mmar", mmar_data, tmp_path / "run")
    assert run["source"]["duplicates"][0]["same_output"] is True and run["source"]["counts"]["empty"] == 1
    assert [(r["id"], r["condition"]) for r in records][:3] == [
        (MMAR_IDS[0], "full"),
        (MMAR_IDS[0], "none"),
        (MMAR_IDS[1], "full"),
    ]
    assert run["config"]["conditions"] == ["full", "none"] and run["counts"]["missing"] == 3
    by_set, _, _ = scored(capsys, tmp_path / "run", "--extraction", "official_slot")
    full, none = by_set[("m1", "full", "official_slot")], by_set[("m1", "none", "official_slot")]
    # official: right, "Yes" right, "2" wrong, "" wrong, "Stereo first, mono later" right (the same words as
    # the gold, so no wrong choice's word) -> 3/5; the official_slot extractor picks a choice, and the reply
    # is word for word the wrong choice "Stereo first, mono later" -> 2/5
    assert (full["official_scorer_accuracy"], full["accuracy"], full["n"], full["failed"]) == (0.6, 0.4, 5, 1)
    # none: "Because someone shouted from the audience" wrong, "Yes" right -> 1/2, 3 items missing
    assert (none["official_scorer_accuracy"], none["n"], none["missing"]) == (0.5, 2, 3)


def test_csv_quoted_cells_and_an_unmatched_id(tmp_path, capsys, mmau_data):
    run, records, _ = imported(
        capsys,
        "csv",
        FILES / "predictions.csv",
        "mmau_test_mini",
        mmau_data,
        tmp_path / "run",
        "--model",
        "csv-model",
        "--condition",
        "none",
    )
    assert records[4]["output"] == "No, it is not present." and {r["condition"] for r in records} == {"none"}
    assert run["source"]["unmatched"] == [{"id": "no-such-item", "where": "line 7"}]
    by_set, _, _ = scored(capsys, tmp_path / "run")
    # "Man", "A woman", "Radio" right, "Human" wrong, "No, it is not present." right -> 4/5
    assert by_set[("csv-model", "none", "hybrid")]["official_scorer_accuracy"] == 0.8


def test_lmms_eval_samples_matched_by_the_id_its_task_logs(tmp_path, capsys, mmau_metadata_only):
    run, records, printed = imported(
        capsys,
        "lmms-eval",
        FILES / "20260101_120000_samples_mmau_test_mini.jsonl",
        "mmau_test_mini",
        mmau_metadata_only,
        tmp_path / "run",
        "--model",
        "qwen2-audio",
    )
    assert run["source"]["lmms_task"] == "mmau_test_mini" and run["source"]["counts"]["unmatched"] == 1
    # no audio in --data: kept (scoring the replies needs none), the loader's note recorded and printed
    assert run["config"]["on_missing_audio"] == "keep" and "missing_audio: 5" in printed
    assert [r["output"] for r in records] == ["A", "B", "C", "A", "D"]
    by_set, _, _ = scored(capsys, tmp_path / "run")
    entry = by_set[("qwen2-audio", "full", "hybrid")]
    # letters A, B, C, A, D against gold A, B, A, A, C: the hybrid rule reads the letter -> 3/5; the official
    # scorer matches choice words, and a bare letter holds none of them -> 0/5
    assert (entry["accuracy"], entry["official_scorer_accuracy"], entry["n"]) == (0.6, 0.0, 5)
    # lmms-eval's own per-sample accuracy (accuracy.overall; its parse in submission.model_prediction) beside
    # it: 1, 1, 0, 1, 0 -> 3/5, no random guess (each bare letter " A " is found)
    lmms = run["source"]["lmms_eval"]
    assert (lmms["metric"], lmms["rows"], lmms["lmms_eval_accuracy"], lmms["official_accuracy"]) == (
        "accuracy",
        5,
        0.6,
        0.0,
    )
    assert lmms["random_guesses"] == 0 and records[2]["details"]["lmms_eval"]["prediction"] == "Construction site"


def test_lmms_eval_doc_and_doc_order(tmp_path, capsys, mmar_data):
    run, records, _ = imported(
        capsys, "lmms-eval", FILES / "samples_mmar.jsonl", "mmar", mmar_data, tmp_path / "by-doc", "--model", "m"
    )
    assert [r["id"] for r in records] == MMAR_IDS and run["source"]["counts"]["gold_differs"] == 0
    # the raw reply is the output (what the official scorers read); lmms-eval's filtered reply is kept beside it
    assert records[0]["output"].startswith("<think>") and records[0]["details"]["filtered_response"] == "B"
    assert records[0]["details"]["lmms_eval"] == {
        "metric": "mmar_accuracy",
        "score": 1.0,
        "prediction": "B",
        "random_guess": False,
    }
    by_set, _, _ = scored(capsys, tmp_path / "by-doc")
    assert by_set[("m", "full", "hybrid")]["accuracy"] == 0.6  # B, A, C, B, A against B, A, D, B, C
    # the current logger drops the doc: without an id, doc_id is the position, checked against every target
    rows = [json.loads(line) for line in (FILES / "samples_mmar.jsonl").open()]
    bare = tmp_path / "samples_mmar.jsonl"
    bare.write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k not in ("doc", "mmar_accuracy")}) + "\n" for r in rows)
    )
    run, records, printed = imported(
        capsys, "lmms-eval", bare, "mmar", mmar_data, tmp_path / "by-order", "--model", "m"
    )
    assert [r["id"] for r in records] == MMAR_IDS and run["source"]["counts"]["matched_by_doc_order"] == 5
    assert "matched by doc_id" in printed
    # ids the task logged that are not --data's: --match doc-order pairs by position, the logged id kept
    run, records, _ = imported(
        capsys,
        "lmms-eval",
        FILES / "samples_mmar.jsonl",
        "mmar",
        mmar_data,
        tmp_path / "forced",
        "--model",
        "m",
        "--match",
        "doc-order",
    )
    assert run["source"]["counts"]["matched_by_doc_order"] == 5 and records[1]["details"]["lmms_id"] == MMAR_IDS[1]
    rows[0], rows[1] = {**rows[0], "doc_id": 1}, {**rows[1], "doc_id": 0}  # another order: targets B, A differ
    bare.write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k not in ("doc", "mmar_accuracy")}) + "\n" for r in rows)
    )
    status, _, err = cli(
        capsys,
        "import",
        "lmms-eval",
        bare,
        "--benchmark",
        "mmar",
        "--data",
        mmar_data,
        "--out",
        tmp_path / "refused",
        "--model",
        "m",
    )
    assert status == 1 and "doc_id is not the position in --data for 2 of them" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "refused").exists()


def lmms_row(doc_id, item_id, target, raw, filtered, score, prediction):
    row = {
        "doc_id": doc_id,
        "target": target,
        "filtered_resps": [filtered],
        "mmar_accuracy": {"id": item_id, "prediction": prediction, "ground_truth": target, "score": score},
    }
    return {**row, "resps": [[raw]]} if raw != filtered else row


def test_lmms_eval_reconciles_with_the_official_scorer_on_raw_replies(tmp_path, capsys, mmar_data):
    """By hand (module docstring's gold answers; lmms-eval's parser: (X), then "X ", then "X.", then, for replies of
    more than 5 words, an option's text; none found: a random letter):
    1. raw names a wrong choice in <think>: official 0 on raw, 1 on filtered; lmms finds the option text: 1.
    2. "Yes" (2 words, no letter): lmms guesses (logged B: 0); official 1.
    3. "The answer is D. 3": lmms "D." -> 1; official 1.
    4. "<think>... United States.</think>United Kingdom": lmms guesses on "United Kingdom" (logged B: 1);
       official 0 on raw ("states" is a wrong choice's word), 1 on filtered.
    lmms-eval 3/4; official on raw 2/4; on filtered 4/4; 2 guesses; verdicts differ on items 1, 2, 4."""
    ids = MMAR_IDS
    rows = [
        lmms_row(
            0,
            ids[0],
            "B",
            "<think>Maybe someone shouted from the audience? No.</think>Because she held her "
            "breath to finish the whole song",
            "Because she held her breath to finish the whole song",
            1.0,
            "B",
        ),
        lmms_row(1, ids[1], "A", "Yes", "Yes", 0.0, "B"),
        lmms_row(2, ids[2], "D", "The answer is D. 3", "The answer is D. 3", 1.0, "D"),
        lmms_row(3, ids[3], "B", "<think>It could be United States.</think>United Kingdom", "United Kingdom", 1.0, "B"),
    ]
    log = tmp_path / "20260101_samples_mmar.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run, records, printed = imported(capsys, "lmms-eval", log, "mmar", mmar_data, tmp_path / "run", "--model", "m")
    lmms = run["source"]["lmms_eval"]
    assert (
        lmms["rows"],
        lmms["lmms_eval_accuracy"],
        lmms["official_accuracy"],
        lmms["official_on_filtered_accuracy"],
    ) == (4, 0.75, 0.5, 1.0)
    assert lmms["random_guesses"] == 2 and lmms["random_guess_ids"] == [ids[1], ids[3]]
    assert lmms["filtered_differs"] == 2 and lmms["verdicts_differ_ids"] == [ids[0], ids[1], ids[3]]
    assert [r["details"]["lmms_eval"]["random_guess"] for r in records] == [False, True, False, True]
    assert (
        "lmms-eval's mmar_accuracy: 0.7500 over 4 rows, 2 of them decided by its random guess (no letter found); "
        "the official scorer on the raw replies: 0.5000"
    ) in printed
    # the official-scorer row is the official match on the raw reply, as MMAR's evaluation.py reads it
    by_set, results, _ = scored(capsys, tmp_path / "run")
    assert by_set[("m", "full", "hybrid")]["official_scorer_accuracy"] == 0.5
    assert results["run"]["lmms_eval"]["official_accuracy"] == 0.5
    # the filtered text as a named rule (never part of --extraction all)
    by_set, _, _ = scored(capsys, tmp_path / "run", "--extraction", "lmms_filtered")
    assert by_set[("m", "full", "lmms_filtered")]["accuracy"] == 1.0
    by_set, _, _ = scored(capsys, tmp_path / "run", "--extraction", "all")
    assert "lmms_filtered" not in {rule for _, _, rule in by_set}
    # the report shows both numbers and the guesses in its own table
    from audioreason.report import build_report

    summary = build_report([tmp_path / "run"], tmp_path / "report.html")
    assert "harness" in summary["tables"]
    md = (tmp_path / "report.md").read_text()
    assert "| m | mmar_accuracy | 4 | 0.7500 | 2 of 4 | 0.5000 | 1.0000 | 3 of 4 |" in md


@pytest.mark.parametrize(
    "fmt,name,content,message",
    [
        (
            "mmau",
            "r.jsonl",
            None,
            "no row has model_output or model_prediction: not an MMAU results file (it looks like the mmar format)",
        ),
        ("jsonl", "p.jsonl", '{"id": "x"}\n', "line 1 has no 'output' field"),
        ("jsonl", "p.jsonl", '{"id": "x", "output": "a"}\n{"id": \n', "p.jsonl:2: not valid JSON"),
        ("jsonl", "p.jsonl", '{"id": "x", "output": 3}\n', "p.jsonl: line 1: output is a number, not a string"),
        (
            "jsonl",
            "p.jsonl",
            '{"id": "x", "output": "a", "condition": "frag:2"}\n',
            "p.jsonl: line 1: condition 'frag:2' names 2 conditions",
        ),
        (
            "mmar",
            "r.json",
            '[{"id": "x", "answer_prediction": ["A"]}]',
            "r.json: entry 0: answer_prediction is an array",
        ),
        (
            "lmms-eval",
            "samples_mmar.jsonl",
            '{"doc_id": 0, "filtered_resps": ["A", "B"]}\n',
            "samples_mmar.jsonl: line 1: filtered_resps holds 2 replies",
        ),
        # a lone surrogate: json reads it, outputs.jsonl (UTF-8) could not hold it; refused before anything is written
        (
            "jsonl",
            "p.jsonl",
            f'{{"id": "{MMAR_IDS[0]}", "output": "a"}}\n{{"id": "{MMAR_IDS[1]}", "output": "\\ud800"}}\n',
            "p.jsonl:2: output holds a lone surrogate \\ud800 (half of a UTF-16 pair, not a character)",
        ),
        (
            "mmau",
            "r.json",
            f'[{{"id": "{MMAR_IDS[0]}", "model_output": "B \\udfff"}}]',
            "r.json: [0].model_output holds a lone surrogate \\udfff",
        ),
        ("csv", "p.csv", "item,reply\nx,a\n", "lacks id and output"),
        (
            "lmms-eval",
            "samples_mmau_test_mini.jsonl",
            '{"doc_id": 0, "filtered_resps": "A"}\n',
            "lmms-eval task 'mmau_test_mini' does not score --benchmark mmar",
        ),
        ("lmms-eval", "samples_mmar.jsonl", '{"id": "x", "output": "a"}\n', "not an lmms-eval --log_samples file"),
        ("jsonl", "p.jsonl", '{"id": "x", "output": "a", "condition": "loud"}\n', "unknown condition 'loud'"),
        ("jsonl", "p.jsonl", '{"id": "x", "output": "a"}\n', "no row matched an item of mmar in"),
    ],
)
def test_a_file_in_the_wrong_format_is_a_one_line_data_error(tmp_path, capsys, mmar_data, fmt, name, content, message):
    path = FILES / "mmar_results.jsonl" if content is None else tmp_path / name
    if content is not None:
        path.write_text(content)
    status, out, err = cli(
        capsys,
        "import",
        fmt,
        path,
        "--benchmark",
        "mmar",
        "--data",
        mmar_data,
        "--out",
        tmp_path / "run",
        "--model",
        "m",
    )
    assert status == 1 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


def test_a_long_chain_of_thought_in_a_csv_cell_is_read_whole(tmp_path, capsys, mmau_data, monkeypatch):
    cot = "Step one: the speaker's voice is low. " * 5800 + "So the answer is Man."  # 220 KB, over csv's 128 KiB
    (tmp_path / "p.csv").write_text(f'id,output\n{MMAU_IDS[0]},"{cot}"\n{MMAU_IDS[1]},A woman\n')
    _, records, _ = imported(
        capsys, "csv", tmp_path / "p.csv", "mmau_test_mini", mmau_data, tmp_path / "run", "--model", "m"
    )
    assert [r["output"] for r in records] == [cot, "A woman"] and len(cot) > 131072
    # the bound is the one on a JSON line (a small one here): a cell over it is refused by its line
    monkeypatch.setattr("audioreason.base.jsonl.MAX_LINE_BYTES", 1000)
    status, _, err = cli(
        capsys,
        "import",
        "csv",
        tmp_path / "p.csv",
        "--benchmark",
        "mmau_test_mini",
        "--data",
        mmau_data,
        "--out",
        tmp_path / "refused",
        "--model",
        "m",
    )
    assert status == 1 and len(err.strip().splitlines()) == 1, err
    assert f"{tmp_path / 'p.csv'}: line 2: field larger than field limit (1000)" in err
    assert not (tmp_path / "refused").exists()


def test_a_json_line_over_the_bound_is_refused_by_file_and_line(tmp_path, capsys, mmar_data, monkeypatch):
    monkeypatch.setattr("audioreason.base.jsonl.MAX_LINE_BYTES", 1100)  # 16 MiB unless set (docs/import.md)
    rows = [{"id": MMAR_IDS[0], "output": "Yes " * 240}, {"id": MMAR_IDS[1], "output": "Yes " * 270}]
    lines = [json.dumps(r) + "\n" for r in rows]
    assert [len(line) for line in lines] == [1014, 1134]
    (tmp_path / "p.jsonl").write_text("".join(lines))
    status, _, err = cli(
        capsys,
        "import",
        "jsonl",
        tmp_path / "p.jsonl",
        "--benchmark",
        "mmar",
        "--data",
        mmar_data,
        "--out",
        tmp_path / "run",
        "--model",
        "m",
    )
    assert status == 1 and len(err.strip().splitlines()) == 1, err
    assert f"{tmp_path / 'p.jsonl'}:2: a line longer than 1100 bytes, the most a JSON line may hold" in err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--condition", "frag:2"], "names 2 conditions"),
        (["--template", "fancy"], "unknown template 'fancy'"),
        (["--benchmark", "mmau-pro"], "unknown benchmark 'mmau-pro'"),
        ([], "names no model: give --model NAME"),
        (["--model", "m", "--match", "doc-order"], "--match doc-order pairs lmms-eval rows by doc_id"),
    ],
)
def test_usage_errors_exit_2(tmp_path, capsys, mmar_data, extra, message):
    argv = [
        "import",
        "mmar",
        FILES / "mmar_results.jsonl",
        "--benchmark",
        "mmar",
        "--data",
        mmar_data,
        "--out",
        tmp_path / "run",
    ]
    if extra[:1] == ["--benchmark"]:
        argv[argv.index("--benchmark") + 1] = extra[1]
        extra = []
    status, _, err = cli(capsys, *argv, *extra)
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_no_file_or_a_used_folder_is_refused(tmp_path, capsys, mmar_data):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "run.json").write_text("{}")
    for file, out, message in (
        (tmp_path / "missing.jsonl", tmp_path / "run", "is not a file"),
        (FILES / "predictions.jsonl", tmp_path / "used", "already holds a run (run.json)"),
    ):
        status, _, err = cli(capsys, "import", "jsonl", file, "--benchmark", "mmar", "--data", mmar_data, "--out", out)
        assert status == 2 and message in err


def test_a_file_whose_answers_are_another_versions_is_scored_on_the_benchmarks(tmp_path, capsys, mmau_data):
    rows = json.loads((FILES / "mmau_results.json").read_text())
    rows[0]["answer"] = "Woman"  # the file's gold differs from --data's ("Man")
    (tmp_path / "r.json").write_text(json.dumps(rows))
    run, _, printed = imported(
        capsys, "mmau", tmp_path / "r.json", "mmau_test_mini", mmau_data, tmp_path / "run", "--model", "m"
    )
    assert run["source"]["gold_differs"] == [
        {"id": MMAU_IDS[0], "where": "entry 0", "file": "Woman", "benchmark": "Man"}
    ]
    assert "gold_differs: 1" in printed
    by_set, _, _ = scored(capsys, tmp_path / "run")
    assert by_set[("m", "full", "hybrid")]["official_scorer_accuracy"] == 0.5  # "Man" still right against "Man"
