"""`audioreason compare`: two scored runs (hand-written outputs scored by `audioreason score`, and hand-written
scored folders) with hand-computed paired differences, flipped items and McNemar p-values."""

import json

import pytest
from statsmodels.stats.contingency_tables import mcnemar

from audioreason.analysis import uncertainty as U
from audioreason.analysis.compare import compare_runs, format_comparison
from audioreason.cli import main
from audioreason.data.mmar import demo_metadata, write_raw_folder
from audioreason.evaluation.score import ScoreOptions, score_run
from audioreason.inference.prompts import get_template

ITEMS = demo_metadata()[:8]


def scored_run(root, name, model, right, ids):
    """A run of ``model`` on the items ``ids`` (indices), answering right on ``right``, scored for accuracy."""
    raw = root / "raw"
    if not raw.exists():
        write_raw_folder(ITEMS, raw)
    run_dir = root / name
    run_dir.mkdir()
    tpl = get_template("aria_cot")
    records = []
    for index in ids:
        item = ITEMS[index]
        choice = item["answer"] if index in right else next(c for c in item["choices"] if c and c != item["answer"])
        records.append(
            {
                "key": json.dumps([model, "full", f"{tpl.name}@{tpl.hash}", item["id"]]),
                "id": item["id"],
                "index": index,
                "model": model,
                "adapter": "hand",
                "condition": "full",
                "template": tpl.to_dict(),
                "output": f"[ANSWER]\n{choice}",
                "error": None,
            }
        )
    (run_dir / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run_dir / "run.json").write_text(
        json.dumps(
            {
                "config": {
                    "model": model,
                    "benchmark": "mmar",
                    "data": str(raw),
                    "limit": None,
                    "conditions": ["full"],
                    "templates": ["aria_cot"],
                },
                "models": {"main": {"name": model, "adapter": "hand"}},
                "status": "finished",
            }
        )
    )
    score_run(run_dir, ScoreOptions(scorers=["accuracy"], progress=False))
    return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    # A answers items 0-7, right on 0-5; B answers items 0-6 (not 7), right on 0 and 6.
    a = scored_run(root, "a", "model-a", right={0, 1, 2, 3, 4, 5}, ids=range(8))
    b = scored_run(root, "b", "model-b", right={0, 6}, ids=range(7))
    return a, b


def test_accuracy_paired_difference_mcnemar_and_flips_by_hand(runs):
    a, b = runs
    result = compare_runs(a, b)
    (acc,) = [c for c in result["comparisons"] if c["headline"] == "accuracy (aria)"]
    # Shared: items 0-6. A right on 0-5 (6/7), B on 0 and 6 (2/7): A - B = 4/7.
    assert (acc["n_shared"], acc["only_a"], acc["only_b"]) == (7, 1, 0)
    assert acc["a"] == pytest.approx(6 / 7) and acc["b"] == pytest.approx(2 / 7)
    assert acc["paired"]["difference"] == pytest.approx(4 / 7)
    ids = [it["id"] for it in ITEMS]
    assert acc["flips"] == {"right_to_wrong": ids[1:6], "wrong_to_right": [ids[6]]}
    # McNemar exact: b = 5, c = 1: p = 2 (C(6,0) + C(6,1)) / 2^6 = 14/64
    assert acc["mcnemar"]["b"] == 5 and acc["mcnemar"]["c"] == 1
    assert acc["mcnemar"]["p_value"] == pytest.approx(14 / 64)
    assert acc["mcnemar"]["p_value"] == pytest.approx(mcnemar([[1, 5], [1, 0]], exact=True).pvalue)
    # The interval is the paired bootstrap of the per-item verdicts, in A's item order
    va = [1, 1, 1, 1, 1, 1, 0]
    vb = [1, 0, 0, 0, 0, 0, 1]
    assert acc["paired"] == U.paired_difference(va, vb)
    assert acc["paired"]["ci95"][0] < 4 / 7 < acc["paired"]["ci95"][1]
    assert result["benchmark"] == "mmar" and result["a"]["model"] == "model-a"
    table = format_comparison(result)
    assert "accuracy: accuracy (aria)" in table and "5/1 p=0.2188" in table and "+0.5714" in table


