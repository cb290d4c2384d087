"""`audioreason evaluate --config sweep.yaml`: 2 tiny random audio models (Phi-4-multimodal, Qwen2-Audio) x 2
benchmarks (MMAR, MMAU test-mini; 2 items each with synthesized clips) x conditions full and none through the
CLI entry point; a sweep stopped after its third batch resumes with only the missing units, each model built
once; a third call loads nothing; the leaderboard carries each run's results.json numbers; a rerun after a
lower limit or a dropped condition rescores what the file now asks for; mistakes in the file (a value of the
wrong type or range, a name the sweep's own files take, YAML aliases that expand past the bound) stop it
before any work with the key path or line named."""

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inference_fixtures import tiny_audio  # noqa: F401 (fixture)

from audioreason.cli import main
from audioreason.inference import runner as runner_module

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"


def write_mmau_raw(root: Path, n: int) -> Path:
    from audioreason.audio import synthesize_clip, write_audio

    records = json.loads((DATA / "mmau-test-mini.json").read_text("utf-8"))[:n]
    for record in records:
        write_audio(root / record["audio_id"], synthesize_clip("sound", 2.0, 16000, seed=record["id"]), 16000)
    (root / "mmau-test-mini.json").write_text(json.dumps(records), encoding="utf-8")
    return root


def sweep_file(folder: Path, models: dict, mmar: Path, mmau: Path) -> Path:
    lines = ["out: swept", "models:"]
    lines += [f"  - {{name: {name}, model: {path}}}" for name, path in models.items()]
    lines += [
        "benchmarks:",
        f"  - {{benchmark: mmar, data: {mmar}}}",
        f"  - {{benchmark: mmau-test-mini, data: {mmau}}}",
        "conditions: [full, none]",
        "templates: [plain]",
        "batch_size: 2",
        "decoding: {max_new_tokens: 3}",
        "score: {scorers: [accuracy]}",
        "audio_check: 0",
    ]  # the check has its own tests (test_audio_reliance.py)
    path = folder / "sweep.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Counting:
    """Counts the units each session runs and the adapters it builds; stops after ``stop_after`` batches."""

    def __init__(self, monkeypatch, stop_after=None):
        self.units, self.batches, self.built = 0, 0, []
        run_prepared, make_adapter = runner_module.Runner.run_prepared, runner_module.make_adapter

        def counted_batch(runner, batch, ready):
            records = run_prepared(runner, batch, ready)
            self.units += len(batch)
            self.batches += 1
            if stop_after is not None and self.batches == stop_after:
                raise KeyboardInterrupt  # as a Ctrl-C after the batch's outputs are written
            return records

        def counted_build(kind, model, **options):
            self.built.append(Path(model).name)
            return make_adapter(kind, model, **options)

        monkeypatch.setattr(runner_module.Runner, "run_prepared", counted_batch)
        monkeypatch.setattr(runner_module, "make_adapter", counted_build)


@pytest.fixture(scope="module")
def swept(tmp_path_factory, tiny_audio):
    import torch

    from audioreason.data.mmar import demo_metadata, write_raw_folder

    root = tmp_path_factory.mktemp("sweep")
    models = {"phi4": tiny_audio["phi4-multimodal"], "qwen2a": tiny_audio["qwen2-audio"]}
    config = sweep_file(
        root, models, write_raw_folder(demo_metadata()[:2], root / "mmar"), write_mmau_raw(root / "mmau", 2)
    )
    argv = ["evaluate", "--config", str(config), "--no-progress"]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    sessions = []
    try:
        for stop_after in (3, None, None):
            with pytest.MonkeyPatch.context() as patch:
                counting = Counting(patch, stop_after)
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed):
                    try:
                        status = main(argv)
                    except KeyboardInterrupt:
                        status = "interrupted"
                sessions.append(
                    (
                        status,
                        counting,
                        printed.getvalue(),
                        json.loads((root / "swept" / "sweep.json").read_text())
                        if (root / "swept" / "sweep.json").is_file()
                        else None,
                    )
                )
    finally:
        torch.set_num_threads(threads)
    return root / "swept", sessions


