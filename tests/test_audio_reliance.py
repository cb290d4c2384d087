"""The audio-reliance check (`--audio-check N`, `audio_check` in a sweep): N seeded items run again with silence
of the same length and with another checked item's clip, through the CLI against a real served model
(tests/judge_server.py). A model that answers from the audio (the reply names the pitch of the tone it
hears; silence gets "I hear nothing") is `ok`; a model with a constant reply is flagged `audio ignored`, in
results.json, the printed table, a sweep's leaderboard and the HTML report."""

import json

import numpy as np
import pytest
from judge_server import openai_cli_args, running_server

from audioreason.cli import main
from audioreason.inference.conditions import (
    AudioPreparer,
    Condition,
    choose_audio_check,
    expand_condition,
    with_audio_check,
)

KEY = "sk-reliance-test-0123456789"
RATE = 16000
TONES = {220: "bass", 440: "alto", 880: "soprano", 1760: "whistle"}  # Hz -> the choice naming its pitch
N_ITEMS = 8
SCRIPT = {
    "scenarios": {
        "listener": [{"reply_by_tone": {str(hz): name for hz, name in TONES.items()}, "quiet": "I hear nothing"}],
        "deaf": [{"reply": "bass"}],
    }
}


def tone(hz, seconds=1.0):
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


@pytest.fixture(scope="module")
def tone_raw(tmp_path_factory):
    """An MMAR raw folder of 8 items: a 1 s tone each (the bands in turn), asking for its pitch."""
    from audioreason.audio import write_audio
    from audioreason.data.mmar import demo_metadata, write_raw_folder

    root = tmp_path_factory.mktemp("tones")
    records = []
    for n, record in enumerate(demo_metadata()[:N_ITEMS]):
        hz = list(TONES)[n % len(TONES)]
        write_audio(root / record["audio_path"], tone(hz), RATE)
        records.append(
            {**record, "question": "Which pitch is the tone?", "choices": list(TONES.values()), "answer": TONES[hz]}
        )
    return write_raw_folder(records, root)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(SCRIPT, tmp_path_factory.mktemp("reliance_server")) as handle:
        yield handle


@pytest.fixture(autouse=True)
def served_key(monkeypatch):  # the key the served model's requests carry
    monkeypatch.setenv("RELIANCE_KEY", KEY)


def args(server, raw, out, model, *extra, command="evaluate"):
    return openai_cli_args(command, server, model, "RELIANCE_KEY", raw, out, *extra)


def answer_of(raw, item_id):
    return {r["id"]: r["answer"] for r in map(json.loads, (raw / "MMAR-meta.jsonl").read_text().splitlines())}[item_id]


# ---------------------------------------------------------------------------------------------- the conditions


def test_the_checked_items_are_seeded_and_each_gets_another_items_clip():
    ids = [f"i{n}" for n in range(10)]
    conditions = with_audio_check([Condition("full")], 4)
    assert [c.name for c in conditions] == ["full", "silence", "shuffled"]
    check = choose_audio_check(conditions, ids, 4, seed=3)
    assert check == choose_audio_check(conditions, ids, 4, seed=3)  # the same items on a resume
    assert len(check.donors) == 4 and list(check.donors) == sorted(check.donors, key=ids.index)
    assert all(donor != item and donor in check.donors for item, donor in check.donors.items())
    assert sorted(check.donors.values()) == sorted(check.donors)  # a permutation of the checked items
    assert {tuple(choose_audio_check(conditions, ids, 4, seed=s).donors) for s in range(6)} != {tuple(check.donors)}
    everything = choose_audio_check(conditions, ids[:3], 24, seed=0)  # fewer items than asked: all of them
    assert list(everything.donors) == ids[:3] and everything.to_dict()["asked"] == 24
    ((alone, donor),) = choose_audio_check(conditions, ids, 1, seed=0).donors.items()
    assert donor in ids and donor != alone
    assert choose_audio_check(conditions, ["only"], 1, seed=0).donors == {"only": None}
    assert choose_audio_check([Condition("full")], ids, 0, seed=0) is None
    assert expand_condition("Silence") == [Condition("silence")] and Condition("shuffled").sends_audio
    with pytest.raises(ValueError, match="add full"):
        with_audio_check([Condition("none")], 2)
    with pytest.raises(ValueError, match=">= 0"):
        with_audio_check([Condition("full")], -1)


