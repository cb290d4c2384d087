"""`audioreason run` refuses what cannot work before loading any model or data: one line, exit status 2."""

import pytest

from audioreason.cli import main


def base(tmp, *extra):
    return [
        "run",
        "--model",
        "qwen2-audio",
        "--benchmark",
        "mmar",
        "--data",
        str(tmp),
        "--out",
        str(tmp / "out"),
        *extra,
    ]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--benchmark", "mmau-pro"], "unknown benchmark 'mmau-pro'"),
        (["--conditions", "full,mute"], "unknown condition 'mute'"),
        (["--conditions", "frag:7"], "N must be one of [2, 3, 4, 5]"),
        (["--conditions", "full,none,full"], "condition 'full' given twice"),
        (["--templates", "cot"], "unknown template 'cot'"),
        (["--conditions", "full,tb"], "the tb condition needs --tb-model"),
        (["--limit", "0"], "--limit must be at least 1, got 0"),
        (["--batch-size", "0"], "--batch-size must be at least 1"),
        (["--num-processes", "0"], "--num-processes must be at least 1"),
        (["--max-new-tokens", "0"], "max_new_tokens must be a positive integer"),
        (["--temperature", "-1"], "temperature must be >= 0"),
        (["--top-p", "0"], "top_p must be in (0, 1]"),
        (["--max-audio-s", "0"], "--max-audio-s must be positive"),
        (["--adapter", "vllm"], "--adapter 'vllm' is not one of transformers, text-lm"),
        (["--preset", "gemma3n"], "--preset 'gemma3n' is not one of"),
        (["--model", "./no/such/checkpoint"], "--model './no/such/checkpoint' does not exist"),
        (["--data", "/no/such/folder"], "--data '/no/such/folder' does not exist"),
        (["--out", "FILE"], "is a file; give a folder"),
    ],
)
def test_bad_run_arguments_are_one_line_errors(tmp_path, capsys, extra, message):
    (tmp_path / "a-file").write_text("x")
    extra = [str(tmp_path / "a-file") if e == "FILE" else e for e in extra]
    with pytest.raises(SystemExit) as exit_info:
        main(base(tmp_path, *extra))
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()  # nothing was started


def test_num_processes_inside_a_launched_process_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(SystemExit) as exit_info:
        main(base(tmp_path, "--num-processes", "2"))
    assert exit_info.value.code == 2 and "inside `accelerate launch` leave it out" in capsys.readouterr().err


def test_a_resume_into_another_runs_folder_is_a_usage_error(tmp_path, capsys):
    import json

    from tiny_audio_models import build_phi4_multimodal

    from audioreason.data.mmar import demo_metadata, write_raw_folder

    model = build_phi4_multimodal(tmp_path / "m")
    raw = write_raw_folder(demo_metadata()[:2], tmp_path / "raw")
    out = tmp_path / "out"
    out.mkdir()
    identity = {
        "benchmark": "mmar",
        "decoding": {"max_new_tokens": 1024, "temperature": 0.0, "top_p": 1.0, "seed": 0},
        "models": {"main": {"name": "another-model", "max_audio_s": 1800.0}},
    }
    (out / "run.json").write_text(json.dumps({"identity": identity}))
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                "--model",
                str(model),
                "--benchmark",
                "mmar",
                "--data",
                str(raw),
                "--out",
                str(out),
                "--no-progress",
            ]
        )
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "holds outputs of a different run (main model differ" in err
    assert "another-model" in err


@pytest.mark.parametrize(
    "content, message",
    [
        ("[]", "run.json: expected a JSON object (the run file), got an array"),
        (
            '{"identity": {"benchmark": "mmar", "decod',
            "run.json: not valid JSON (Unterminated string starting at: line 1 column 36)",
        ),
    ],
)
def test_a_damaged_run_file_is_a_data_error_naming_it(tmp_path, capsys, content, message):
    from tiny_audio_models import build_phi4_multimodal

    from audioreason.data.mmar import demo_metadata, write_raw_folder

    model = build_phi4_multimodal(tmp_path / "m")
    raw = write_raw_folder(demo_metadata()[:2], tmp_path / "raw")
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.json").write_text(content)
    capsys.readouterr()  # the tiny model's build
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                "--model",
                str(model),
                "--benchmark",
                "mmar",
                "--data",
                str(raw),
                "--out",
                str(out),
                "--no-progress",
            ]
        )
    err = capsys.readouterr().err
    assert exit_info.value.code == 1 and err == f"audioreason run: error: {out / message}\n"
    assert not (out / "shards").exists()  # nothing was run