def test_a_stopped_sweep_resumes_with_only_the_missing_units(swept):
    out, sessions = swept
    (first, counting1, _, _), (status, counting2, printed, record), _ = sessions
    assert first == "interrupted" and counting1.units == 6  # run 1 whole (2 batches), run 2's first batch
    assert status == 0 and counting2.units == 16 - 6
    runs = [(r["model"], r["benchmark"], r["units"], r["done_before"], r["ran"]) for r in record["runs"]]
    assert runs == [
        ("phi4", "mmar", 4, 4, 0),
        ("phi4", "mmau-test-mini", 4, 2, 2),
        ("qwen2a", "mmar", 4, 0, 4),
        ("qwen2a", "mmau-test-mini", 4, 0, 4),
    ]
    # The finished run is neither run nor loaded again; each model is built once for its two benchmarks.
    assert counting2.built == ["phi4-multimodal", "qwen2-audio"] and counting1.built == ["phi4-multimodal"]
    assert "sweep: 2 model(s) x 2 benchmark(s) = 4 runs, 16 units, 6 already done" in printed
    assert "sweep [1/4] phi4 / mmar: 4 units, 4 done; finished before, not run" in printed
    for model in ("phi4", "qwen2a"):
        for benchmark in ("mmar", "mmau-test-mini"):
            run = json.loads((out / model / benchmark / "run.json").read_text())
            assert run["status"] == "finished" and run["counts"]["ok"] == 4
            outputs = (out / model / benchmark / "outputs.jsonl").read_text().splitlines()
            assert sorted(json.loads(line)["condition"] for line in outputs) == ["full", "full", "none", "none"]
    interrupted = json.loads((out / "phi4" / "mmau-test-mini" / "run.json").read_text())["sessions"]
    assert interrupted[0]["status"] == "interrupted" and interrupted[0]["counts"]["done"] == 2
    # Each run that ran records its own wall time, the part outside its generation loop (what a run pays
    # that the sweep does not pay once for all: benchmarks/sweep.py measures it) and its scoring time.
    for entry in record["runs"][1:]:
        generation = json.loads((out / entry["model"] / entry["benchmark"] / "run.json").read_text())["sessions"][-1][
            "generation_s"
        ]
        assert entry["outside_generation_s"] == pytest.approx(entry["run_s"] - generation, abs=1e-3)
        assert 0 <= entry["outside_generation_s"] <= entry["run_s"] and entry["score_s"] >= 0
    assert "run_s" not in record["runs"][0] and record["runs"][0]["score_s"] >= 0  # not run, scored (kept)


def test_a_finished_sweep_loads_no_model_and_keeps_its_scores(swept):
    _, sessions = swept
    status, counting, printed, record = sessions[2]
    assert status == 0 and counting.units == 0 and counting.built == []
    assert [r["ran"] for r in record["runs"]] == [0, 0, 0, 0]
    assert {r["scored"] for r in record["runs"]} == {"kept (same outputs, same options)"}
    assert printed.count("finished before, not run") == 4


def test_the_leaderboard_carries_each_runs_results(swept):
    out, sessions = swept
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["unscored"] == [] and board["confidence"] == 0.95
    compared = 0
    for model in ("phi4", "qwen2a"):
        for benchmark in ("mmar", "mmau-test-mini"):
            results = json.loads((out / model / benchmark / "results.json").read_text())
            sets = {(s["condition"], s["template"]): s for s in results["sets"]}
            for entry in results["scorers"]["accuracy"]["results"]:
                label = f"answers: {entry['rule']} [{entry['condition']}/{entry['template']}]"
                (row,) = [
                    r for r in board["rows"] if (r["model"], r["benchmark"], r["headline"]) == (model, benchmark, label)
                ]
                assert row["value"] == entry["accuracy"] and row["n"] == entry["n"] == 2
                assert row["ci95"] == entry["uncertainty"]["accuracy"]["ci95"]
                assert row["unanswered"] == entry["unanswered"]
                assert row["failed"] == sets[(entry["condition"], entry["template"])]["failed"] == 0
                official = f"accuracy: official MMAR/MMAU scorer [{entry['condition']}/{entry['template']}]"
                (row,) = [
                    r
                    for r in board["rows"]
                    if (r["model"], r["benchmark"], r["headline"]) == (model, benchmark, official)
                ]
                assert row["value"] == entry["official_scorer_accuracy"]
                compared += 1
    assert compared == 8  # 4 runs x 2 sets (one rule each: the plain template's)
    markdown = (out / "leaderboard.md").read_text()
    first = board["rows"][0]
    assert f"| {first['model']} | {first['benchmark']} | {first['headline']} | {first['value']:.4f} |" in markdown
    assert markdown in sessions[1][2]  # printed at the end of the sweep
    assert board["confidence_levels"] == [0.95] and "| 95% CI |" in markdown


