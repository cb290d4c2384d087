"""`audioreason report`: one self-contained HTML file and Markdown tables of scored results, read from the demo's
run (accuracy, aria, mmar_rubrics), the scripted AudioSpan run (anchor_chain, audiospan_rubric) and a text prior
result; the one scale helper on both scales."""

import json
import re
import subprocess
import sys

import pytest

from audioreason.report import build_report, load_results
from audioreason.report.scale import display, fraction, scale_of

# ---------------------------------------------------------------------------------------------
# The one scale helper
# ---------------------------------------------------------------------------------------------


def test_both_scales_render_alike():
    # MMAR-Rubrics as the scorer writes it now (0-1) and as it wrote it before the one scale (x100, no scale
    # stated: values above 1 tell), and as a result states either: the same text, four decimals.
    old, new = {"rubrics": 36.666667, "accuracy": 50.0}, {"rubrics": 0.36666667, "accuracy": 0.5}
    assert display(36.666667, "mmar_rubrics", "rubrics", old) == "0.3667"
    assert display(0.36666667, "mmar_rubrics", "rubrics", new) == "0.3667"
    assert display(0.36666667, "mmar_rubrics", "rubrics", {"scale": 1}) == "0.3667"
    assert display(36.666667, "anchor_chain", "chain", {"scale": "0-100"}) == "0.3667"
    assert display(0.36666667, "anchor_chain", "chain", {"scale": "0-1"}) == "0.3667"
    # An item's MMAR score was a fraction on the old scale too; ARIA scores always were.
    assert fraction(0.7333, "mmar_rubrics", "item.score", old) == pytest.approx(0.7333)
    assert display(0.08333333, "aria", "M2") == "0.0833"
    # Text prior: only R_N was a percentage; its accuracies (TB) were fractions.
    legacy = {"retention": {"per_model": {"a": {"2": {"R_N": 50.0}}}}}
    assert scale_of("text_prior_decomposition", "R_N", legacy) == 100
    assert scale_of("text_prior_decomposition", "TB", legacy) == 1
    assert scale_of("text_prior_decomposition", "R_N", {"retention": {"per_model": {"a": {"2": {"R_N": 0.5}}}}}) == 1
    # Missing and undefined are "n/a", never 0.
    assert display(None, "aria", "M1") == display(float("nan"), "accuracy", "accuracy") == "n/a"
    with pytest.raises(ValueError, match="states scale 10"):
        display(5, "aria", "aria", {"scale": 10})


def test_a_scale_stated_for_the_file_holds_for_its_results(tmp_path):
    results = {
        "run": {"model": "m", "benchmark": "mmar"},
        "scale": "0-1",
        "scorers": {
            "mmar_rubrics": {
                "status": "ok",
                "results": [
                    {"model": "m", "condition": "full", "template": "t", "rubrics": 0.25, "accuracy": 0.5, "n": 4}
                ],
            }
        },
    }
    (tmp_path / "results.json").write_text(json.dumps(results))
    entry = load_results(tmp_path).entries[0]
    assert display(entry.result["rubrics"], "mmar_rubrics", "rubrics", entry.result) == "0.2500"
    results["scale"] = "percent"
    (tmp_path / "results.json").write_text(json.dumps(results))
    with pytest.raises(ValueError, match="states scale 'percent'"):
        load_results(tmp_path)


# ---------------------------------------------------------------------------------------------
# The report of the demo's run, the AudioSpan run and a text prior result
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def text_prior_result(tmp_path_factory):
    """The text prior scorer's own output on a hand-made table: 2 models x 4 items under Full, None, frag:2."""
    from audioreason.scorers.text_prior.scorer import score_text_prior

    path = tmp_path_factory.mktemp("text_prior") / "text_prior.json"
    records = []
    # model a: items 1, 2 right under Full; item 1 also right with no audio (TS); item 2 right in a fragment (FS).
    # model b: only item 3 right under Full, none right without it (UN for 1, 2, 4).
    table = {
        "a": {"full": [1, 1, 0, 0], "none": [1, 0, 0, 0], "frag:2:0": [1, 1, 0, 0], "frag:2:1": [0, 0, 0, 0]},
        "b": {"full": [0, 0, 1, 0], "none": [0, 0, 0, 0], "frag:2:0": [0, 0, 0, 0], "frag:2:1": [0, 0, 0, 0]},
    }
    for model, conditions in table.items():
        for condition, correct in conditions.items():
            records += [
                {"model": model, "condition": condition, "item_id": f"q{i}", "prediction": bool(c)}
                for i, c in enumerate(correct, 1)
            ]
    result = score_text_prior(records, chance=0.25)
    path.write_text(json.dumps({"model": "two models", "benchmark": "hand table", "result": result}, default=str))
    return path, result


