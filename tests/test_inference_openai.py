"""The OpenAI-compatible audio adapter against a real HTTP server process (tests/judge_server.py) that decodes
the posted base64 WAV with the standard library and answers with what it measured: the audio sent is the
audio given, to the sample; audio=None sends no audio part; 429s are retried; failures come back as
counted, scrubbed errors without taking the batch down."""

import base64
import hashlib
import io
import json
import time
import wave

import numpy as np
import pytest
from inference_fixtures import mmar_raw  # noqa: F401 (fixture)
from judge_server import running_server

from audioreason.inference import AudioInput, DecodingParams, GenerationRequest, ModelAdapter
from audioreason.inference.openai_audio import OpenAIAudioAdapter

SECRET = "sk-test-audio-0123456789abcdefSECRET"
SYSTEM = {"role": "system", "content": "You are an audio assistant."}
MEASURE = {"measure_audio": True, "expect_rate": 16000}
SCRIPT = {
    "scenarios": {
        "measure": [MEASURE],
        "measure_22k": [{"measure_audio": True, "expect_rate": 22050}],
        "rate_limited": [
            {"status": 429, "headers": {"Retry-After": "0.2"}, "body": {"error": {"message": "slow down"}}},
            MEASURE,
        ],
        "always_429": [{"status": 429, "body": {"error": {"message": "slow down"}}}],
        "mixed": [
            {
                "by_text": {
                    "LEAK": {"echo_auth": True, "status": 401},
                    "BROKEN": {"status": 500, "body": {"error": {"message": "model crashed"}}},
                    "NULL": {
                        "raw_body": json.dumps(
                            {"choices": [{"message": {"content": None}, "finish_reason": "content_filter"}]}
                        )
                    },
                },
                "default": MEASURE,
            }
        ],
        "slow": [{"hang_s": 0.5, "then": MEASURE}],
        "leaky": [{"reply": "The answer is (A).", "echo_auth_reply": True}],  # a proxy quoting the request's key
        "plain": [{"reply": "The answer is (B)."}],
        # the first reply stops halfway through its body (its event stream) and the connection closes
        "cut_body": [{"reply": "The answer is (A).", "cut_body": True}, {"reply": "The answer is (A)."}],
        "cut_stream": [{"reply": "The answer is (A).", "cut_body": True}, {"reply": "The answer is (A)."}],
        "bad_usage": [
            {
                "by_text": {"ABC": {"reply": "R1", "usage": ["abc", 5]}, "NEG": {"reply": "R2", "usage": [-1000, 5]}},
                "default": {"reply": "R3", "usage": [7, 2]},
            }
        ],
        "null_content": [
            {
                "raw_body": json.dumps(
                    {
                        "choices": [{"message": {"content": None}, "finish_reason": "length"}],
                        "usage": {"prompt_tokens": 7, "completion_tokens": 5},
                    }
                )
            }
        ],
    }
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(SCRIPT, tmp_path_factory.mktemp("audio_server")) as handle:
        yield handle


@pytest.fixture
def make_adapter(server, monkeypatch):
    monkeypatch.setenv("AUDIO_TEST_KEY", SECRET)
    made = []

    def make(scenario, **options):
        options.setdefault("timeout_s", 5.0)
        options.setdefault("backoff_base_s", 0.01)
        adapter = OpenAIAudioAdapter(scenario, base_url=server.base_url, api_key_env="AUDIO_TEST_KEY", **options)
        made.append(adapter)
        return adapter

    yield make
    for adapter in made:
        adapter.close()


def pcm16_clip(frames, rate=16000, seed=0):
    """A clip whose samples are exact 16-bit values (k / 32768), so the WAV must carry them bit for bit."""
    ints = np.random.default_rng(seed).integers(-32768, 32768, frames).astype(np.int16)
    return ints, AudioInput(ints.astype(np.float32) / 32768.0, rate, source_seconds=frames / rate)


def request(key, text, audio=None, system=True):
    messages = ([SYSTEM] if system else []) + [{"role": "user", "content": text}]
    return GenerationRequest(key, messages, audio)


def sent(server, scenario):
    return [r for r in server.requests() if r["scenario"] == scenario]


def test_the_audio_sent_is_the_audio_given_to_the_sample(make_adapter, server):
    ints, clip = pcm16_clip(7259)  # 0.4536875 s: an odd length that no frame rounding would keep
    adapter = make_adapter("measure")
    [gen] = adapter.generate([request("a", "What do you hear?", clip)], DecodingParams(max_new_tokens=64))
    assert gen.ok and gen.error is None
    measured = json.loads(gen.text)
    assert measured["parts"] == ["input_audio", "text"]  # audio first, then the message's own text
    assert measured["text"] == "What do you hear?"
    assert measured["audio"] == [
        {
            "format": "wav",
            "rate": 16000,
            "channels": 1,
            "sample_width": 2,
            "frames": 7259,
            "pcm_sha256": hashlib.sha256(ints.astype("<i2").tobytes()).hexdigest(),
        }
    ]
    [logged] = sent(server, "measure")
    assert logged["messages"][0] == SYSTEM  # other messages go as they were given
    assert logged["params"] == {"temperature": 0.0, "top_p": 1.0, "max_tokens": 64, "seed": 0}
    assert logged["authorization_sent"]
    assert gen.details["attempts"] == 1 and gen.details["call_errors"] == {}
    assert (gen.prompt_tokens, gen.completion_tokens, gen.finish_reason) == (10, len(gen.text) // 4, "stop")


def test_audio_after_the_text_when_asked(make_adapter):
    _, clip = pcm16_clip(800)
    adapter = make_adapter("measure", audio_position="last")
    [gen] = adapter.generate([request("a", "Describe it.", clip)], DecodingParams())
    assert json.loads(gen.text)["parts"] == ["text", "input_audio"]


def test_a_clip_at_another_rate_is_resampled_to_the_adapter_rate(make_adapter):
    clip = AudioInput(np.sin(np.arange(11025) / 7.0).astype(np.float32) * 0.5, 22050, source_seconds=0.5)
    [gen] = make_adapter("measure").generate([request("a", "Q", clip)], DecodingParams())
    audio = json.loads(gen.text)["audio"][0]
    assert (audio["rate"], audio["frames"]) == (16000, 8000)  # 11025 * 16000 / 22050


def test_the_sampling_rate_option_sets_the_wav_rate(make_adapter):
    ints, clip = pcm16_clip(2205, rate=22050)
    [gen] = make_adapter("measure_22k", sampling_rate=22050).generate([request("a", "Q", clip)], DecodingParams())
    audio = json.loads(gen.text)["audio"][0]
    assert (audio["rate"], audio["frames"]) == (22050, 2205)
    assert audio["pcm_sha256"] == hashlib.sha256(ints.astype("<i2").tobytes()).hexdigest()


def test_no_audio_sends_the_messages_unchanged_and_no_audio_part(make_adapter, server):
    adapter = make_adapter("measure")
    given = request("none", "Answer from the question alone: (A) dog (B) cat.")
    [gen] = adapter.generate([given], DecodingParams())
    assert json.loads(gen.text) == {"parts": ["text"], "text": given.messages[1]["content"], "audio": []}
    [logged] = [r for r in sent(server, "measure") if "question alone" in json.dumps(r["messages"])]
    assert logged["messages"] == [dict(m) for m in given.messages]  # a plain string, no silence


def test_a_batch_runs_concurrently(make_adapter):
    _, clip = pcm16_clip(1600)
    adapter = make_adapter("slow", concurrency=8)
    started = time.perf_counter()
    gens = adapter.generate([request(f"k{i}", f"item {i}", clip) for i in range(6)], DecodingParams())
    wall = time.perf_counter() - started
    assert all(g.ok for g in gens)
    assert wall < 6 * 0.5 / 2, f"6 requests of 0.5 s took {wall:.2f} s: not concurrent"
    assert [json.loads(g.text)["text"] for g in gens] == [f"item {i}" for i in range(6)]  # in request order
    assert 0.5 <= sum(g.seconds for g in gens) <= wall  # each its share of the batch, not its own 0.5 s


def test_429_is_retried_after_retry_after(make_adapter, server):
    ints, clip = pcm16_clip(1234)
    adapter = make_adapter("rate_limited")
    started = time.perf_counter()
    [gen] = adapter.generate([request("a", "Q", clip)], DecodingParams())
    assert gen.ok and json.loads(gen.text)["audio"][0]["frames"] == 1234
    assert time.perf_counter() - started >= 0.2  # waited for Retry-After
    assert gen.details["attempts"] == 2 and gen.details["call_errors"] == {"rate_limited": 1}
    assert len(sent(server, "rate_limited")) == 2
    assert adapter.stats == {
        "requests": 1,
        "ok": 1,
        "failed": 0,
        "retries": 1,
        "call_errors": {"rate_limited": 1},
        "failures": {},
    }


def test_exhausted_retries_become_a_counted_error(make_adapter):
    adapter = make_adapter("always_429", max_attempts=3, max_retry_after_s=0.01)
    [gen] = adapter.generate([request("a", "Q")], DecodingParams())
    assert gen.text is None and gen.error.startswith("rate_limited: gave up after 3 attempts")
    assert gen.details["attempts"] == 3 and gen.details["call_errors"] == {"rate_limited": 3}
    assert adapter.stats["failed"] == 1 and adapter.stats["failures"] == {"rate_limited": 1}


def test_failures_are_counted_scrubbed_and_do_not_take_the_batch_down(make_adapter, server):
    _, clip = pcm16_clip(3200)
    adapter = make_adapter("mixed", max_audio_s=0.1, server_error_attempts=2)
    long_clip = pcm16_clip(1601)[1]  # 0.100063 s > 0.1 s
    gens = adapter.generate(
        [
            request("ok", "fine", pcm16_clip(1600)[1]),
            request("leak", "LEAK"),
            request("broken", "BROKEN"),
            request("null", "NULL"),
            request("long", "too long", long_clip),
        ],
        DecodingParams(),
    )
    ok, leak, broken, null, long = gens
    assert ok.ok and json.loads(ok.text)["audio"][0]["frames"] == 1600
    assert leak.text is None and leak.error.startswith("client_error: HTTP 401")
    assert SECRET not in leak.error and SECRET[8:20] not in leak.error and "[REDACTED]" in leak.error
    assert broken.error.startswith("server_error: gave up after 2 server errors") and "model crashed" in broken.error
    assert null.text is None and null.error.startswith("empty_reply") and null.finish_reason == "content_filter"
    assert long.error.startswith("invalid_request: the clip is 0.100 s, longer than this model's max_audio_s of 0.1 s")
    assert long.details["attempts"] == 0
    assert not [r for r in sent(server, "mixed") if "too long" in json.dumps(r["messages"])]  # never sent
    assert adapter.stats["requests"] == 5 and adapter.stats["ok"] == 1 and adapter.stats["failed"] == 4
    assert adapter.stats["failures"] == {"client_error": 1, "server_error": 1, "empty_reply": 1, "invalid_request": 1}
    assert SECRET not in json.dumps([g.to_dict() for g in gens]) + repr(adapter) + adapter.description
    assert SECRET not in server.log_text()


def test_a_text_only_adapter_refuses_audio_and_a_request_needs_a_user_message(make_adapter):
    adapter = make_adapter("measure", takes_audio=False)
    _, clip = pcm16_clip(160)
    with_audio, no_user = adapter.generate(
        [request("a", "Q", clip), GenerationRequest("b", [SYSTEM], pcm16_clip(160)[1])], DecodingParams()
    )
    assert with_audio.error == (
        "invalid_request: measure is text-only (takes_audio=False) but the request carries audio"
    )
    [text] = adapter.generate([request("c", "Q")], DecodingParams())
    assert text.ok
    audio_adapter = make_adapter("measure")
    [no_user] = audio_adapter.generate([GenerationRequest("b", [SYSTEM], clip)], DecodingParams())
    assert no_user.error == "invalid_request: the messages have no user message to carry the input"


def test_sampling_parameters_are_sent(make_adapter, server):
    [gen] = make_adapter("measure").generate(
        [request("s", "sampled please")], DecodingParams(max_new_tokens=7, temperature=0.7, top_p=0.9, seed=None)
    )
    [logged] = [r for r in sent(server, "measure") if "sampled please" in json.dumps(r["messages"])]
    assert logged["params"] == {"temperature": 0.7, "top_p": 0.9, "max_tokens": 7}


def test_adapter_identity_and_options(server):
    adapter = OpenAIAudioAdapter(
        "Qwen/Qwen2-Audio-7B-Instruct", base_url=server.base_url, max_audio_s=30, name="qwen2-audio-vllm"
    )
    assert isinstance(adapter, ModelAdapter)
    assert (adapter.name, adapter.max_audio_s, adapter.sampling_rate, adapter.takes_audio) == (
        "qwen2-audio-vllm",
        30.0,
        16000,
        True,
    )
    assert adapter.description == (
        "Qwen/Qwen2-Audio-7B-Instruct via an OpenAI-compatible server (chat completions; "
        "input_audio: 16-bit PCM WAV at 16000 Hz, at most 30 s)"
    )
    assert server.base_url not in adapter.description
    assert adapter.generate([], DecodingParams()) == []
    for bad in (
        {"sampling_rate": 0},
        {"sampling_rate": 16000.0},
        {"max_audio_s": 0},
        {"max_audio_s": float("inf")},
        {"audio_position": "middle"},
        {"request_budget_s": -1},
        {"concurrency": 0},
    ):
        with pytest.raises(ValueError):
            OpenAIAudioAdapter("m", base_url=server.base_url, **bad)


def test_a_request_budget_bounds_its_attempts(make_adapter):
    adapter = make_adapter("slow", timeout_s=5.0, request_budget_s=0.2)
    [gen] = adapter.generate([request("a", "Q")], DecodingParams())
    assert gen.text is None and gen.error.startswith("deadline: "), gen.error
    assert adapter.stats["failed"] == 1


def test_encode_wav_quantizes_each_sample_to_16_bits():
    from audioreason.audio.io import encode_wav

    x = np.random.default_rng(3).uniform(-1.5, 1.5, 999).astype(np.float32)
    with wave.open(io.BytesIO(encode_wav(x, 8000))) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()) == (8000, 1, 2, 999)
        pcm = np.frombuffer(w.readframes(999), "<i2").astype(np.float64) / 32768.0
    assert np.max(np.abs(pcm - np.clip(x, -1, 1))) <= 1 / 32768 + 1e-9
    assert base64.b64decode(base64.b64encode(encode_wav(x, 8000))) == encode_wav(x, 8000)


def test_encode_wav_writes_the_bytes_libsndfile_writes():
    # encode_wav is numpy + the wave module; the WAVs it sends must stay byte for byte what soundfile
    # (libsndfile) wrote before: its rounding, its clipping at +-1, its header, float32 and float64 alike.
    import soundfile as sf

    from audioreason.audio.io import encode_audio, encode_wav

    rng = np.random.default_rng(5)
    exact = np.arange(-65536, 65537) / 65536  # every k/32768 and every half step between them
    edges = np.array([1.0, -1.0, 1.5, -1.5, 0.99999999, -0.99999999, 1e-12, -1e-12, 0.0, -0.0, 3 / 65536])
    cases = [
        (exact, 16000),
        (exact.astype(np.float32), 16000),
        (edges, 8000),
        (edges.astype(np.float32), 8000),
        (rng.uniform(-1.3, 1.3, 48001).astype(np.float32), 16000),
        (rng.uniform(-1, 1, 4001), 22050),
        (rng.normal(0, 0.4, (900, 2)).astype(np.float32), 44100),
        (rng.normal(0, 0.4, (300, 3)), 16000),
        (np.zeros(1, np.float32), 16000),
    ]
    for samples, rate in cases:
        buffer = io.BytesIO()
        sf.write(buffer, np.clip(samples, -1.0, 1.0), rate, subtype="PCM_16", format="WAV")
        assert encode_wav(samples, rate) == buffer.getvalue(), (samples.dtype, samples.shape, rate)
        assert encode_audio(samples, rate, "wav") == buffer.getvalue()


def test_a_reply_quoting_the_key_is_scrubbed_in_outputs_and_shards(make_adapter, mmar_raw, tmp_path):
    from audioreason.inference.runner import RunConfig, run

    adapter = make_adapter("leaky")
    out = tmp_path / "run"
    summary = run(
        RunConfig(
            model="leaky",
            benchmark="mmar",
            data=str(mmar_raw),
            out=str(out),
            conditions=["none"],
            templates=["plain"],
            limit=2,
            decoding=DecodingParams(max_new_tokens=8),
            progress=False,
        ),
        {"main": adapter},
    )
    assert summary["counts"]["ok"] == 2
    written = (out / "outputs.jsonl").read_text() + "".join(p.read_text() for p in (out / "shards").iterdir())
    assert SECRET not in written and SECRET[8:20] not in written
    records = [json.loads(line) for line in (out / "outputs.jsonl").read_text().splitlines()]
    assert [r["output"] for r in records] == ["The answer is (A). (request header: Bearer [REDACTED])"] * 2
    assert [r["details"]["scrubbed"] for r in records] == [True, True]
    [clean] = make_adapter("plain").generate([request("c", "Q")], DecodingParams())
    assert clean.text == "The answer is (B)." and "scrubbed" not in clean.details  # an ordinary reply is untouched


def test_a_key_in_the_base_urls_query_is_kept_out_of_logs_and_records(server, monkeypatch, caplog):
    import logging

    query_key = "q-0123456789-QUERYSECRET"
    monkeypatch.setenv("AUDIO_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    adapter = OpenAIAudioAdapter(
        "leaky", base_url=f"{server.base_url}?key={query_key}", api_key_env="AUDIO_TEST_KEY", timeout_s=5.0
    )
    try:
        [gen] = adapter.generate([request("a", f"Q {query_key}")], DecodingParams())
    finally:
        adapter.close()
    assert "HTTP Request: POST" in caplog.text  # httpx logged the request, with its URL
    logged = caplog.text + json.dumps(gen.to_dict()) + repr(adapter) + adapter.description
    assert query_key not in logged and SECRET not in logged and "key=[REDACTED]" in caplog.text


@pytest.mark.parametrize("scenario, stream", [("cut_body", False), ("cut_stream", True)])
def test_a_reply_cut_off_midway_is_retried_not_an_unreachable_server(make_adapter, server, scenario, stream):
    # The run's very first request reaches the server, which closes the connection halfway through the
    # reply: a fault of that one reply, retried and counted, never "cannot connect to the server".
    adapter = make_adapter(scenario, stream=stream)
    [gen] = adapter.generate([request("a", "Q")], DecodingParams())
    assert gen.error is None and gen.text == "The answer is (A)."
    assert gen.details["attempts"] == 2 and gen.details["call_errors"] == {"connection_error": 1}
    assert len(sent(server, scenario)) == 2 and all(
        r["params"].get("stream") is (True if stream else None) for r in sent(server, scenario)
    )
    assert adapter.stats["retries"] == 1 and adapter.stats["call_errors"] == {"connection_error": 1}


def test_a_reply_with_unusable_token_counts_is_kept_with_its_usage_unknown(make_adapter, server):
    adapter = make_adapter("bad_usage")
    gens = adapter.generate([request("a", "ABC"), request("b", "NEG"), request("c", "fine")], DecodingParams())
    # paid for once each and kept: no retry, no error; the counts that are no token counts are unknown
    assert [(g.text, g.error, g.details["attempts"]) for g in gens] == [
        ("R1", None, 1),
        ("R2", None, 1),
        ("R3", None, 1),
    ]
    assert [(g.prompt_tokens, g.completion_tokens) for g in gens] == [(None, None), (None, None), (7, 2)]
    assert gens[0].details["unusable_usage"] == 'usage.prompt_tokens is "abc", not a token count >= 0'
    assert gens[1].details["unusable_usage"] == "usage.prompt_tokens is -1000, not a token count >= 0"
    assert "unusable_usage" not in gens[2].details
    assert len(sent(server, "bad_usage")) == 3


def test_a_reply_without_text_keeps_the_tokens_the_server_counted(make_adapter):
    [gen] = make_adapter("null_content").generate([request("a", "Q")], DecodingParams())
    assert gen.text is None and gen.error == "empty_reply: the reply has no text (finish_reason='length')"
    assert (gen.prompt_tokens, gen.completion_tokens) == (7, 5)