def test_runs_scored_at_different_levels_each_keep_their_own_in_the_leaderboard(swept, tmp_path):
    from audioreason.evaluation.leaderboard import write_leaderboard

    out, sessions = swept
    copy = tmp_path / "sweep"
    shutil.copytree(out, copy)
    results_file = copy / "qwen2a" / "mmar" / "results.json"
    results = json.loads(results_file.read_text())
    results["uncertainty_options"]["confidence"] = 0.9  # as if scored with --confidence 0.9
    results_file.write_text(json.dumps(results))
    board_info = write_leaderboard(copy, sessions[1][3]["runs"])
    board = json.loads((copy / "leaderboard.json").read_text())
    assert board_info["rows"] == len(board["rows"]) and board["confidence"] is None
    assert board["confidence_levels"] == [0.9, 0.95]
    levels = {(r["model"], r["benchmark"]): r["confidence"] for r in board["rows"] if r["ci95"] is not None}
    assert levels[("qwen2a", "mmar")] == 0.9 and levels[("phi4", "mmar")] == 0.95
    markdown = (copy / "leaderboard.md").read_text()
    assert "| CI (level per row) |" in markdown and "% CI |" not in markdown
    row = next(r for r in board["rows"] if r["model"] == "qwen2a" and r["benchmark"] == "mmar" and r["ci95"])
    assert f"| 90%: [{row['ci95'][0]:.4f}, {row['ci95'][1]:.4f}] |" in markdown


def test_a_rerun_after_a_config_change_rescores_what_the_file_now_asks_for(swept, tiny_audio, tmp_path, monkeypatch):
    """limit 2 -> 1, then conditions [full, none] -> [full]: nothing is generated again, but results.json and
    the leaderboard follow outputs.jsonl (never the n or the rows of the config before)."""
    out, _ = swept
    shutil.copytree(out, tmp_path / "swept")
    config = tmp_path / "sweep.yaml"

    def rerun(conditions: str) -> tuple[int, Counting, dict, dict]:
        config.write_text(
            "\n".join(
                [
                    "out: swept",
                    f"models: [{{name: phi4, model: {tiny_audio['phi4-multimodal']}}}]",
                    f"benchmarks: [{{benchmark: mmar, data: {out.parent / 'mmar'}, limit: 1}}]",
                    f"conditions: {conditions}",
                    "templates: [plain]",
                    "batch_size: 2",
                    "decoding: {max_new_tokens: 3}",
                    "score: {scorers: [accuracy]}",
                    "audio_check: 0",
                ]
            )
            + "\n",
            encoding="utf-8",
        )
        with pytest.MonkeyPatch.context() as patch:
            counting = Counting(patch)
            with contextlib.redirect_stdout(io.StringIO()):
                status = main(["evaluate", "--config", str(config), "--no-progress"])
        run = tmp_path / "swept" / "phi4" / "mmar"
        return (
            status,
            counting,
            json.loads((run / "results.json").read_text()),
            json.loads((tmp_path / "swept" / "leaderboard.json").read_text()),
        )

    status, counting, results, board = rerun("[full, none]")
    outputs = (tmp_path / "swept" / "phi4" / "mmar" / "outputs.jsonl").read_text().splitlines()
    assert status == 0 and counting.units == 0 and len(outputs) == 2  # one item x two conditions, kept
    assert [(s["condition"], s["n"]) for s in results["sets"]] == [("full", 1), ("none", 1)]
    assert results["run"]["limit"] == 1
    assert {(r["model"], r["benchmark"]) for r in board["rows"]} == {("phi4", "mmar")}  # the runs it lists
    assert {r["n"] for r in board["rows"]} == {1}
    record = json.loads((tmp_path / "swept" / "sweep.json").read_text())
    assert [(r["units"], r["done_before"], r["ran"], r["scored"]) for r in record["runs"]] == [(2, 2, 0, "now")]

    status, counting, results, board = rerun("[full]")
    assert status == 0 and counting.units == 0
    assert [(s["condition"], s["n"]) for s in results["sets"]] == [("full", 1)]
    assert board["rows"] and not [r for r in board["rows"] if "none" in r["headline"]]
    assert {r["n"] for r in board["rows"]} == {1}

    status, counting, _, again = rerun("[full]")  # nothing changed: nothing loaded, the scores kept
    assert status == 0 and counting.built == [] and again == board
    record = json.loads((tmp_path / "swept" / "sweep.json").read_text())
    assert record["runs"][0]["scored"] == "kept (same outputs, same options)"


