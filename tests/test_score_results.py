"""`audioreason score` on a small hand-built run folder (3 real MMAR items, conditions full and none, the ARIA
CoT template, hand-written outputs, one failed): results.json and items.jsonl checked by hand; MMAR-Rubrics
against a scripted judge server; ARIA with tiny random backbones equal to a direct AriaScorer call; the
perturbation checks' answer-change rates; the judge cache on a rerun."""

import json

import pytest
from judge_server import running_server

from audioreason.data.mmar import demo_metadata, write_raw_folder
from audioreason.evaluation.score import ITEMS_FILE, RESULTS_FILE, JudgeOptions, ScoreOptions, score_run
from audioreason.evaluation.table import format_table, result_rows
from audioreason.inference.prompts import get_template
from audioreason.scorers.aria.scorer import AriaScorer

ITEMS = demo_metadata()[:3]  # gold: Open Grassland, Too little, Christmas
COT = "[PERCEPTION]\nEntities: {e}\nDescription: {d}\n[ANALYSIS]\n{a}\n[REASONING]\n{r}\n[ANSWER]\n{answer}"
OUTPUTS = {  # (condition, item) -> (output, error)
    ("full", 0): (
        COT.format(
            e="throat singing, fiddle",
            d="A low voice holds long notes.",
            a="Long notes carry far in open land.",
            r="Canyons echo; grassland fits.",
            answer="(C) Open Grassland",
        ),
        None,
    ),
    ("full", 1): (
        COT.format(
            e="male voice",
            d="A man speaks calmly.",
            a="He sounds satisfied.",
            r="He cannot finish it.",
            answer="(D) Too much, can't finish",
        ),
        None,
    ),
    ("full", 2): (None, "model: timeout"),
    ("none", 0): ("[ANSWER]\nOpen Grassland", None),
    ("none", 1): ("[ANSWER]\nToo little", None),
    ("none", 2): ("I cannot hear the audio.", None),
}
MODEL = "hand-model"