@pytest.fixture(scope="module")
def report(demo_session, audiospan_run, text_prior_result, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    summary = build_report([demo_session[0] / "cascade-run", audiospan_run, text_prior_result[0]], out)
    return summary, out.read_text(encoding="utf-8"), out.with_suffix(".md").read_text(encoding="utf-8")


def test_the_report_draws_every_figure_the_results_support(report):
    summary, page, _ = report
    assert summary["scorers"] == [
        "accuracy",
        "aria",
        "mmar_rubrics",
        "audiospan_rubric",
        "anchor_chain",
        "text_prior_decomposition",
    ]
    # One section per scorer, in that order, each with its figures.
    assert re.findall(r'<figure id="figure-([a-z_]+)"', page) == [
        "accuracy",
        "aria_radar",
        "aria_modes",
        "mmar_rubrics",
        "audiospan_rubric",
        "anchor_chain",
        "retention",
        "decomposition",
    ]
    assert sorted(summary["figures"]) == sorted(re.findall(r'<figure id="figure-([a-z_]+)"', page))
    assert page.count("<svg") == len(summary["figures"])
    # The scored AudioSpan run keeps per-chain outcomes: its ladder is drawn (P 1/2, P and U 1/2, all three 0).
    assert "lists no per-chain outcomes" not in page


def test_the_report_is_self_contained(report):
    _, page, _ = report
    # Nothing to fetch: no script, stylesheet link, image or font source; the only URLs are SVG namespaces.
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\((?!#)", page)  # url(#clip) is inside the SVG
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= {
        "http://www.w3.org/2000/svg",
        "http://www.w3.org/1999/xlink",
        "http://purl.org/dc/elements/1.1/",
        "http://creativecommons.org/ns#",
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    }


def test_tables_show_the_scorers_numbers(report, demo_session, audiospan_run):
    from audioreason.report.tables import INTERVAL_NOTE as tables_note

    _, page, md = report
    demo = json.loads((demo_session[0] / "cascade-run" / "results.json").read_text())
    aria = demo["scorers"]["aria"]["results"][0]

    def cell(result, name):  # four decimals and the 95% interval the result records beside it
        lo, hi = result["uncertainty"][name]["ci95"]
        return f"{result[name]:.4f} [{lo:.4f}, {hi:.4f}]"

    # ARIA as four decimals with its interval, an unavailable metric as n/a (M1: no offline CLAP), in the row.
    row = next(
        line
        for line in md.splitlines()
        if line.startswith(f"| {aria['model']} on mmar [full/aria_cot]") and f"| {cell(aria, 'M2')} |" in line
    )
    assert (
        f"| n/a | {cell(aria, 'M2')} | {cell(aria, 'M3')} | {cell(aria, 'M4')} | n/a | {cell(aria, 'M6')} | "
        f"{cell(aria, 'aria')} |" in row
    )
    mmar = demo["scorers"]["mmar_rubrics"]["results"][0]
    assert f"| {mmar['rubrics']:.4f} |" in md
    # The AudioSpan run (tests/test_report_runs.py): Chain 1/3 over two chains (2/3 and 0: the percentile interval
    # [0, 2/3]), native accuracy 6 of 6 (Wilson by hand: [0.6097, 1]), Rubric 0.85 on every item (no interval).
    assert "| Chain (Eq. 3) | 0.3333 [0.0000, 0.6667] |" in md
    assert "| native MCQ Accuracy (Eq. 1) | 1.0000 [0.6097, 1.0000] |" in md
    assert "| 0.8500 [no interval: all 6 items have the same value" in md
    assert tables_note in md


def test_figures_name_backbones_judge_and_modes(report, demo_session):
    _, page, _ = report

    def figure(key):
        start = page.index(f'id="figure-{key}"')
        return page[start : page.index("</figure>", start)]

    radar = figure("aria_radar")
    assert "backbones of" in radar and "all-mpnet-base-v2" in radar and "reasoning mode of" in radar
    mmar = figure("mmar_rubrics")
    assert "judge of" in mmar and "SmolLM2-135M" in mmar
    rubric = figure("audiospan_rubric")
    assert "judge of" in rubric and "scripted-judge" in rubric
    modes = figure("aria_modes")
    # The demo's ARIA averages M2, M3, M4, M6 only: not comparable, drawn hollow, no mode.
    assert "ARIA averages M2+M3+M4+M6 only" in modes and "rule &#x27;paper&#x27;" in modes


def test_text_prior_figures_read_the_hand_table(report, text_prior_result):
    _, page, md = report
    _, result = text_prior_result
    decomposition = result["decomposition"]["per_model"]
    # a: item 1 TS (right with no audio), item 2 FS (right in fragment 0), items 3, 4 UN; b: item 3 needs the whole
    # audio (XS), items 1, 2, 4 UN.
    assert {k: decomposition["a"]["counts"][k] for k in ("TS", "FS", "XS", "AH", "UN")} == {
        "TS": 1,
        "FS": 1,
        "XS": 0,
        "AH": 0,
        "UN": 2,
    }
    assert {k: decomposition["b"]["counts"][k] for k in ("TS", "FS", "XS", "AH", "UN")} == {
        "TS": 0,
        "FS": 0,
        "XS": 1,
        "AH": 0,
        "UN": 3,
    }
    # R_2 of a: mean fragment accuracy (2/4 + 0/4) / 2 = 0.25 over Full 2/4 = 0.5 of Full; b: 0 of 1/4 = 0.
    assert result["retention"]["per_model"]["a"][2]["R_N"] == pytest.approx(0.5)
    section = page[page.index('<section id="text_prior_decomposition"') :]
    assert "two models" in section and 'id="figure-retention"' in section and 'id="figure-decomposition"' in section
    assert re.search(r"\| a \|[^\n]*\| 0\.5000 \|", md)


def test_the_command_writes_both_files_and_refuses_an_unscored_run(tmp_path, demo_session):
    run = demo_session[0] / "cascade-run"
    done = subprocess.run(
        [sys.executable, "-m", "audioreason.cli", "report", str(run), "-o", str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").is_file() and (tmp_path / "r.md").read_text().startswith("# audioreason report")
    unscored = tmp_path / "unscored"
    unscored.mkdir()
    (unscored / "run.json").write_text("{}")
    done = subprocess.run(
        [sys.executable, "-m", "audioreason.cli", "report", str(unscored)], capture_output=True, text=True
    )
    assert done.returncode == 1 and done.stderr.startswith("audioreason report: error: ResultsError: ")
    assert "no results.json in this folder (it holds a run: score it first with `audioreason score`)" in done.stderr


def test_validity_inputs_are_on_the_scale_the_tables_show():
    """A result written in percent (an older mmar_rubrics) beside 0-1 ones: the statistics read it as 0.42, as
    the table does, not as 42."""
    from audioreason.report.build import _validity_inputs
    from audioreason.report.load import Entry

    entries = [
        Entry("mmar_rubrics", {"rubrics": 42.0, "accuracy": 60.0}, "old", "mmar"),
        Entry("mmar_rubrics", {"rubrics": 0.40, "accuracy": 0.55}, "new", "mmar"),
        Entry("mmar_rubrics", {"rubrics": 0.30, "accuracy": 0.50, "scale": "0-1"}, "third", "mmau"),
    ]
    inputs, reason = _validity_inputs(entries)
    assert reason is None
    assert [(i["model"], i["result"]["rubrics"], i["result"]["accuracy"]) for i in inputs] == [
        ("old", pytest.approx(0.42), pytest.approx(0.60)),
        ("new", 0.40, 0.55),
        ("third", 0.30, 0.50),
    ]
