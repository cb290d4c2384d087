"""Human review of a constructed benchmark (AudioSpan §4.5, App. B.4): the review.jsonl format and its errors,
apply_review's counts and fixes, the AudioSpan builder honouring review.jsonl, the review app's functions over
its HTTP API (gradio_client) and the app in a real browser (Debian's chromium, as test_browser.py drives it).

The construction folder is written here: one 20 s recording of two tones (220 Hz to 10 s, 660 Hz after), its
anchored copy with a 1 kHz beep at 12-13 s, a hand-written caption with three evidence records, a native pair
(OEQ + MCQ) and an anchor chain of three links."""

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from fixtures.audiospan_synth import write_audiospan_folder

from audioreason.apps.review import ReviewSession, build_review_app
from audioreason.apps.review_folder import ReviewFolder, Stretch
from audioreason.base.jsonl import DataFileError
from audioreason.data.review import apply_review, latest_decisions, read_review
from audioreason.data.review_log import make_decision, write_decision

RATE = 16000
REC = "rec1"
T = "2026-01-05T10:00:00Z"


def _tones() -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(20 * RATE) / RATE
    original = np.where(t < 10, 0.3 * np.sin(2 * np.pi * 220 * t), 0.3 * np.sin(2 * np.pi * 660 * t))
    anchored = original.copy()
    beep = (t >= 12) & (t < 13)
    anchored[beep] += 0.3 * np.sin(2 * np.pi * 1000 * t[beep])
    return original.astype(np.float32), anchored.astype(np.float32)


def _jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_bench(root: Path) -> Path:
    original, anchored = _tones()
    for folder, samples in (("original", original), ("anchored", anchored)):
        (root / "audio" / folder).mkdir(parents=True, exist_ok=True)
        sf.write(root / "audio" / folder / f"{REC}.wav", samples, RATE, subtype="PCM_16")
    common = {"recording_id": REC, "language": "en", "duration_tier": "S", "dimension": "recognition"}
    oeq = {
        **common,
        "id": "rec1/P/oeq",
        "pair_id": "rec1/P",
        "format": "OEQ",
        "cognitive_level": "perception",
        "question": "When does the tone rise?",
        "reference_answer": "At 00:11 the tone rises.",
        "rubric": [
            {"text": "Hears the low tone", "importance": "essential", "time_range": [2, 3], "localization": False},
            {"text": "Says it rises", "importance": "supporting", "time_range": None, "localization": False},
        ],
        "evidence": ["s01.sound.000"],
    }
    mcq = {
        **common,
        "id": "rec1/P/mcq",
        "pair_id": "rec1/P",
        "format": "MCQ",
        "cognitive_level": "perception",
        "question": "Which tone ends the recording?",
        "choices": ["110 Hz", "220 Hz", "660 Hz", "1 kHz"],
        "answer": "660 Hz",
        "evidence": ["s00.speech.000"],
    }
    anchor = [
        {
            **common,
            "id": f"rec1/anchor/{k}",
            "chain_id": "rec1/chain",
            "link_position": k,
            "cognitive_level": level,
            "question": f"Link {k}?",
            "choices": ["w", "x", "y", "z"],
            "answer": "y",
            "operation": "addition",
            "evidence": ["s01.sound.000"] if k > 1 else [],
        }
        for k, level in ((1, "perception"), (2, "understanding"), (3, "reasoning"))
    ]
    _jsonl(root / "metadata/native.jsonl", [mcq, oeq])  # the MCQ first: the review shows the OEQ first anyway
    _jsonl(root / "metadata/anchor.jsonl", anchor)
    _jsonl(
        root / "metadata/edits.jsonl",
        [{"recording_id": REC, "operation": "addition", "positions": [[12, 13]], "event_category": "beep"}],
    )
    caption = {
        "recording_id": REC,
        "duration": 20.0,
        "evidence": [
            {"id": "s00.speech.000", "segment": 0, "start": 1.0, "end": 4.0, "modality": "speech", "content": "low"},
            {"id": "s01.sound.000", "segment": 1, "start": 11.0, "end": 12.5, "modality": "sound", "content": "high"},
            {"id": "g.000", "segment": None, "start": 0.0, "end": 20.0, "modality": "global", "content": "tones"},
        ],
    }
    (root / "captions").mkdir()
    (root / "captions" / f"{REC}.json").write_text(json.dumps(caption))
    return root


