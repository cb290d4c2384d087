"""`audioreason evaluate`: run + score in one command on a tiny random Phi-4-multimodal checkpoint and tiny ARIA
backbones (2 MMAR items, conditions full and none, the ARIA CoT template, two perturbation checks); the launched
processes of `--num-processes` get the run's arguments only; bad arguments stop it before any work."""

import argparse
import contextlib
import io
import json

import pytest

from audioreason.cli import main
from audioreason.cli.run import add_evaluate_parser, add_run_parser, command_line
from audioreason.data.mmar import demo_metadata, write_raw_folder
from audioreason.text import answers

ITEMS = demo_metadata()[:2]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, tiny_backbones):
    import torch
    from tiny_audio_models import build_phi4_multimodal

    root = tmp_path_factory.mktemp("evaluate")
    model = build_phi4_multimodal(root / "phi4")
    raw = write_raw_folder(ITEMS, root / "raw")
    out = root / "out"
    backbones = ",".join(f"{role}={path}" for role, path in tiny_backbones.items())
    argv = [
        "evaluate",
        "--model",
        str(model),
        "--benchmark",
        "mmar",
        "--data",
        str(raw),
        "--conditions",
        "full,none",
        "--templates",
        "aria_cot",
        "--max-new-tokens",
        "4",
        "--batch-size",
        "2",
        "--max-audio-s",
        "2",
        "--scorers",
        "accuracy,aria,text_prior_decomposition",
        "--aria-backbones",
        backbones,
        "--perturbations",
        "ans_swap,decoration",
        "--out",
        str(out),
        "--no-progress",
    ]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            status = main(argv)
    finally:
        torch.set_num_threads(threads)
    return out, status, printed.getvalue()


def test_evaluate_writes_the_outputs_then_the_results(evaluated):
    out, status, printed = evaluated
    assert status == 0
    outputs = [json.loads(line) for line in (out / "outputs.jsonl").read_text().splitlines()]
    assert [(r["id"], r["condition"]) for r in outputs] == [(it["id"], c) for it in ITEMS for c in ("full", "none")]
    assert all(r["error"] is None and r["tokens"]["completion"] <= 4 for r in outputs)
    results = json.loads((out / "results.json").read_text())
    assert results["run"]["benchmark"] == "mmar" and results["run"]["status"] == "finished"
    assert [(s["condition"], s["template"], s["n"]) for s in results["sets"]] == [
        ("full", "aria_cot", 2),
        ("none", "aria_cot", 2),
    ]
    # Accuracy: ARIA App. E on each set's outputs, computed here directly from the outputs file.
    for entry in results["scorers"]["accuracy"]["results"]:
        mine = [r for r in outputs if r["condition"] == entry["condition"]]
        found = [answers.extract_aria(r["output"], it["choices"]) for r, it in zip(mine, ITEMS)]
        assert entry["rule"] == "aria" and entry["n"] == 2
        assert entry["correct"] == sum(answers.is_gold(e, it["answer"]) for e, it in zip(found, ITEMS))
        assert entry["unanswered"] == sum(not e.answered for e in found)
    aria = results["scorers"]["aria"]["results"]
    assert [a["condition"] for a in aria] == ["full", "none"] and all(len(a["aria_metrics"]) == 6 for a in aria)
    (tp,) = results["scorers"]["text_prior_decomposition"]["results"]
    assert tp["conditions"] == ["full", "none"] and tp["counts"]["items"] == 2
    assert "audioreason run: 4 outputs, 0 failed" in printed
    assert "aria: ARIA (mean of M1+M2+M3+M4+M5+M6) [full/aria_cot]" in printed
    assert f"results: {out / 'results.json'}" in printed


def test_evaluate_reports_the_perturbation_checks(evaluated):
    out, _, printed = evaluated
    results = json.loads((out / "results.json").read_text())
    for entry in results["scorers"]["perturbations"]["results"]:
        rates = {p["perturbation"]: p["answer_change_rate"] for p in entry["perturbations"]}
        # AnsSwap always names a wrong choice other than the original's; Decoration keeps the answer line.
        assert rates == {"rendered": 0.0, "ans_swap": 1.0, "decoration": 0.0}
        for p in entry["perturbations"]:  # six metrics: a mode, or the scorer's note that the paper names none
            assert p["aria_complete"] and (
                p["reasoning_mode"] in ("Reasoning", "Scaffolding", "Decoration")
                or "none of the paper's three modes" in p["note"]
            )
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert all(set(row["perturbations"]) == {"rendered", "ans_swap", "decoration"} for row in items)
    assert "perturbation: ans_swap [none/aria_cot]" in printed


def test_launched_processes_get_the_run_arguments_only():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    add_evaluate_parser(sub)
    run_parser = argparse.ArgumentParser()
    add_run_parser(run_parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        [
            "evaluate",
            "--model",
            "m",
            "--benchmark",
            "mmar",
            "--data",
            "d",
            "--out",
            "o",
            "--num-processes",
            "2",
            "--conditions",
            "full,none",
            "--scorers",
            "aria",
            "--perturbations",
            "all",
            "--judge-model",
            "j",
            "--seed",
            "3",
            "--perturbation-seed",
            "5",
            "--no-progress",
        ]
    )
    launched = command_line(args, args.launch_parser)
    assert "--scorers" not in launched and "--judge-model" not in launched and "--perturbation-seed" not in launched
    again = run_parser.parse_args(launched)
    assert (again.model, again.conditions, again.seed, again.no_progress, again.num_processes) == (
        "m",
        "full,none",
        3,
        True,
        None,
    )
    assert args.perturbation_seed == 5


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--scorers", "rouge"], "unknown scorer(s) ['rouge']"),
        (["--perturbations", "swap"], "unknown perturbation(s) ['swap']"),
        (["--conditions", "mute"], "unknown condition 'mute'"),
    ],
)
def test_bad_evaluate_arguments_stop_before_any_work(tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "evaluate",
                "--model",
                "qwen2-audio",
                "--benchmark",
                "mmar",
                "--data",
                str(tmp_path),
                "--out",
                str(tmp_path / "out"),
                *extra,
            ]
        )
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and err.startswith("audioreason evaluate: error:")
    assert not (tmp_path / "out").exists()
