"""The runner in one process on a tiny checkpoint: one record per (condition, template, item) in item order,
truncation and failures recorded, resume without re-running, failed units retried, torn shard lines, a run
folder of another run refused, not-applicable units counted, batch 1 vs 4 identical, length-sorted batches."""

import json
import shutil

import pytest
from inference_fixtures import mmar_raw, one_thread, tiny_audio  # noqa: F401 (fixtures)

from audioreason.inference import DecodingParams, Generation
from audioreason.inference.conditions import AudioPreparer, Condition
from audioreason.inference.prompts import get_template
from audioreason.inference.runner import (
    OUTPUTS_FILE,
    RUN_FILE,
    RunConfig,
    Unit,
    batches,
    length_sorted,
    load_items,
    plan_units,
    read_shards,
    run,
)
from audioreason.inference.text_lm import TextLMAdapter
from audioreason.inference.transformers_audio import TransformersAudioAdapter

DECODING = DecodingParams(max_new_tokens=5)


@pytest.fixture(scope="module")
def adapter(tiny_audio):
    return TransformersAudioAdapter(str(tiny_audio["phi4-multimodal"]), max_audio_s=2.0)


def config(out, raw, **changes):
    base = dict(
        model="tiny-phi4",
        benchmark="mmar",
        data=str(raw),
        out=str(out),
        conditions=["full", "none", "frag:2"],
        templates=["plain", "aria_cot"],
        limit=3,
        batch_size=4,
        decoding=DECODING,
        progress=False,
    )
    return RunConfig(**{**base, **changes})


def outputs(out):
    return [json.loads(line) for line in (out / OUTPUTS_FILE).read_text().splitlines()]


def shard_lines(out):
    return sum(len(p.read_text().splitlines()) for p in (out / "shards").glob("*.jsonl"))


