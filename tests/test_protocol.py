"""The protocol fingerprint: run.json's block from the runner and from imports, results.json's scoring block and
their combination, hashes recomputed by hand; the leaderboard marking a row whose template differs;
`audioreason compare` refusing runs of different protocols (naming the field) unless --allow-protocol-diff,
and saying "protocol unknown" for a run scored before protocols were recorded."""

import hashlib
import json

import pytest

from audioreason.base.protocol import differing_fields, ids_digest, protocol_hash
from audioreason.cli import main
from audioreason.data.mmar import demo_metadata, write_raw_folder
from audioreason.evaluation.leaderboard import write_leaderboard
from audioreason.evaluation.score import ScoreOptions, score_run
from audioreason.inference import DecodingParams, Generation
from audioreason.inference.imports import ImportOptions, import_predictions
from audioreason.inference.prompts import get_template
from audioreason.inference.runner import RunConfig, run
from audioreason.version import __version__

ITEMS = demo_metadata()[:3]


class FirstChoice:
    """A text model answering every question with the letter (A): enough for the runner's records."""

    description, max_audio_s, sampling_rate, takes_audio, kind = "answers (A)", None, 16000, True, "hand"

    def __init__(self, name):
        self.name = name

    def generate(self, requests, decoding, **_):
        return [Generation(text="Answer: (A)") for _ in requests]


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    return write_raw_folder(ITEMS, tmp_path_factory.mktemp("protocol") / "mmar")


def sha12(text):
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def run_and_score(raw, out, model, template, tokens=7):
    config = RunConfig(
        model=model,
        benchmark="mmar",
        data=str(raw),
        out=str(out),
        conditions=["none"],
        templates=[template],
        decoding=DecodingParams(max_new_tokens=tokens),
        progress=False,
    )
    run(config, {"main": FirstChoice(model)})
    return score_run(out, ScoreOptions(scorers=["accuracy"], progress=False))


