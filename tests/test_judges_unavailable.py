"""A judge that cannot work is a configuration error raised before any item is scored, never a failed item
or a quiet 0: a missing key, the run's first request refused (401, 403, 404) or a server that cannot be
reached. Through the scorer classes and the evaluate modules, against a real HTTP server process
(tests/judge_server.py) and a closed port. Transient failures stay counted per item, and the first contact
is the first item's own request (compat sends nothing extra)."""

import json
import socket
from pathlib import Path

import pytest
from judge_server import running_server

from audioreason.judges import JudgeUnavailable, OpenAICompatibleJudge
from audioreason.judges.client import is_local_url
from audioreason.scorers.audiospan_rubric.scorer import AudioSpanRubricScorer
from audioreason.scorers.mmar_rubrics.scorer import MMARRubricsScorer

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "mmar_subset.jsonl"
ITEMS = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()][:3]
ANSWERS = [item["answer"] for item in ITEMS]  # every answer right: every item goes to the judge
OEQ = {
    "id": "oeq-0",
    "question": "What happens and when?",
    "reference_answer": "Applause at 12:30.",
    "rubric": [{"text": "Names the applause", "importance": "essential", "time_range": None, "localization": False}],
}


def verdict(item, scores):
    return json.dumps(
        [{"name": c["name"], "score": s, "justification": "checked"} for c, s in zip(item["rubric"], scores)]
    )


SCRIPT = {
    "scenarios": {
        "refused": [{"status": 401, "body": {"error": {"message": "Incorrect API key provided: sk-abc***xyz"}}}],
        "forbidden": [{"status": 403, "body": {"error": {"message": "no access to this model"}}}],
        # a model the server does not know: judge_server answers 404 for a scenario it has no script for
        "busy_first": [{"status": 500, "body": {"error": {"message": "overloaded"}}}, {"reply_from_marker": True}],
        "marker": [{"reply_from_marker": True}],
    },
    "refused_gets": {"/forbidden/": 403, "/unlisted/": 404, "/failing/": 500},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(SCRIPT, tmp_path_factory.mktemp("unavailable_server")) as handle:
        yield handle


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once the socket is closed


def judge(base_url, model, **kw):
    return OpenAICompatibleJudge(
        model, base_url=base_url, api_key_env="UNAVAILABLE_TEST_KEY", backoff_base_s=0.01, timeout_s=5.0, **kw
    )


def seen(server, model):
    return [r for r in server.requests() if r["scenario"] == model]


def reasonings():
    return [f"reasoning {n} REPLY: {verdict(item, [1, 0, 0, 0, 0])}" for n, item in enumerate(ITEMS)]


CAUSES = {
    "refused": "the server refused the credentials: check the key in UNAVAILABLE_TEST_KEY: HTTP 401",
    "forbidden": "the server denied access with this key",
    "no-such-model": "unknown model 'no-such-model', or no chat-completions endpoint at this base_url: HTTP 404",
}


@pytest.mark.parametrize("model", list(CAUSES))
@pytest.mark.parametrize("compat", [False, True])
def test_a_refused_first_request_raises_before_any_item_is_scored(server, model, compat):
    scorer = MMARRubricsScorer(judge(server.base_url, model), compat=compat)
    before = len(seen(server, model))
    with pytest.raises(JudgeUnavailable) as raised:
        scorer.score(ITEMS, reasonings(), ANSWERS)
    message = str(raised.value)
    assert message.startswith(f"judge {model} at {server.base_url} is unavailable: ") and CAUSES[model] in message
    assert "sk-abc" not in message  # what the server quoted is scrubbed
    # One request, the first item's own (rater 0), and nothing after it: no retry (not 20
    # back-offs per rater), no other item.
    (request,) = seen(server, model)[before:]
    assert request["messages"] == scorer.messages(ITEMS[0], reasonings()[0], ANSWERS[0])


def test_a_closed_port_raises_naming_the_server():
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(
        JudgeUnavailable,
        match=rf"judge marker at {base_url} is unavailable: cannot connect to the "
        r"server: Connection error",
    ):
        MMARRubricsScorer(judge(base_url, "marker"), compat=True).score(ITEMS, reasonings(), ANSWERS)


def test_reach_asks_the_model_list_and_fails_only_on_a_refusal_or_no_connection(server, monkeypatch):
    import asyncio

    monkeypatch.setenv("UNAVAILABLE_TEST_KEY", "sk-reach-secret")
    root = server.base_url[: -len("/v1")]

    async def reach(base_url):
        client = judge(base_url, "marker")
        try:
            await client.reach()
        finally:
            await client.aclose()

    before = len(server.requests())
    for listed in ("/v1", "/unlisted/v1", "/failing/v1"):  # the list, no list (404), a 5xx: left to the work
        asyncio.run(reach(root + listed))
    assert len(server.requests()) == before  # GETs only: not one chat request
    with pytest.raises(JudgeUnavailable) as raised:
        asyncio.run(reach(root + "/forbidden/v1"))
    assert str(raised.value) == (
        f"judge marker at {root}/forbidden/v1 is unavailable: the server denied access with this key: check the "
        'key\'s permissions for the model: HTTP 403 to GET models: {"error": {"message": "refused GET '
        '/forbidden/v1/models"}}'
    )
    closed = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(JudgeUnavailable, match=rf"^judge marker at {closed} is unavailable: cannot connect"):
        asyncio.run(reach(closed))


def test_a_missing_key_for_a_remote_server_raises_without_a_request(monkeypatch):
    monkeypatch.delenv("UNAVAILABLE_TEST_KEY", raising=False)
    # A name that resolves nowhere: had a request been tried, the error would be a connection error.
    remote = judge("https://judge.invalid/v1", "gpt-4o")
    with pytest.raises(
        JudgeUnavailable,
        match="judge gpt-4o at https://judge.invalid/v1 is unavailable: no API key: "
        "set the environment variable UNAVAILABLE_TEST_KEY",
    ):
        MMARRubricsScorer(remote).score(ITEMS, reasonings(), ANSWERS)
    with pytest.raises(JudgeUnavailable, match="no API key"):
        remote.check_key()
    assert remote._per_loop == {}  # no HTTP client was ever made
    # api_key_env=None says the server takes no key: then there is nothing to miss.
    OpenAICompatibleJudge("gpt-4o", base_url="https://judge.invalid/v1", api_key_env=None).check_key()


def test_a_missing_key_for_openai_raises(monkeypatch):
    monkeypatch.delenv("UNAVAILABLE_TEST_KEY", raising=False)
    openai_judge = OpenAICompatibleJudge("gpt-4o-2024-11-20", api_key_env="UNAVAILABLE_TEST_KEY")
    with pytest.raises(JudgeUnavailable, match="at the OpenAI API is unavailable: no API key"):
        MMARRubricsScorer(openai_judge, compat=True).score(ITEMS, reasonings(), ANSWERS)


@pytest.mark.parametrize(
    "url, local",
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://localhost:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://10.1.2.3/v1", True),
        ("http://192.168.0.7:8000/v1", True),
        ("http://vllm:8000/v1", True),
        ("http://gpu.localhost/v1", True),
        ("https://api.openai.com/v1", False),
        ("https://generativelanguage.googleapis.com/v1beta/openai/", False),
        ("http://8.8.8.8/v1", False),
    ],
)
def test_which_servers_may_go_without_a_key(url, local):
    assert is_local_url(url) is local