@pytest.fixture(scope="module")
def first_run(adapter, mmar_raw, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    summary = run(config(out, mmar_raw), {"main": adapter})
    torch.set_num_threads(threads)
    return out, summary


def test_one_record_per_unit_in_item_order(first_run, adapter):
    out, summary = first_run
    records = outputs(out)
    conditions = ["full", "none", "frag:2:0", "frag:2:1"]
    assert [(r["index"], r["condition"], r["template"]["name"]) for r in records] == [
        (i, c, t) for i in range(3) for c in conditions for t in ("plain", "aria_cot")
    ]
    first = records[0]
    assert first["model"] == adapter.name and first["adapter"] == "transformers"
    assert first["template"] == {"name": "plain", "hash": get_template("plain").hash}
    assert first["decoding"] == DECODING.to_dict() and first["error"] is None and first["output"] is not None
    assert first["tokens"]["prompt"] > 0 and 1 <= first["tokens"]["completion"] <= 5
    assert set(first["timings"]) == {"audio_s", "generate_s", "batch_size"}
    assert summary["counts"] == {
        "units": 24,
        "written": 24,
        "missing": 0,
        "ok": 24,
        "failed": 0,
        "failed_by_kind": {},
        "not_applicable": {},
        "truncated": 6,
        "resumed": 0,
        "torn_lines": 0,
        "duplicates": 0,
        "skipped_at_load": 0,
    }
    assert summary["status"] == "finished" and summary["models"]["main"]["max_audio_s"] == 2.0
    session = summary["sessions"][0]
    assert session["world_size"] == 1 and session["ran"] == 24
    assert session["items_per_s"] == pytest.approx(24 / session["generation_s"], rel=1e-2)
    assert {"torch", "transformers", "accelerate", "datasets", "python"} <= set(summary["versions"])
    assert json.loads((out / RUN_FILE).read_text()) == summary


def test_speed_in_samples_per_second_and_real_time_factor(first_run):
    out, summary = first_run
    records, session, speed = outputs(out), summary["sessions"][0], summary["speed"]
    # By hand from the records: per run over the loop's wall seconds, per condition over its records' seconds.
    sent = sum(r["audio"]["seconds"] for r in records)  # 3 items x 2 templates x (2.0 + 0 + 1.5 + 1.5) = 30 s
    assert sent == pytest.approx(30.0) and session["audio_s"] == pytest.approx(30.0)
    assert session["real_time_factor"] == pytest.approx(30.0 / session["generation_s"], rel=1e-2)
    assert speed["samples"] == 24 and speed["samples_per_s"] == pytest.approx(session["items_per_s"], rel=1e-2)
    assert speed["real_time_factor"] == pytest.approx(session["real_time_factor"], rel=1e-2)
    assert speed["unavailable"] is None
    full = [r for r in records if r["condition"] == "full"]
    seconds = sum(r["timings"]["generate_s"] for r in full)
    entry = speed["by_condition"]["full"]
    assert entry["samples"] == 6 and entry["audio_s"] == pytest.approx(12.0)
    assert entry["samples_per_s"] == pytest.approx(6 / seconds, rel=1e-2)
    assert entry["real_time_factor"] == pytest.approx(12.0 / seconds, rel=1e-2)
    # no audio sent: no factor (never 0)
    assert speed["by_condition"]["none"]["real_time_factor"] is None
    assert speed["by_condition"]["none"]["samples_per_s"] > 0


def test_truncation_is_recorded_per_item(first_run):
    records = outputs(first_run[0])
    by_condition = {r["condition"]: r["audio"] for r in records if r["index"] == 0 and r["template"]["name"] == "plain"}
    assert by_condition["full"] == {
        "seconds": 2.0,
        "source_seconds": 3.0,
        "truncated": True,
        "max_audio_s": 2.0,
        "sampling_rate": 16000,
    }
    assert by_condition["none"]["seconds"] == 0.0 and by_condition["none"]["truncated"] is False
    assert by_condition["frag:2:1"]["seconds"] == 1.5 and by_condition["frag:2:1"]["truncated"] is False
    assert by_condition["frag:2:1"]["fragment"] == {"n": 2, "k": 1, "start_s": 1.5, "end_s": 3.0}


def test_a_rerun_resumes_without_running_anything(first_run, adapter, mmar_raw, tmp_path, one_thread):
    out = tmp_path / "copy"
    shutil.copytree(first_run[0], out)
    before = outputs(out)
    summary = run(config(out, mmar_raw), {"main": adapter})
    assert summary["counts"]["resumed"] == 24 and shard_lines(out) == 24
    assert [s["ran"] for s in summary["sessions"]] == [24, 0]
    assert outputs(out) == before
    # the resumed session sent no audio; the run's speed stays the first session's
    assert summary["sessions"][1]["audio_s"] == 0 and summary["sessions"][1]["real_time_factor"] is None
    assert summary["speed"]["samples"] == 24 and summary["speed"]["audio_s"] == pytest.approx(30.0)


class FailingOnce:
    """A real adapter whose first answer for one key is an error (a timeout, an OOM...)."""

    def __init__(self, inner, key):
        self.inner, self.key, self.failed = inner, key, False
        for name in ("name", "description", "max_audio_s", "sampling_rate", "takes_audio", "kind"):
            setattr(self, name, getattr(inner, name))

    def generate(self, requests, decoding):
        out = self.inner.generate(requests, decoding)
        for i, r in enumerate(requests):
            if r.key == self.key and not self.failed:
                self.failed = True
                out[i] = Generation(text=None, error="TimeoutError: no reply")
        return out


def test_failed_units_are_counted_then_retried(first_run, adapter, mmar_raw, tmp_path, one_thread):
    key = outputs(first_run[0])[5]["key"]
    flaky = FailingOnce(adapter, key)
    out = tmp_path / "flaky"
    summary = run(config(out, mmar_raw), {"main": flaky})
    assert summary["counts"]["failed"] == 1 and summary["counts"]["failed_by_kind"] == {"model": 1}
    failed = [r for r in outputs(out) if r["error"]]
    assert [r["key"] for r in failed] == [key] and failed[0]["output"] is None
    summary = run(config(out, mmar_raw), {"main": flaky})
    assert summary["counts"]["failed"] == 0 and summary["counts"]["resumed"] == 23
    assert [r["output"] for r in outputs(out)] == [r["output"] for r in outputs(first_run[0])]


def test_a_torn_last_line_is_cut_and_counted(first_run, adapter, mmar_raw, tmp_path, one_thread):
    out = tmp_path / "torn"
    shutil.copytree(first_run[0], out)
    shard = out / "shards" / "rank-0.jsonl"
    lines = shard.read_text().splitlines(keepends=True)
    shard.write_text("".join(lines[:-1]) + lines[-1][:40])  # killed while writing the last record
    assert read_shards(out / "shards").torn_lines == 1
    summary = run(config(out, mmar_raw), {"main": adapter})
    assert summary["counts"]["torn_lines"] == 1 and summary["counts"]["resumed"] == 23
    assert shard.read_text().endswith("\n") and len(shard.read_text().splitlines()) == 24
    assert [r["key"] for r in outputs(out)] == [r["key"] for r in outputs(first_run[0])]


def test_a_damaged_shard_line_is_an_error(first_run, tmp_path):
    out = tmp_path / "damaged"
    shutil.copytree(first_run[0], out)
    shard = out / "shards" / "rank-0.jsonl"
    lines = shard.read_text().splitlines(keepends=True)
    shard.write_text(lines[0] + "{oops\n" + "".join(lines[1:]))
    with pytest.raises(ValueError, match="rank-0.jsonl:2: not valid JSON"):
        read_shards(out / "shards")


def test_a_last_line_torn_inside_a_utf8_character_is_cut_counted_and_redone(
    first_run, adapter, mmar_raw, tmp_path, one_thread
):
    out = tmp_path / "torn-utf8"
    shutil.copytree(first_run[0], out)
    shard = out / "shards" / "rank-0.jsonl"
    lines = shard.read_bytes().splitlines(keepends=True)
    last = json.dumps({**json.loads(lines[-1]), "output": "答え"}, ensure_ascii=False).encode("utf-8")
    cut = last.index("答".encode("utf-8")) + 1  # inside the character's three bytes
    shard.write_bytes(b"".join(lines[:-1]) + last[:cut])
    summary = run(config(out, mmar_raw), {"main": adapter})
    assert summary["counts"]["torn_lines"] == 1 and summary["counts"]["resumed"] == 23
    assert summary["status"] == "finished" and summary["counts"]["written"] == 24
    assert len(shard.read_text().splitlines()) == 24
    assert [(r["key"], r["output"]) for r in outputs(out)] == [(r["key"], r["output"]) for r in outputs(first_run[0])]


def test_a_whole_last_line_without_its_newline_is_torn_too(first_run, adapter, mmar_raw, tmp_path, one_thread):
    # Killed between the record and its newline: the writer cuts such a line, so it is redone, not kept.
    out = tmp_path / "no-newline"
    shutil.copytree(first_run[0], out)
    shard = out / "shards" / "rank-0.jsonl"
    shard.write_text(shard.read_text().rstrip("\n"))
    summary = run(config(out, mmar_raw), {"main": adapter})
    assert summary["counts"]["torn_lines"] == 1 and summary["counts"]["resumed"] == 23
    assert summary["status"] == "finished" and summary["counts"]["written"] == 24
    assert [r["key"] for r in outputs(out)] == [r["key"] for r in outputs(first_run[0])]


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda r: json.dumps([r]), "expected a JSON object, got an array"),
        (lambda r: json.dumps({k: v for k, v in r.items() if k != "key"}), "the record has no key"),
        (lambda r: json.dumps({**r, "key": [r["key"]]}), "key is an array, not a string"),
        (
            lambda r: json.dumps({**r, "template": r["template"]["name"]}),
            "template is a string, not an object {name, hash}",
        ),
        (lambda r: json.dumps(r).replace('"model"', '"m\udcffodel"'), "not valid UTF-8 (byte 0xff at column {col})"),
    ],
)
def test_a_damaged_shard_line_names_the_file_line_and_field(first_run, adapter, mmar_raw, tmp_path, damage, message):
    out = tmp_path / "damaged"
    shutil.copytree(first_run[0], out)
    shard = out / "shards" / "rank-0.jsonl"
    lines = shard.read_text().splitlines(keepends=True)
    bad = damage(json.loads(lines[1])).encode("utf-8", "surrogateescape") + b"\n"
    shard.write_bytes(lines[0].encode() + bad + "".join(lines[2:]).encode())
    with pytest.raises(ValueError) as err:
        run(config(out, mmar_raw), {"main": adapter})
    message = message.replace("{col}", str(bad.find(b"\xff") + 1))
    assert str(err.value) == f"{shard}:2: {message} (the shard is damaged)"


