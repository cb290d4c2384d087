"""The construction's roles (ROLES.yaml), its reply-schema check, and its model calls: a stage's JSON Schema sent
as response_format / decoded under by a local model, cached by request so a second session pays nothing."""

from __future__ import annotations

import asyncio

import pytest

from audioreason.base.errors import UsageError
from audioreason.construct.calls import (
    DEFAULT_MAX_REASKS,
    LOCAL_CONTEXT_CHARS,
    LOCAL_MAX_NEW_TOKENS,
    LOCAL_MAX_REASKS,
    LOCAL_MAX_STRING,
    Calls,
    cap_strings,
    stage_schema,
)
from audioreason.construct.roles import ROLES, offline_roles, parse_roles
from audioreason.construct.schema_check import check_json, check_schema
from audioreason.judges.constrained import grammar_for
from audioreason.judges.structured import response_format
from audioreason.judges.verdicts import JsonReplySchema

SEGMENTS = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 400},
        "first_line": {"type": "integer", "enum": [0, 3, 5]},
        "topics": {"type": "array", "items": {"type": "string", "maxLength": 20}, "minItems": 1, "maxItems": 2},
    },
    "required": ["title", "first_line", "topics"],
    "additionalProperties": False,
}


def _roles(**changes):
    roles = {r: {"model": f"m-{r}", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None} for r in ROLES}
    roles.update(changes)
    return {"roles": roles}


def test_every_role_must_be_named_and_each_mistake_is_named():
    specs = parse_roles(_roles(asr={"local": "packaged:whisper-tiny.en"}, captioner={"offline": True}))
    assert [s.kind for s in specs.values()] == [
        "local",
        "endpoint",
        "offline",
        "endpoint",
        "endpoint",
        "endpoint",
        "endpoint",
    ]
    assert specs["solver"].temperature == 1.0 and specs["generator"].temperature == 0.0
    content = _roles()
    del content["roles"]["critic"]
    cases = [
        (content, "no model named for critic"),
        (_roles(judge={"model": "x"}), "unknown roles judge"),
        (_roles(generator={"offline": True}), "offline stands in only for the audio roles"),
        (_roles(verifier={"local": "packaged:SmolLM2-135M-Instruct"}), "no local audio-language model"),
        (_roles(solver={"model": "x", "endpoint": "nowhere"}), "unknown endpoint preset 'nowhere'"),
        (_roles(solver={"model": "x", "base_url": "ftp://h"}), r"roles.solver.base_url must be an http\(s\) URL"),
        (_roles(solver={"model": "x", "concurrency": 0}), "concurrency must be a whole number"),
        (_roles(solver={"base_url": "http://h/v1"}), r"model \(the name the server knows\) is required"),
        ({"roles": {}, "extra": 1}, "unknown top-level keys extra"),
    ]
    for content, message in cases:
        with pytest.raises(UsageError, match=message):
            parse_roles(content, "R.yaml")


def test_the_offline_roles_are_labelled_stand_ins():
    specs = offline_roles("packaged:SmolLM2-135M-Instruct")
    assert specs["asr"].options == {"local": "packaged:whisper-tiny.en"}
    assert {r for r, s in specs.items() if s.kind == "offline"} == {"captioner", "verifier"}


def test_replies_are_held_to_the_schema_subset():
    check_json({"title": "a", "first_line": 3, "topics": ["x"]}, SEGMENTS)
    bad = [
        ({"title": "a", "first_line": 4, "topics": ["x"]}, r"reply.first_line must be one of \[0, 3, 5\]"),
        ({"title": "", "first_line": 0, "topics": ["x"]}, "reply.title must have at least 1 characters"),
        ({"title": "a", "first_line": 0, "topics": []}, "reply.topics must have at least 1 entries"),
        ({"title": "a", "first_line": 0, "topics": ["x" * 21]}, r"reply.topics\[0\] must have at most 20"),
        ({"title": "a", "first_line": True, "topics": ["x"]}, "reply.first_line must be integer"),
        ({"title": "a", "topics": ["x"]}, "reply lacks first_line"),
        ({"title": "a", "first_line": 0, "topics": ["x"], "more": 1}, "keys the schema does not allow: more"),
    ]
    for value, message in bad:
        with pytest.raises(ValueError, match=message):
            check_json(value, SEGMENTS)
    with pytest.raises(ValueError, match="uses pattern, outside the supported subset"):
        check_schema({"type": "string", "pattern": "a+"})


