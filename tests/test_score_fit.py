"""`audioreason score`: a scorer that does not fit the run is named with the reason and not run; a judged scorer
with no judge it can reach is unavailable with the reason (never a number, never a crash); bad arguments are
one-line errors before any work."""

import json
import socket

import pytest
from test_score_results import OUTPUTS, build_hand_run

from audioreason.cli import main
from audioreason.evaluation.score import RESULTS_FILE, JudgeOptions, ScoreOptions, score_run
from audioreason.judges import VerdictCache


@pytest.fixture(scope="module")
def hand_run(tmp_path_factory):
    return build_hand_run(tmp_path_factory.mktemp("fit"))


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory):
    full = {k: v for k, v in OUTPUTS.items() if k[0] == "full"}
    return build_hand_run(tmp_path_factory.mktemp("plain"), template="plain", outputs=full)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once the socket is closed


def test_scorers_that_do_not_fit_are_named_with_the_reason_and_not_run(plain_run, capsys):
    main(
        [
            "score",
            str(plain_run),
            "--scorers",
            "aria,audiospan_rubric,anchor_chain,text_prior_decomposition,accuracy",
            "--no-progress",
        ]
    )
    results = json.loads((plain_run / RESULTS_FILE).read_text())
    reasons = {name: s["reason"] for name, s in results["not_run"].items()}
    assert {name: s["status"] for name, s in results["not_run"].items()} == dict.fromkeys(
        ["aria", "audiospan_rubric", "anchor_chain", "text_prior_decomposition"], "not_applicable"
    )
    assert "the aria_cot template" in reasons["aria"] and "this run used plain" in reasons["aria"]
    assert reasons["audiospan_rubric"].endswith("the benchmark is mmar")
    assert reasons["anchor_chain"].endswith("the benchmark is mmar")
    assert "this run has full" in reasons["text_prior_decomposition"]
    assert all("results" not in results["scorers"][name] for name in reasons)  # nothing was scored
    (accuracy,) = results["scorers"]["accuracy"]["results"]  # the plain template: the official string match
    assert (accuracy["rule"], accuracy["correct"], accuracy["official_scorer_accuracy"]) == ("official_slot", 1, 1 / 3)
    out = capsys.readouterr().out
    assert "aria" in out and "not applicable: ARIA scores four-step CoT outputs" in out


def test_auto_names_every_scorer(hand_run):
    results = score_run(
        hand_run,
        ScoreOptions(
            scorers=["auto"],
            aria_backbones={"preset": "offline", "lm": None, "embedder": None, "vectors": None},
            progress=False,
            judge=JudgeOptions(api_key_env="NO_SUCH_KEY_VARIABLE"),
        ),
    )
    statuses = {name: s["status"] for name, s in results["scorers"].items()}
    assert statuses == {
        "accuracy": "ok",
        "aria": "ok",
        "mmar_rubrics": "unavailable",
        "audiospan_rubric": "not_applicable",
        "anchor_chain": "not_applicable",
        "text_prior_decomposition": "ok",
    }
    # ARIA with no backbone at all: every metric unavailable with its reason, no number.
    aria = results["scorers"]["aria"]["results"][0]
    assert aria["aria"] is None and aria["aria_metrics"] == [] and aria["reasoning_mode"] is None
    assert all(aria["backbones"][m].startswith("unavailable:") for m in ("M1", "M2", "M3", "M4", "M5", "M6"))


@pytest.mark.parametrize(
    "judge, reason",
    [
        (
            dict(api_key_env="NO_SUCH_KEY_VARIABLE"),
            "judge gpt-4o-2024-11-20 at the OpenAI API is unavailable: no API key: set the environment variable "
            "NO_SUCH_KEY_VARIABLE",
        ),
        # found on the first item's own request (no extra request is sent), before any item is scored
        (dict(base_url="CLOSED"), "is unavailable: cannot connect to the server: Connection error"),
        (dict(model="local:/no/such/model"), "local judge /no/such/model cannot be loaded"),
        # "none" is no judge, never an OpenAI model named "none" (which said "judge none at the OpenAI API ...")
        (dict(model="none"), "no judge: --judge-model none was given"),
        (dict(model="None", api_key_env="NO_SUCH_KEY_VARIABLE"), "no judge: --judge-model none was given"),
    ],
)
def test_no_judge_reachable_is_unavailable_with_the_reason(hand_run, tmp_path, judge, reason):
    if judge.get("base_url") == "CLOSED":
        judge["base_url"] = f"http://127.0.0.1:{closed_port()}/v1"
    results = score_run(
        hand_run, ScoreOptions(scorers=["mmar_rubrics"], judge=JudgeOptions(**judge), progress=False, out=str(tmp_path))
    )
    section = results["scorers"]["mmar_rubrics"]
    assert section["status"] == "unavailable" and reason in section["reason"] and "results" not in section
    assert results["not_run"]["mmar_rubrics"]["reason"] == section["reason"]
    cache = hand_run / "judge-cache.sqlite"
    assert not cache.exists() or len(VerdictCache(cache)) == 0  # no judge, no verdict