def test_the_command_writes_the_comparison(runs, tmp_path, capsys):
    a, b = runs
    out = tmp_path / "cmp.json"
    assert main(["compare", str(a), str(b), "--out", str(out), "--resamples", "500", "--seed", "3"]) == 0
    written = json.loads(out.read_text())
    (acc,) = [c for c in written["comparisons"] if c["headline"] == "accuracy (aria)"]
    assert written["options"] == {"confidence": 0.95, "resamples": 500, "seed": 3}
    assert acc["paired"]["resamples"] == 500 and acc["paired"]["seed"] == 3
    assert "5 right->wrong, 1 wrong->right" in capsys.readouterr().out


def test_usage_errors_are_one_line_exit_2(runs, tmp_path, capsys):
    a, _ = runs
    with pytest.raises(SystemExit) as err:
        main(["compare", str(a), str(tmp_path)])
    assert err.value.code == 2
    message = capsys.readouterr().err
    assert "is not a scored run" in message and len(message.strip().splitlines()) == 1
    other = scored_run(tmp_path, "c", "model-c", right=set(), ids=[7])  # only the item B lacks
    b = a.parent / "b"
    with pytest.raises(SystemExit) as err:
        main(["compare", str(b), str(other)])
    assert err.value.code == 2 and "share no scored item" in capsys.readouterr().err


def hand_scored(folder, rows):
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"run": {"model": folder.name, "benchmark": "mmar"}}))
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_a_mean_headline_paired_difference_by_hand(tmp_path):
    def row(i, m2, rubric_score, correct):
        return {
            "key": str(i),
            "id": f"item{i}",
            "model": "m",
            "condition": "full",
            "template": "aria_cot",
            "aria": {"M2": m2},
            "mmar_rubrics": {"status": "judged", "score": rubric_score, "correct": correct},
        }

    a = hand_scored(
        tmp_path / "A",
        [row(0, 0.2, 0.4, True), row(1, 0.4, None, True), row(2, 0.6, 0.8, True), row(3, 0.8, 0.0, False)],
    )
    b = hand_scored(
        tmp_path / "B",
        [row(0, 0.1, 0.6, True), row(1, 0.4, 0.2, True), row(2, 0.3, 0.8, True), row(3, 1.2, 0.0, False)],
    )  # 1.2: clipped to 1, as ARIA's mean clips it
    result = {(c["scorer"], c["headline"]): c for c in compare_runs(a, b)["comparisons"]}
    m2 = result[("aria", "M2")]
    # A - B = ((0.2-0.1) + 0 + (0.6-0.3) + (0.8-1.0)) / 4 = 0.05
    assert m2["paired"]["difference"] == pytest.approx(0.05) and m2["b"] == pytest.approx(0.45)
    assert m2["paired"] == U.paired_difference([0.2, 0.4, 0.6, 0.8], [0.1, 0.4, 0.3, 1.0])
    assert "mcnemar" not in m2 and "flips" not in m2
    # Rubrics: a failed item (score None) counts at 0, as the headline: A (0.4+0+0.8+0)/4, B (0.6+0.2+0.8)/4
    rubrics = result[("mmar_rubrics", "rubrics")]
    assert rubrics["paired"]["difference"] == pytest.approx(0.3 - 0.4)
    gate = result[("mmar_rubrics", "accuracy")]
    assert gate["paired"]["difference"] == 0 and "no spread" in gate["paired"]["unavailable"]
    assert gate["mcnemar"] == {"b": 0, "c": 0, "p_value": 1.0, "test": "McNemar exact (two-sided binomial)"}