def test_launched_processes_get_the_same_arguments_without_num_processes():
    import argparse

    from audioreason.cli.run import add_run_parser, command_line

    parser = argparse.ArgumentParser()
    add_run_parser(parser.add_subparsers(dest="command"))
    given = [
        "run",
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
        "--no-progress",
        "--max-audio-s",
        "2.5",
        "--limit",
        "3",
        "--dtype",
        "bfloat16",
    ]
    args = parser.parse_args(given)
    again = parser.parse_args(command_line(args, args.run_parser))
    assert again.num_processes is None
    assert {k: v for k, v in vars(again).items() if k != "num_processes"} == {
        k: v for k, v in vars(args).items() if k != "num_processes"
    }


def test_max_audio_s_above_what_the_processor_keeps_is_refused_before_the_model_loads(tmp_path, capsys):
    """Checkpoint folders with the configs alone (no weights, no tokenizer): the limit is read from the
    processor's config, so the refusal comes before any model could load."""
    import json

    from transformers import WhisperFeatureExtractor

    whisper = tmp_path / "whisper-style"
    whisper.mkdir()
    (whisper / "config.json").write_text(json.dumps({"model_type": "qwen2_audio"}))
    WhisperFeatureExtractor(feature_size=128, sampling_rate=16000, chunk_length=30).save_pretrained(whisper)
    flamingo = tmp_path / "flamingo"
    flamingo.mkdir()
    (flamingo / "config.json").write_text(json.dumps({"model_type": "audioflamingo3"}))
    (flamingo / "processor_config.json").write_text(
        json.dumps({"processor_class": "AudioFlamingo3Processor", "max_audio_len": 120})
    )
    for model, seconds, message in (
        (whisper, "45", "--max-audio-s 45 exceeds the 30 s the Qwen2AudioProcessor keeps"),
        (flamingo, "150", "--max-audio-s 150 exceeds the 120 s the AudioFlamingo3Processor keeps"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(base(tmp_path, "--model", str(model), "--max-audio-s", seconds))
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and message in err and str(model) in err, err
        assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_on_missing_audio_skip_runs_the_rest_and_counts_the_skipped_item(tmp_path, capsys):
    import json

    from tiny_audio_models import build_phi4_multimodal

    from audioreason.data.mmar import demo_metadata, write_raw_folder

    model = build_phi4_multimodal(tmp_path / "m")
    raw = write_raw_folder(demo_metadata()[:3], tmp_path / "raw")
    first = json.loads((raw / "MMAR-meta.jsonl").read_text().splitlines()[0])
    wav = raw / first["audio_path"]
    wav.write_bytes(wav.read_bytes()[:2000])  # unreadable: the header promises more than the file holds
    args = [
        "run",
        "--model",
        str(model),
        "--benchmark",
        "mmar",
        "--data",
        str(raw),
        "--conditions",
        "none",
        "--max-new-tokens",
        "2",
        "--no-progress",
    ]
    with pytest.raises(SystemExit) as exit_info:  # the default refuses the run, naming the file
        main([*args, "--out", str(tmp_path / "refused")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and first["id"] in err and "truncated WAV" in err
    assert main([*args, "--out", str(tmp_path / "out"), "--on-missing-audio", "skip"]) == 0
    printed = capsys.readouterr().out
    assert (
        "2 outputs, 0 failed, 0 not applicable, 0 truncated, 0 already done, 1 skipped at load (named in "
        "run.json)" in printed
    )
    summary = json.loads((tmp_path / "out" / "run.json").read_text())
    assert summary["counts"]["skipped_at_load"] == 1 and [s["id"] for s in summary["skipped_items"]] == [first["id"]]
    # `score` reads the run's items with the run's own load policy: the two outputs are scored, the skipped
    # item is not an item of the run (it was refused before: "unreadable")
    assert main(["score", str(tmp_path / "out"), "--scorers", "accuracy", "--no-progress"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [s["n"] for s in results["sets"]] == [2]
