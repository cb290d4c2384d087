"""MMAR-Rubrics compat mode against a real HTTP server process with scripted replies: what the official scorer
(MMAR repository, code/evaluation_rubrics.py) does where our default differs. Raters in order and the item
dropped at its first failed rater; replies read by position, true/false as 1/0; invalid replies resent
unchanged within 20 attempts; a 5xx ends a rater after 3 requests; the official wording read from the
user's copy of the scorer; alpha undefined on an all-pass judge without losing the scores; bounded time."""

import hashlib
import json
import time
from pathlib import Path

import pytest
from judge_server import running_server

from audioreason.scorers.mmar_rubrics.scorer import MMARRubricsScorer, build_submission, default_judge
from audioreason.text.mmar_official import OfficialPrompt, OfficialScorerError

ROOT = Path(__file__).resolve().parents[1]
ITEMS = [
    json.loads(line)
    for line in (ROOT / "tests" / "fixtures" / "mmar_subset.jsonl").read_text("utf-8").splitlines()
    if line.strip()
]
LOOKALIKE = ROOT / "tests" / "fixtures" / "official_lookalike" / "evaluation_rubrics.py"


def verdict(item, scores, names=None):
    names = names or [c["name"] for c in item["rubric"]]
    return json.dumps([{"name": n, "score": s, "justification": "j"} for n, s in zip(names, scores)])


FULL = verdict(ITEMS[0], [1, 1, 1, 1, 1])
RENAMED = json.dumps(
    [{"name": f"criterion number {n}", "score": s} for n, s in enumerate([True, False, True, 1.0, 0], 1)]
)

