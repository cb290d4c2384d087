"""The pieces of the served-model path without a server: the factory's option checks, the presets' values,
usage and cost arithmetic, the prices file's checks, redaction of what run.json shows, and the joining of a
streamed reply."""

import json

import pytest

from audioreason.inference.endpoints import ENDPOINT_PRESETS, merge_preset
from audioreason.inference.hosted import cost_of, load_prices, public_options, usage_summary
from audioreason.inference.runner import make_adapter
from audioreason.judges.client import read_event_stream


def test_the_factory_builds_openai_adapters_from_a_name_and_options():
    adapter = make_adapter(
        "openai",
        "gemini-2.5-flash",
        endpoint_preset="gemini",
        concurrency=3,
        backoff_base_s=0.5,
        audio_format="mp3",
        device="cpu",
    )  # device: the runner's, dropped
    assert adapter.kind == "openai" and adapter.name == "gemini-2.5-flash"
    assert adapter.client.base_url == "https://generativelanguage.googleapis.com/v1beta/openai/"
    assert adapter.client.api_key_env == "GEMINI_API_KEY" and adapter.client.concurrency == 3
    assert adapter.client.backoff_base_s == 0.5 and adapter.audio_format == "mp3"  # given wins over the preset
    assert adapter.max_audio_s == 9.5 * 3600
    with pytest.raises(ValueError, match="the openai adapter takes no option 'dtype'"):
        make_adapter("openai", "m", base_url="http://127.0.0.1:1/v1", dtype="float16")
    with pytest.raises(ValueError, match="audio_format must be one of"):
        make_adapter("openai", "m", base_url="http://127.0.0.1:1/v1", audio_format="flac")


def test_presets_hold_what_the_providers_document():
    dashscope = merge_preset("dashscope-qwen-omni", {"base_url": "http://127.0.0.1:1/v1"})
    assert dashscope["base_url"] == "http://127.0.0.1:1/v1" and dashscope["stream"] is True
    assert dashscope["data_prefix"] == "data:;base64," and dashscope["extra_body"] == {"modalities": ["text"]}
    assert ENDPOINT_PRESETS["vllm-qwen2-audio"].max_audio_s == 30.0
    assert ENDPOINT_PRESETS["openai-audio"].max_audio_s is None  # none documented: none invented
    for preset in ENDPOINT_PRESETS.values():
        assert preset.sources and all(s.startswith("https://") for s in preset.sources)
        assert preset.audio_format in ("wav", "mp3") and preset.limit_note


def record(key, condition, error=None, attempts=1, audio_s=3.0, tokens=(10, 2), model="m"):
    return {
        "key": key,
        "condition": condition,
        "model": model,
        "error": error,
        "tokens": {"prompt": tokens[0] if error is None else 0, "completion": tokens[1] if error is None else 0},
        "details": {"attempts": attempts, "audio_s": audio_s},
        "audio": {"seconds": audio_s},
    }


def test_usage_counts_every_request_and_cost_follows_the_prices(tmp_path):
    records = [
        record("a", "full"),
        record("b", "full", attempts=3),
        record("c", "full", error="server_error: x", attempts=2),
        record("c", "full"),
        record("d", "none", audio_s=0.0),
        record("z", "full"),
    ]
    usage = usage_summary(records, keys={"a", "b", "c", "d"})  # "z" is another command's unit
    assert usage["total"] == {
        "records": 5,
        "ok": 4,
        "failed": 1,
        "requests_sent": 8,
        "retried_records": 2,
        "retries": 3,
        "prompt_tokens": 40,
        "completion_tokens": 8,
        "replies_without_usage": 0,
        "unrecorded_requests": 0,
        "audio_s_sent": 21.0,
    }
    assert usage["by_condition"]["none"]["audio_s_sent"] == 0.0 and usage["by_condition"]["full"]["records"] == 4
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "currency: EUR\nmodels:\n  m: {prompt_per_million: 1.0, completion_per_million: 4.0, audio_per_second: 0.001}\n"
    )
    cost = cost_of(usage, load_prices(str(prices)))
    # 40 x 1e-6 + 8 x 4e-6 + 21 s x 0.001 = 0.00004 + 0.000032 + 0.021
    assert cost["total"] == pytest.approx(0.021072) and cost["currency"] == "EUR" and cost["unpriced_models"] == []
    assert cost["incomplete_models"] == {}


def test_replies_without_token_counts_are_counted_not_read_as_zero():
    unreported = {**record("a", "full"), "tokens": {"prompt": None, "completion": None}}
    failed = record("b", "full", error="server_error: x")  # no reply: not a reply without usage
    local = {
        "key": "c",
        "condition": "full",
        "model": "m",
        "error": None,
        "tokens": {"prompt": None, "completion": None},
    }
    empty = {**record("e", "full", error="empty_reply: no text"), "tokens": {"prompt": None, "completion": None}}
    usage = usage_summary([unreported, failed, record("d", "full"), local, empty])
    # the API replies that arrived without counts (the empty one too); a local record (no attempts) is not a
    # server reply, and a request that got no reply (0 tokens recorded) has nothing to count
    assert usage["total"]["replies_without_usage"] == 2 and usage["total"]["prompt_tokens"] == 10
    assert usage["by_model"]["m"]["replies_without_usage"] == 2