def test_a_stage_schema_is_sent_as_response_format_and_decoded_under_as_json_schema():
    schema = stage_schema("segments", SEGMENTS)
    assert response_format(schema) == {
        "type": "json_schema",
        "json_schema": {"name": "segments", "strict": True, "schema": SEGMENTS},
    }
    assert grammar_for(schema).startswith('json_schema:{"type":"object","properties":{"title"')
    assert schema.to_dict() == {"kind": "json", "name": "segments", "version": "1", "json_schema": SEGMENTS}
    # a schema without one keeps its old description (and so its old cache keys) and sends nothing
    plain = JsonReplySchema(name="rubric", validate=lambda v: v, instructions="")
    assert plain.to_dict() == {"kind": "json", "name": "rubric", "version": "1"} and response_format(plain) is None
    assert stage_schema("s", SEGMENTS, check=lambda v: v["first_line"]).validate({"title": "t", "first_line": 5,
                                                                                   "topics": ["a"]}) == 5  # fmt: skip


def test_local_models_get_every_string_capped():
    capped = cap_strings(SEGMENTS, 100)
    assert capped["properties"]["title"]["maxLength"] == 100
    assert capped["properties"]["topics"]["items"]["maxLength"] == 20
    assert capped["properties"]["first_line"] == SEGMENTS["properties"]["first_line"]
    assert SEGMENTS["properties"]["title"]["maxLength"] == 400  # the stage's own schema is untouched


def test_a_local_role_answers_inside_the_schema_and_a_second_session_pays_nothing(tmp_path):
    specs = offline_roles("packaged:SmolLM2-135M-Instruct")
    calls = Calls(specs, tmp_path / "calls.sqlite")
    schema = stage_schema("segments", SEGMENTS)
    messages = [{"role": "user", "content": "Give a title, the first line (0, 3 or 5) and one topic: rain."}]
    reply = asyncio.run(calls.ask("segmenter", schema, messages, item="r"))
    check_json(reply, SEGMENTS)
    assert len(reply["title"]) <= LOCAL_MAX_STRING
    assert calls.calls_made()["segmenter"] == 1
    assert dict(calls.counts["segmenter"]["segments"]) == {"asked": 1, "ok": 1}
    assert "strings <= 100 chars" in calls.describe("segmenter")
    # A small model is asked afresh, sampled, and reads cut caption views; an endpoint's model is not.
    runner = calls.runners["generator"]
    assert (runner.max_reasks, runner.on_invalid, runner.reask_sampling["temperature"]) == (
        LOCAL_MAX_REASKS,
        "resend",
        0.8,
    )
    assert calls.context_chars("generator") == calls.context_chars("solver") == LOCAL_CONTEXT_CHARS
    served = Calls(parse_roles(_roles(asr={"local": "packaged:whisper-tiny.en"})), tmp_path / "served.sqlite")
    runner = served.runners["generator"]
    assert (runner.max_reasks, runner.on_invalid, runner.reask_sampling) == (DEFAULT_MAX_REASKS, "reask", None)
    assert served.context_chars("generator") is None
    # A local model's window (SmolLM2: 8,192 positions) less its reply budget holds the prompt; an endpoint's
    # prompt is sent whatever its length.
    judge = calls.runners["segmenter"].judge
    assert judge.max_input_tokens == 8192 - LOCAL_MAX_NEW_TOKENS
    long = [{"role": "user", "content": " rain" * judge.max_input_tokens}]  # a token each, and the template's
    assert calls.prompt_fits("segmenter", messages) and not calls.prompt_fits("segmenter", long)
    assert served.prompt_fits("segmenter", long)
    assert calls.is_local("segmenter") and not served.is_local("segmenter") and served.is_local("asr")
    again = Calls(specs, tmp_path / "calls.sqlite", local_backends=calls._locals)
    assert asyncio.run(again.ask("segmenter", schema, messages, item="r")) == reply
    assert again.calls_made()["segmenter"] == 0 and again.usage()["segmenter"]["cache_hits"] == 1
    # A prompt holding a caption view cut to the local limit is counted as cut (text parts read too).
    from audioreason.construct.records import cut_lines

    view = cut_lines(["0. rain starts", "1. rain stops"], max_chars=15)
    assert view == "0. rain starts\n[1 more line(s) not shown: cut to fit a small model's context]"
    asked = [{"role": "user", "content": messages[0]["content"] + "\n" + view}]
    asyncio.run(again.ask("segmenter", schema, asked, item="r-cut"))
    assert dict(again.counts["segmenter"]["segments"]) == {"asked": 2, "cached": 1, "ok": 2, "cut": 1}
    from audioreason.construct.calls import _texts

    audio = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    parts = [{"role": "system", "content": "s"}, {"role": "user", "content": [audio, {"type": "text", "text": view}]}]
    assert list(_texts(parts)) == ["s", view]  # an audio part's base64 is never searched
    with pytest.raises(ValueError, match="played by 'offline'"):
        asyncio.run(again.ask("verifier", schema, messages, item="r"))
