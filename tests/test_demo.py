"""`audioreason demo`: the offline cascade run over the 12 bundled MMAR items by the runner, its real outputs
scored by `audioreason score` (MMAR-Rubrics by the constrained offline judge), fixture rows only where a scorer needs
what a 135M model cannot give (labelled),
and a second demo reusing the outputs. The demo runs once (the command, as the README shows it); every test
reads that run."""

import json

import pytest

from audioreason.data.mmar import build_demo_dataset
from audioreason.evaluation.sections import answer_text
from audioreason.text import answers

ROWS_FROM_FIXTURES = ("text prior:", "retention:", "decomposition:", "anchor_chain:", "audiospan:", "audiospan_rubric:")


@pytest.fixture(scope="module")
def demo(demo_session):
    return demo_session  # tests/conftest.py: the demo command run once per session, shared with the report tests


def rows_by_name(payload):
    return {row["scorer"]: row for row in payload["rows"]}


def test_demo_sample_is_real_mmar_metadata(demo):
    workdir, _, _ = demo
    items = build_demo_dataset(workdir).remove_columns("audio").to_list()
    assert len(items) == 12 and len(list((workdir / "audio").glob("*.wav"))) == 12
    assert {len(it["choices"]) for it in items} == {2, 3, 4, 5, 6}
    assert all(it["answer"] in it["choices"] and it["rubric"] for it in items)


def test_the_outputs_are_the_cascades_own(demo):
    from audioreason.apps.demo import DEMO_MAX_NEW_TOKENS, DEMO_MODEL

    workdir, _, payload = demo
    folder = workdir / "cascade-run"
    outputs = [json.loads(line) for line in (folder / "outputs.jsonl").read_text().splitlines()]
    run = json.loads((folder / "run.json").read_text())
    assert len(outputs) == 12 and {(r["model"], r["condition"], r["template"]["name"]) for r in outputs} == {
        (DEMO_MODEL, "full", "aria_cot")
    }
    assert all(
        r["error"] is None and r["output"] and 0 < r["tokens"]["completion"] <= DEMO_MAX_NEW_TOKENS for r in outputs
    )
    assert all(r["audio"]["seconds"] == 3.0 and r["decoding"]["temperature"] == 0.0 for r in outputs)
    # each output keeps what the cascade heard: the recognizer's transcript (a string, maybe empty) and its time
    assert all(isinstance(r["details"]["transcript"], str) and r["details"]["asr_seconds"] >= 0 for r in outputs)
    description = run["models"]["main"]["description"]
    assert "whisper" in description and "beam 1" in description and "SmolLM2-135M-Instruct" in description
    assert run["status"] == "finished" and run["counts"]["ok"] == 12
    assert [p["output"] for p in payload["per_item"]] == [r["output"] for r in outputs]
    assert not any("fixture-cot-model" in p["output"] for p in payload["per_item"])


def test_rows_of_real_outputs_are_computed_from_them(demo):
    _, _, payload = demo
    rows = rows_by_name(payload)
    items, texts = payload["per_item"], [p["output"] for p in payload["per_item"]]
    meta = {it["id"]: it for it in _items(demo)}
    # The four-step CoT asks for an [ANSWER] tag: ARIA App. E, recomputed here from the outputs.
    found = [answers.extract_aria(t, meta[p["id"]]["choices"]) for p, t in zip(items, texts)]
    correct = sum(answers.is_gold(e, p["answer"]) for e, p in zip(found, items))
    assert rows["answers: aria"]["value"] == pytest.approx(correct / 12)
    assert rows["answers: aria"]["unanswered"] == sum(not e.answered for e in found)
    hybrid = [
        answers.extract_hybrid(t, meta[p["id"]]["choices"], question=meta[p["id"]]["question"])
        for p, t in zip(items, texts)
    ]
    assert rows["answers: hybrid"]["value"] == pytest.approx(
        sum(answers.is_gold(e, p["answer"]) for e, p in zip(hybrid, items)) / 12
    )
    # The official MMAR/MMAU scorer reads the whole reply; the MMAR-Rubrics gate reads the Answer slot.
    official = [answers.official_string_match(p["answer"], t, meta[p["id"]]["choices"]) for p, t in zip(items, texts)]
    assert rows["accuracy: official MMAR/MMAU scorer"]["value"] == pytest.approx(sum(official) / 12)
    gate = [
        answers.official_string_match(p["answer"], answer_text(t), meta[p["id"]]["choices"])
        for p, t in zip(items, texts)
    ]
    assert rows["mmar_rubrics: Accuracy (official gate)"]["value"] == pytest.approx(sum(gate) / 12)
    aria = payload["aria"]
    assert aria["n"] == 12 and aria["reasoning_mode"] is None  # M1 and M5 have no offline weights
    assert (
        rows["aria: M1 Acoustic Grounding"]["value"] is None
        and "CLAP" in rows["aria: M1 Acoustic Grounding"]["backbone"]
    )
    if aria["aria_metrics"]:  # the packaged weights are installed (install.sh)
        mean = sum(aria[m] for m in aria["aria_metrics"]) / len(aria["aria_metrics"])
        assert rows[f"aria: ARIA (mean of {'+'.join(aria['aria_metrics'])})"]["value"] == pytest.approx(mean)
    # MMAR-Rubrics is judged by the constrained offline judge: a number, labelled, with its counts.
    rubrics = rows["mmar_rubrics: Rubrics"]
    entry = payload["results"]["scorers"]["mmar_rubrics"]["results"][0]
    assert entry["n_judged"] == sum(gate) and entry["n_failed"] == 0  # every gated-in item got a verdict
    assert isinstance(rubrics["value"], float) and 0.0 <= rubrics["value"] <= 1.0
    (meta,) = entry["judge_metadata"]
    assert meta["offline"] and meta["constraint"].startswith("llguidance regex")
    assert meta["model"].startswith(("Qwen/Qwen2.5-Coder-0.5B-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct"))
    assert rubrics["backbone"].startswith(
        f"(offline judge: {meta['model']}, constrained: {meta['constraint']}), 1 rater(s)"
    )
    assert f"judged {sum(gate)}, failed 0" in rubrics["backbone"]
    assert all(
        row["source"] == "the offline cascade" for name, row in rows.items() if not name.startswith(ROWS_FROM_FIXTURES)
    )