@pytest.mark.parametrize(
    "content, message",
    [
        ("[]", 'expected an object with a non-empty "models"'),
        ('{"models": {"m": {"prompt_per_token": 1}}}', "models.m.prompt_per_token is not one of"),
        ('{"models": {"m": {"prompt_per_million": -1}}}', "must be a price >= 0"),
        ('{"models": {"m": {"audio_per_second": 1, "audio_per_minute": 60}}}', "give one"),
    ],
)
def test_a_bad_prices_file_says_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "prices.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        load_prices(str(path))


def test_run_json_never_shows_header_values_or_url_secrets():
    shown = public_options(
        {
            "base_url": "https://user:pw123@host/v1?key=AIzaSECRET&x=1",
            "default_headers": {"Authorization": "Bearer sk-SECRET"},
            "lm_options": {"base_url": "http://h/v1?api-key=SECRET2"},
            "concurrency": 4,
        }
    )
    text = json.dumps(shown)
    assert "SECRET" not in text and "pw123" not in text
    assert shown["default_headers"] == {"Authorization": "<redacted>"} and shown["concurrency"] == 4
    assert shown["base_url"].startswith("https://user:<redacted>@host/v1?key=")


def test_a_streamed_reply_is_joined_with_its_usage():
    chunk = {"id": "x", "object": "chat.completion.chunk"}
    body = (
        "".join(
            f"data: {json.dumps(e)}\n\n"
            for e in [
                {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "The answer "}}]},
                {**chunk, "choices": [{"index": 0, "delta": {"content": "is (A)."}, "finish_reason": "stop"}]},
                {**chunk, "choices": [], "usage": {"prompt_tokens": 31, "completion_tokens": 5}},
            ]
        )
        + "data: [DONE]\n\n"
    )
    completion = read_event_stream(": keep-alive\n\n" + body)
    assert (completion.text, completion.finish_reason) == ("The answer is (A).", "stop")
    assert (completion.prompt_tokens, completion.completion_tokens) == (31, 5)
    assert completion.usage_reported
    unreported = read_event_stream(body.replace(', "usage": {"prompt_tokens": 31, "completion_tokens": 5}', ""))
    assert unreported.text == "The answer is (A)." and not unreported.usage_reported
    with pytest.raises(Exception, match="no chunk"):
        read_event_stream("data: [DONE]\n\n")


def test_requests_the_journal_saw_sent_but_no_record_holds_are_counted(tmp_path):
    from audioreason.base.jsonl import DataFileError
    from audioreason.inference.prompts import parse_templates
    from audioreason.inference.runner import SentJournal, read_sent, unit_key

    (template,) = parse_templates(["plain"])
    a, b = unit_key("m", "full", template, "a"), unit_key("m", "none", template, "b")
    journal = SentJournal(tmp_path / "rank-0.sent")
    for key, audio_s in ((a, 3.0), (a, 3.0), (a, 3.0), (b, 0.0)):  # a: 2 recorded + 1 lost to a kill; b: lost
        journal.sent(key, audio_s)
    journal.close()
    sent = read_sent(tmp_path)
    assert sent[a] == {"requests": 3, "audio_s": 3.0, "model": "m", "condition": "full"}
    usage = usage_summary([record(a, "full", attempts=2)], keys={a, b}, sent=sent)
    assert (usage["total"]["requests_sent"], usage["total"]["unrecorded_requests"]) == (4, 2)
    assert usage["total"]["audio_s_sent"] == 9.0 and usage["total"]["records"] == 1
    assert usage["by_condition"]["none"] == {
        **usage["by_condition"]["none"],
        "requests_sent": 1,
        "unrecorded_requests": 1,
        "records": 0,
    }
    cost = cost_of(usage, {"currency": "USD", "models": {"m": {"prompt_per_million": 1.0}}, "source": "p"})
    assert cost["incomplete_models"] == {"m": 2}  # their tokens are unknown
    # a line cut by the kill (that request was not sent yet) is dropped; a damaged one elsewhere is named
    with open(tmp_path / "rank-0.sent", "a") as f:
        f.write('{"key": "[\\"m\\"')
    assert read_sent(tmp_path)[a]["requests"] == 3
    again = SentJournal(tmp_path / "rank-0.sent")
    again.sent(b, 0.0)
    again.close()
    assert read_sent(tmp_path)[b]["requests"] == 2  # the torn line was cut before the next one was written
    (tmp_path / "rank-1.sent").write_text('{"key": "not a unit key", "audio_s": 1}\n')
    with pytest.raises(DataFileError, match=r"rank-1.sent:1: expected \{"):
        read_sent(tmp_path)