@pytest.fixture(scope="module")
def scored(raw, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    runs = {}
    for folder, model, template, tokens in (
        ("a", "model-a", "plain", 7),
        ("b", "model-b", "plain", 7),
        ("c", "model-c", "aria_cot", 7),
        ("d", "model-d", "plain", 9),
    ):
        runs[folder] = (root / folder, run_and_score(raw, root / folder, model, template, tokens))
    return root, runs


def test_the_hash_is_the_sha256_of_the_canonical_json_by_hand():
    block = {"b": [1, "é"], "a": {"y": None, "x": 0.5}}
    assert protocol_hash(block) == sha12('{"a":{"x":0.5,"y":null},"b":[1,"é"]}')
    assert ids_digest(["b", "a", 3]) == {"n": 3, "sha256": hashlib.sha256(b"3\na\nb").hexdigest()}
    assert differing_fields({"a": {"x": 1, "y": [1]}, "b": 2}, {"a": {"x": 1, "y": [2]}, "c": 2}) == ["a.y", "b", "c"]


def test_a_run_records_its_protocol_in_run_json(scored, raw):
    root, runs = scored
    run_file = json.loads((runs["a"][0] / "run.json").read_text())
    block = run_file["protocol"]
    meta = hashlib.sha256((raw / "MMAR-meta.jsonl").read_bytes()).hexdigest()
    ids = "\n".join(sorted(str(it["id"]) for it in ITEMS))
    assert block == {
        "benchmark": {
            "name": "mmar",
            "config": None,
            "metadata": {"MMAR-meta.jsonl": meta},
            "metadata_unavailable": None,
        },
        "items": {"n": 3, "sha256": hashlib.sha256(ids.encode()).hexdigest()},
        "templates": [{"name": "plain", "hash": get_template("plain").hash}],
        "conditions": ["none"],
        "decoding": DecodingParams(max_new_tokens=7).to_dict(),
        "text_backbone": None,
        "source": "audioreason run",
        "audioreason": __version__,
    }
    assert "model-a" not in json.dumps(block)  # the model under test is not part of the protocol
    canonical = json.dumps(block, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert run_file["protocol_hash"] == sha12(canonical)


def test_results_json_combines_the_run_and_scoring_blocks(scored):
    root, runs = scored
    folder, results = runs["a"]
    protocol = results["protocol"]
    assert protocol["run"] == json.loads((folder / "run.json").read_text())["protocol"]
    scoring = protocol["scoring"]
    assert scoring["scorers"] == ["accuracy"] and scoring["judges"] == {} and scoring["backbones"] is None
    assert scoring["extraction"] == {"option": "auto", "rules": {"plain": ["official_slot"]}}
    assert scoring["items"] == ids_digest([it["id"] for it in ITEMS]) and scoring["audioreason"] == __version__
    both = json.dumps(
        {"run": protocol["run"], "scoring": scoring}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert protocol["hash"] == sha12(both) and protocol["scoring_hash"] == protocol_hash(scoring)
    # Another model under the same protocol has the same hash; another template does not.
    assert runs["b"][1]["protocol"]["hash"] == protocol["hash"]
    assert runs["c"][1]["protocol"]["hash"] != protocol["hash"]


def test_the_leaderboard_marks_the_row_whose_template_differs(scored):
    root, runs = scored
    summary = write_leaderboard(
        root, [{"folder": f, "model": runs[f][1]["run"]["model"], "benchmark": "mmar"} for f in ("a", "b", "c")]
    )
    board = json.loads((root / summary["json"]).read_text())
    by_model = {}
    for row in board["rows"]:
        by_model.setdefault(row["model"], set()).add((row["protocol"], tuple(row["protocol_differs"])))
    same = runs["a"][1]["protocol"]["hash"]
    assert by_model["model-a"] == by_model["model-b"] == {(same, ())}
    differs = ("run.templates", "scoring.extraction.rules.aria_cot", "scoring.extraction.rules.plain")
    assert by_model["model-c"] == {(runs["c"][1]["protocol"]["hash"], differs)}
    assert set(board["protocols"]) == {same, runs["c"][1]["protocol"]["hash"]}
    markdown = (root / summary["markdown"]).read_text()
    assert f"| {same} |" in markdown and f"(differs: {', '.join(differs)}) |" in markdown


def test_compare_refuses_different_protocols_naming_the_field(scored, tmp_path, capsys):
    root, runs = scored
    out = tmp_path / "cmp.json"
    with pytest.raises(SystemExit) as stop:
        main(["compare", str(runs["a"][0]), str(runs["d"][0]), "--out", str(out)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "different protocols (run.decoding.max_new_tokens differ)" in err
    assert "--allow-protocol-diff" in err and not out.exists()  # nothing written on a refusal
    assert main(["compare", str(runs["a"][0]), str(runs["d"][0]), "--allow-protocol-diff", "--out", str(out)]) == 0
    assert "compared as asked: run.decoding.max_new_tokens" in capsys.readouterr().out
    written = json.loads(out.read_text())["protocol"]
    assert written["same"] is False and written["differs"] == ["run.decoding.max_new_tokens"]
    assert main(["compare", str(runs["a"][0]), str(runs["b"][0])]) == 0  # only the model differs
    assert f"protocol: the same ({runs['a'][1]['protocol']['hash']})" in capsys.readouterr().out


def test_a_run_scored_before_protocols_is_protocol_unknown_never_refused(scored, tmp_path, capsys):
    root, runs = scored
    old = tmp_path / "old"
    old.mkdir()
    results = json.loads((runs["c"][0] / "results.json").read_text())
    del results["protocol"]  # as `audioreason score` wrote it before this change
    (old / "results.json").write_text(json.dumps(results))
    (old / "items.jsonl").write_text((runs["c"][0] / "items.jsonl").read_text())
    assert main(["compare", str(runs["c"][0]), str(old)]) == 0
    assert "protocol unknown for B: not checked" in capsys.readouterr().out
    summary = write_leaderboard(tmp_path, [{"folder": "old", "model": "old", "benchmark": "mmar"}])
    board = json.loads((tmp_path / summary["json"]).read_text())
    assert {(r["protocol"], r["protocol_differs"]) for r in board["rows"]} == {(None, None)}
    assert "| protocol unknown |" in (tmp_path / summary["markdown"]).read_text()


def test_a_run_json_without_a_block_scores_as_protocol_unknown(scored, tmp_path):
    root, runs = scored
    folder = tmp_path / "old-run"
    folder.mkdir()
    run_file = json.loads((runs["a"][0] / "run.json").read_text())
    del run_file["protocol"], run_file["protocol_hash"]
    (folder / "run.json").write_text(json.dumps(run_file))
    (folder / "outputs.jsonl").write_text((runs["a"][0] / "outputs.jsonl").read_text())
    protocol = score_run(folder, ScoreOptions(scorers=["accuracy"], progress=False))["protocol"]
    assert protocol["hash"] is None and protocol["run"] is None and protocol["unknown"].startswith("protocol unknown")
    assert protocol["scoring_hash"] == runs["a"][1]["protocol"]["scoring_hash"]


def test_an_import_records_its_protocol(raw, tmp_path):
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text("".join(json.dumps({"id": it["id"], "output": "(A)"}) + "\n" for it in ITEMS[:2]))
    summary = import_predictions(
        ImportOptions(
            fmt="jsonl",
            file=str(predictions),
            benchmark="mmar",
            data=str(raw),
            out=str(tmp_path / "imported"),
            model="elsewhere",
        )
    )
    block = summary["protocol"]
    assert block["source"] == "import (jsonl)" and block["decoding"] is None
    assert block["templates"] == [{"name": "external", "hash": "external"}] and block["conditions"] == ["full"]
    assert block["items"] == ids_digest([it["id"] for it in ITEMS[:2]])
    assert summary["protocol_hash"] == protocol_hash(block)
    assert json.loads((tmp_path / "imported" / "run.json").read_text())["protocol"] == block


def test_a_judged_score_records_its_judge_and_only_the_judge_differs_across_judges(tmp_path):
    from judge_server import running_server
    from test_score_results import SCRIPT, build_hand_run

    from audioreason.evaluation.score import JudgeOptions
    from audioreason.scorers.mmar_rubrics import scorer as mmar

    steps = SCRIPT["scenarios"]["rubric-judge"]
    run_dir = build_hand_run(tmp_path)
    with running_server({"scenarios": {"judge-x": steps, "judge-y": steps}}, tmp_path / "server") as server:
        scored = {
            name: score_run(
                run_dir,
                ScoreOptions(
                    scorers=["mmar_rubrics"],
                    progress=False,
                    out=str(tmp_path / name),
                    judge=JudgeOptions(model=name, base_url=server.base_url, api_key_env="PROTOCOL_TEST_KEY"),
                ),
            )
            for name in ("judge-x", "judge-y")
        }
    wording = "\n\x00\n".join((mmar.SYSTEM_PROMPT, mmar.USER_TEMPLATE, mmar.CRITERION_TEMPLATE))
    block = scored["judge-x"]["protocol"]["scoring"]["judges"]["mmar_rubrics"]
    assert block == {
        "model": "judge-x",
        "endpoint": "openai-compatible (local server)",
        "temperature": 0.0,
        "seed": 42,
        "sampling": {},
        "raters": 5,
        "aggregation": "trimmed_mean",
        "prompt_sha256": hashlib.sha256(wording.encode()).hexdigest(),
        "structured": False,
        "rubric_protocol": "instance",
        "compat": False,
    }
    assert server.base_url.split("//")[1] not in json.dumps(block)  # the server's address is not the protocol
    x, y = (scored[name]["protocol"] for name in ("judge-x", "judge-y"))
    assert differing_fields(x["scoring"], y["scoring"]) == ["judges.mmar_rubrics.model"]
    assert x["hash"] is None and x["scoring_hash"] != y["scoring_hash"]  # the hand-made run.json has no block
