"""The report and the explorer on hand-made run folders (results.json, items.jsonl, run.json, outputs.jsonl,
benchmark_items.jsonl written here, with hand-computed numbers): each benchmark's own accuracy rule on the
leaderboard, an unavailable judged score shown as n/a in every breakdown and figure, and hostile inputs (audio
outside a bundle, zip bombs, malformed or deeply nested files, a model name with mathtext)."""

import importlib.util
import json
import os
import struct
import wave
import zipfile
from pathlib import Path

import pytest

from audioreason.report import build_report, bundles, item_page, item_table, leaderboard, run_view, runs
from audioreason.report.figures import mmar_rubrics_figure, rubric_figure
from audioreason.report.load import load_results

ROOT = Path(__file__).resolve().parents[1]
SET = {"model": "m", "condition": "full", "template": "aria_cot"}


def write_run(folder: Path, benchmark: str, scorers: dict, rows=(), outputs=(), run=None) -> Path:
    """A run folder as `audioreason run` + `audioreason score` write it (only the fields read here)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(
        json.dumps({"run": {"model": "m", "benchmark": benchmark}, "scale": "0-1", "scorers": scorers})
    )
    (folder / "run.json").write_text(json.dumps(run if run is not None else {"config": {"benchmark": benchmark}}))
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in outputs))
    return folder


def accuracy(rule: str, value: float, **extra) -> dict:
    return {**SET, "rule": rule, "rule_description": f"the {rule} rule", "accuracy": value, "n": 6, **extra}


def board(folder: Path) -> dict:
    [row] = leaderboard.leaderboard([runs.open_run(folder)])
    return dict(zip(leaderboard.LEADERBOARD_COLUMNS, row))


# ---------------------------------------------------------------------------------------------
# Item 4: the leaderboard's accuracy is the benchmark's own rule, named, with a legend
# ---------------------------------------------------------------------------------------------


def test_the_leaderboard_shows_each_benchmarks_own_accuracy_rule(tmp_path):
    # `--extraction all` on 6 MMAR items: every rule's entry carries the official scorer's 1 of 6 (the whole
    # reply); the exact-letter rule (AudioSpan's) finds no bare letter: 0 of 6. It is listed last, and won before.
    rules = [
        accuracy(rule, value, official_scorer_accuracy=1 / 6)
        for rule, value in (("aria", 0.5), ("official_slot", 0.25), ("exact_letter", 0.0))
    ]
    row = {
        **SET,
        "key": "k1",
        "id": "q1",
        "accuracy": {
            "official_slot": {"choice": "a", "method": "official_match", "correct": True},
            "exact_letter": {"choice": None, "method": "unanswered", "correct": False},
        },
    }
    mmar = write_run(tmp_path / "mmar", "mmar", {"accuracy": {"status": "ok", "results": rules}}, [row])
    assert board(mmar)["accuracy (rule)"] == "0.1667 (official MMAR/MMAU scorer)"
    mmau = write_run(tmp_path / "mmau", "mmau_test_mini", {"accuracy": {"status": "ok", "results": rules}})
    assert board(mmau)["accuracy (rule)"] == "0.1667 (official MMAR/MMAU scorer)"
    audiospan = write_run(tmp_path / "audiospan", "audiospan", {"accuracy": {"status": "ok", "results": rules}})
    assert board(audiospan)["accuracy (rule)"] == "0.0000 (exact_letter, AudioSpan App. C.1)"
    # An MMAR set scored before the official scorer's value was kept: n/a, saying how to get it (no other rule
    # stands in for it).
    old = {k: v for k, v in rules[0].items() if k != "official_scorer_accuracy"}
    only_aria = write_run(tmp_path / "aria-only", "mmar", {"accuracy": {"status": "ok", "results": [old]}})
    assert board(only_aria)["accuracy (rule)"] == (
        "n/a (official MMAR/MMAU scorer not scored: this set was scored with aria; score it again with this version)"
    )
    # The item table names each rule's verdict; the legend says what they mean and which rule leads.
    view = runs.open_run(mmar)
    [item] = item_table.item_table([view])
    assert item[item_table.ITEM_COLUMNS.index("correct")] == "official_slot yes, exact_letter no"
    legend = leaderboard.correct_legend([view])
    assert "**correct**: for each answer-extraction rule" in legend and "(mmar: official MMAR/MMAU scorer)" in legend


# ---------------------------------------------------------------------------------------------
# Item 4: an unavailable judged score is n/a in the headline, every breakdown row and every figure
# ---------------------------------------------------------------------------------------------

UNAVAILABLE = "every one of the 2 items sent to the judge failed (see judge_stats); the headline is not a score"


def _mmar_group(accuracy_value, n_judged, n_failed, n_gated):
    # The scorer's own numbers: a failed item counts at 0 in "rubrics", a gated (wrong) one is 0 by the gate.
    return {
        "rubrics": 0.0,
        "accuracy": accuracy_value,
        "n": 2,
        "n_judged": n_judged,
        "n_failed": n_failed,
        "n_gated": n_gated,
    }


@pytest.fixture
def unavailable_results(tmp_path):
    # MMAR-Rubrics: 4 items, 2 right (sent to the judge, both failed), 2 wrong (gated). "sound" holds the two
    # failures (its 0 is not a score), "music" the two gated items (its 0 is the gate's real 0).
    mmar = {
        **SET,
        "rubrics": 0.0,
        "accuracy": 0.5,
        "n": 4,
        "n_judged": 0,
        "n_failed": 2,
        "n_gated": 2,
        "judges": ["j"],
        "raters": 1,
        "headline_unavailable": UNAVAILABLE,
        "modality": {"sound": _mmar_group(1.0, 0, 2, 0), "music": _mmar_group(0.0, 0, 0, 2)},
        "category": {"Signal": _mmar_group(0.5, 0, 1, 1), "Semantic": _mmar_group(0.5, 0, 1, 1)},
    }
    mmar_run = write_run(tmp_path / "mmar", "mmar", {"mmar_rubrics": {"status": "ok", "results": [mmar]}})
    # AudioSpan Rubric: 2 OEQs of tier S, both failed: the scorer writes 0 for the Rubric and the tier mean.
    rubric = {
        **SET,
        "template": "audiospan",
        "rubric": 0.0,
        "rubric_avg": None,
        "semantic": None,
        "temporal": None,
        "n": 2,
        "n_scored": 0,
        "n_failed": 2,
        "histogram": [0] * 10,
        "headline_unavailable": UNAVAILABLE,
        "by": {"duration_tier": {"S": {"n": 2, "n_scored": 0, "n_failed": 2, "mean": 0.0}}},
    }
    span_run = write_run(tmp_path / "span", "audiospan", {"audiospan_rubric": {"status": "ok", "results": [rubric]}})
    return mmar_run, span_run


def test_an_unavailable_judged_score_is_na_in_every_row_and_bar(unavailable_results, tmp_path):
    mmar_run, span_run = unavailable_results
    summary = build_report([mmar_run, span_run], tmp_path / "r.html")
    md = Path(summary["markdown"]).read_text()
    label = "m on mmar [full/aria_cot]"
    assert f"| {label} | n/a ({UNAVAILABLE}) | 0.5000 | 4 | 0 | 2 | 2 |" in md
    assert f"| {label} | modality | sound | n/a | 1.0000 | 2 |" in md
    assert f"| {label} | modality | music | 0.0000 | 0.0000 | 2 |" in md  # the gate's 0 (no judge needed)
    assert f"| {label} | category | Signal | n/a | 0.5000 | 2 |" in md
    assert "- n/a: every item of that row sent to the judge failed" in md
    assert f"| m on audiospan [full/audiospan] | n/a ({UNAVAILABLE}) | n/a | n/a | n/a | 2 | 0 | 2 |" in md
    page = Path(summary["html"]).read_text()
    assert '<td class="unavailable">n/a</td>' in page

    results = load_results([mmar_run, span_run])
    figure = mmar_rubrics_figure(results.of("mmar_rubrics"))
    assert figure.data == {
        "modality: m on mmar [full/aria_cot] Rubrics": {"sound": None, "music": 0.0},
        "category: m on mmar [full/aria_cot] Rubrics": {"Signal": None, "Semantic": None},
    }
    assert figure.svg.count(">n/a<") == 3  # one mark per missing bar
    assert f"m on mmar [full/aria_cot]: Rubrics n/a: {UNAVAILABLE}" in figure.caption
    span = rubric_figure(results.of("audiospan_rubric"))
    assert span.data == {"by tier: m on audiospan [full/audiospan]": {"S": None}}
    assert "m on audiospan [full/audiospan]: no item was judged; the histogram is not drawn" in span.caption
    # The explorer's leaderboard says the same.
    assert board(mmar_run)["MMAR Rubrics"] == "n/a" and board(span_run)["AudioSpan Rubric"] == "n/a"


def test_a_group_whose_judging_failed_is_na_beside_an_available_headline(tmp_path):
    # Judged 1 of 2 in "speech" (a real score), 0 of 1 in "sound" (failed): the headline stands, "sound" is n/a.
    result = {
        **SET,
        "rubrics": 0.3,
        "accuracy": 1.0,
        "n": 3,
        "n_judged": 2,
        "n_failed": 1,
        "n_gated": 0,
        "modality": {
            "speech": {"rubrics": 0.45, "accuracy": 1.0, "n": 2, "n_judged": 2, "n_failed": 0},
            "sound": {"rubrics": 0.0, "accuracy": 1.0, "n": 1, "n_judged": 0, "n_failed": 1},
        },
    }
    run = write_run(tmp_path / "r", "mmar", {"mmar_rubrics": {"status": "ok", "results": [result]}})
    md = Path(build_report([run], tmp_path / "r.html")["markdown"]).read_text()
    assert "| m on mmar [full/aria_cot] | 0.3000 | 1.0000 | 3 |" in md
    assert "| modality | speech | 0.4500 | 1.0000 | 2 |" in md and "| modality | sound | n/a | 1.0000 | 1 |" in md
    figure = mmar_rubrics_figure(load_results(run).of("mmar_rubrics"))
    assert figure.data["modality: m on mmar [full/aria_cot] Rubrics"] == {"speech": pytest.approx(0.45), "sound": None}


# ---------------------------------------------------------------------------------------------
# Item 9: hostile inputs
# ---------------------------------------------------------------------------------------------


def _wav(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(struct.pack("<160h", *range(160)))
    return path


def test_a_bundle_plays_only_the_audio_inside_it(tmp_path):
    outside = _wav(tmp_path / "x.wav")
    scorers = {"accuracy": {"status": "ok", "results": [accuracy("official_slot", 0.5)]}}
    bundle = write_run(
        tmp_path / "bundle",
        "mmar",
        scorers,
        outputs=[
            {**SET, "template": {"name": "aria_cot"}, "key": f"k{i}", "id": f"q{i}", "output": "a"} for i in range(4)
        ],
    )
    inside = _wav(bundle / "audio" / "00000.wav")
    os.symlink(outside, bundle / "audio" / "link.wav")  # inside by name, outside once resolved
    items = [
        {"id": "q0", "audio": "audio/00000.wav"},
        {"id": "q1", "audio": "../x.wav"},
        {"id": "q2", "audio": "/etc/hostname"},
        {"id": "q3", "audio": "audio/link.wav"},
    ]
    (bundle / run_view.BENCHMARK_ITEMS_FILE).write_text("".join(json.dumps(i) + "\n" for i in items))
    view = runs.open_run(bundle)
    assert [view.items[f"q{i}"]["audio"] for i in range(4)] == [str(inside), None, None, None]
    assert view.notes == [
        "3 item(s) of benchmark_items.jsonl name audio outside the bundle ('../x.wav', "
        "'/etc/hostname', 'audio/link.wav'): not played"
    ]
    assert [item_page.item_detail(view, f"k{i}")["audio"] for i in range(4)] == [str(inside), None, None, None]


def _zip_of_zeros(path: Path, size: int, name: str = "run/results.json") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("run/run.json", "{}")
        with z.open(name, "w") as member:
            for _ in range(size // 2**20):
                member.write(bytes(2**20))
    return path


def test_a_zip_bomb_is_refused_from_its_headers(tmp_path):
    bomb = _zip_of_zeros(tmp_path / "bomb.zip", 256 * 2**20)  # ~254 KB that expands to 256 MiB
    assert bomb.stat().st_size < 300_000
    with pytest.raises(
        ValueError,
        match=r"^bomb.zip: expands to 268,435,458 bytes or more; an uploaded zip may "
        r"expand to at most 209,715,200 \(open a bigger run from its folder\)$",
    ):
        bundles.stage_uploads([bomb], tmp_path / "staged")
    assert not (tmp_path / "staged" / "zip-0").exists()  # nothing extracted
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as z:
        for n in range(6):
            z.writestr(f"run/f{n}.json", "{}")
    with pytest.raises(ValueError, match=r"^many.zip: 6 files in the zip; an upload may hold at most 5$"):
        bundles.stage_uploads([many], tmp_path / "staged", max_members=5)


def test_a_zip_whose_headers_lie_is_stopped_while_extracting(tmp_path):
    # A member of 2 MiB whose headers (local and central) claim 1,000 bytes: the declared total passes the cap;
    # what comes out is bounded and the member fails its checksum, so nothing is left half-extracted.
    liar = _zip_of_zeros(tmp_path / "liar.zip", 2 * 2**20)
    data = bytearray(liar.read_bytes())
    central = data.rindex(b"PK\x01\x02")  # the last central entry: run/results.json
    local = struct.unpack_from("<I", data, central + 42)[0]
    struct.pack_into("<I", data, central + 24, 1000)
    struct.pack_into("<I", data, local + 22, 1000)
    liar.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"^liar.zip: cannot be unpacked \(BadZipFile: Bad CRC-32"):
        bundles.stage_uploads([liar], tmp_path / "staged", max_bytes=2**20)
    assert not (tmp_path / "staged" / "zip-0").exists()
    # Read as written (no lie), the same member is over a 1 MiB cap: counted while extracting too.
    honest = _zip_of_zeros(tmp_path / "honest.zip", 2 * 2**20)
    with pytest.raises(ValueError, match=r"^honest.zip: expands to 2,097,154 bytes or more"):
        bundles.stage_uploads([honest], tmp_path / "staged", max_bytes=2**20)


def _deep(path: Path) -> Path:
    path.write_text("[" * 100_000 + "]" * 100_000)
    return path


@pytest.mark.parametrize(
    "case, file, message",
    [
        ("run.json is a list", "run.json", "run.json: a list, not an object"),
        (
            "results.json run is a list",
            "results.json",
            "results.json: malformed (AttributeError: 'list' object has no attribute 'get')",
        ),
        ("an output key is a list", "outputs.jsonl", "outputs.jsonl: record 1: 'key' is a list, not a string"),
        ("an items.jsonl line is an array", "items.jsonl", "items.jsonl: record 1 is a list, not an object"),
        ("counts is a list", "results.json", "malformed (AttributeError: 'list' object has no attribute 'get')"),
        ("results.json nested 100,000 deep", "results.json", "results.json: nested too deeply to read"),
        ("outputs.jsonl nested 100,000 deep", "outputs.jsonl", "outputs.jsonl:1: JSON nested too deeply to read"),
    ],
)
def test_a_malformed_run_is_one_line_naming_its_file(tmp_path, case, file, message):
    run = write_run(
        tmp_path / "run",
        "mmar",
        {"accuracy": {"status": "ok", "results": [accuracy("official_slot", 0.5)]}},
        outputs=[{**SET, "template": {"name": "aria_cot"}, "key": "k", "id": "q", "output": "a"}],
    )
    if case == "run.json is a list":
        (run / "run.json").write_text("[]")
    elif case == "results.json run is a list":
        (run / "results.json").write_text(json.dumps({"run": ["m"], "scorers": {}}))
    elif case == "an output key is a list":
        (run / "outputs.jsonl").write_text(json.dumps({"key": ["k"], "id": "q"}) + "\n")
    elif case == "an items.jsonl line is an array":
        (run / "items.jsonl").write_text("[1, 2]\n")
    elif case == "counts is a list":
        bad = {k: v for k, v in accuracy("official_slot", 0.5).items() if k != "n"}
        (run / "results.json").write_text(
            json.dumps({"run": {}, "scorers": {"accuracy": {"status": "ok", "results": [{**bad, "counts": [1]}]}}})
        )
    elif "results.json nested" in case:
        _deep(run / "results.json")
    else:
        (run / "outputs.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    views, errors = runs.open_runs([run])
    assert views == [] and len(errors) == 1 and "\n" not in errors[0]
    assert str(run / file) in errors[0] and message in errors[0]


def _app(folder: str):
    spec = importlib.util.spec_from_file_location(f"inputs_app_{folder}", ROOT / "spaces" / folder / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_spaces_turn_malformed_uploads_into_one_line_errors(tmp_path):
    import gradio as gr

    explorer, report = _app("explorer"), _app("report")
    deep = _deep(tmp_path / "deep.json")
    with pytest.raises(gr.Error) as caught:
        explorer.load([str(deep)], [])
    assert f"{deep}: nested too deeply to read" in caught.value.message
    # A results.json whose MMAR-Rubrics reliability is a list: the report's table reads .get on it.
    result = {**SET, "rubrics": 0.5, "accuracy": 0.5, "n": 2, "n_judged": 1, "n_failed": 0, "reliability": [1]}
    run = write_run(tmp_path / "run", "mmar", {"mmar_rubrics": {"status": "ok", "results": [result]}})
    with pytest.raises(gr.Error) as caught:
        report.render([str(run)], "t")
    assert caught.value.message == (
        f"{run / 'results.json'}: malformed (AttributeError: 'list' object has no attribute 'get')"
    )
    with pytest.raises(gr.Error) as caught:
        report.render([str(deep)], "t")
    assert caught.value.message.startswith(f"{deep}: nested too deeply to read")


def test_a_model_name_with_mathtext_is_drawn_as_plain_text(tmp_path):
    name = "gpt$\\frac{$x"
    result = {**accuracy("official_slot", 0.5, official_scorer_accuracy=0.5), "model": name}
    run = write_run(tmp_path / "run", "mmar", {"accuracy": {"status": "ok", "results": [result]}})
    summary = build_report([run], tmp_path / "r.html")
    assert summary["figures"] == ["accuracy"]
    page = Path(summary["html"]).read_text()
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert f"{name} on mmar [full/aria_cot]" in svg  # the tick label as written, not parsed