def test_the_command_prints_an_unavailable_judge_and_succeeds(hand_run, tmp_path, capsys):
    assert (
        main(
            [
                "score",
                str(hand_run),
                "--scorers",
                "mmar_rubrics",
                "--judge-base-url",
                f"http://127.0.0.1:{closed_port()}/v1",
                "--out",
                str(tmp_path),
                "--no-progress",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("mmar_rubrics"))
    assert "n/a" in line and "unavailable: judge gpt-4o-2024-11-20 at http://127.0.0.1:" in line
    assert (tmp_path / RESULTS_FILE).is_file() and (tmp_path / "items.jsonl").is_file()


def test_a_password_in_the_judge_base_url_is_never_printed_or_stored(hand_run, tmp_path, capsys):
    password = "sk-judgepassword-0123456789abcdef"
    url = f"http://user:{password}@127.0.0.1:{closed_port()}/v1?key=q-0123456789-QUERYKEY"
    assert (
        main(
            [
                "score",
                str(hand_run),
                "--scorers",
                "mmar_rubrics",
                "--judge-base-url",
                url,
                "--out",
                str(tmp_path),
                "--no-progress",
            ]
        )
        == 0
    )
    printed = capsys.readouterr()
    line = next(line for line in printed.out.splitlines() if line.startswith("mmar_rubrics"))
    assert "unavailable: judge gpt-4o-2024-11-20 at http://user:[REDACTED]@127.0.0.1:" in line
    results = json.loads((tmp_path / RESULTS_FILE).read_text())
    assert results["options"]["judge"]["base_url"].startswith("http://user:<redacted>@127.0.0.1:")
    assert results["options"]["judge"]["base_url"].endswith("/v1?key=%3Credacted%3E")
    for text in (
        printed.out,
        printed.err,
        (tmp_path / RESULTS_FILE).read_text(),
        (tmp_path / "items.jsonl").read_text(),
    ):
        assert password not in text and "QUERYKEY" not in text


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--scorers", "aria,rouge"], "unknown scorer(s) ['rouge']"),
        (["--extraction", "regex"], "unknown extraction rule 'regex'"),
        (["--perturbations", "swap"], "unknown perturbation(s) ['swap']"),
        (["--aria-backbones", "offline,clip=/m"], "unknown backbone roles ['clip']"),
        (["--aria-backbones", "lm"], "'lm' is not paper, offline or ROLE=SPEC"),
        (
            ["--official-scorer", "/no/such/evaluation_rubrics.py"],
            "--official-scorer '/no/such/evaluation_rubrics.py' is not a file",
        ),
        (
            ["--judge-base-url", "localhost:8000"],
            "--judge-base-url must be an http(s) URL such as http://127.0.0.1:8000/v1, got 'localhost:8000'",
        ),
        (["--judge-structured-outputs", "--compat"], "the official scorer (--compat) sends no response_format"),
        (
            ["--judge-structured-outputs", "--judge-model", "local:packaged:SmolLM2-135M-Instruct"],
            "--judge-structured-outputs is for an OpenAI-compatible judge",
        ),
    ],
)
def test_bad_score_arguments_are_one_line_errors(hand_run, tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["score", str(hand_run), "--out", str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_no_run_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["score", str(tmp_path)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "is not a run folder: no run.json" in err


def test_data_that_moved_is_a_usage_error_naming_the_option(hand_run, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["score", str(hand_run), "--data", str(tmp_path), "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "cannot read the benchmark's items" in err and "--data" in err


def test_items_without_an_output_are_counted_missing_not_scored(tmp_path):
    cut_short = {k: v for k, v in OUTPUTS.items() if k != ("none", 2)}
    run_dir = build_hand_run(tmp_path, outputs=cut_short)
    results = score_run(run_dir, ScoreOptions(scorers=["accuracy"], progress=False))
    accuracy = {e["condition"]: e for e in results["scorers"]["accuracy"]["results"]}
    assert (accuracy["none"]["n"], accuracy["none"]["missing"], accuracy["none"]["correct"]) == (2, 1, 2)
    assert (accuracy["full"]["n"], accuracy["full"]["missing"]) == (3, 0)
    assert results["missing_outputs"] == 1
