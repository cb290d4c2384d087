"""Structured outputs (audioreason.judges.structured): the verdict's JSON Schema by hand, what a structured judge
sends (read from the scripted server's log, tests/judge_server.py), the wrapped reply it reads, and that compat
mode never sends it (the official MMAR-Rubrics scorer sends no response_format)."""

import json

import pytest
from judge_server import running_server

from audioreason.judges import (
    JsonReplySchema,
    JudgeRequest,
    JudgeRunner,
    OpenAICompatibleJudge,
    SamplingParams,
    VerdictSchema,
)
from audioreason.judges.structured import response_format, verdict_json_schema
from audioreason.scorers.mmar_rubrics.scorer import MMARRubricsScorer

RUBRIC = [{"name": "Names the bell", "choices": [0, 1]}, {"name": "Times the ring", "choices": [0, 0.5, 1]}]
SCHEMA = VerdictSchema.from_criteria(RUBRIC)
WRAPPED = json.dumps(
    {
        "verdicts": [
            {"name": "Times the ring", "score": 0.5, "justification": "near"},
            {"name": "Names the bell", "score": 1, "justification": "says bell"},
        ]
    }
)
JUSTIFICATION = {"type": "string"}


def criterion(name, kind, options):
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": [name]},
            "score": {"type": kind, "enum": options},
            "justification": JUSTIFICATION,
        },
        "required": ["name", "score", "justification"],
        "additionalProperties": False,
    }


def test_the_criteria_schema_by_hand():
    assert verdict_json_schema(SCHEMA) == {
        "type": "object",
        "required": ["verdicts"],
        "additionalProperties": False,
        "properties": {
            "verdicts": {
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "items": {
                    "anyOf": [
                        criterion("Names the bell", "integer", [0, 1]),
                        criterion("Times the ring", "number", [0.0, 0.5, 1.0]),
                    ]
                },
            }
        },
    }
    assert response_format(SCHEMA) == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "strict": True, "schema": verdict_json_schema(SCHEMA)},
    }


def test_one_criterion_positional_criteria_one_score_and_other_replies():
    one = verdict_json_schema(VerdictSchema.from_criteria(RUBRIC[:1]))
    assert one["properties"]["verdicts"]["items"] == criterion("Names the bell", "integer", [0, 1])
    by_position = verdict_json_schema(VerdictSchema.from_criteria(RUBRIC, match_names=False))
    assert by_position["properties"]["verdicts"]["items"]["properties"]["name"] == {"type": "string"}
    assert by_position["properties"]["verdicts"]["items"]["properties"]["score"] == {
        "type": "number",
        "enum": [0.0, 0.5, 1.0],
    }
    assert verdict_json_schema(VerdictSchema.single_score((1, 2, 3, 4, 5))) == {
        "type": "object",
        "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}, "justification": JUSTIFICATION},
        "required": ["score", "justification"],
        "additionalProperties": False,
    }
    assert response_format(JsonReplySchema("rubric", lambda v: v, "a list")) is None  # nothing to send


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    script = {"scenarios": {"wrapped": [{"reply": WRAPPED}]}}
    with running_server(script, tmp_path_factory.mktemp("structured_server")) as handle:
        yield handle


def judge(server, **options):
    return OpenAICompatibleJudge("wrapped", base_url=server.base_url, api_key_env=None, timeout_s=5.0, **options)


def request(tag):
    return JudgeRequest(tag, [{"role": "user", "content": f"[{tag}] grade it"}], SCHEMA)


def sent(server, tag):
    return [r["params"] for r in server.requests() if f"[{tag}]" in r["messages"][0]["content"]]


def test_a_structured_judge_sends_the_schema_and_reads_the_wrapped_list(server):
    sampling = SamplingParams(max_tokens=64)
    runner = JudgeRunner(judge(server, structured_outputs=True), sampling=sampling)
    [result] = runner.run([request("on")])
    assert result.ok and [(s.name, s.score) for s in result.verdict.scores] == [
        ("Names the bell", 1),
        ("Times the ring", 0.5),
    ]
    [params] = sent(server, "on")
    assert params == {"temperature": 0.0, "seed": 42, "max_tokens": 64, "response_format": response_format(SCHEMA)}
    plain = JudgeRunner(judge(server), sampling=sampling)
    [off] = plain.run([request("off")])
    assert sent(server, "off") == [{"temperature": 0.0, "seed": 42, "max_tokens": 64}]  # off by default
    assert off.ok and plain.key(request("x")) != runner.key(request("x"))  # a different request, cached apart
    assert "structured_outputs=True" in repr(runner.judge) and "structured" not in repr(plain.judge)


def test_compat_refuses_structured_outputs_and_the_option_is_checked():
    with pytest.raises(ValueError, match="compat sends what the official scorer sends"):
        MMARRubricsScorer(
            OpenAICompatibleJudge("m", base_url="http://127.0.0.1:9/v1", structured_outputs=True), compat=True
        )
    MMARRubricsScorer(OpenAICompatibleJudge("m", base_url="http://127.0.0.1:9/v1", structured_outputs=True))
    with pytest.raises(ValueError, match="structured_outputs must be True or False"):
        OpenAICompatibleJudge("m", structured_outputs="yes")


def test_the_cli_option_reaches_the_judge_and_the_recorded_options():
    import argparse

    from audioreason.cli.score_args import add_score_arguments, score_options
    from audioreason.evaluation.score import build_judge

    parser = argparse.ArgumentParser()
    parser.add_argument("--no-progress", action="store_true")
    add_score_arguments(parser)
    args = parser.parse_args(["--judge-base-url", "http://127.0.0.1:9/v1", "--judge-structured-outputs"])
    options = score_options(args)
    assert options.judge.structured_outputs is True and options.to_dict()["judge"]["structured_outputs"] is True
    for scorer in ("mmar_rubrics", "audiospan_rubric"):
        options.judge.model = None if scorer == "mmar_rubrics" else "m"
        judge, reason = build_judge(scorer, options.judge)
        assert reason is None and judge.structured_outputs is True
    plain = score_options(parser.parse_args(["--judge-base-url", "http://127.0.0.1:9/v1"]))
    assert build_judge("mmar_rubrics", plain.judge)[0].structured_outputs is False