def build_hand_run(folder, template="aria_cot", outputs=OUTPUTS, items=ITEMS):
    """A run folder as `audioreason run` writes it (run.json, outputs.jsonl) with hand-written outputs."""
    raw = write_raw_folder(items, folder / "raw")
    run_dir = folder / "run"
    run_dir.mkdir()
    tpl = get_template(template)
    records = []
    for (condition, index), (output, error) in outputs.items():
        item_id = items[index]["id"]
        records.append(
            {
                "key": json.dumps([MODEL, condition, f"{tpl.name}@{tpl.hash}", item_id]),
                "id": item_id,
                "index": index,
                "model": MODEL,
                "adapter": "hand",
                "condition": condition,
                "template": tpl.to_dict(),
                "output": output,
                "error": error,
            }
        )
    (run_dir / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    run = {
        "config": {
            "model": MODEL,
            "benchmark": "mmar",
            "data": str(raw),
            "benchmark_config": None,
            "limit": None,
            "conditions": ["full", "none"],
            "templates": [template],
        },
        "models": {"main": {"name": MODEL, "adapter": "hand", "description": "hand-written outputs"}},
        "status": "finished",
        "counts": {"units": 6, "ok": 5, "failed": 1},
    }
    (run_dir / "run.json").write_text(json.dumps(run))
    return run_dir


def verdict(item, scores):
    return json.dumps(
        [{"name": c["name"], "score": s, "justification": "checked"} for c, s in zip(item["rubric"], scores)]
    )


# The judge's reply depends on the item (a phrase of its question); anything else gets "OK".
SCRIPT = {
    "scenarios": {
        "rubric-judge": [
            {
                "by_text": {
                    "natural environment": {"reply": verdict(ITEMS[0], [1, 1, 0, 0, 0])},
                    "too little food": {"reply": verdict(ITEMS[1], [1, 1, 1, 1, 0])},
                },
                "default": {"reply": "OK"},
            }
        ]
    }
}
SCRIPT["scenarios"]["no-rubric-judge"] = SCRIPT["scenarios"]["rubric-judge"]  # its own request count
PERTURBATIONS = ["no_struct", "ans_swap", "decoration"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(SCRIPT, tmp_path_factory.mktemp("score_judge")) as handle:
        yield handle


@pytest.fixture(scope="module")
def scored(tmp_path_factory, server, tiny_backbones):
    import torch

    run_dir = build_hand_run(tmp_path_factory.mktemp("hand"))
    options = ScoreOptions(
        scorers=["accuracy", "aria", "mmar_rubrics", "text_prior_decomposition"],
        aria_backbones=tiny_backbones,
        perturbations=PERTURBATIONS,
        progress=False,
        judge=JudgeOptions(model="rubric-judge", base_url=server.base_url, api_key_env="SCORE_TEST_KEY"),
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: two threads on a shared 2-core machine only spin
    try:
        yield run_dir, options, score_run(run_dir, options)
    finally:
        torch.set_num_threads(threads)


def by_set(section, key="condition"):
    return {entry[key]: entry for entry in section["results"]}


def test_results_json_holds_the_hand_computed_numbers(scored):
    run_dir, _, results = scored
    assert json.loads((run_dir / RESULTS_FILE).read_text()) == results
    assert results["run"]["model"] == MODEL and results["run"]["benchmark"] == "mmar"
    assert results["scale"] == "0-1"  # stated for the whole file: the report never has to infer it
    assert [(s["condition"], s["n"], s["failed"]) for s in results["sets"]] == [("full", 3, 1), ("none", 3, 0)]
    accuracy = by_set(results["scorers"]["accuracy"])
    # full: (C) Open Grassland right, (D) wrong, the failed output unanswered; none: two right, one without a tag.
    assert {c: (e["rule"], e["correct"], e["n"], e["unanswered"], e["failed"]) for c, e in accuracy.items()} == {
        "full": ("aria", 1, 3, 1, 1),
        "none": ("aria", 2, 3, 1, 0),
    }
    assert accuracy["full"]["accuracy"] == pytest.approx(1 / 3)
    assert accuracy["full"]["methods"] == {"exact": 2, "unanswered": 1}
    # Text prior (hybrid extraction): Full 1/3, None 2/3, R_TP = 2; the failed and the unreadable output errored.
    (tp,) = results["scorers"]["text_prior_decomposition"]["results"]
    assert tp["model"] == MODEL and tp["conditions"] == ["full", "none"]
    assert tp["text_prior"]["R_TP"] == pytest.approx(2.0)
    assert tp["counts"]["errored_predictions"] == {MODEL: {"full": 1, "none": 1}}
    # MMAR-Rubrics: the gate passes full item 0 and none items 0, 1; judged 0.4 and 0.8 by all five raters.
    rubrics = by_set(results["scorers"]["mmar_rubrics"])
    assert rubrics["full"]["rubrics"] == pytest.approx(0.4 / 3)
    assert rubrics["none"]["rubrics"] == pytest.approx((0.4 + 0.8) / 3)
    assert (rubrics["full"]["n_judged"], rubrics["full"]["n_gated"], rubrics["full"]["failed_outputs"]) == (1, 2, 1)
    assert rubrics["none"]["accuracy"] == pytest.approx(2 / 3) and rubrics["none"]["raters"] == 5
    assert rubrics["none"]["judges"] == ["rubric-judge"]
    options = results["options"]
    assert options["extraction"] == "auto" and options["perturbations"] == PERTURBATIONS
    assert options["judge"]["model"] == "rubric-judge" and options["judge"]["api_key_env"] == "SCORE_TEST_KEY"
    assert results["not_run"] == {} and list(results["scorers"]) == [
        "accuracy",
        "aria",
        "mmar_rubrics",
        "text_prior_decomposition",
        "perturbations",
    ]


def test_the_judge_saw_each_gated_item_five_times(scored, server):
    requests = [r for r in server.requests() if r["scenario"] == "rubric-judge"]
    assert len(requests) == 3 * 5  # no extra reachability request: the first real one is the check
    assert all(r["params"]["temperature"] == 0 and r["params"]["seed"] == 42 for r in requests)


def test_a_rerun_pays_for_no_verdict_twice(scored, server, tmp_path):
    from dataclasses import replace

    run_dir, options, first = scored
    before = len(server.requests())
    again = score_run(run_dir, replace(options, scorers=["mmar_rubrics"], perturbations=[], out=str(tmp_path)))
    assert len(server.requests()) == before  # every verdict came from the judge cache
    assert (
        by_set(again["scorers"]["mmar_rubrics"])["none"]["rubrics"]
        == by_set(first["scorers"]["mmar_rubrics"])["none"]["rubrics"]
    )
    assert by_set(again["scorers"]["mmar_rubrics"])["none"]["judge_stats"]["cache_hits"] == 2 * 5


def direct_aria(run_dir, tiny_backbones, texts):
    from audioreason.inference.runner import load_items

    audio = [it["audio"] for it in load_items("mmar", str(run_dir.parent / "raw"))]
    scorer = AriaScorer(backbones=tiny_backbones, on_audio_error="skip")
    return scorer.score(
        texts, [it["answer"] for it in ITEMS], [it["choices"] for it in ITEMS], audio=audio, return_items=True
    )


def test_aria_is_the_scorer_called_directly(scored, tiny_backbones):
    run_dir, _, results = scored
    aria = by_set(results["scorers"]["aria"])
    for condition in ("full", "none"):
        direct = direct_aria(run_dir, tiny_backbones, [OUTPUTS[(condition, i)][0] or "" for i in range(3)])
        for metric in ("M1", "M2", "M3", "M4", "M5", "M6", "aria", "accuracy", "unanswered_rate"):
            assert aria[condition][metric] == pytest.approx(direct[metric]), (condition, metric)
        assert aria[condition]["reasoning_mode"] == direct["reasoning_mode"]
        assert aria[condition]["failed"] == (1 if condition == "full" else 0)
        assert set(aria[condition]["backbones"]) == {"M1", "M2", "M3", "M4", "M5", "M6"}


def test_perturbations_report_deltas_answer_changes_and_modes(scored, tiny_backbones):
    from audioreason.text.perturbations import perturb

    run_dir, _, results = scored
    section = by_set(results["scorers"]["perturbations"])
    for condition, base_accuracy in (("full", 1 / 3), ("none", 2 / 3)):
        rows = {r["perturbation"]: r for r in section[condition]["perturbations"]}
        assert list(rows) == ["rendered", *PERTURBATIONS]
        # By hand: AnsSwap moves every answer (an unanswered one to a wrong choice) to a wrong choice;
        # Decoration and NoStruct keep the [ANSWER] line, so no answer moves.
        assert {n: r["answer_change_rate"] for n, r in rows.items()} == {
            "rendered": 0.0,
            "no_struct": 0.0,
            "ans_swap": 1.0,
            "decoration": 0.0,
        }
        assert rows["ans_swap"]["accuracy"] == 0.0
        assert rows["ans_swap"]["delta"]["accuracy"] == pytest.approx(-base_accuracy)
        assert rows["decoration"]["accuracy"] == pytest.approx(base_accuracy)
        assert (rows["ans_swap"]["paper_name"], rows["ans_swap"]["kind"]) == ("AnsSwap", "adversarial")
        originals = [OUTPUTS[(condition, i)][0] for i in range(3)]
        base = direct_aria(run_dir, tiny_backbones, [perturb("rendered", o, it) for o, it in zip(originals, ITEMS)])
        swapped = direct_aria(run_dir, tiny_backbones, [perturb("ans_swap", o, it) for o, it in zip(originals, ITEMS)])
        assert rows["rendered"]["aria"] == pytest.approx(base["aria"])
        assert rows["ans_swap"]["delta"]["aria"] == pytest.approx(swapped["aria"] - base["aria"])
        # All six metrics: the mode is the scorer's rule on this profile (None where the paper names no mode).
        assert rows["ans_swap"]["aria_complete"] is True
        assert rows["ans_swap"]["reasoning_mode"] == swapped["reasoning_mode"]
        assert rows["ans_swap"]["reasoning_mode_rule"] == swapped["reasoning_mode_rule"] == "paper"


def test_items_table_has_one_row_per_output(scored):
    run_dir, _, _ = scored
    rows = [json.loads(line) for line in (run_dir / ITEMS_FILE).read_text().splitlines()]
    assert [(r["condition"], r["id"]) for r in rows] == [(c, it["id"]) for c in ("full", "none") for it in ITEMS]
    first, failed = rows[0], rows[2]
    assert first["accuracy"]["aria"] == {
        "choice": "Open Grassland",
        "method": "exact",
        "correct": True,
        "official_scorer_correct": True,
    }  # for `audioreason compare`
    judged = {k: first["mmar_rubrics"][k] for k in ("status", "score", "correct")}
    assert judged == {"status": "judged", "score": pytest.approx(0.4), "correct": True}
    raters = first["mmar_rubrics"]["raters"]  # each rater's verdict per criterion, for the explorer
    assert [r["rater"] for r in raters] == [0, 1, 2, 3, 4] and all(r["score"] == pytest.approx(0.4) for r in raters)
    assert [(v["name"], v["score"], v["justification"]) for v in raters[0]["verdicts"]] == [
        ("Cue Identification: Throat Singing", 1, "checked"),
        ("Cue Identification: Long Song", 1, "checked"),
        ("Acoustic Environment Reasoning", 0, "checked"),
        ("Cultural Context Association", 0, "checked"),
        ("Correct Environmental Selection", 0, "checked"),
    ]
    assert failed["failed"] is True and failed["accuracy"]["aria"]["method"] == "unanswered"
    assert failed["mmar_rubrics"]["status"] == "gated"
    assert first["perturbations"]["ans_swap"]["changed"] is True
    assert first["perturbations"]["ans_swap"]["text"].endswith(
        "[ANSWER]\n" + first["perturbations"]["ans_swap"]["text"].rsplit("[ANSWER]\n", 1)[1]
    )
    assert set(first["aria"]) == {"M1", "M2", "M3", "M4", "M5", "M6", "aria", "correct"}


def test_every_headline_carries_its_interval(scored):
    from statsmodels.stats.proportion import proportion_confint

    from audioreason.analysis import uncertainty as U

    run_dir, _, results = scored
    assert results["uncertainty_options"] == {"confidence": 0.95, "resamples": 2000, "seed": 0}
    accuracy = by_set(results["scorers"]["accuracy"])
    # full: 1 of 3 by the aria rule; the official scorer (whole reply) also 1 of 3: Wilson, as statsmodels
    for field in ("accuracy", "official_scorer_accuracy"):
        got = accuracy["full"]["uncertainty"][field]
        assert got["method"] == "wilson" and got["n"] == 3 and got["resamples"] is None
        assert got["ci95"] == pytest.approx(proportion_confint(1, 3, method="wilson"), abs=1e-12)
        assert got["se"] == pytest.approx((1 / 3 * 2 / 3 / 3) ** 0.5)
    # MMAR-Rubrics, full: per item 0.4 (judged), 0 and 0 (gated): the bootstrap over those three items; all five
    # raters gave 0.4, so their spread is 0.
    rubrics = by_set(results["scorers"]["mmar_rubrics"])
    assert rubrics["full"]["uncertainty"]["rubrics"] == U.bootstrap_mean([0.4, 0, 0])
    assert rubrics["full"]["uncertainty"]["rubrics"]["ci95"] == pytest.approx([0.0, 0.4])
    assert rubrics["full"]["rater_spread"] == {"sd": 0.0, "raters": 5}
    assert rubrics["none"]["uncertainty"]["accuracy"]["ci95"] == pytest.approx(
        proportion_confint(2, 3, method="wilson"), abs=1e-12
    )
    # Text prior: Full correct on item 0 only, None on items 0 and 1: R_TP = 2, but a resample without item 0
    # has no correct Full answer (about (2/3)^3 of them): undefined, so no interval, and it says why.
    (tp,) = results["scorers"]["text_prior_decomposition"]["results"]
    r_tp = tp["text_prior"]["uncertainty"]["R_TP"]
    assert r_tp["ci95"] is None and r_tp["se"] is None and "undefined in" in r_tp["unavailable"]
    order = sorted(range(3), key=lambda i: str(ITEMS[i]["id"]))  # the text-prior tables' item order
    none, full = [1, 1, 0], [1, 0, 0]
    assert r_tp == U.bootstrap_ratio([none[i] for i in order], [full[i] for i in order])
    assert tp["text_prior"]["uncertainty"]["full_mean"]["ci95"] == pytest.approx(
        proportion_confint(1, 3, method="wilson"), abs=1e-12
    )
    # ARIA: each metric's interval is the bootstrap of its clipped per-item values, as the direct scorer gives them
    aria = by_set(results["scorers"]["aria"])
    for condition in ("full", "none"):
        got = aria[condition]["uncertainty"]
        assert set(got) == {"M1", "M2", "M3", "M4", "M5", "M6", "aria", "accuracy"}
        for m in ("M2", "M6", "aria"):
            entry = got[m]
            assert entry["method"] == "bootstrap_percentile" and entry["resamples"] == 2000 and entry["seed"] == 0
            if entry["unavailable"] is None:
                assert entry["ci95"][0] <= aria[condition][m] + 1e-12 <= entry["ci95"][1] + 2e-12
                assert entry["se"] >= 0


def test_aria_intervals_are_the_bootstrap_of_the_clipped_items(scored, tiny_backbones):
    from audioreason.analysis import uncertainty as U

    run_dir, _, results = scored
    aria = by_set(results["scorers"]["aria"])
    direct = direct_aria(run_dir, tiny_backbones, [OUTPUTS[("none", i)][0] for i in range(3)])
    for m in ("M1", "M2", "M3", "M4", "M5", "M6"):
        values = [row[f"{m}_clipped"] for row in direct["items"] if row[f"{m}_clipped"] == row[f"{m}_clipped"]]
        assert aria["none"]["uncertainty"][m] == U.bootstrap_mean(values), m


def test_the_printed_table(scored):
    _, _, results = scored
    table = format_table(result_rows(results))
    lines = {line.split("  ")[0]: line for line in table.splitlines()}
    # One scale (0-1, 4 decimals) on every row; no percentages.
    assert "0.3333" in lines["answers: aria [full/aria_cot]"] and "1 of 3" in lines["answers: aria [full/aria_cot]"]
    assert "0.1333" in lines["mmar_rubrics: Rubrics [full/aria_cot]"]
    assert "2.0000" in lines["text prior: R_TP = sum None / sum Full [aria_cot]"]
    # the interval column: Wilson of 1 of 3 beside the accuracy; "-" where none (R_TP: undefined resamples)
    assert table.splitlines()[0].split()[:4] == ["scorer", "value", "95%", "CI"]
    assert "[0.0615, 0.7923]" in lines["answers: aria [full/aria_cot]"]
    assert "2.0000  -" in lines["text prior: R_TP = sum None / sum Full [aria_cot]"]
    assert "answers changed 1.0000" in lines["perturbation: ans_swap [full/aria_cot]"]
    assert "%" not in table.replace("95% CI", "")  # the interval's level is the one percentage


def test_an_item_without_rubric_criteria_is_counted_and_named(server, tmp_path):
    # Two items answered right, the second with an empty rubric: Rubrics is item 0's 0.4 over n 1, and the
    # item left out is counted and named in the entry, the section's notes, items.jsonl and the printed table.
    items = [ITEMS[0], {**ITEMS[1], "rubric": []}]
    run_dir = build_hand_run(
        tmp_path, outputs={("full", 0): OUTPUTS[("none", 0)], ("full", 1): OUTPUTS[("none", 1)]}, items=items
    )
    options = ScoreOptions(
        scorers=["mmar_rubrics"],
        progress=False,
        judge=JudgeOptions(model="no-rubric-judge", base_url=server.base_url, api_key_env="SCORE_TEST_KEY"),
    )
    results = score_run(run_dir, options)
    section = results["scorers"]["mmar_rubrics"]
    (entry,) = section["results"]
    assert (entry["rubrics"], entry["n"]) == (pytest.approx(0.4), 1)
    assert (entry["no_rubric"], entry["no_rubric_ids"]) == (1, [items[1]["id"]])
    assert section["notes"] == [f"full/aria_cot: 1 item(s) without rubric criteria, not judged: {items[1]['id']}"]
    rows = {r["id"]: r for r in map(json.loads, (run_dir / ITEMS_FILE).read_text().splitlines())}
    assert rows[items[1]["id"]]["mmar_rubrics"] == {"status": "no rubric (not judged)"}
    lines = {line.split("  ")[0]: line for line in format_table(result_rows(results)).splitlines()}
    assert "0.4000" in lines["mmar_rubrics: Rubrics"]
    assert f"1 item(s) without rubric criteria left out: {items[1]['id']}" in lines["mmar_rubrics: Rubrics"]
    assert "left out" in lines["mmar_rubrics: Accuracy (official gate)"]