def test_the_audiospan_scorer_raises_too(server):
    with pytest.raises(JudgeUnavailable, match="HTTP 401"):
        AudioSpanRubricScorer(judge(server.base_url, "refused")).score([OEQ], ["Applause at 12:30."])


def test_the_evaluate_modules_raise(server):
    import evaluate

    mmar = evaluate.load(str(ROOT / "metrics" / "mmar_rubrics"))
    with pytest.raises(JudgeUnavailable, match="unknown model 'gpt-4o-2024-11-20'"):
        mmar.compute(
            predictions=reasonings(),
            references=[i["id"] for i in ITEMS],
            answers=ANSWERS,
            items=str(FIXTURE),
            base_url=server.base_url,
            api_key_env="UNAVAILABLE_TEST_KEY",
            compat=True,
        )
    span = evaluate.load(str(ROOT / "metrics" / "audiospan_rubric"))
    with pytest.raises(JudgeUnavailable, match="cannot connect"):
        span.compute(
            predictions=["Applause at 12:30."],
            references=[json.dumps(OEQ)],
            judge_model="span-judge",
            base_url=f"http://127.0.0.1:{closed_port()}/v1",
            api_key_env="UNAVAILABLE_TEST_KEY",
        )


def test_transient_failures_after_contact_stay_per_item(server):
    """A 500 on the first request is a busy server, not a broken configuration: that rater retries and the
    run goes on."""
    scorer = MMARRubricsScorer(judge(server.base_url, "busy_first"), raters=1)
    result = scorer.score(ITEMS, reasonings(), ANSWERS)
    assert result["n_judged"] == 3 and result["n_failed"] == 0 and result["rubrics"] == pytest.approx(0.2)
    assert result["judge_stats"]["server_errors"] == 3  # each item's first request: step 1 of its conversation
    assert len(seen(server, "busy_first")) == 6


def test_compat_sends_only_the_items_requests(server):
    scorer = MMARRubricsScorer(judge(server.base_url, "marker"), compat=True)
    result = scorer.score(ITEMS, reasonings(), ANSWERS)
    assert result["rubrics"] == pytest.approx(0.2) and result["n_judged"] == 3
    requests = seen(server, "marker")
    expected = [scorer.messages(i, r, a) for i, r, a in zip(ITEMS, reasonings(), ANSWERS)]
    assert len(requests) == 3 * 5 and all(r["messages"] in expected for r in requests)
    assert all(r["params"] == {"temperature": 0, "seed": 42} for r in requests)


def test_the_space_shows_the_cause(server):
    import importlib.util

    import gradio as gr

    spec = importlib.util.spec_from_file_location("mmar_rubrics_app", ROOT / "metrics" / "mmar_rubrics" / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    records = json.dumps(dict(ITEMS[0], reasoning="r", predicted_answer=ITEMS[0]["answer"]))
    with pytest.raises(gr.Error, match="unknown model 'no-such-model'"):
        app.score(records, "no-such-model", server.base_url, "UNAVAILABLE_TEST_KEY", True, 5, "server")