def test_an_out_that_is_a_run_folders_own_file_is_refused_and_nothing_written(runs, tmp_path, capsys):
    a, b = runs
    before = {p: p.read_bytes() for p in (a / "results.json", b / "items.jsonl")}
    for out in (
        a / "results.json",
        b.parent / "a" / ".." / "b" / "items.jsonl",
        a / "run.lock",
        a / "shards" / "rank-0.jsonl",
    ):
        with pytest.raises(SystemExit) as err:
            main(["compare", str(a), str(b), "--out", str(out), "--resamples", "100"])
        message = capsys.readouterr().err
        assert err.value.code == 2 and len(message.strip().splitlines()) == 1
        assert "a run folder's own file; write the comparison elsewhere" in message and str(out) in message
    assert {p: p.read_bytes() for p in before} == before
    assert not (a / "run.lock").exists() and not (a / "shards").exists()
    link = tmp_path / "cmp.json"  # a link to a run's own file is that file
    link.symlink_to(a / "results.json")
    with pytest.raises(SystemExit) as err:
        main(["compare", str(a), str(b), "--out", str(link), "--resamples", "100"])
    assert err.value.code == 2 and "is results.json of RUN_A" in capsys.readouterr().err
    beside = a / "vs-b.json"  # any other name inside a run folder is the user's
    assert main(["compare", str(a), str(b), "--out", str(beside), "--resamples", "100"]) == 0
    assert json.loads(beside.read_text())["benchmark"] == "mmar"
    beside.unlink()


def test_an_items_row_without_its_condition_is_a_one_line_data_error(tmp_path, capsys):
    row = {
        "key": "0",
        "id": "item0",
        "model": "m",
        "condition": "full",
        "template": "aria_cot",
        "mmar_rubrics": {"status": "judged", "score": 0.4, "correct": True},
    }
    a = hand_scored(tmp_path / "A", [row])
    b = hand_scored(tmp_path / "B", [row, {k: v for k, v in row.items() if k != "condition"}])
    with pytest.raises(SystemExit) as err:
        main(["compare", str(a), str(b)])
    message = capsys.readouterr().err.strip()
    assert err.value.code == 1 and len(message.splitlines()) == 1
    assert message.startswith(f"audioreason compare: error: {b / 'items.jsonl'}: line 2: no 'condition' (each row")
    (b / "items.jsonl").write_text(json.dumps({**row, "template": ["aria_cot"]}) + "\n")
    with pytest.raises(SystemExit):
        main(["compare", str(a), str(b)])
    assert "line 1: 'template' is a list, not a string" in capsys.readouterr().err


def test_a_run_whose_lock_is_held_is_compared_with_a_note(runs, tmp_path, capsys):
    import subprocess
    import sys

    from audioreason.inference.processes import RunLock

    a, b = runs
    out = tmp_path / "cmp.json"
    lock = RunLock(b).acquire()  # this live process holds B, as a run still writing it would
    try:
        holder = lock.read()
        assert main(["compare", str(a), str(b), "--out", str(out), "--resamples", "100"]) == 0
    finally:
        lock.release()
    note = (
        f"RUN_B ({b}) is held by a run that may still be writing it (pid {holder['pid']} on host "
        f"{holder['host']!r}, started {holder['started']}): its results.json may not cover the outputs written "
        "since; compare again after that run has finished and the folder is scored again"
    )
    printed = capsys.readouterr().out
    assert f"note: {note}" in printed and holder["command"] not in printed  # a command line may carry a secret
    assert json.loads(out.read_text())["notes"] == [note]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (b / "run.lock").write_text(json.dumps({**holder, "pid": int(dead.stdout), "process_start": None}))
    try:  # a stale lock (its holder gone) is no live run: no note
        assert main(["compare", str(a), str(b), "--out", str(out), "--resamples", "100"]) == 0
    finally:
        (b / "run.lock").unlink()
    assert json.loads(out.read_text())["notes"] == [] and "note:" not in capsys.readouterr().out