def test_the_example_sweep_validates():
    from audioreason.cli.sweep_config import load_sweep

    sweep = load_sweep(str(ROOT / "examples" / "text_prior_sweep.yaml"), check_paths=False)
    assert [m.label for m in sweep.models] == ["qwen2-audio", "qwen2.5-omni"]
    assert [(m.tb_adapter, m.tb_model) for m in sweep.models] == [
        ("text-lm", "Qwen/Qwen-7B-Chat"),
        ("text-lm", "Qwen/Qwen2.5-7B-Instruct"),
    ]
    assert [(b.benchmark, b.label) for b in sweep.benchmarks] == [
        ("mmar", "mmar"),
        ("mmau_test_mini", "mmau-test-mini"),
    ]
    from audioreason.inference.conditions import parse_conditions

    names = [c.name for c in parse_conditions(sweep.conditions)]
    assert names == ["full", "none", "tb"] + [f"frag:{n}:{k}" for n in range(2, 6) for k in range(n)]
    assert sweep.score.scorers == ["accuracy", "text_prior_decomposition"] and sweep.batch_size == 8
    assert sweep.folder(sweep.models[1], sweep.benchmarks[1]).parts[-3:] == (
        "text-prior",
        "qwen2.5-omni",
        "mmau-test-mini",
    )


