"""The scored run folders the report, explorer, Space and browser tests read, and checks that they hold
what those read (so those tests rest on known numbers). Both are made once per session (tests/conftest.py):

- ``demo_session``: `audioreason demo` (the offline cascade over the 12 bundled MMAR items, scored by
  `audioreason score`: accuracy, aria, mmar_rubrics), the same run tests/test_demo.py checks;
- ``audiospan_run``: the synthetic AudioSpan folder (2 recordings: 6 native MCQs, 6 OEQs, 2 anchor chains)
  run by the real runner with a scripted model and scored by the real scorer with a scripted judge. Native
  MCQ replies "C" (correct); anchor links "A" (wrong) except the second chain's P and U ("C", correct); OEQ
  verdicts: essential semantic correct, localization temporal correct, supporting partial/wrong. Scorers:
  accuracy, anchor_chain, audiospan_rubric.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from audioreason.inference.base import Generation
from audioreason.judges import Completion

SCRIPTED = "scripted-model"


class ScriptedModel:
    """A model adapter whose reply is ``reply(item_id, condition)`` (the runner's real interface)."""

    name = SCRIPTED
    description = "scripted replies written in tests/test_report_runs.py"
    max_audio_s = None
    sampling_rate = 16000
    takes_audio = True
    kind = "scripted"

    def __init__(self, reply):
        self.reply = reply

    def generate(self, requests, decoding):
        out = []
        for request in requests:
            _, condition, _, item_id = json.loads(request.key)
            out.append(Generation(text=self.reply(item_id, condition), completion_tokens=5))
        return out


class ScriptedJudge:
    """A judge whose reply is ``reply(prompt text)``; every call is counted."""

    name = "scripted-judge"

    def __init__(self, reply):
        self.reply, self.calls = reply, 0

    async def complete(self, messages, params, budget=None):
        self.calls += 1
        await asyncio.sleep(0)
        return Completion(self.reply("\n".join(str(m.get("content", "")) for m in messages)))

    async def aclose(self):
        return None


def _oeq_verdicts(prompt: str) -> str:
    # The synthetic OEQ rubric: essential claim, essential localization, supporting with a time range.
    return json.dumps(
        {
            "criteria": [
                {"index": 0, "semantic": "correct", "temporal": "none", "reason": "states the point"},
                {"index": 1, "semantic": "none", "temporal": "correct", "reason": "02:00 is in range"},
                {"index": 2, "semantic": "partial", "temporal": "wrong", "reason": "detail vague, time off"},
            ]
        }
    )


def make_audiospan_run(root: Path) -> Path:
    from fixtures.audiospan_synth import write_audiospan_folder

    from audioreason.evaluation.score import JudgeOptions, ScoreOptions, score_run
    from audioreason.inference.runner import RunConfig, run

    data = write_audiospan_folder(root / "audiospan_raw")

    def reply(item_id: str, condition: str) -> str:
        if "/oeq" in item_id:
            return "At 00:02 the speaker explains the point; a detail follows."
        if "/anchor/" in item_id:  # gold "y" is option C: the second chain gets P and U right, R wrong
            return "C" if item_id.startswith("zh-show-002/") and not item_id.endswith("/3") else "A"
        return "C"  # every native gold is option C

    folder = root / "audiospan_run"
    run(
        RunConfig(
            model=SCRIPTED,
            benchmark="audiospan",
            data=str(data),
            out=str(folder),
            benchmark_config="all",
            progress=False,
        ),
        adapters={"main": ScriptedModel(reply)},
    )
    score_run(
        folder,
        ScoreOptions(
            scorers=["accuracy", "anchor_chain", "audiospan_rubric"],
            progress=False,
            judge=JudgeOptions(judge=ScriptedJudge(_oeq_verdicts)),
        ),
    )
    return folder


# ---------------------------------------------------------------------------------------------
# What the runs hold (so the report and explorer tests rest on known numbers)
# ---------------------------------------------------------------------------------------------


def _results(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def test_demo_run_holds_what_the_report_draws(demo_session):
    folder = demo_session[0] / "cascade-run"
    results = _results(folder)
    assert {k for k, v in results["scorers"].items() if v["status"] == "ok"} == {"accuracy", "aria", "mmar_rubrics"}
    assert [(s["condition"], s["template"]) for s in results["sets"]] == [("full", "aria_cot")]
    rows = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and all("aria" in r and "mmar_rubrics" in r for r in rows)


def test_audiospan_run_holds_chain_and_rubric(audiospan_run):
    from audioreason.report.scale import fraction

    results = _results(audiospan_run)
    entry = results["scorers"]["anchor_chain"]["results"][0]
    # chain 1: every link wrong, 0; chain 2: P, U right, R wrong, (1 + 1 + 0) / 3. Chain (Eq. 3) = (0 + 2/3) / 2.
    assert entry["chain"]["chain"] == pytest.approx(1 / 3)
    # Per-chain outcomes are kept, so the report can draw the chain ladder from a scored run.
    assert [(c["chain_id"], c["links"]) for c in entry["chain"]["chains"]] == [
        ("en-talk-001/chain", [False, False, False]),
        ("zh-show-002/chain", [True, True, False]),
    ]
    from audioreason.report.figures import chain_ladder

    assert chain_ladder(entry["chain"]["chains"]) == [0.5, 0.5, 0.0]  # its mean is the Chain, 1/3
    assert (entry["chain"]["P"], entry["chain"]["U"], entry["chain"]["R"]) == (0.5, 0.5, 0.0)
    assert entry["native_mcq"]["accuracy"] == pytest.approx(1.0)  # every native gold is option C
    rubric = results["scorers"]["audiospan_rubric"]["results"][0]

    def share(name):
        return fraction(rubric[name], "audiospan_rubric", name, rubric)

    # per OEQ: essential 1 + essential 1 + supporting 1[0.5 > 0] (0.5 + 0) / 2 * 0.5 = 2.125 of 2.5 = 0.85
    assert share("rubric") == pytest.approx(0.85)
    assert share("semantic") == pytest.approx((6 * 1 + 6 * 0.5) / 12)  # Eq. 4: 6 correct, 6 partial
    # temporal%: the deterministic check (a time within +-5 s of the range) finds "00:02" in the supporting
    # criterion's range and counts it correct against the judge's "wrong": 12 of 12, 6 disagreements listed.
    assert share("temporal") == pytest.approx(1.0) and rubric["n_temporal_disagreements"] == 6