SCRIPT = {
    "scenarios": {
        "allpass": [{"reply": FULL}],
        "order": [{"reply": FULL}, {"status": 500, "body": {"error": {"message": "internal"}}}],
        "order_default": [{"reply": verdict(ITEMS[8], [1, 1, 1, 1, 1])}, {"status": 500}],
        "renamed": [{"reply": "Here is my evaluation:\n" + RENAMED + "\nDone."}],
        "resend": [{"reply": "I think the reasoning is fine."}, {"reply": '[{"name": broken'}, {"reply": FULL}],
        "dead": [{"status": 500, "body": {"error": {"message": "dead"}}}],
        "busy": [{"status": 429, "body": {"error": {"message": "slow down"}}}],
        "hang": [{"hang_s": 3.0}],
        "official": [{"reply": FULL}],
    }
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(SCRIPT, tmp_path_factory.mktemp("mmar_compat_server")) as handle:
        yield handle


def judge(server, scenario, compat=True, **kw):
    kw.setdefault("backoff_base_s", 0.001)
    return default_judge(compat, scenario, base_url=server.base_url, api_key_env="JUDGE_TEST_KEY", **kw)


def seen(server, scenario):
    return [r for r in server.requests() if r["scenario"] == scenario]


def test_all_pass_judge_scores_and_reports_alpha_unavailable_also_from_the_cache(server, tmp_path):
    items = ITEMS[:2]
    args = (items, ["r1", "r2"], [it["answer"] for it in items])
    cache = tmp_path / "cache.sqlite"
    first = MMARRubricsScorer(judge(server, "allpass"), compat=True, cache=cache).score(*args)
    again = MMARRubricsScorer(judge(server, "allpass"), compat=True, cache=cache).score(*args)
    for result in (first, again):
        assert result["rubrics"] == 1.0 and result["accuracy"] == 1.0 and result["n_judged"] == 2
        assert result["reliability"]["alpha"] is None
        assert "every pairable score is 1" in result["reliability"]["unavailable"]
    assert first["judge_stats"]["calls"] == 10 and again["judge_stats"]["calls"] == 0
    assert again["judge_stats"]["cache_hits"] == 10


def test_compat_runs_raters_in_order_and_drops_the_item_at_the_first_failure(server):
    item = ITEMS[1]
    result = MMARRubricsScorer(judge(server, "order"), compat=True).score([item], ["r"], [item["answer"]])
    requests = seen(server, "order")
    # rater 0: one valid reply; rater 1: 3 requests answered 500 (the openai client's default retries);
    # raters 2-4: never called
    assert [r["step"] for r in requests] == [0, 1, 2, 3] and len(requests) == 4
    assert result["n_failed"] == 1 and result["n"] == 0 and result["rubrics"] is None
    assert result["judge_stats"]["requests"] == 2 and result["judge_stats"]["ok"] == 1
    assert result["judge_stats"]["server_errors"] == 3


def test_default_scores_from_the_raters_that_succeeded(server):
    item = ITEMS[8]
    result = MMARRubricsScorer(judge(server, "order_default", compat=False)).score(
        [item], ["r"], [item["answer"]], return_items=True
    )
    [row] = result["items"]
    # all 5 raters at once: whichever got the first step 0 reply is valid, the others see 500s
    assert row["n_valid_raters"] == 1 and row["status"] == "judged" and row["score"] == 1.0
    assert result["n_partial"] == 1


def test_compat_reads_replies_by_position_with_booleans_and_warns_on_names(server):
    item = ITEMS[2]
    result = MMARRubricsScorer(judge(server, "renamed"), compat=True).score(
        [item], ["r"], [item["answer"]], return_items=True
    )
    # true, false, true, 1.0, 0 -> 3 of 5 for every rater
    assert result["rubrics"] == pytest.approx(0.6) and result["n_judged"] == 1
    assert result["judge_stats"]["warnings"] == 25  # 5 names differ, 5 raters
    rater = result["items"][0]["raters"][0]
    assert [v["score"] for v in rater["verdicts"]] == [1, 0, 1, 1.0, 0]
    assert [v["name"] for v in rater["verdicts"]] == [c["name"] for c in item["rubric"]]
    assert "expected the name" in rater["warnings"][0] and "criterion number 1" in rater["warnings"][0]
    # the default reading requires the names: the same replies never validate
    default = MMARRubricsScorer(judge(server, "renamed", compat=False), raters=1, max_reasks=1).score(
        [item], ["r"], [item["answer"]]
    )
    assert default["n_failed"] == 1 and default["judge_stats"]["invalid"] == 1


def test_compat_resends_an_invalid_reply_unchanged_within_the_attempts(server):
    item = ITEMS[3]
    result = MMARRubricsScorer(judge(server, "resend"), compat=True).score([item], ["r"], [item["answer"]])
    requests = seen(server, "resend")
    assert len(requests) == 7  # rater 0: invalid, invalid, valid; raters 1-4: valid at once
    assert all(r["messages"] == requests[0]["messages"] and len(r["messages"]) == 2 for r in requests)
    assert result["rubrics"] == 1.0 and result["judge_stats"]["reasks"] == 2
    assert result["judge_stats"]["calls"] == 7


def test_compat_gives_up_on_an_invalid_judge_after_20_attempts(server):
    item = ITEMS[4]
    scorer = MMARRubricsScorer(judge(server, "renamed", compat=False), raters=1)
    assert scorer.ensemble._rater_runner[0].max_reasks == 2  # the default: 2 follow-ups
    compat = MMARRubricsScorer(judge(server, "resend"), compat=True)
    assert compat.ensemble._rater_runner[0].max_reasks == 19 and compat.ensemble._rater_runner[0].on_invalid == "resend"
    result = compat.score([item], ["r"], [item["answer"]])
    assert result["n_failed"] == 0  # 3 replies were enough here; the bound itself is checked below
    busy = MMARRubricsScorer(judge(server, "busy"), compat=True).score([item], ["r"], [item["answer"]])
    # a rate limit that never lifts: 20 attempts of 3 requests each, then the item is dropped
    assert len(seen(server, "busy")) == 60 and busy["n_failed"] == 1 and busy["n"] == 0
    assert busy["judge_stats"]["rate_limited"] == 60


def test_a_dead_server_costs_seconds_not_minutes(server):
    item = ITEMS[5]
    started = time.monotonic()
    compat = MMARRubricsScorer(judge(server, "dead", backoff_base_s=1.0), compat=True).score(
        [item], ["r"], [item["answer"]]
    )
    assert len(seen(server, "dead")) == 3 and compat["n_failed"] == 1
    default = MMARRubricsScorer(judge(server, "dead", compat=False, backoff_base_s=1.0)).score(
        [item], ["r"], [item["answer"]]
    )
    assert len(seen(server, "dead")) == 3 + 15  # 5 raters at once, 3 requests each
    assert default["n_failed"] == 1 and default["judge_stats"]["server_errors"] == 15
    assert time.monotonic() - started < 10.0  # back-off of at most 1 s + 2 s per rater


def test_an_item_has_a_time_budget_across_its_raters(server):
    item = ITEMS[6]
    started = time.monotonic()
    result = MMARRubricsScorer(judge(server, "hang", compat=False, timeout_s=0.5), item_timeout_s=1.2).score(
        [item], ["r"], [item["answer"]], return_items=True
    )
    elapsed = time.monotonic() - started
    assert elapsed < 2.5  # 5 raters x 20 attempts x 0.5 s would be 50 s
    assert result["n_failed"] == 1 and result["judge_stats"]["deadlines"] == 5
    assert all("time budget of 1.2 s ran out" in r["error"] for r in result["items"][0]["raters"])


def test_compat_sends_the_official_wording_read_from_the_users_file(server):
    item = ITEMS[7]
    reasoning, answer = "First line.\n   Second line, indented.", item["answer"]
    scorer = MMARRubricsScorer(judge(server, "official"), compat=True, official_scorer=LOOKALIKE)
    result = scorer.score([item], [reasoning], [answer])
    assert result["rubrics"] == 1.0
    sha = hashlib.sha256(LOOKALIKE.read_bytes()).hexdigest()
    assert result["prompt"] == {"wording": "official", "path": str(LOOKALIKE.resolve()), "sha256": sha}
    requests = seen(server, "official")
    system, user = requests[0]["messages"]
    assert system == {"role": "system", "content": "LOOKALIKE SYSTEM: grade the submission against each criterion."}
    # built by the file's own function (its clean() strips each line's indentation, the reasoning's too)
    assert user["content"].startswith("LOOKALIKE USER\nQ: " + item["question"])
    assert user["content"].endswith(f"Submission:\nFirst line.\nSecond line, indented. The answer is {answer}.")
    assert f"options: {item['rubric'][0]['choices']}" in user["content"]
    ours = MMARRubricsScorer(judge(server, "official"), compat=True).score([item], [reasoning], [answer])
    assert ours["prompt"]["wording"] == "audioreason"


def test_our_wording_joins_the_answer_sentence_on_the_reasonings_line():
    assert build_submission("  It is a bell.\nSo B. ", "bell") == "It is a bell.\nSo B. The answer is bell."
    assert build_submission(None, "bell") == "The answer is bell."
    assert build_submission("", None) == "The answer is ."


def test_a_file_that_is_not_the_official_scorer_is_a_clear_error(tmp_path):
    with pytest.raises(OfficialScorerError, match="cannot read"):
        OfficialPrompt.load(tmp_path / "missing.py")
    odd = tmp_path / "evaluation_rubrics.py"
    odd.write_text("EVALUATE_SYS_PROMPT = 'x'\ndef clean(s):\n    return s\n", encoding="utf-8")
    with pytest.raises(OfficialScorerError, match="lacks create_evaluation_user_prompt"):
        OfficialPrompt.load(odd)
    odd.write_text("def clean(s): return s\ndef create_evaluation_user_prompt(q): return q\n", encoding="utf-8")
    with pytest.raises(OfficialScorerError, match="EVALUATE_SYS_PROMPT"):
        OfficialPrompt.load(odd)
    odd.write_text(
        "EVALUATE_SYS_PROMPT = 'x'\ndef clean(s): return s\ndef create_evaluation_user_prompt(q): return q\n",
        encoding="utf-8",
    )
    prompt = OfficialPrompt.load(odd)
    with pytest.raises(OfficialScorerError, match="failed on item 'i1'.*TypeError"):
        prompt.user({"id": "i1", "question": "q", "answer": "a", "rubric": []}, "r", "a")
    with pytest.raises(ValueError, match="system-level"):
        MMARRubricsScorer(object(), official_scorer=LOOKALIKE, protocol="system")