GOOD = {
    "out": "o",
    "models": [{"name": "a", "model": "qwen2-audio"}],
    "benchmarks": [{"benchmark": "mmar", "data": "some/hub-id"}],
    "conditions": ["full"],
}


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"model": "x"},
            "(top level).model: unknown key (known: audio_check, audio_check_seed, batch_size, benchmarks",
        ),
        ({"models": [{"name": "a", "model": "m", "dtype": "bfloat16"}]}, "models[0].dtype: unknown key"),
        (
            {"models": [{"model": "m", "adapter": "vllm"}]},
            "models[0].adapter: 'vllm' is not one of transformers, text-lm",
        ),
        (
            {"models": [{"model": "m", "options": {"dtyp": "x"}}]},
            "models[0].options.dtyp: the transformers adapter takes no option 'dtyp'",
        ),
        ({"models": [{"model": "m", "options": {"device": "cuda"}}]}, "models[0].options.device: the transformers"),
        ({"models": [{"model": "./nowhere"}]}, "models[0].model: './nowhere' does not exist"),
        ({"models": [{"model": "a/m"}, {"model": "b/m"}]}, "models[1].name: 'm' names two entries"),
        (
            {"benchmarks": [{"benchmark": "mmau-pro", "data": "d"}]},
            "benchmarks[0].benchmark: unknown benchmark 'mmau-pro'",
        ),
        ({"benchmarks": [{"benchmark": "mmar"}]}, "benchmarks[0].data: required"),
        ({"benchmarks": [{"benchmark": "mmar", "data": "d", "limit": 0}]}, "benchmarks[0].limit: must be a positive"),
        ({"conditions": ["full", "mute"]}, "conditions: unknown condition 'mute'"),
        ({"conditions": ["full", "tb"]}, "models[0].tb: the tb condition needs a text backbone"),
        ({"templates": ["cot"]}, "templates: unknown template"),
        ({"decoding": {"max_new_tokens": 0}}, "decoding: max_new_tokens must be a positive integer"),
        ({"decoding": {"beams": 2}}, "decoding.beams: unknown key"),
        ({"conditions": [{"a": 1}]}, "conditions: expected a list of names"),
        ({"score": {"scorers": ["rouge"]}}, "score: unknown scorer(s) ['rouge']"),
        ({"score": {"judge": "x"}}, "score.judge: unknown key"),
        # every value's type and range, named by its key
        ({"decoding": {"seed": "abc"}}, "decoding: seed must be an integer (or null), got 'abc'"),
        ({"decoding": {"temperature": True}}, "decoding: temperature must be >= 0, got True"),
        ({"decoding": {"top_p": [1]}}, "decoding: top_p must be in (0, 1], got [1]"),
        (
            {"models": [{"model": "m", "options": {"max_audio_s": [1, 2]}}]},
            "models[0].options.max_audio_s: expected a number or null, got list",
        ),
        (
            {"models": [{"model": "m", "options": {"max_audio_s": -3}}]},
            "models[0].options.max_audio_s: max_audio_s must be None or a positive number of seconds, got -3",
        ),
        (
            {"models": [{"model": "m", "options": {"dtype": {"x": 1}}}]},
            "models[0].options.dtype: expected a string, got dict",
        ),
        (  # a served model's URL is checked with the rest, not when its run starts
            {"models": [{"model": "m", "adapter": "openai", "options": {"base_url": "ftp://user:sk-secret@x/v1"}}]},
            "models[0].options.base_url: base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got "
            "'ftp://user:[REDACTED]@x/v1'",
        ),
        (
            {"models": [{"model": "gpt", "adapter": "openai", "options": {"timeout_s": "slow"}}]},
            "models[0].options.timeout_s: expected a number, got str",
        ),
        (
            {"models": [{"model": "gpt", "adapter": "openai", "options": {"default_headers": "Bearer sk-secret-1"}}]},
            "models[0].options.default_headers: expected a mapping or null, got str",
        ),
        ({"models": [{"model": ["a", "b"]}]}, "models[0].model: expected a string, got list"),
        ({"models": [{"model": "m", "name": True}]}, "models[0].name: expected a string, got bool"),
        ({"models": [{"model": "m", "adapter": ["openai"]}]}, "models[0].adapter: expected a string, got list"),
        ({"benchmarks": [{"benchmark": "mmar", "data": {"x": 1}}]}, "benchmarks[0].data: expected a string, got dict"),
        (
            {"benchmarks": [{"benchmark": "mmar", "data": "d", "limit": "5"}]},
            "benchmarks[0].limit: must be a positive integer, got '5'",
        ),
        (
            {"benchmarks": [{"benchmark": "mmar", "data": "d", "limit": [5]}]},
            "benchmarks[0].limit: must be a positive integer, got list",
        ),
        ({"out": ["a"]}, "out: expected a string, got list"),
        ({"score": {"confidence": "high"}}, "score.confidence: expected a number, got str"),
        ({"score": {"confidence": 1.5}}, "score: confidence must be a number strictly between 0 and 1"),
        ({"score": {"compat": "yes"}}, "score.compat: expected true or false, got str"),
        ({"score": {"aria_backbones": {"lm": "x"}}}, "score.aria_backbones: expected a string, got dict"),
        # names the sweep's own files take in its out folder
        (
            {"models": [{"name": "sweep.json", "model": "m"}]},
            "models[0].name: 'sweep.json' is the name of one of the files a sweep writes",
        ),
        ({"models": [{"model": "org/run.lock"}]}, "models[0].name: 'run.lock' is the name of one of the files"),
        (
            {"benchmarks": [{"benchmark": "mmar", "data": "d", "name": "Leaderboard.md"}]},
            "benchmarks[0].name: 'Leaderboard.md' is the name of one of the files a sweep writes",
        ),
    ],
)
def test_a_mistake_in_the_sweep_file_stops_it_before_any_work(tmp_path, capsys, change, message):
    import yaml

    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump({**GOOD, **change}), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--config", str(config)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"audioreason evaluate: error: {config}: ") and message in err, err
    assert err.count(str(config)) == 1, err  # the file is named once, never repeated by a nested check
    assert not (tmp_path / "o").exists() and "sk-secret" not in err