def test_silence_is_as_long_as_the_clip_sent(tmp_path):
    from audioreason.audio import write_audio

    path = write_audio(tmp_path / "a.wav", tone(440, 2.0), RATE)
    full = AudioPreparer(RATE, 1.5).prepare(Condition("full"), str(path))
    silence = AudioPreparer(RATE, 1.5).prepare(Condition("silence"), str(path))
    assert len(silence.audio.array) == len(full.audio.array) == int(1.5 * RATE)
    assert not silence.audio.array.any() and full.audio.array.any()
    assert silence.info["truncated"] is True and silence.info["source_seconds"] == 2.0


# ---------------------------------------------------------------------------------------------- run and score


def test_a_model_that_answers_from_the_audio_is_ok_and_a_constant_one_is_flagged(server, tone_raw, tmp_path, capsys):
    outs = {}
    for model in ("listener", "deaf"):
        outs[model] = tmp_path / model
        assert (
            main(
                args(
                    server,
                    tone_raw,
                    outs[model],
                    model,
                    "--audio-check",
                    "6",
                    "--audio-check-seed",
                    "1",
                    "--scorers",
                    "accuracy",
                )
            )
            == 0
        )
        printed = capsys.readouterr().out
        assert "audio check: silence and shuffled audio on 6 item(s), seed 1 (12 units, named in run.json)" in printed
        results = json.loads((outs[model] / "results.json").read_text())
        section = results["audio_reliance"]
        assert section["status"] == "ok"
        (entry,) = section["results"]
        line = f"audio reliance [{model} plain]: {entry['verdict']}: {entry['reason']}"
        assert line in printed and "audio reliance: outputs changed (silence or shuffled)" in printed
        outs[model] = (outs[model], results, entry)

    folder, results, entry = outs["listener"]
    run = json.loads((folder / "run.json").read_text())
    check = run["audio_check"]
    assert check["items"] == 6 and check["seed"] == 1 and len(check["units"]) == 12
    assert {json.loads(k)[1] for k in check["units"]} == {"silence", "shuffled"}
    assert {json.loads(k)[3] for k in check["units"]} == set(check["ids"])
    assert sorted(check["donors"].values()) == sorted(check["ids"]) and all(d != i for i, d in check["donors"].items())
    records = [json.loads(line) for line in (folder / "outputs.jsonl").read_text().splitlines()]
    assert sorted(r["condition"] for r in records) == ["full"] * N_ITEMS + ["shuffled"] * 6 + ["silence"] * 6
    by = {(r["condition"], r["id"]): r for r in records}
    for item_id in check["ids"]:  # what the served model was sent, as it answered
        assert by[("full", item_id)]["output"] == answer_of(tone_raw, item_id)
        assert by[("silence", item_id)]["output"] == "I hear nothing"
        assert by[("silence", item_id)]["audio"]["seconds"] == 1.0
        donor = check["donors"][item_id]
        assert by[("shuffled", item_id)]["audio"]["donor"] == donor
        assert by[("shuffled", item_id)]["output"] == answer_of(tone_raw, donor)
    assert set(run["speed"]["by_condition"]) == {"full", "silence", "shuffled"}
    same_band = sum(answer_of(tone_raw, i) == answer_of(tone_raw, d) for i, d in check["donors"].items())
    assert entry["verdict"] == "ok" and entry["n"] == 6 and entry["checked_items"] == 6
    assert entry["changed"]["silence"]["changed"] == 6 and entry["changed"]["either"]["share"] == 1.0
    assert entry["changed"]["shuffled"]["changed"] == 6 - same_band
    accuracy = entry["accuracy"]
    assert (accuracy["full"]["correct"], accuracy["silence"]["correct"], accuracy["shuffled"]["correct"]) == (
        6,
        0,
        same_band,
    )
    assert accuracy["full"]["uncertainty"]["method"] == "wilson"
    lo = accuracy["full"]["uncertainty"]["ci95"][0]
    assert 0.5 < lo < 1 and "silence outside full's interval" in entry["reason"]
    assert "outputs changed on 6 of 6 items" in entry["reason"]
    # the scorers score the run's own conditions; the check's outputs are its own section
    assert [s["condition"] for s in results["sets"]] == ["full"]
    assert {e["condition"] for e in results["scorers"]["accuracy"]["results"]} == {"full"}
    rows = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    silent = [r for r in rows if r["condition"] == "silence"]
    assert len(silent) == 6 and all(r["audio_reliance"] == {"changed": True, "correct": False} for r in silent)

    folder, results, entry = outs["deaf"]
    assert entry["verdict"] == "audio ignored" and entry["changed"]["either"]["changed"] == 0
    assert entry["reason"] == "outputs identical under full, silence and shuffled audio on all 6 items"
    correct = {c: entry["accuracy"][c]["correct"] for c in ("full", "silence", "shuffled")}
    assert len(set(correct.values())) == 1

    # a rerun resumes: nothing is sent again
    sent = len(server.requests())
    assert (
        main(
            args(
                server,
                tone_raw,
                tmp_path / "deaf",
                "deaf",
                "--audio-check",
                "6",
                "--audio-check-seed",
                "1",
                command="run",
            )
        )
        == 0
    )
    assert len(server.requests()) == sent and f"{N_ITEMS + 12} already done" in capsys.readouterr().out
    assert json.loads((tmp_path / "deaf" / "run.json").read_text())["counts"]["resumed"] == N_ITEMS + 12


