"""Command-line conventions: every option of every subcommand has help text, one spelling per concept (the
benchmark names, the perturbation seed), errors name the flag rather than the Python keyword, and the exit
status says what went wrong (2 a usage error, 1 a failure on the data)."""

from __future__ import annotations

import argparse
import json

import pytest

from audioreason.cli import build_parser, main


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("audioreason",)):
    """(command path, parser) for the parser and every subcommand below it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, path + (name,))


def _sub(parser: argparse.ArgumentParser, *names: str) -> argparse.ArgumentParser:
    for name in names:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return parser


def test_every_option_of_every_subcommand_has_help_text():
    missing, commands = [], 0
    for path, parser in _walk(build_parser()):
        commands += 1
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}")
    assert commands >= 14  # demo, run, score, evaluate, prompt, anchor (4), report, compare, space (build) ...
    assert missing == []


def test_every_subcommand_has_a_one_line_summary():
    for action in build_parser()._subparsers._group_actions:
        for choice in action._choices_actions:
            assert choice.help and "\n" not in choice.help, choice.dest


def test_the_perturbation_seed_has_one_spelling_and_score_keeps_the_old_one():
    parser = build_parser()
    assert parser.parse_args(["score", "runs/a", "--perturbation-seed", "7"]).perturbation_seed == 7
    assert parser.parse_args(["score", "runs/a", "--seed", "7"]).perturbation_seed == 7  # the old spelling
    assert "--seed is its old spelling" in _sub(parser, "score").format_help().replace("\n", " ").replace("  ", " ")
    common = ["evaluate", "--model", "m", "--benchmark", "mmar", "--data", "d", "--out", "o"]
    args = parser.parse_args(common + ["--seed", "3", "--perturbation-seed", "5"])
    assert (args.seed, args.perturbation_seed) == (3, 5)  # evaluate's --seed is run's decoding seed


def test_the_benchmark_names_one_spelling_and_says_what_the_other_is():
    from audioreason.data import benchmark_spec

    assert benchmark_spec("mmau-test-mini") is benchmark_spec("mmau_test_mini")
    text = " ".join(_sub(build_parser(), "run").format_help().split())
    assert "mmar, mmau-test-mini or audiospan (mmau_test_mini, the datasets builder's name, is the same" in text
    with pytest.raises(ValueError, match=r"choose one of mmar, mmau-test-mini, audiospan \(mmau_test_mini"):
        benchmark_spec("mmau-pro")


def test_a_checkpoint_no_preset_reads_names_the_flag_before_any_work(tmp_path, capsys):
    model = tmp_path / "bert"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (tmp_path / "data").mkdir()
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                "--model",
                str(model),
                "--benchmark",
                "mmar",
                "--data",
                str(tmp_path / "data"),
                "--out",
                str(tmp_path / "out"),
            ]
        )
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert "model_type 'bert'" in err and "give --preset NAME" in err and "preset=" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["score", "NOWHERE", "--scorers", "aria"], "is not a folder"),
        (
            ["run", "--model", "m", "--benchmark", "mmar", "--data", "d", "--out", "o", "--batch-size", "0"],
            "--batch-size must be at least 1",
        ),
        (["compare", "NOWHERE_A", "NOWHERE_B"], "NOWHERE_A"),
    ],
)
def test_usage_errors_exit_2_with_one_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_a_misspelt_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["score", "runs/a", "--perturbation-sed", "1"])
    assert exit_info.value.code == 2 and "--perturbation-sed" in capsys.readouterr().err


def test_a_file_that_is_not_a_result_is_a_data_error_exit_1(tmp_path, capsys):
    bad = tmp_path / "not-results.json"
    bad.write_text(json.dumps([1, 2, 3]))
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(bad), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1 and str(bad) in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r.html").exists()


def test_a_damaged_scored_run_is_a_data_error_but_an_unscored_folder_a_usage_error(tmp_path, capsys):
    damaged, unscored = tmp_path / "damaged", tmp_path / "unscored"
    damaged.mkdir()
    unscored.mkdir()
    (damaged / "results.json").write_text('{"run": {"model": "m"')  # cut short
    (damaged / "items.jsonl").write_text("")
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(damaged), str(unscored)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1 and f"{damaged / 'results.json'}: not valid JSON" in err, err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(unscored), str(damaged)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "is not a scored run" in err, err