def laughs(levels: int = 9) -> str:
    """A YAML "billion laughs" in flow style: ten 1s, each level ten aliases of the one below (10**levels)."""
    value = "&l1 [" + ", ".join(["1"] * 10) + "]"
    for n in range(2, levels + 1):
        value = f"&l{n} [{value}, " + ", ".join([f"*l{n - 1}"] * 9) + "]"
    return value


# The child reads each file under an address-space limit set after its imports: an expansion that is built
# fails there with MemoryError instead of taking the machine's memory.
BOUNDED_CHILD = """
import contextlib, io, json, resource, sys
from audioreason.cli import main
from audioreason.cli.sweep_config import load_sweep
load_sweep(sys.argv[1], check_paths=False)  # every module the check imports, before the limit
size = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), resource.RLIM_INFINITY))
for path in sys.argv[2:]:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            main(["evaluate", "--config", path])
        code = 0
    except SystemExit as stop:
        code = stop.code
    except BaseException as error:
        code = type(error).__name__
    print(json.dumps([code, err.getvalue()]), flush=True)
"""


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads its memory from Linux /proc")
def test_yaml_aliases_that_expand_past_the_bound_are_refused_before_they_are_built(tmp_path):
    import yaml

    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(GOOD), encoding="utf-8")
    documents = {
        "batch_size": "batch_size: {}\n",
        "decoding.max_new_tokens": "decoding: {{max_new_tokens: {}}}\n",
        "models[0].name": "models: [{{name: {}, model: qwen2-audio}}]\n",
        "benchmarks[0].limit": "benchmarks: [{{benchmark: mmar, data: d, limit: {}}}]\n",
    }
    paths = []
    for key, line in documents.items():
        base = {k: v for k, v in GOOD.items() if k != key.split("[")[0].split(".")[0]}
        paths.append(tmp_path / f"{key}.yaml")
        paths[-1].write_text(yaml.safe_dump(base) + line.format(laughs()), encoding="utf-8")
    child = subprocess.run(
        [sys.executable, "-c", BOUNDED_CHILD, str(good), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    replies = [json.loads(line) for line in child.stdout.splitlines()]
    assert len(replies) == len(paths), child.stderr[-2000:]
    for path, (code, err) in zip(paths, replies):
        assert code == 2 and err.count("\n") == 1, (path.name, code, err[:500])
        assert (
            err.startswith(f"audioreason evaluate: error: {path}: line ")
            and "holds more than 100000 values once its YAML aliases are expanded" in err
        ), err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "text, message",
    [
        ("models: [{name: a, model: m, options: &o {dtype: *o}}]\n", "line {line}: an alias inside its own anchor"),
        ("models: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply to read"),
    ],
)
def test_a_value_that_contains_itself_or_nests_past_the_reader_is_refused(tmp_path, capsys, text, message):
    import yaml

    config = tmp_path / "sweep.yaml"
    rest = yaml.safe_dump({k: v for k, v in GOOD.items() if k != "models"})
    config.write_text(rest + text, encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--config", str(config)])
    err = capsys.readouterr().err
    message = message.format(line=rest.count("\n") + 1)  # the models line, after the rest
    assert exit_info.value.code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "o").exists()


def test_run_options_beside_a_sweep_file_are_refused(tmp_path, capsys):
    import yaml

    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump(GOOD), encoding="utf-8")
    for extra, option in (
        (["--batch-size", "4"], "--batch-size"),
        (["--model", "m"], "--model"),
        (["--scorers", "aria"], "--scorers"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(["evaluate", "--config", str(config), *extra])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and f"error: {option} goes in the sweep file" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--config", str(tmp_path / "missing.yaml")])
    assert exit_info.value.code == 2 and "cannot read the sweep file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:  # without a sweep file, evaluate still needs its run options
        main(["evaluate", "--benchmark", "mmar"])
    assert exit_info.value.code == 2 and "required: --model, --data, --out" in capsys.readouterr().err