def test_a_run_without_the_check_says_so(server, tone_raw, tmp_path, capsys):
    out = tmp_path / "plain"
    assert main(args(server, tone_raw, out, "deaf", "--limit", "2", "--scorers", "accuracy")) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["audio_reliance"]["status"] == "not_applicable"
    assert "--audio-check N" in results["audio_reliance"]["reason"]
    assert "audio reliance: not checked (the run has no audio-reliance check" in capsys.readouterr().out
    assert "audio_check" not in json.loads((out / "run.json").read_text())


@pytest.mark.parametrize(
    "extra, message",
    [
        (("--audio-check", "-1"), "audio check: the number of items must be a whole number >= 0"),
        (("--audio-check", "3", "--conditions", "none"), "compares outputs with the full condition's: add full"),
        (("--audio-check-seed", "-2"), "--audio-check-seed must be a whole number >= 0"),
    ],
)
def test_bad_check_options_are_one_line_errors(server, tone_raw, tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as stop:
        main(args(server, tone_raw, tmp_path / "out", "deaf", *extra, command="run"))
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------- a sweep


def test_a_sweep_checks_every_run_by_default_and_its_leaderboard_and_report_say_so(server, tone_raw, tmp_path, capsys):
    from audioreason.report.build import build_report

    def model(name):
        return (
            f"  - {{name: {name}, adapter: openai, model: {name}, options: {{base_url: '{server.base_url}'"
            ", api_key_env: RELIANCE_KEY, timeout_s: 10}}"
        )

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        "\n".join(
            [
                "out: swept",
                "models:",
                model("listener"),
                model("deaf"),
                "benchmarks:",
                f"  - {{benchmark: mmar, data: {tone_raw}}}",
                "score: {scorers: [accuracy]}",
            ]
        )
        + "\n"
    )
    assert main(["evaluate", "--config", str(sweep), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    out = tmp_path / "swept"
    for name in ("listener", "deaf"):
        check = json.loads((out / name / "mmar" / "run.json").read_text())["audio_check"]
        assert check["asked"] == 24 and check["items"] == N_ITEMS  # the default: 24, all 8 when fewer
    board = json.loads((out / "leaderboard.json").read_text())
    verdicts = {(r["model"], r["verdict"]) for r in board["audio_reliance"]}
    assert verdicts == {("listener", "ok"), ("deaf", "audio ignored")}
    listener = next(r for r in board["audio_reliance"] if r["model"] == "listener")
    assert listener["n"] == N_ITEMS and listener["accuracy"]["full"] == 1.0 and listener["accuracy"]["silence"] == 0.0
    headlines = {r["headline"] for r in board["rows"] if r["model"] == "deaf"}
    assert "audio reliance: accuracy under silence" in headlines
    markdown = (out / "leaderboard.md").read_text()
    assert "## Audio reliance" in markdown and "| deaf | mmar | plain | audio ignored | 0.0000 |" in markdown
    assert markdown in printed
    report = build_report([out / "listener" / "mmar", out / "deaf" / "mmar"], tmp_path / "report.html")
    assert "audio_reliance" in report["tables"]
    page = (tmp_path / "report.html").read_text()
    assert "Audio reliance (did the model use the audio?)" in page
    assert '<td class="">audio ignored</td>' in page and '<td class="">ok</td>' in page
    assert "1.0000 [" in page  # the listener's accuracy under full with its Wilson interval


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"audio_check": -1}, "sweep.yaml: audio_check: audio check: the number of items must be a whole number >= 0"),
        ({"audio_check": "some"}, "sweep.yaml: audio_check: audio check: the number of items must be a whole number"),
        (
            {"conditions": ["none"], "audio_check": 4},
            "sweep.yaml: audio_check: the audio check (silence, shuffled) "
            "compares outputs with the full condition's: add full",
        ),
        ({"audio_check_seed": -3}, "sweep.yaml: audio_check_seed: must be a whole number >= 0, got -3"),
    ],
)
def test_a_bad_check_in_a_sweep_file_names_its_key(tmp_path, extra, message):
    from audioreason.cli.sweep_config import SweepError, parse_sweep

    content = {"out": "o", "models": ["m"], "benchmarks": [{"benchmark": "mmar", "data": "d"}], **extra}
    with pytest.raises(SweepError) as err:
        parse_sweep(content, tmp_path / "sweep.yaml", check_paths=False)
    assert str(err.value).startswith(f"{tmp_path}/{message}")