@pytest.fixture
def bench(tmp_path):
    return write_bench(tmp_path / "bench")


# ---------------------------------------------------------------------------------------------
# The format
# ---------------------------------------------------------------------------------------------


def test_decisions_parse_and_the_latest_per_item_holds(tmp_path):
    path = tmp_path / "review.jsonl"
    rows = [
        {"item_id": "a", "decision": "accept", "reviewer": "ann", "time": T},
        {"item_id": "b", "decision": "fix", "time": T, "fixes": {"choices": {"C": " new C ", "0": "new A"}}},
        {"item_id": "a", "decision": "reject", "reason": "wrong time", "time": "2026-01-05T11:00:00+01:00"},
        {"item_id": "c", "decision": "fix", "time": T, "fixes": {"rubric": {"1": "x"}, "reference_answer": "r"}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"item_id": "d", "decis')  # a torn last line
    decisions = read_review(path)
    assert [(d.item_id, d.decision, d.where) for d in decisions] == [
        ("a", "accept", f"{path}:1"),
        ("b", "fix", f"{path}:2"),
        ("a", "reject", f"{path}:3"),
        ("c", "fix", f"{path}:4"),
    ]
    assert decisions[1].fixes.choices == {2: "new C", 0: "new A"}  # letter C is index 2; texts stripped
    assert decisions[3].fixes.fields() == ["rubric", "reference_answer"]
    holding = latest_decisions(decisions)
    assert list(holding) == ["b", "a", "c"] and holding["a"].reason == "wrong time"
    assert read_review(tmp_path / "absent.jsonl") == []


def _line(**record) -> str:
    return json.dumps({"item_id": "a", "time": "2026-01-05", **record})


FIX = {"decision": "fix"}
BAD_LINES = [
    ("not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object, got an array"),
    ('{"decision": "accept", "time": "2026-01-05"}', "'item_id' must be a non-empty string, got nothing"),
    (_line(decision="maybe"), "decision must be one of"),
    (_line(decision="reject"), "'reason' must be a non-empty string"),
    (_line(decision="reject", reason=" "), "got a blank string"),
    (_line(**FIX), "a fix needs 'fixes'"),
    (_line(decision="accept", fixes={"question": "q"}), "'fixes' goes with decision 'fix' only"),
    (_line(**FIX, fixes={"answer": "q"}), "fixes has unknown fields ['answer']"),
    (_line(**FIX, fixes={"choices": {"x1": "q"}}), "fixes.choices key 'x1' is not a 0-based index or an option"),
    (_line(**FIX, fixes={"rubric": {"A": "q"}}), "fixes.rubric key 'A' is not a 0-based index"),
    (_line(**FIX, fixes={"choices": {"1": ""}}), "fixes.choices['1'] must be a non-empty string"),
    (_line(decision="accept", time="yesterday"), "'yesterday' is not an ISO 8601"),
    ('{"item_id": "a", "decision": "accept"}', "'time' must be a non-empty string"),
    (_line(decision="accept", note=1), "unknown fields ['note']"),
]


@pytest.mark.parametrize("line,message", BAD_LINES)
def test_a_bad_line_is_an_error_naming_its_line(tmp_path, line, message):
    path = tmp_path / "review.jsonl"
    path.write_text(json.dumps({"item_id": "ok", "decision": "accept", "time": T}) + "\n" + line + "\n")
    with pytest.raises(DataFileError) as err:
        read_review(path)
    assert str(err.value).startswith(f"{path}:2") and message in str(err.value), str(err.value)


def test_write_decision_appends_a_line_and_cuts_a_torn_one(tmp_path):
    path = tmp_path / "sub" / "review.jsonl"
    write_decision(path, make_decision("a", "accept", reviewer="ann", time=T))
    with open(path, "ab") as f:
        f.write(b'{"item_id": "b", "deci')  # a writer stopped mid-line
    write_decision(path, make_decision("b", "reject", reason="inaudible", time=T))
    assert path.read_text().splitlines() == [
        '{"item_id": "a", "decision": "accept", "reviewer": "ann", "time": "2026-01-05T10:00:00Z"}',
        '{"item_id": "b", "decision": "reject", "reason": "inaudible", "time": "2026-01-05T10:00:00Z"}',
    ]
    with pytest.raises(DataFileError, match="'reason' must be a non-empty string"):
        make_decision("c", "reject")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", make_decision("c", "accept").time)


# ---------------------------------------------------------------------------------------------
# apply_review
# ---------------------------------------------------------------------------------------------

ITEMS = [
    {"id": "m1", "question": "q1", "choices": ["a", "b", "c", "d"], "answer": "c", "answer_index": 2},
    {"id": "m2", "question": "q2", "choices": ["a", "b", "c", "d"], "answer": "b"},
    {
        "id": "o1",
        "question": "q3",
        "choices": [],
        "answer": "ref",
        "reference_answer": "ref",
        "rubric": [{"text": "c1", "importance": "essential", "time_range": [1.0, 2.0], "localization": True}],
    },
    {"id": "k1", "question": "p", "choices": ["w", "x"], "answer": "x", "chain_id": "ch"},
    {"id": "k2", "question": "u", "choices": ["w", "x"], "answer": "x", "chain_id": "ch"},
    {"id": "k3", "question": "r", "choices": ["w", "x"], "answer": "x", "chain_id": "ch"},
    {"id": "n1", "question": "q4", "choices": ["a", "b"], "answer": "a"},
]


def _decisions(tmp_path, rows):
    path = tmp_path / "review.jsonl"
    path.write_text("".join(json.dumps({"time": T, **r}) + "\n" for r in rows))
    return read_review(path)


def test_apply_review_counts_and_fixes(tmp_path):
    decisions = _decisions(
        tmp_path,
        [
            {"item_id": "m1", "decision": "reject", "reason": "first thought"},
            {"item_id": "m1", "decision": "fix", "fixes": {"choices": {"C": "c fixed"}, "question": "q1 fixed"}},
            {"item_id": "m2", "decision": "fix", "fixes": {"choices": {"0": "a fixed"}}},
            {"item_id": "o1", "decision": "fix", "fixes": {"rubric": {"0": "c1 fixed"}, "reference_answer": "new"}},
            {"item_id": "k2", "decision": "reject", "reason": "the beep is inaudible"},
            {"item_id": "k1", "decision": "accept"},
            {"item_id": "ghost", "decision": "accept"},
        ],
    )
    kept, counts = apply_review(ITEMS, decisions)
    assert [it["id"] for it in kept] == ["m1", "m2", "o1", "n1"]
    assert counts.counts() == {
        "decisions": 7,
        "superseded": 1,
        "accepted": 0,  # k1's accept does not keep it: its chain has a rejected link
        "fixed": 3,
        "rejected": 1,
        "chain_dropped": 2,
        "unreviewed": 1,
        "unknown": 1,
    }
    assert (counts.rejected, counts.chain_dropped, counts.unknown, counts.unreviewed) == (
        ["k2"],
        ["k1", "k3"],
        ["ghost"],
        ["n1"],
    )
    m1, m2, o1 = kept[:3]
    # The correct option's text was fixed: the answer follows it; its index stays.
    assert (m1["question"], m1["choices"][2], m1["answer"], m1["answer_index"]) == ("q1 fixed", "c fixed", "c fixed", 2)
    assert (m2["choices"][0], m2["answer"]) == ("a fixed", "b")  # another option fixed: the answer stays
    assert o1["rubric"] == [
        {"text": "c1 fixed", "importance": "essential", "time_range": [1.0, 2.0], "localization": True}
    ]
    assert (o1["reference_answer"], o1["answer"]) == ("new", "new")  # an OEQ's answer repeats its reference
    assert ITEMS[0]["choices"][2] == "c" and ITEMS[2]["rubric"][0]["text"] == "c1"  # the inputs are untouched


@pytest.mark.parametrize(
    "fix,message",
    [
        ({"item_id": "m1", "fixes": {"choices": {"4": "e"}}}, "option index 4, but the item has 4 options"),
        ({"item_id": "o1", "fixes": {"choices": {"0": "e"}}}, "fixes options, but the item has none"),
        ({"item_id": "m1", "fixes": {"choices": {"0": "b"}}}, "the fixed options repeat a text"),
        ({"item_id": "o1", "fixes": {"rubric": {"1": "e"}}}, "criterion index 1, but the item has 1 criterion"),
        ({"item_id": "m2", "fixes": {"reference_answer": "e"}}, "fixes the reference answer of a multiple-choice"),
    ],
)
def test_a_fix_that_does_not_fit_its_item_names_its_line(tmp_path, fix, message):
    decisions = _decisions(tmp_path, [{"item_id": "n1", "decision": "accept"}, {"decision": "fix", **fix}])
    with pytest.raises(DataFileError) as err:
        apply_review(ITEMS, decisions)
    assert str(err.value).startswith(f"{tmp_path / 'review.jsonl'}:2: fix of {fix['item_id']}: {message}")


# ---------------------------------------------------------------------------------------------
# The AudioSpan builder honours review.jsonl
# ---------------------------------------------------------------------------------------------


def test_the_builder_leaves_rejected_items_out_and_applies_fixes(tmp_path):
    from audioreason.data import AudioSpanBuilder

    raw = write_audiospan_folder(tmp_path / "raw")
    cache = str(tmp_path / "cache")
    before = {
        it["id"]: it for it in AudioSpanBuilder(data_dir=str(raw), cache_dir=cache).build().remove_columns("audio")
    }
    _jsonl(
        raw / "review.jsonl",
        [
            {"item_id": "en-talk-001/native/P/mcq", "decision": "fix", "reviewer": "ann", "time": T,
             "fixes": {"question": "Which option?", "choices": {"C": "option C, tightened"}}},
            {"item_id": "en-talk-001/native/R/oeq", "decision": "fix", "time": T,
             "fixes": {"rubric": {"1": "Locates it at 00:02"}, "reference_answer": "At 00:02 it is explained."}},
            {"item_id": "en-talk-001/native/U/mcq", "decision": "reject", "reason": "two options fit", "time": T},
            {"item_id": "zh-show-002/anchor/3", "decision": "reject", "reason": "edit inaudible", "time": T},
            {"item_id": "en-talk-001/anchor/1", "decision": "accept", "time": T},
            {"item_id": "no-such-item", "decision": "accept", "time": T},
        ],
    )  # fmt: skip
    builder = AudioSpanBuilder(data_dir=str(raw), cache_dir=cache)
    report = builder.report
    after = {it["id"]: it for it in builder.build().remove_columns("audio")}  # a new build: review.jsonl is keyed
    left_out = {"en-talk-001/native/U/mcq", "zh-show-002/anchor/1", "zh-show-002/anchor/2", "zh-show-002/anchor/3"}
    assert set(after) == set(before) - left_out and len(after) == 14 and report.built == 14
    assert report.review == {
        "decisions": 6,
        "superseded": 0,
        "accepted": 1,
        "fixed": 2,
        "rejected": 2,
        "chain_dropped": 2,
        "unreviewed": 11,  # 18 items - 4 left out - 1 accepted - 2 fixed
        "unknown": 1,
    }
    assert report.ids("review_rejected") == ["en-talk-001/native/U/mcq", "zh-show-002/anchor/3"]
    assert report.ids("review_chain_dropped") == ["zh-show-002/anchor/1", "zh-show-002/anchor/2"]
    assert sorted(report.ids("skipped")) == sorted(left_out)
    assert [(i.item_id, i.detail) for i in report.of_kind("review_fixed")] == [
        ("en-talk-001/native/P/mcq", "question, choices"),
        ("en-talk-001/native/R/oeq", "rubric, reference_answer"),
    ]
    assert report.ids("review_unknown_item") == ["no-such-item"]
    assert report.ids("incomplete_native_set") == ["en-talk-001"]  # its MCQs lost their U level
    mcq, old = after["en-talk-001/native/P/mcq"], before["en-talk-001/native/P/mcq"]
    assert (mcq["question"], mcq["choices"], mcq["answer"], mcq["answer_index"]) == (
        "Which option?",
        ["option A (P)", "option B (P)", "option C, tightened", "option D (P)"],
        "option C, tightened",  # the correct option was fixed: the answer follows
        2,
    )
    assert json.loads(mcq["extra"])["review"] == {
        "decision": "fix",
        "fixed": ["question", "choices"],
        "reviewer": "ann",
        "time": T,
    }
    oeq, old_oeq = after["en-talk-001/native/R/oeq"], before["en-talk-001/native/R/oeq"]
    assert oeq["rubric"][1] == {**old_oeq["rubric"][1], "text": "Locates it at 00:02"}
    assert oeq["answer"] == oeq["reference_answer"] == "At 00:02 it is explained."
    unchanged = [k for k in before if k not in left_out and k not in {mcq["id"], oeq["id"], "en-talk-001/anchor/1"}]
    assert all(after[k] == before[k] for k in unchanged)
    assert {k: v for k, v in mcq.items() if k not in ("question", "choices", "answer", "extra")} == {
        k: v for k, v in old.items() if k not in ("question", "choices", "answer", "extra")
    }
    # A bad line stops the build, naming it.
    with open(raw / "review.jsonl", "a") as f:
        f.write('{"item_id": "x", "decision": "reject", "time": "2026-01-05"}\n')
    with pytest.raises(DataFileError, match=r"review.jsonl:7: 'reason' must be a non-empty string"):
        AudioSpanBuilder(data_dir=str(raw), cache_dir=cache)


# ---------------------------------------------------------------------------------------------
# The folder the app reads, and the app over HTTP
# ---------------------------------------------------------------------------------------------


def test_the_folder_in_review_order_with_its_stretches(bench):
    folder = ReviewFolder(bench, bench.parent / "clips")
    assert [it["id"] for it in folder.items] == [
        "rec1/P/oeq",  # the OEQ before its MCQ (App. B.4)
        "rec1/P/mcq",
        "rec1/anchor/1",
        "rec1/anchor/2",
        "rec1/anchor/3",
    ]
    oeq, mcq, link1 = folder.items[:3]
    # criterion 1 [2, 3] -> [0 (held at the start), 6]; "00:11" in the reference -> [8, 14]; s01.sound.000
    # [11, 12.5] -> [8, 15.5], merged with it. 3 s of margin on each side.
    assert folder.stretches(oeq) == [
        Stretch(0.0, 6.0, "criterion 1"),
        Stretch(8.0, 15.5, "reference answer, s01.sound.000"),
    ]
    # The MCQ cites s00.speech.000 [1, 4] -> [0, 7] and what its OEQ cites; the global record is no stretch.
    assert folder.stretches(mcq) == [
        Stretch(0.0, 7.0, "criterion 1 (OEQ), s00.speech.000"),
        Stretch(8.0, 15.5, "reference answer (OEQ), s01.sound.000 (OEQ)"),
    ]
    assert folder.stretches(link1) == [Stretch(9.0, 16.0, "anchor position 1, before the edit")]
    assert folder.anchor_stretches(link1) == [Stretch(9.0, 16.0, "anchor position 1 (00:12-00:13)")]
    assert folder.anchor_stretches(oeq) == []
    # A clip is exactly that stretch of the file.
    original, _ = sf.read(bench / "audio/original/rec1.wav", dtype="float32")
    clip, rate = sf.read(folder.clip(oeq, folder.stretches(oeq)[1]), dtype="float32")
    assert rate == RATE and np.array_equal(clip, original[8 * RATE : int(15.5 * RATE)])
    edited, _ = sf.read(folder.clip(link1, folder.anchor_stretches(link1)[0], anchored=True), dtype="float32")
    anchored, _ = sf.read(bench / "audio/anchored/rec1.wav", dtype="float32")
    assert np.array_equal(edited, anchored[9 * RATE : 16 * RATE])


@pytest.fixture
def served(bench, tmp_path):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    demo = build_review_app(bench, reviewer="tester", clips_dir=tmp_path / "clips")
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    yield demo
    demo.close()


def _lines(bench: Path) -> list[dict]:
    return [json.loads(line) for line in (bench / "review.jsonl").read_text().splitlines()]


def test_the_app_over_its_api(served, bench):
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    client = Client(served.local_url, verbose=False, download_files=str(bench.parent / "downloads"))
    page = client.predict(1, api_name="/show")
    assert page[0] == 1 and page[1] == "**Reviewed 0 of 5**" and "rec1/P/oeq" in page[2]
    assert "Reference answer:</b> At 00:11 the tone rises." in page[2] and "Hears the low tone" in page[2]
    played, _ = sf.read(page[4], dtype="float32")
    assert len(played) == 6 * RATE  # the first stretch, [0, 6] s
    after = client.predict(1, "ann", api_name="/accept")
    assert after[0] == 2 and after[1] == "**Reviewed 1 of 5**" and "rec1/P/mcq" in after[2]
    assert "(C) 660 Hz <b>&#10003; answer</b>" in after[2]
    assert _lines(bench) == [
        {"item_id": "rec1/P/oeq", "decision": "accept", "reviewer": "ann", "time": _lines(bench)[0]["time"]}
    ]
    # A fix of the MCQ's correct option: written as the difference, and the answer follows it.
    fixed = client.predict(
        2, "ann", "Which tone ends it?", "110 Hz\n220 Hz\n660 Hz (high)\n1 kHz", "", "", "", api_name="/fix"
    )
    assert fixed[0] == 3 and "rec1/anchor/1" in fixed[2] and fixed[1] == "**Reviewed 2 of 5**"
    assert {k: v for k, v in _lines(bench)[1].items() if k != "time"} == {
        "item_id": "rec1/P/mcq",
        "decision": "fix",
        "fixes": {"question": "Which tone ends it?", "choices": {"2": "660 Hz (high)"}},
        "reviewer": "ann",
    }
    again = client.predict(2, api_name="/show")
    assert "(C) 660 Hz (high) <b>&#10003; answer</b>" in again[2] and "shown with its fixes" in again[2]
    # The anchor link plays the edited audio at its position: [9, 16] s of the anchored copy.
    link = client.predict(3, api_name="/show")
    assert link[5]["label"] == "Edited audio: anchor position 1 (00:12-00:13)" and link[6]["visible"] is False
    edited, _ = sf.read(link[5]["value"], dtype="float32")
    assert len(edited) == 7 * RATE
    second, _ = sf.read(client.predict(2, "1", api_name="/play"), dtype="float32")
    assert len(second) == int(7.5 * RATE)  # the MCQ's second stretch, [8, 15.5] s
    with pytest.raises(AppError, match="A rejection needs a reason"):
        client.predict(3, "ann", "", api_name="/reject")
    with pytest.raises(AppError, match="Nothing differs"):
        client.predict(
            2, "ann", "Which tone ends the recording?", "110 Hz\n220 Hz\n660 Hz\n1 kHz", "", "", "", api_name="/fix"
        )
    with pytest.raises(AppError, match="Give the 4 options one per line"):
        client.predict(2, "ann", "", "110 Hz\n220 Hz", "", "", "", api_name="/fix")
    rejected = client.predict(4, "bob", "the beep is not audible", api_name="/reject")
    assert rejected[0] == 5 and rejected[1] == "**Reviewed 3 of 5**"
    assert len(_lines(bench)) == 3 and _lines(bench)[2]["reason"] == "the beep is not audible"


def test_the_session_moves_on_and_stays_on_the_last_item(bench, tmp_path):
    session = ReviewSession(ReviewFolder(bench, tmp_path / "clips"))
    assert session.accept(5, "ann")[0] == 5  # the last item: the page stays on it
    assert session.go(1, -1)[0] == 1 and session.go(5, 1)[0] == 5 and session.show("x")[0] == 1
    assert session.show(99)[0] == 5
    assert _lines(bench)[0]["item_id"] == "rec1/anchor/3"
    # A damaged anchored copy: no edited audio to play, and the page says so.
    (bench / "audio/anchored/rec1.wav").write_bytes(b"RIFF garbage")
    page = session.show(4)
    assert page[5]["value"] is None and "No playable file for rec1 in audio/anchored" in page[2]
    assert "No playable file" not in session.show(1)[2]


# ---------------------------------------------------------------------------------------------
# The app in a real browser
# ---------------------------------------------------------------------------------------------

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@pytest.mark.skipif(
    not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()),
    reason="needs Debian's chromium and chromium-driver (install.sh)",
)
def test_accept_and_reject_in_the_browser(served, bench, tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from test_browser import FLAGS, Page

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    try:
        page = Page(driver, url=served.local_url)
        page.wait_for("rec1/P/oeq", "Reviewed 0 of 5", "At 00:11 the tone rises.")
        page.click("Accept")
        page.wait_for("Reviewed 1 of 5", "rec1/P/mcq", "Saved: accept of rec1/P/oeq")
        reason = driver.find_element(By.XPATH, "//label[.//*[contains(text(), 'Reason')]]//textarea")
        reason.send_keys("two options fit the audio")
        page.click("Reject")
        page.wait_for("Reviewed 2 of 5", "rec1/anchor/1", "Saved: reject of rec1/P/mcq")
        page.shot(tmp_path, "review")
    finally:
        driver.quit()
    lines = _lines(bench)
    assert [(line["item_id"], line["decision"], line.get("reason"), line["reviewer"]) for line in lines] == [
        ("rec1/P/oeq", "accept", None, "tester"),
        ("rec1/P/mcq", "reject", "two options fit the audio", "tester"),
    ]
