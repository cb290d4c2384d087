"""`audioreason construct` against a scripted OpenAI-compatible server that plays every role (AudioSpan,
arXiv:2608.26431, §4 and App. B.1-B.4): ``judge_server.py`` answers each request through ``construct_player``,
which answers from the ground truth of a synthesized recording and steers each candidate through the gates by
the plan written in its question ("plan-keep", "plan-blind", ...). Checked with exact numbers: each candidate's
outcome, the gate table (Table 5), the rejections and the critic's lessons, the calls per role against the
server's log, the items the AudioSpan builder loads, byte-identical reruns, resuming after kill -9 without
paying a request twice, and the one-line errors (a refused key, the cost budget) and counted junk replies."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from construct_player import CORRECT
from judge_server import running_server

from audioreason.cli import main

ROLES = ("asr", "segmenter", "captioner", "generator", "verifier", "solver", "critic")
PLANS = {
    "perception": ["keep", "badevidence"],
    "understanding": ["blind", "keep"],
    "reasoning": ["text", "unsolvable"],
}
OUTPUTS = (
    "metadata/native.jsonl",
    "metadata/anchor.jsonl",
    "metadata/edits.jsonl",
    "metadata/recordings.jsonl",
    "candidates.jsonl",
    "rejected.jsonl",
    "memory_bank.jsonl",
    "captions/rec.json",
    "audio/anchored/rec.wav",
)


# ------------------------------------------------------------------------------------------------ helpers
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _script(source: dict, **config) -> dict:
    play = {
        "play": "construct_player",
        "config": {
            "recordings": [{"wav": str(source["wav"]), "truth": str(source["truth"])}],
            "native": PLANS,
            "anchor": {"understanding": "keep", "reasoning": "keep"},
            **config,
        },
    }
    return {"scenarios": {"*": [play]}}


def _roles_file(folder: Path, server) -> Path:
    roles = {r: {"model": f"play-{r}", "base_url": server.base_url, "api_key_env": None} for r in ROLES}
    path = folder / "ROLES.yaml"
    path.write_text(yaml.safe_dump({"roles": roles}), encoding="utf-8")
    return path


def _args(source: dict, bench: Path, roles: Path, *extra: str) -> list[str]:
    common = ["--per-level", "2", "--rollouts", "3", "--no-progress"]
    return ["construct", str(source["recs"]), "--out", str(bench), "--roles", str(roles), *common, *extra]


def _construct(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``audioreason ARGV`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    return code, out.getvalue(), err.getvalue()


def _stage(entry: dict) -> str:
    return entry["params"]["response_format"]["json_schema"]["name"]


def _prompt(entry: dict) -> str:
    content = next(m["content"] for m in entry["messages"] if m["role"] == "user")
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def _tag(prompt: str) -> str:
    """The candidate a generator prompt is for, from the plan in its direction ("plan-keep [U2]: ...")."""
    return re.search(r"^Direction: plan-\w+ \[(\w+)\]", prompt, re.MULTILINE).group(1)


def _body(entry: dict) -> str:
    """A request as sent: model, messages (audio included), sampling and response_format."""
    canonical = json.dumps([entry["scenario"], entry["messages"], entry["params"]], sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _snapshot(bench: Path) -> dict[str, bytes]:
    return {name: (bench / name).read_bytes() for name in OUTPUTS}


# ------------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def source(tmp_path_factory) -> dict:
    from audioreason.construct.demo_audio import synthesize_recording

    folder = tmp_path_factory.mktemp("source")
    wav = folder / "recs" / "rec.wav"
    truth = synthesize_recording(wav, seed=0)
    (folder / "truth.json").write_text(json.dumps(truth), encoding="utf-8")
    # Every server of this module listens at one address, so the roles' descriptions (URL included) that
    # the items' provenance records are the same in every construction.
    return {"recs": wav.parent, "wav": wav, "truth": folder / "truth.json", "port": _free_port(), "data": truth}


@pytest.fixture(scope="module")
def run(source, tmp_path_factory) -> dict:
    """The construction, then the same command again on the finished folder."""
    folder = tmp_path_factory.mktemp("main")
    bench = folder / "bench"
    with running_server(_script(source), folder / "server", port=source["port"]) as server:
        roles = _roles_file(folder, server)
        first = _construct(_args(source, bench, roles))
        log = server.requests()
        files = _snapshot(bench)
        record = json.loads((bench / "construction.json").read_text(encoding="utf-8"))
        again = _construct(_args(source, bench, roles))
        log_after = server.requests()
    return {
        "bench": bench,
        "first": first,
        "log": log,
        "files": files,
        "record": record,
        "again": again,
        "log_after": log_after,
        "record_after": json.loads((bench / "construction.json").read_text(encoding="utf-8")),
    }


# ------------------------------------------------------------------------------------------------ the run
def test_every_candidate_ends_as_its_plan(run):
    assert run["first"][0] == 0, run["first"][2]
    candidates = _rows(run["bench"] / "candidates.jsonl")
    assert [(c["id"], c["order"], c["outcome"], c["rejected_at"]) for c in candidates] == [
        ("rec-native-P1", 0, "kept", None),
        ("rec-native-P2", 1, "rejected", "evidence"),
        ("rec-native-U1", 2, "rejected", "blind"),
        ("rec-native-U2", 3, "kept", None),
        ("rec-native-R1", 4, "rejected", "text"),
        ("rec-native-R2", 5, "rejected", "unsolvable"),
        ("rec-anchor-P", 6, "kept", None),
        ("rec-anchor-U", 7, "kept", None),
        ("rec-anchor-R", 8, "kept", None),
    ]
    native = {c["id"]: c for c in candidates if c["pipeline"] == "native"}
    for level, plans in PLANS.items():
        for k, plan in enumerate(plans):
            c = native[f"rec-native-{level[0].upper()}{k + 1}"]
            assert c["provenance"]["direction"]["direction"].startswith(f"plan-{plan} ")
            assert c["mcq"]["question"].startswith(f"plan-{plan} ")
    # Rollout k is right exactly when k < CORRECT[plan][level]; the levels stop at the first rejection.
    T, F = True, False
    assert {cid: c["gates"] for cid, c in native.items()} == {
        "rec-native-P1": {"evidence": T, "blind": [T, F, F], "text": [T, T, F], "full": [T, T, F]},
        "rec-native-P2": {"evidence": F, "blind": None, "text": None, "full": None},
        "rec-native-U1": {"evidence": T, "blind": [T, T, F], "text": None, "full": None},
        "rec-native-U2": {"evidence": T, "blind": [T, F, F], "text": [T, T, F], "full": [T, T, F]},
        "rec-native-R1": {"evidence": T, "blind": [T, F, F], "text": [T, T, T], "full": None},
        "rec-native-R2": {"evidence": T, "blind": [F, F, F], "text": [T, F, F], "full": [T, F, F]},
    }
    assert CORRECT["keep"] == {"blind": 1, "text": 2, "full": 2}  # 1/3 and 2/3 sit on the thresholds: kept
    assert [native[f"rec-native-{t}"]["evidence"] for t in ("P1", "U2", "R1")] == [
        ["s01.speech.001"],
        ["s03.speech.001"],
        ["s00.speech.001"],
    ]
    # The refuted record is the environment record P2 cites beside its speech record.
    checks = {r["id"]: r["confirmed"] for r in native["rec-native-P2"]["provenance"]["evidence_check"]}
    assert checks == {"s02.speech.001": True, "s02.env": False}
    # The last full rollout of R2 replied prose twice: a failed call, counted as a wrong answer.
    assert native["rec-native-R2"]["provenance"]["solver_failed_calls"] == {"blind": 0, "text": 0, "full": 1}
    anchor = {c["level"]: c for c in candidates if c["pipeline"] == "anchor"}
    assert anchor["perception"]["gates"] == {"evidence": None, "blind": None, "text": None, "full": None}
    for level in ("understanding", "reasoning"):
        assert anchor[level]["gates"] == {"evidence": T, "blind": [T, F, F], "text": [T, T, F], "full": [T, T, F]}


def test_the_gate_table_is_table_5_of_the_run(run):
    table = run["record"]["gate_table"]
    assert table["native"]["all"]["counts"] == {
        "candidates": 6,
        "kept": 2,
        "evidence_checked": 6,
        "evidence_passed": 5,
        "solver_inputs": 5,
        "blind_rejected": 1,
        "text_rejected": 1,
        "unsolvable": 1,
        "solver_passed": 2,
        "early_inputs": 2,  # solver inputs by order: P1 U1 | U2 R1 R2
        "early_passed": 1,
        "late_inputs": 3,
        "late_passed": 1,
        "early_candidates": 3,  # P1 P2 U1 | U2 R1 R2
        "early_kept": 1,
        "late_candidates": 3,
        "late_kept": 1,
    }
    shares = {column: table["native"][column]["shares"] for column in ("P", "U", "R", "all")}
    assert shares["all"] == {
        "evidence_pass": 5 / 6,
        "blind_rejection": 1 / 5,
        "text_rejection": 1 / 5,
        "unsolvable": 1 / 5,
        "survival": 1 / 3,
        "solver_pass": 2 / 5,
        "solver_pass_early": 1 / 2,
        "solver_pass_late": 1 / 3,
        "survival_early": 1 / 3,
        "survival_late": 1 / 3,
    }
    assert [shares[c]["evidence_pass"] for c in "PUR"] == [0.5, 1.0, 1.0]
    assert [shares[c]["blind_rejection"] for c in "PUR"] == [0.0, 0.5, 0.0]
    assert [shares[c]["text_rejection"] for c in "PUR"] == [0.0, 0.0, 0.5]
    assert [shares[c]["unsolvable"] for c in "PUR"] == [0.0, 0.0, 0.5]
    assert [shares[c]["survival"] for c in "PUR"] == [0.5, 0.5, 0.0]
    assert [shares[c]["solver_pass_early"] for c in "PUR"] == [None, 0.0, 0.0]  # P: one input, and it is late
    assert [shares[c]["solver_pass_late"] for c in "PUR"] == [1.0, 1.0, 0.0]
    anchor = table["anchor"]
    assert anchor["P"]["shares"]["evidence_pass"] is None and anchor["P"]["shares"]["survival"] == 1.0
    assert anchor["all"]["counts"] == {
        "candidates": 3,
        "kept": 3,
        "evidence_checked": 2,
        "evidence_passed": 2,
        "solver_inputs": 2,
        "blind_rejected": 0,
        "text_rejected": 0,
        "unsolvable": 0,
        "solver_passed": 2,
        "early_inputs": 1,
        "early_passed": 1,
        "late_inputs": 1,
        "late_passed": 1,
        "early_candidates": 1,
        "early_kept": 1,
        "late_candidates": 2,
        "late_kept": 2,
    }
    printed = [" ".join(line.split()) for line in run["first"][1].splitlines()]
    assert "Evidence pass 50 (1/2) 100 (2/2) 100 (2/2) 83 (5/6)" in printed
    assert "Survival 50 (1/2) 50 (1/2) 0 (0/2) 33 (2/6)" in printed
    assert "Solver pass, early - 0 (0/1) 0 (0/1) 50 (1/2)" in printed
    assert run["record"]["counts"]["native"] == {
        "candidates": 6,
        "kept": 2,
        "rejected_at": {"evidence": 1, "blind": 1, "text": 1, "unsolvable": 1},
        "items": 4,
    }
    assert run["record"]["counts"]["anchor"] == {"candidates": 3, "kept": 3, "rejected_at": {}, "items": 3}


def test_rejections_list_gate_and_reason_and_the_critic_lessons_steer_later_prompts(run):
    rejected = _rows(run["bench"] / "rejected.jsonl")
    assert [(r["id"], r["rejected_at"], r["reason"]) for r in rejected] == [
        ("rec-native-P2", "evidence", "a cited evidence record was not confirmed against the audio"),
        ("rec-native-U1", "blind", "the blind solver was correct in 2/3 rollouts (more than 1/3)"),
        ("rec-native-R1", "text", "the text-only solver was correct in 3/3 rollouts (more than 2/3)"),
        ("rec-native-R2", "unsolvable", "the full solver was correct in only 1/3 rollouts (needs more than 1/2)"),
    ]
    lessons = _rows(run["bench"] / "memory_bank.jsonl")
    assert [(x["pipeline"], x["level"], x["shortcut"], x["candidate_id"], x["order"]) for x in lessons] == [
        ("native", "understanding", "specificity bias", "rec-native-U1", 2),
        ("native", "reasoning", "transcript sufficiency", "rec-native-R1", 4),
    ]
    critics = {r["id"]: r["critic"] for r in rejected}
    assert critics["rec-native-P2"] is None and critics["rec-native-R2"] is None  # no shortcut gate: no critic
    for x in lessons:
        assert critics[x["candidate_id"]] == {"shortcut": x["shortcut"], "lesson": x["lesson"]}
    assert run["record"]["memory_bank"] == {"native": {"specificity bias": 1, "transcript sufficiency": 1}}
    # A question's prompt carries the lessons of its level from candidates before it, and only those.
    questions = {_tag(_prompt(e)): _prompt(e) for e in run["log"] if _stage(e) == "question"}
    assert sorted(questions) == ["P1", "P2", "R1", "R2", "U1", "U2"]
    for tag in ("P1", "P2", "U1", "R1"):
        assert "Lessons from earlier rejected questions" not in questions[tag]
    u2, r2 = questions["U2"], questions["R2"]
    assert f"- [specificity bias] {lessons[0]['lesson']}" in u2 and "transcript sufficiency" not in u2
    assert f"- [transcript sufficiency] {lessons[1]['lesson']}" in r2 and "specificity bias" not in r2


def test_calls_per_role_match_the_server_log(run):
    by_model = Counter(e["scenario"] for e in run["log"])
    made = run["record"]["sessions"][0]["calls_made"]
    assert made == {role: by_model[f"play-{role}"] for role in made}
    # Hand count: 2 ASR windows; segments + dependencies; 5 segments captioned; generator 3 directions,
    # 6 questions, 3 rubric requests (P1's re-asked once), anchor selection and chain; 5 distinct records
    # verified (a record cited twice is served from the cache); solver 9 + 3 + 9 + 6 + (9 + 1 re-ask) for the
    # native candidates and 9 + 9 for anchor U and R; 2 critic calls.
    assert made == {
        "segmenter": 2,
        "captioner": 5,
        "generator": 14,
        "verifier": 5,
        "solver": 55,
        "critic": 2,
        "asr": 2,
    }
    assert (
        "model calls made in this session: segmenter 2, captioner 5, generator 14, verifier 5, solver 55, "
        "critic 2, asr 2 (85 in all)" in run["first"][1]
    )
    assert len(run["log"]) == 85
    candidates = _rows(run["bench"] / "candidates.jsonl")
    checked = {r["id"] for c in candidates for r in c["provenance"].get("evidence_check", [])}
    assert len(checked) == made["verifier"]  # each distinct record asked once, whoever cites it
    stages = Counter(_stage(e) for e in run["log"])
    assert stages == {
        "transcript": 2,
        "segments": 1,
        "acoustic": 5,
        "dependencies": 1,
        "directions": 3,
        "question": 6,
        "verify": 5,
        "solve_blind": 21,
        "solve_text": 18,
        "solve_full": 16,
        "critic": 2,
        "rubric": 3,
        "anchor_segments": 1,
        "chain_questions": 1,
    }
    # Junk: the prose reply is asked again once, then the call is counted and listed.
    assert run["record"]["call_failures"] == [
        {
            "role": "solver",
            "stage": "solve_full",
            "item": "rec-native-R2",
            "rollout": 2,
            "status": "invalid",
            "error": "no JSON found in the reply",
        }
    ]
    assert run["record"]["stages"]["solver"]["solve_full"] == {"asked": 15, "ok": 14, "failed": 1}
    assert run["record"]["stages"]["generator"]["rubric"] == {"asked": 2, "ok": 2}
    usage = run["record"]["sessions"][0]["usage"]
    assert (usage["solver"]["reasks"], usage["generator"]["reasks"], usage["critic"]["reasks"]) == (1, 1, 0)
    reasked = [e for e in run["log"] if any(m["role"] == "assistant" for m in e["messages"])]
    assert [(_stage(e), e["params"]["seed"]) for e in reasked] == [("rubric", 0), ("solve_full", 2)]
    assert all(e["messages"][-1]["content"].startswith("Your previous reply could not be used") for e in reasked)
    # Every request asked for its stage's JSON Schema, the solver sampled (seed = rollout), the rest greedily.
    assert all(e["params"]["response_format"]["json_schema"]["strict"] for e in run["log"])
    temperatures = {(e["scenario"], e["params"]["temperature"]) for e in run["log"]}
    assert temperatures == {(f"play-{r}", 1.0 if r == "solver" else 0.0) for r in ROLES}


def test_the_builder_loads_the_kept_items(run, tmp_path):
    from audioreason.data import AudioSpanBuilder

    bench = run["bench"]
    builder = AudioSpanBuilder(data_dir=str(bench), cache_dir=str(tmp_path))
    ds = builder.build()
    items = {it["id"]: it for it in ds.remove_columns("audio")}
    assert sorted(items) == sorted(
        [
            "rec-native-P1-mcq",
            "rec-native-P1-oeq",
            "rec-native-U2-mcq",
            "rec-native-U2-oeq",
            "rec-anchor-P",
            "rec-anchor-U",
            "rec-anchor-R",
        ]
    )
    caption = json.loads((bench / "captions" / "rec.json").read_text(encoding="utf-8"))
    records = {e["id"]: e for e in caption["evidence"]}
    candidates = {c["id"]: c for c in _rows(bench / "candidates.jsonl")}
    for cid, level, dimension in (
        ("rec-native-P1", "perception", "recognition"),
        ("rec-native-U2", "understanding", "tracking"),
    ):
        mcq, oeq = items[f"{cid}-mcq"], items[f"{cid}-oeq"]
        cited = candidates[cid]["evidence"]
        assert (mcq["subset"], oeq["subset"]) == ("native_mcq", "native_oeq")
        assert mcq["pair_id"] == oeq["pair_id"] == cid
        assert (
            (mcq["cognitive_level"], mcq["dimension"])
            == (oeq["cognitive_level"], oeq["dimension"])
            == (level, dimension)
        )
        # The correct option is the cited speech record's content (the generator made it the longest).
        assert mcq["answer"].startswith(records[cited[0]]["content"][:40])
        assert mcq["choices"][mcq["answer_index"]] == mcq["answer"] and len(mcq["choices"]) == 4
        assert oeq["reference_answer"].startswith(mcq["answer"])
        span = [records[cited[0]]["start"], records[cited[0]]["end"]]
        assert [c["time_range"] for c in oeq["rubric"]] == [span, span]
        assert [(c["importance"], c["localization"]) for c in oeq["rubric"]] == [
            ("essential", False),
            ("supporting", True),
        ]
        assert json.loads(mcq["extra"])["evidence"] == cited
        assert mcq["audio_path"] == "audio/original/rec.wav"
    chain = sorted((it for it in items.values() if it["chain_id"] == "rec"), key=lambda it: it["link_position"])
    assert [(c["id"], c["link_position"], c["cognitive_level"]) for c in chain] == [
        ("rec-anchor-P", 1, "perception"),
        ("rec-anchor-U", 2, "understanding"),
        ("rec-anchor-R", 3, "reasoning"),
    ]
    manifest = _rows(bench / "metadata" / "edits.jsonl")
    assert len(manifest) == 1 and manifest[0]["recording_id"] == "rec"  # one manifest per anchored recording
    for item in chain:
        assert item["operation"] == manifest[0]["operation"] and item["audio_path"] == "audio/anchored/rec.wav"
        assert item["edit_manifest"]["operation"] == manifest[0]["operation"]
    assert chain[2]["choices"][chain[2]["answer_index"]] == chain[2]["answer"]
    assert "No clear relation" in " ".join(chain[2]["choices"])
    # The run's answer-position cycle: the four MCQs it placed (native P1, U2; anchor U, R) use A-D once each.
    placed = [
        items[i]["answer_index"] for i in ("rec-native-P1-mcq", "rec-native-U2-mcq", "rec-anchor-U", "rec-anchor-R")
    ]
    assert sorted(placed) == [0, 1, 2, 3]
    # What the builder notes is the construction's own shape, never a broken item.
    kinds = Counter(issue.kind for issue in builder.report.issues)
    assert set(kinds) <= {"unmapped_field", "missing_field", "incomplete_native_set"}, builder.report.summary()
    assert {i.detail for i in builder.report.issues if i.kind == "missing_field"} <= {"language", "duration_tier"}


def test_the_demo_runs_and_scores_the_built_benchmark(run, tmp_path):
    """``construct --demo``'s last step (``score_benchmark``: run, then score) on the built folder, with a
    scripted model and judge in place of the offline cascade and judge: the numbers worked by hand."""
    from test_report_runs import ScriptedJudge, ScriptedModel

    from audioreason.apps.construct_demo import score_benchmark
    from audioreason.data import AudioSpanBuilder

    items = {it["id"]: it for it in AudioSpanBuilder(data_dir=str(run["bench"]), cache_dir=str(tmp_path)).build()}
    right = {"rec-native-P1-mcq", "rec-anchor-P", "rec-anchor-U"}  # U2's MCQ and the chain's R link wrong

    def reply(item_id, condition):
        item = items[item_id]
        if item["subset"] == "native_oeq":  # cites the time its criteria's range starts at
            start = item["rubric"][0]["time_range"][0]
            return f"At {int(start // 60):02d}:{int(start % 60):02d} {item['reference_answer']}"
        letter = "ABCD"[item["answer_index"]] if item_id in right else "ABCD"[(item["answer_index"] + 1) % 4]
        return letter  # the audiospan template asks for the letter alone

    verdicts = {
        "criteria": [
            {"index": 0, "semantic": "correct", "temporal": "none", "reason": "states the content"},
            {"index": 1, "semantic": "partial", "temporal": "correct", "reason": "vague, time in range"},
        ]
    }
    judge = ScriptedJudge(lambda prompt: json.dumps(verdicts))
    results = score_benchmark(run["bench"], tmp_path, adapter=ScriptedModel(reply), judge=judge)
    scorers = results["scorers"]
    assert all(scorers[s]["status"] == "ok" for s in ("accuracy", "anchor_chain", "audiospan_rubric"))
    chain = scorers["anchor_chain"]["results"][0]
    assert (chain["chain"]["P"], chain["chain"]["U"], chain["chain"]["R"]) == (1.0, 1.0, 0.0)
    assert chain["chain"]["chain"] == pytest.approx(2 / 3)  # one chain, (1 + 1 + 0) / 3
    assert chain["native_mcq"]["accuracy"] == pytest.approx(1 / 2)
    rubric = scorers["audiospan_rubric"]["results"][0]
    # Per OEQ: essential (w 1) semantic correct 1; supporting (w 1/2) partial with the time right (0.5 + 1) / 2.
    # Rubric = (1 + 0.5 * 0.75) / 1.5 = 11/12 for both; semantic% = (2 + 2 * 0.5) / 4.
    assert float(rubric["rubric"]) == pytest.approx(11 / 12) and float(rubric["semantic"]) == pytest.approx(3 / 4)
    assert judge.calls == 2 and (tmp_path / "cascade-run" / "results.json").exists()


def test_a_rerun_of_the_finished_construction_sends_nothing_and_changes_nothing(run):
    code, out, err = run["again"]
    assert code == 0, err
    assert run["log_after"] == run["log"]  # the server saw no request
    assert "(0 in all)" in out and "model calls made in this session: segmenter 0," in out
    assert _snapshot(run["bench"]) == run["files"]
    sessions = run["record_after"]["sessions"]
    assert len(sessions) == 2 and set(sessions[1]["calls_made"].values()) == {0}
    assert run["record_after"]["gate_table"] == run["record"]["gate_table"]
    assert run["record_after"]["call_failures"] == run["record"]["call_failures"]  # served again, still counted


def test_a_second_construction_from_scratch_is_byte_identical(run, source, tmp_path):
    bench = tmp_path / "bench"
    with running_server(_script(source), tmp_path / "server", port=source["port"]) as server:
        code, _, err = _construct(_args(source, bench, _roles_file(tmp_path, server)))
        log = server.requests()
    assert code == 0, err
    assert _snapshot(bench) == run["files"]
    assert sorted(map(_body, log)) == sorted(map(_body, run["log"]))


def test_a_construction_killed_mid_stage_resumes_without_paying_twice(run, source, tmp_path):
    bench, flag = tmp_path / "bench", tmp_path / "hold"
    flag.touch()  # while it exists, the server holds the generator's request for question U2
    script = _script(source, hang={"stage": "question", "tag": "U2", "while_file": str(flag)})
    with running_server(script, tmp_path / "server", port=source["port"]) as server:
        roles = _roles_file(tmp_path, server)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        process = subprocess.Popen(
            [sys.executable, "-m", "audioreason", *_args(source, bench, roles)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            deadline = time.monotonic() + 60
            while "Direction: plan-keep [U2]" not in server.log_text():  # the held request has come
                assert process.poll() is None and time.monotonic() < deadline, "the construction never reached U2"
                time.sleep(0.1)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        before = server.requests()
        while "[U2]" not in _prompt(before[-1]) and time.monotonic() < deadline:  # its log line being written
            time.sleep(0.05)
            before = server.requests()
        held = before[-1]
        assert _stage(held) == "question" and "[U2]" in _prompt(held)  # nothing else was in flight
        answered = before[:-1]
        # Killed mid-stage: no metadata (nothing loads as a benchmark), the construction marked running, the
        # lesson of U1 (before the kill) stored once.
        assert not (bench / "metadata" / "native.jsonl").exists()
        assert json.loads((bench / "construction.json").read_text(encoding="utf-8"))["status"] == "running"
        assert [x["candidate_id"] for x in _rows(bench / "memory_bank.jsonl")] == ["rec-native-U1"]
        flag.unlink()
        code, out, err = _construct(_args(source, bench, roles))
        after = server.requests()[len(before) :]
    assert code == 0, err
    sent_again = {_body(e) for e in after} & {_body(e) for e in answered}
    assert not sent_again  # no request answered before the kill was sent again
    assert _body(held) in {_body(e) for e in after}  # the one never answered was
    # Together the two sessions sent exactly what an uninterrupted construction sends.
    assert Counter(map(_body, answered + after)) == Counter(map(_body, run["log"]))
    assert f"({len(after)} in all)" in out
    assert _snapshot(bench) == run["files"]


# ------------------------------------------------------------------------------------------------ bad input
def test_a_role_refusing_its_key_is_a_one_line_error_before_any_item_work(source, tmp_path):
    refused = {"status": 401, "body": {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}}
    script = _script(source)
    script["scenarios"]["play-asr"] = [refused]
    bench = tmp_path / "bench"
    with running_server(script, tmp_path / "server", port=source["port"]) as server:
        code, out, err = _construct(_args(source, bench, _roles_file(tmp_path, server)))
        log = server.requests()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("audioreason construct: error: judge play-asr at ")
    assert "the server refused a request sent without a key" in err and "HTTP 401" in err
    assert err.endswith(
        "(a configuration error: fix ROLES.yaml and run the command again; the replies already received are kept)\n"
    )
    assert [e["scenario"] for e in log] == ["play-asr"]  # the first request; nothing after it
    assert not (bench / "captions").exists() and not (bench / "metadata" / "native.jsonl").exists()
    record = json.loads((bench / "construction.json").read_text(encoding="utf-8"))
    assert record["status"] == "failed" and record["error"].startswith("JudgeUnavailable: judge play-asr")


@pytest.mark.parametrize("refusal", ["key", "unreachable"])
def test_a_late_role_whose_server_refuses_is_an_error_before_any_request(source, tmp_path, refusal):
    # The solver is first asked after a whole caption; its server is checked (GET models) before anything.
    script = {**_script(source), "refused_gets": {"/refusing/": 401}}
    bench = tmp_path / "bench"
    with running_server(script, tmp_path / "server", port=source["port"]) as server:
        roles = yaml.safe_load(_roles_file(tmp_path, server).read_text(encoding="utf-8"))
        solver = (
            f"http://127.0.0.1:{server.port}/refusing/v1" if refusal == "key" else f"http://127.0.0.1:{_free_port()}/v1"
        )
        roles["roles"]["solver"]["base_url"] = solver
        (tmp_path / "ROLES.yaml").write_text(yaml.safe_dump(roles), encoding="utf-8")
        code, out, err = _construct(_args(source, bench, tmp_path / "ROLES.yaml"))
        log = server.requests()
    assert code == 2 and out == "" and log == []  # not one chat request
    cause = {
        "key": "is unavailable: the server refused a request sent without a key (api_key_env is None): "
        'HTTP 401 to GET models: {"error": {"message": "refused GET /refusing/v1/models"}}',  # the server's words
        "unreachable": "is unavailable: cannot connect to the server: Connection error.",
    }[refusal]
    assert err.count("\n") == 1 and err.startswith(
        f"audioreason construct: error: roles.solver: judge play-solver at {solver} {cause}"
    )
    assert err.endswith(
        "(a configuration error: fix ROLES.yaml and run the command again; the replies already received are kept)\n"
    )
    assert not (bench / "captions").exists()
    record = json.loads((bench / "construction.json").read_text(encoding="utf-8"))
    assert record["status"] == "failed" and record["error"].startswith(
        "JudgeUnavailable: roles.solver: judge play-solver"
    )


def test_max_cost_stops_with_the_budget_message_and_a_rerun_continues_from_what_was_spent(source, tmp_path):
    # Every reply reports 10 prompt tokens (the server's default usage): 1.00 USD a request at these prices.
    prices = {"currency": "USD", "models": {f"play-{r}": {"prompt_per_million": 100000.0} for r in ROLES}}
    (tmp_path / "prices.json").write_text(json.dumps(prices), encoding="utf-8")
    bench = tmp_path / "bench"
    with running_server(_script(source), tmp_path / "server", port=source["port"]) as server:
        roles = _roles_file(tmp_path, server)
        budget = ["--prices", str(tmp_path / "prices.json"), "--max-cost"]
        code, out, err = _construct(_args(source, bench, roles, *budget, "1.5"))
        first = server.requests()
        code2, _, err2 = _construct(_args(source, bench, roles, *budget, "2.5"))
        second = server.requests()[len(first) :]
    # 1.00 after the first ASR window (< 1.5: the second goes out), 2.00 after the second: nothing more.
    assert code == 2 and [e["scenario"] for e in first] == ["play-asr", "play-asr"]
    assert err == (
        "audioreason construct: error: the construction has cost 2.0000 USD, reaching --max-cost "
        "1.5: no further request sent (rerun with a higher --max-cost to continue)\n"
    )
    record = json.loads((bench / "construction.json").read_text(encoding="utf-8"))
    assert record["status"] == "failed" and record["sessions"][0]["cost"]["total"] == 2.0
    # The rerun starts from the 2.00 spent: the two windows come from the cache, one request (1.00) is sent.
    assert code2 == 2 and "has cost 3.0000 USD, reaching --max-cost 2.5" in err2
    assert [(e["scenario"], _stage(e)) for e in second] == [("play-segmenter", "segments")]


def test_a_role_replying_junk_is_asked_again_then_counted_and_its_recording_listed_failed(source, tmp_path):
    bench = tmp_path / "bench"
    with running_server(_script(source, junk_roles=["segmenter"]), tmp_path / "server", port=source["port"]) as server:
        code, out, err = _construct(_args(source, bench, _roles_file(tmp_path, server)))
        log = server.requests()
    assert code == 0, err
    segmenter = [e for e in log if e["scenario"] == "play-segmenter"]
    assert len(segmenter) == 2 and segmenter[1]["messages"][-1]["content"].startswith(
        "Your previous reply could not be used: no JSON found in the reply"
    )
    record = json.loads((bench / "construction.json").read_text(encoding="utf-8"))
    assert [(f["role"], f["stage"], f["status"]) for f in record["call_failures"]] == [
        ("segmenter", "segments", "invalid")
    ]
    assert record["recordings"][0]["status"] == "failed"
    assert record["recordings"][0]["reason"].startswith("rec: caption step 'segmentation' failed")
    assert "recordings: 0 built, 0 skipped, 1 failed" in out
    assert (bench / "metadata" / "native.jsonl").read_text() == "" and not (bench / "captions" / "rec.json").exists()


def test_a_chain_broken_at_a_shortcut_gate_leaves_its_lesson_in_the_anchor_bank(source, tmp_path):
    bench = tmp_path / "bench"
    script = _script(source, anchor={"understanding": "blind", "reasoning": "keep"})
    with running_server(script, tmp_path / "server", port=source["port"]) as server:
        code, out, err = _construct(_args(source, bench, _roles_file(tmp_path, server), "--paths", "anchor"))
        log = server.requests()
    assert code == 0, err
    candidates = {c["level"]: c for c in _rows(bench / "candidates.jsonl")}
    assert sorted(candidates) == ["perception", "reasoning", "understanding"]  # --paths anchor: no native
    assert (candidates["understanding"]["rejected_at"], candidates["understanding"]["gates"]["blind"]) == (
        "blind",
        [True, True, False],
    )
    assert candidates["perception"]["rejected_at"] == "chain"
    assert candidates["perception"]["reason"] == "the chain broke: understanding at blind"
    assert candidates["reasoning"]["gates"]["full"] == [True, True, False]  # R passed its own gates
    lessons = _rows(bench / "memory_bank.jsonl")
    assert [(x["pipeline"], x["level"], x["shortcut"], x["candidate_id"]) for x in lessons] == [
        ("anchor", "understanding", "specificity bias", "rec-anchor-U")
    ]
    assert [r["id"] for r in _rows(bench / "rejected.jsonl")][:2] == ["rec-anchor-P", "rec-anchor-U"]
    # No item of a broken chain: nothing in the anchor metadata, and the anchored copy removed again.
    for name in ("anchor.jsonl", "edits.jsonl", "native.jsonl"):
        assert (bench / "metadata" / name).read_text() == ""
    assert not (bench / "audio" / "anchored" / "rec.wav").exists()
    # Blind: 3 U rollouts then no more for U; R: 9; one critic call.
    solver = Counter(_stage(e) for e in log if e["scenario"] == "play-solver")
    assert solver == {"solve_blind": 6, "solve_text": 3, "solve_full": 3}
    assert [e["scenario"] for e in log].count("play-critic") == 1