def test_a_sweep_without_full_has_no_check_by_default(tmp_path):
    from audioreason.cli.sweep_config import parse_sweep

    base = {"out": "o", "models": ["m"], "benchmarks": [{"benchmark": "mmar", "data": "d"}]}
    assert parse_sweep({**base, "conditions": ["none"]}, tmp_path / "s.yaml", check_paths=False).audio_check == 0
    sweep = parse_sweep(base, tmp_path / "s.yaml", check_paths=False)
    assert (sweep.audio_check, sweep.audio_check_seed) == (24, 0)


def _check_sets(full_correct: int, silence_correct: int, n: int = 10):
    """A plain-template run of ``n`` MCQ items whose silence and shuffled outputs all differ in text from
    full's, with ``full_correct`` and ``silence_correct`` items answered right (shuffled: none)."""
    from audioreason.evaluation.sections import OutputSet

    choices = ["dog", "cat", "bird", "car"]
    items = {f"q{i}": {"id": f"q{i}", "choices": choices, "answer": "dog"} for i in range(n)}

    def outputs(condition, right, wording):
        return OutputSet(
            "m",
            condition,
            "plain",
            "h",
            [
                {
                    "id": f"q{i}",
                    "key": f"{condition}:q{i}",
                    "error": None,
                    "output": wording.format("dog" if i < right else "cat"),
                }
                for i in range(n)
            ],
        )

    sets = [
        outputs("full", full_correct, "{}"),
        outputs("silence", silence_correct, "I think {}"),
        outputs("shuffled", 0, "Perhaps {}"),
    ]
    return sets, items


@pytest.mark.parametrize("silence_correct, expected", [(5, "audio ignored"), (2, "ok")])
def test_changed_outputs_are_judged_by_whether_silence_scores_inside_fulls_interval(silence_correct, expected):
    """Every output changes under silence, so the verdict rests on the second rule: 6/10 under full has the
    Wilson 95% interval (6 + 1.92)/13.84 -/+ 1.96 sqrt(0.024 + 0.0096)/1.384 = [0.3127, 0.8318]; 5/10 under
    silence lies inside it (audio ignored), 2/10 outside (ok)."""
    from audioreason.evaluation.reliance import audio_reliance_section

    sets, items = _check_sets(6, silence_correct)
    section = audio_reliance_section(sets, items, {"ids": list(items)})
    (entry,) = section.results
    assert entry["changed"]["either"]["changed"] == 10 and entry["rule"] == "official_slot"
    assert entry["accuracy"]["full"]["uncertainty"]["ci95"] == pytest.approx([0.3127, 0.8318], abs=5e-5)
    assert entry["accuracy"]["silence"]["accuracy"] == silence_correct / 10
    assert entry["verdict"] == expected
    where = "inside full's interval" if expected == "audio ignored" else "silence outside full's interval"
    assert where in entry["reason"] and "accuracy full 0.6000 [0.3127, 0.8318]" in entry["reason"]