def _items(demo):
    workdir, _, _ = demo
    return build_demo_dataset(workdir).remove_columns("audio").to_list()


def test_fixture_rows_are_labelled_and_hold_their_hand_computed_values(demo):
    _, stdout, payload = demo
    rows = rows_by_name(payload)
    fixtures = {name: row for name, row in rows.items() if name.startswith(ROWS_FROM_FIXTURES)}
    assert fixtures and all(row["source"] == "fixture" for row in fixtures.values())
    # Hand-computed: chains 1, 2/3, 0, 1/3 (an unparsed "b"); native MCQ 3 of 6.
    assert rows["anchor_chain: Chain (Eq. 3)"]["value"] == pytest.approx(0.5)
    assert rows["audiospan: native MCQ Accuracy (Eq. 1)"]["value"] == pytest.approx(0.5)
    # Hand-computed: (1 + 0.5*(1+0)/2)/1.5 = 5/6 and (0.5 + 0)/1.5 = 1/3.
    assert rows["audiospan_rubric: Rubric (Eq. 2)"]["value"] == pytest.approx((5 / 6 + 1 / 3) / 2)
    header = stdout.splitlines()[2]
    assert header.split() == ["scorer", "value", "95%", "CI", "unanswered", "n", "outputs", "backbone"]
    line = next(line for line in stdout.splitlines() if line.startswith("anchor_chain: Chain (Eq. 3)"))
    assert "  fixture  " in line


def test_a_second_demo_reuses_the_outputs(demo, monkeypatch):
    import audioreason.apps.demo as demo_module

    workdir, _, _ = demo

    def no_model():
        raise AssertionError("the cascade was loaded again")

    monkeypatch.setattr(demo_module, "demo_adapter", no_model)
    folder, cached = demo_module.run_cascade(workdir)
    assert cached and folder == workdir / "cascade-run"
    monkeypatch.setattr(demo_module, "DEMO_MAX_NEW_TOKENS", demo_module.DEMO_MAX_NEW_TOKENS + 1)
    with pytest.raises(AssertionError, match="loaded again"):  # another configuration is run anew
        demo_module.run_cascade(workdir)


def _table(lines):
    """Rows of a printed demo table, split on the widths of its dashed rule: scorer -> cells."""
    lines = [line for line in lines if line.strip()]
    rule = next(i for i, line in enumerate(lines) if set(line.replace(" ", "")) == {"-"})
    starts = [i for i, ch in enumerate(lines[rule]) if ch == "-" and (i == 0 or lines[rule][i - 1] == " ")]
    cut = lambda line: [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]  # noqa: E731
    return [cut(lines[rule - 1])] + [cut(line) for line in lines[rule + 1 :]]


def test_the_documented_demo_block_is_what_the_demo_prints(demo):
    """Every row docs/getting-started.md shows is a row the demo prints: the same value, interval, unanswered count,
    n and source; the backbone as printed, or its beginning where the page abridges it with '...'."""
    import re
    from pathlib import Path

    _, stdout, _ = demo
    page = (Path(__file__).resolve().parents[1] / "docs" / "getting-started.md").read_text(encoding="utf-8")
    block = re.search(r"What it prints:\n\n```\n(.*?)```", page, re.S).group(1)
    shown, printed = _table(block.splitlines()), _table(stdout.splitlines()[2:])
    assert shown[0] == printed[0] == ["scorer", "value", "95% CI", "unanswered", "n", "outputs", "backbone"]
    rows = {cells[0]: cells for cells in printed[1:]}
    assert len(shown) > 15
    for cells in shown[1:]:
        assert cells[0] in rows, f"the page shows a row the demo does not print: {cells[0]!r}"
        actual = rows[cells[0]]
        assert cells[1:6] == actual[1:6], f"row {cells[0]!r}: {cells[1:6]} but the demo prints {actual[1:6]}"
        backbone = cells[6]
        if backbone.endswith("..."):
            head = backbone[:-3].rstrip(" ;,(")
            assert actual[6].startswith(head), f"row {cells[0]!r}: backbone {backbone!r} vs {actual[6]!r}"
        else:
            assert backbone == actual[6], f"row {cells[0]!r}: backbone {backbone!r} vs {actual[6]!r}"