@pytest.mark.parametrize(
    "content, message",
    [
        ("half", "not valid JSON ("),
        ("[]", "expected a JSON object (the run file), got an array"),
        ('{"identity": []}', "identity is an array, not an object"),
        ('{"identity": {"models": "tiny-phi4"}}', "identity.models is a string, not an object"),
        ('{"sessions": {}}', "sessions is an object, not an array"),
    ],
)
def test_a_damaged_run_file_names_the_file(first_run, adapter, mmar_raw, tmp_path, content, message):
    out = tmp_path / "damaged-run-file"
    shutil.copytree(first_run[0], out)
    text = (out / RUN_FILE).read_text()
    (out / RUN_FILE).write_text(text[: len(text) // 2] if content == "half" else content)
    with pytest.raises(ValueError) as err:
        run(config(out, mmar_raw), {"main": adapter})
    assert str(err.value).startswith(f"{out / RUN_FILE}: {message}")
    assert (out / RUN_FILE).read_text() == (text[: len(text) // 2] if content == "half" else content)  # left as found


def test_another_runs_folder_is_refused(first_run, adapter, mmar_raw, tmp_path):
    out = tmp_path / "other"
    shutil.copytree(first_run[0], out)
    with pytest.raises(ValueError, match="different run \\(decoding differ.*max_new_tokens"):
        run(config(out, mmar_raw, decoding=DecodingParams(max_new_tokens=7)), {"main": adapter})


def test_batch_1_and_batch_4_give_identical_outputs(first_run, adapter, mmar_raw, tmp_path, one_thread):
    summary = run(config(tmp_path / "b1", mmar_raw, batch_size=1), {"main": adapter})
    assert summary["counts"]["ok"] == 24
    one = [(r["key"], r["output"], r["tokens"]) for r in outputs(tmp_path / "b1")]
    four = [(r["key"], r["output"], r["tokens"]) for r in outputs(first_run[0])]
    assert one == four
    # 18 audio units -> batches 4,4,4,4,2; 6 no-audio units -> 4,2 (never mixed)
    sizes = [r["timings"]["batch_size"] for r in outputs(first_run[0])]
    assert (sizes.count(4), sizes.count(2)) == (20, 4)


def test_unreadable_audio_is_a_counted_failure(adapter, mmar_raw, tmp_path, one_thread, monkeypatch):
    raw = tmp_path / "raw"
    shutil.copytree(mmar_raw, raw)
    first = json.loads((raw / "MMAR-meta.jsonl").read_text().splitlines()[0])
    wav = raw / first["audio_path"]
    items = load_items("mmar", str(raw))  # the loader reads every header: the files are whole now
    # A file damaged after the items were loaded (the header promises 3 s; the file holds far less): the
    # loader would refuse it at build time, so the runner is handed the items loaded before the damage.
    wav.write_bytes(wav.read_bytes()[:2000])
    monkeypatch.setattr(
        "audioreason.inference.runner.load_items_reported",
        lambda benchmark, data, config=None, limit=None, policy="raise": (items[:limit], []),
    )
    summary = run(config(tmp_path / "out", raw, conditions=["full", "none"], templates=["plain"]), {"main": adapter})
    records = outputs(tmp_path / "out")
    assert summary["counts"]["failed_by_kind"] == {"audio": 1} and summary["counts"]["ok"] == 5
    assert records[0]["error"].startswith("audio: ") and records[0]["output"] is None
    assert records[0]["audio"] == {
        "seconds": 0.0,
        "source_seconds": None,
        "truncated": False,
        "max_audio_s": 2.0,
        "sampling_rate": 16000,
    }
    assert records[1]["condition"] == "none" and records[1]["error"] is None  # no audio needed


def test_a_damaged_file_stops_the_run_before_any_work(adapter, mmar_raw, tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(mmar_raw, raw)
    first = json.loads((raw / "MMAR-meta.jsonl").read_text().splitlines()[0])
    wav = raw / first["audio_path"]
    wav.write_bytes(wav.read_bytes()[:2000])
    with pytest.raises(ValueError, match=f"{first['id']}.*truncated WAV"):
        run(config(tmp_path / "out", raw, conditions=["full"], templates=["plain"]), {"main": adapter})
    assert not (tmp_path / "out" / "outputs.jsonl").exists()


def test_not_applicable_units_are_counted(adapter, mmar_raw, tmp_path, one_thread):
    summary = run(
        config(tmp_path / "na", mmar_raw, conditions=["anchored", "none"], templates=["plain"]), {"main": adapter}
    )
    assert summary["counts"]["not_applicable"] == {"anchored: no anchored variant": 3}
    assert summary["counts"]["units"] == 3 and summary["counts"]["ok"] == 3
    items = [{"id": "m", "question": "Q?", "choices": ["a", "b"]}, {"id": "o", "question": "Q?", "format": "OEQ"}]
    units, skipped = plan_units(
        items,
        [Condition("none")],
        [get_template("aria_cot"), get_template("audiospan")],
        {"main": "m"},
        AudioPreparer(16000, None),
    )
    assert [(u.item_id, u.template.name) for u in units] == [("m", "aria_cot"), ("m", "audiospan"), ("o", "audiospan")]
    assert skipped == {"none: template aria_cot does not fit the item's format": 1}


def test_text_backbone_condition(adapter, mmar_raw, tmp_path, one_thread):
    from tiny_models import build_causal_lm

    lm = build_causal_lm(tmp_path / "lm")
    with pytest.raises(ValueError, match="needs a text backbone"):
        run(config(tmp_path / "x", mmar_raw, conditions=["tb"]))  # refused before any model is loaded
    with pytest.raises(ValueError, match="need adapters for \\['tb'\\]"):
        run(config(tmp_path / "x", mmar_raw, conditions=["tb"], tb_model=str(lm)), {"main": adapter})
    first = run(config(tmp_path / "tb", mmar_raw, conditions=["full"], templates=["plain"]), {"main": adapter})
    assert first["counts"]["ok"] == 3
    # A later session adds the text-backbone condition to the same folder: the full outputs are kept.
    summary = run(
        config(tmp_path / "tb", mmar_raw, conditions=["full", "tb"], templates=["plain"], tb_model=str(lm)),
        {"main": adapter, "tb": TextLMAdapter(str(lm))},
    )
    assert summary["counts"]["resumed"] == 3 and summary["sessions"][-1]["ran"] == 3
    assert set(summary["identity"]["models"]) == {"main", "tb"}
    records = outputs(tmp_path / "tb")
    assert [(r["condition"], r["adapter"], r["model"] == str(lm)) for r in records[:2]] == [
        ("full", "transformers", False),
        ("tb", "text_lm", True),
    ]
    assert summary["counts"]["ok"] == 6 and records[1]["audio"]["seconds"] == 0.0
    assert summary["models"]["tb"]["name"] == str(lm)


def unit(order, seconds, chars, audio=True, role="main"):
    condition = Condition("full" if audio else "none")
    return Unit(
        order,
        order,
        str(order),
        condition,
        get_template("plain"),
        role,
        str(order),
        ({"role": "user", "content": "x" * chars},),
        seconds,
    )


def test_length_sorted_batches_never_mix_adapters_or_audio_presence():
    units = [
        unit(0, 2.0, 10),
        unit(1, 9.0, 10),
        unit(2, 0.0, 50, audio=False),
        unit(3, 9.0, 30),
        unit(4, 0.0, 5, audio=False),
        unit(5, 1.0, 10, role="tb"),
        unit(6, 5.0, 10),
    ]
    ordered = length_sorted(units)
    assert [u.order for u in ordered] == [3, 1, 6, 0, 2, 4, 5]
    assert [[u.order for u in b] for b in batches(ordered, 3)] == [[3, 1, 6], [0], [2, 4], [5]]


def test_embedded_audio_gives_the_same_outputs_as_files(first_run, adapter, mmar_raw, tmp_path, one_thread):
    """A Hub-ready folder (parquet with the audio bytes inside) runs like the raw folder it was exported from."""
    from audioreason.data import build_benchmark, export_benchmark

    dataset, _ = build_benchmark("mmar", mmar_raw, cache_dir=str(tmp_path / "cache"))
    folder = export_benchmark("mmar", dataset.select(range(3)), tmp_path / "hub")
    summary = run(config(tmp_path / "out", folder, fragment_cache=str(tmp_path / "frag")), {"main": adapter})
    assert summary["counts"]["ok"] == 24 and not (tmp_path / "frag").exists()  # bytes are split in memory
    assert [(r["key"], r["output"], r["audio"]) for r in outputs(tmp_path / "out")] == [
        (r["key"], r["output"], r["audio"]) for r in outputs(first_run[0])
    ]


def test_an_option_the_adapter_does_not_take_is_refused_not_dropped():
    from audioreason.inference.runner import make_adapter

    with pytest.raises(ValueError, match=r"the text-lm adapter takes no option 'preset'"):
        make_adapter("text-lm", "any/model", preset="qwen2-audio", device="cpu")


class StoppedAfter:
    """A real adapter stopped (Ctrl-C) on call ``calls + 1``; its first request ever fails when asked."""

    def __init__(self, inner, calls, fail_first=False):
        self.inner, self.calls, self.fail_first = inner, calls, fail_first
        for name in ("name", "description", "max_audio_s", "sampling_rate", "takes_audio", "kind"):
            setattr(self, name, getattr(inner, name))

    def generate(self, requests, decoding):
        if self.calls == 0:
            raise KeyboardInterrupt
        self.calls -= 1
        out = self.inner.generate(requests, decoding)
        if self.fail_first:
            self.fail_first = False
            out[0] = Generation(text=None, error="TimeoutError: no reply")
        return out


def test_a_killed_session_is_recorded_as_interrupted_by_the_next(adapter, mmar_raw, tmp_path, one_thread):
    out = tmp_path / "stopped"
    small = dict(conditions=["full", "none"], templates=["plain"], batch_size=1)  # 3 items x 2 = 6 units
    with pytest.raises(KeyboardInterrupt):  # session 1: one failed, one done, then stopped
        run(config(out, mmar_raw, **small), {"main": StoppedAfter(adapter, 2, fail_first=True)})
    state = json.loads((out / RUN_FILE).read_text())
    assert state["status"] == "running" and state["session"]["units"] == 6 and state.get("sessions", []) == []
    assert not (out / "run.lock").exists()  # released on the way out
    with pytest.raises(KeyboardInterrupt):  # session 2: records session 1 at its start, does one, is stopped
        run(config(out, mmar_raw, **small), {"main": StoppedAfter(adapter, 1)})
    state = json.loads((out / RUN_FILE).read_text())
    [first] = state["sessions"]
    assert first["status"] == "interrupted" and first["counts"] == {"total": 6, "done": 1, "failed": 1}
    assert first["world_size"] == 1 and first["last_write"] is not None
    assert state["status"] == "running" and state["session"]["resumed"] == 1
    summary = run(config(out, mmar_raw, **small), {"main": adapter})
    assert [s.get("status") for s in summary["sessions"]] == ["interrupted", "interrupted", None]
    assert summary["sessions"][1]["counts"] == {"total": 6, "done": 2, "failed": 0}
    assert summary["sessions"][2]["ran"] == 4 and summary["counts"]["ok"] == 6
    assert summary["status"] == "finished" and "session" not in summary
    assert json.loads((out / RUN_FILE).read_text()) == summary and not (out / "run.lock").exists()


def dead_pid():
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def write_lock(out, **content):
    import socket

    out.mkdir(parents=True, exist_ok=True)
    holder = {"host": socket.gethostname(), "started": "2025-01-01T00:00:00+00:00", "process_start": None, **content}
    (out / "run.lock").write_text(json.dumps(holder))


def test_a_live_runs_lock_refuses_a_second_run_naming_it(adapter, mmar_raw, tmp_path):
    import socket
    import subprocess
    import sys

    from audioreason.inference.processes import RunLockError, process_start

    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        write_lock(tmp_path / "held", pid=holder.pid, process_start=process_start(holder.pid))
        with pytest.raises(
            RunLockError,
            match=f"being written by a live run \\(pid {holder.pid} on host "
            f"'{socket.gethostname()}', started 2025-01-01",
        ):
            run(config(tmp_path / "held", mmar_raw), {"main": adapter})
        assert not (tmp_path / "held" / "shards").exists() and not (tmp_path / "held" / RUN_FILE).exists()
    finally:
        holder.kill()
        holder.wait()
    write_lock(tmp_path / "remote", pid=holder.pid, host="another-host")
    with pytest.raises(RunLockError, match="held by a run on another host .*if that run is dead, remove .*run.lock"):
        run(config(tmp_path / "remote", mmar_raw), {"main": adapter})


@pytest.mark.parametrize("holder", ["dead pid", "reused pid", "damaged"])
def test_a_stale_lock_is_taken_over_with_a_message(holder, tmp_path, capsys):
    import os

    from audioreason.inference.processes import RunLock, process_start

    out = tmp_path / "out"
    if holder == "dead pid":
        write_lock(out, pid=dead_pid())
    elif holder == "reused pid":  # the pid runs, but as another process than the one that took the lock
        write_lock(out, pid=os.getpid(), process_start=process_start(os.getpid()) - 1)
    else:
        out.mkdir()
        (out / "run.lock").write_text('{"pid": 12')
    lock = RunLock(out).acquire()
    assert "taking over the stale lock of" in capsys.readouterr().err
    assert json.loads((out / "run.lock").read_text())["pid"] == os.getpid()
    lock.release()
    assert not (out / "run.lock").exists() and sorted(p.name for p in out.iterdir()) == []


def test_a_key_in_the_command_line_never_reaches_the_lock_or_its_messages(tmp_path, monkeypatch):
    """The lock stores the command line and its messages show it: a URL's password and query values are
    scrubbed there as everywhere a URL is shown (issue 33, case 1), and a lock an earlier version wrote with
    the key in it is scrubbed when shown."""
    import subprocess
    import sys

    from audioreason.inference.processes import RunLock, RunLockError, process_start

    argv = [
        "audioreason",
        "run",
        "--base-url",
        "http://user:sk-LEAKED1234567@127.0.0.1:9/v1",
        "--judge-base-url=http://127.0.0.1:9/v1?key=QUERYSECRET99",
        "--model",
        "m",
    ]
    monkeypatch.setattr(sys, "argv", argv)
    lock = RunLock(tmp_path / "out").acquire()
    stored = (tmp_path / "out" / "run.lock").read_text()
    lock.release()
    assert "sk-LEAKED1234567" not in stored and "QUERYSECRET99" not in stored
    command = json.loads(stored)["command"]
    assert command == (
        "audioreason run --base-url http://user:[REDACTED]@127.0.0.1:9/v1 "
        "--judge-base-url=http://127.0.0.1:9/v1?key=[REDACTED] --model m"
    )
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:  # a live holder whose lock (an earlier version's) kept the key as typed
        write_lock(tmp_path / "held", pid=holder.pid, process_start=process_start(holder.pid), command=" ".join(argv))
        with pytest.raises(RunLockError) as refused:
            RunLock(tmp_path / "held").acquire()
    finally:
        holder.kill()
        holder.wait()
    shown = str(refused.value)
    assert "sk-LEAKED1234567" not in shown and "QUERYSECRET99" not in shown and command in shown


def test_a_file_gone_after_load_is_a_counted_failure_under_every_condition(
    adapter, mmar_raw, tmp_path, one_thread, monkeypatch
):
    raw = tmp_path / "raw"
    shutil.copytree(mmar_raw, raw)
    first = json.loads((raw / "MMAR-meta.jsonl").read_text().splitlines()[0])
    items = load_items("mmar", str(raw))
    (raw / first["audio_path"]).unlink()  # gone after the items were loaded (a moved disk, a cleaned folder)
    monkeypatch.setattr(
        "audioreason.inference.runner.load_items_reported",
        lambda benchmark, data, config=None, limit=None, policy="raise": (items[:limit], []),
    )
    summary = run(
        config(tmp_path / "out", raw, conditions=["full", "frag:2", "none"], templates=["plain"]), {"main": adapter}
    )
    assert summary["counts"]["failed_by_kind"] == {"audio": 3} and summary["counts"]["ok"] == 9
    failed = [(r["condition"], r["error"]) for r in outputs(tmp_path / "out") if r["error"]]
    missing = f"audio: audio file not found: {raw / first['audio_path']}"
    assert failed == [("full", missing), ("frag:2:0", missing), ("frag:2:1", missing)]


def test_unreadable_audio_at_load_is_refused_or_skipped_and_counted(adapter, mmar_raw, tmp_path, one_thread):
    raw = tmp_path / "raw"
    shutil.copytree(mmar_raw, raw)
    second = json.loads((raw / "MMAR-meta.jsonl").read_text().splitlines()[1])
    wav = raw / second["audio_path"]
    wav.write_bytes(wav.read_bytes()[:2000])  # the header promises 3 s
    small = dict(conditions=["full"], templates=["plain"])
    with pytest.raises(ValueError, match=f"{second['id']}.*truncated WAV"):  # the default, as load_benchmark's
        run(config(tmp_path / "refused", raw, **small), {"main": adapter})
    with pytest.warns(UserWarning, match="unreadable_audio"):
        summary = run(config(tmp_path / "skip", raw, on_missing_audio="skip", **small), {"main": adapter})
    assert summary["counts"]["skipped_at_load"] == 1 and summary["counts"]["ok"] == 3
    [skipped] = summary["skipped_items"]
    assert skipped["id"] == second["id"] and skipped["reason"].startswith("unreadable_audio: ")
    assert second["id"] not in {r["id"] for r in outputs(tmp_path / "skip")}
    assert summary["config"]["on_missing_audio"] == "skip"
    with pytest.warns(UserWarning, match="unreadable_audio"):
        kept = run(config(tmp_path / "keep", raw, on_missing_audio="keep", **small), {"main": adapter})
    assert kept["counts"]["skipped_at_load"] == 0 and kept["counts"]["failed_by_kind"] == {"audio": 1}
    assert [r["id"] for r in outputs(tmp_path / "keep") if r["error"]] == [second["id"]]
