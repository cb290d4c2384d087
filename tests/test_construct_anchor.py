"""The Anchor QA pipeline of the construction (AudioSpan, arXiv:2608.26431 §4.4, App. B.3): operation choice and
balance, settings in the paper's ranges, event clips and the exclusion of categories already present, the second
selection pass on espeak-ng speech (Silero VAD), the anchored file and manifest with the perception answer read
from it, the U/R option layout and its checks, and the whole chain against a scripted generator, solver and
critic (evidence verification stubbed: it is another module's)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import numpy as np
import pytest
from test_anchors_signals import RATE, speech_recording

from audioreason.audio.anchor_files import verify_anchored
from audioreason.audio.anchor_manifest import new_manifest
from audioreason.audio.io import load_audio, write_audio
from audioreason.audio.placement import PlacementRules, silero_speech
from audioreason.construct import anchor as pipeline
from audioreason.construct import anchor_edit as edit
from audioreason.construct import anchor_events as events
from audioreason.construct.anchor_options import (
    NO_RELATION,
    anchor_positions,
    chain_item,
    check_chain,
    local_records,
)
from audioreason.construct.anchor_prompts import selection_schema
from audioreason.construct.memory import MemoryBank
from audioreason.construct.records import Caption, seed_of
from audioreason.text.timestamps import clock

SEGMENTS = [(0, 0.0, 45.0), (1, 45.0, 90.0), (2, 90.0, 135.0), (3, 135.0, 180.0)]


def make_caption(rid: str = "talk", duration: float = 180.0, segments=SEGMENTS) -> Caption:
    """Four 45 s segments, a speech record every 5 s, a doorbell and a knock in the events, one dependency."""
    evidence, dense = [], []
    for index, start, end in segments:
        speech = []
        for n, t in enumerate(np.arange(start, end, 5.0), start=1):
            rec = {
                "id": f"s{index:02d}.speech.{n:03d}",
                "segment": index,
                "start": float(t),
                "end": float(min(t + 5.0, end)),
                "modality": "speech",
                "content": f"point {n} of part {index}",
            }
            evidence.append(rec)
            speech.append(
                {
                    "start": rec["start"],
                    "end": rec["end"],
                    "speaker": "host",
                    "text": rec["content"],
                    "paralinguistic": "",
                }
            )
        events_ = []
        if index == 1:
            events_ = [{"start": 60.0, "end": 61.0, "label": "doorbell", "description": "the shop bell rings twice"}]
        if index == 2:
            events_ = [{"start": 100.0, "end": 101.0, "label": "knocking", "description": "knocks at the back door"}]
        dense.append(
            {
                "segment": index,
                "start": start,
                "end": end,
                "environment": "quiet studio",
                "transcript": speech,
                "events": events_,
            }
        )
    cross = "causal: the rain forecast in segment 1 moves the market indoors in segment 3"
    evidence.append(
        {"id": "x.001", "segment": 1, "start": 45.0, "end": 180.0, "modality": "cross-segment", "content": cross}
    )
    summary = {
        "topic": "a town radio programme",
        "genre": "radio",
        "narrative_arc": "news, interview, announcements",
        "tone": "friendly",
        "speakers": [{"id": "host", "description": "male voice", "role": "host"}],
        "segments": [
            {
                "index": i,
                "start": a,
                "end": b,
                "title": f"part {i}",
                "summary": f"part {i} of the show",
                "key_topics": [f"topic {i}"],
            }
            for i, a, b in segments
        ],
        "dependencies": [{"id": "x.001", "kind": "causal", "from_segment": 1, "to_segment": 3, "description": "rain"}],
    }
    return Caption.from_dict(
        {
            "recording_id": rid,
            "duration": duration,
            "audio_file": "audio/original/talk.wav",
            "transcript": [],
            "summary": summary,
            "dense": dense,
            "evidence": evidence,
            "provenance": {"captioner_mode": "model"},
        }
    )


@pytest.fixture(scope="module")
def talk(tmp_path_factory):
    """180 s of espeak-ng sentences (2 s gaps) at 16 kHz."""
    folder = tmp_path_factory.mktemp("talk")
    path, intervals = speech_recording(folder, seconds=180.0)
    return path, intervals


def rid_with(operation: str) -> str:
    return next(f"talk{i}" for i in range(100) if edit.choose_operation(f"talk{i}")[0] == operation)


# ------------------------------------------------------------------------------------------ operation
def test_operations_balance_over_a_run_and_follow_the_recording_id():
    run = [f"rec-{i:02d}" for i in range(30)]
    chosen = [edit.choose_operation(r, run) for r in run]
    ops = [op for op, _ in chosen]
    assert {op: ops.count(op) for op in set(ops)} == {"addition": 10, "deletion": 10, "modification": 10}
    assert sorted(v for op, v in chosen if op == "deletion") == ["noise"] * 5 + ["silence"] * 5
    assert sorted(v for op, v in chosen if op == "modification") == ["loudness"] * 5 + ["speed"] * 5
    assert chosen == [edit.choose_operation(r, list(reversed(run))) for r in run]  # the run's order does not matter
    # without the run: the recording's own seed, operation = seed mod 3, variant = (seed div 3) mod 2
    seed = seed_of("rec-07", "anchor-operation")
    op = ("addition", "deletion", "modification")[seed % 3]
    assert edit.choose_operation("rec-07")[0] == op


def test_parameters_stay_in_the_paper_ranges():
    seen = {"gain_sign": set(), "faster": set()}
    for i in range(40):
        rid = f"r{i}"
        snr = edit.draw_parameters(rid, "addition", None)["snr_db"]
        assert 6.0 <= snr <= 10.0 and round(snr, 1) == snr
        assert edit.draw_parameters(rid, "deletion", "noise") == {"deletion_mode": "noise"}
        gain = edit.draw_parameters(rid, "modification", "loudness")["gain_db"]
        assert 8.0 <= abs(gain) <= 12.0
        speed = edit.draw_parameters(rid, "modification", "speed")["speed_factor"]
        assert 1.5 <= max(speed, 1 / speed) <= 3.0 + 1e-9
        seen["gain_sign"].add(gain > 0)
        seen["faster"].add(speed > 1)
        # the manifest accepts them under App. B.3's range check
        new_manifest("modification", [[40.0, 43.0]], attribute="speed", speed_factor=speed)
        new_manifest("addition", [[40.0, None]], event_category="siren", snr_db=snr)
    assert seen == {"gain_sign": {True, False}, "faster": {True, False}}


# ------------------------------------------------------------------------------------------ event clips
def _peak_hz(x: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(x))
    return float(np.fft.rfftfreq(len(x), 1 / rate)[np.argmax(spectrum)])


def test_builtin_clips_are_what_they_are_named():
    beep = events.synthesize_event("electronic beeping", RATE)
    assert len(beep) == 3 * RATE and beep.dtype == np.float32
    assert np.abs(beep).max() == pytest.approx(0.8, abs=1e-6)
    assert _peak_hz(beep, RATE) == pytest.approx(2000.0, abs=2.0)
    assert np.abs(beep[int(0.2 * RATE) : int(0.24 * RATE)]).max() < 1e-6  # 150 ms on, then off until 250 ms
    ring = events.synthesize_event("telephone ringing", RATE)
    assert _peak_hz(ring, RATE) in (pytest.approx(440.0, abs=2.0), pytest.approx(480.0, abs=2.0))
    whistle = events.synthesize_event("whistling", RATE)
    assert 1500.0 <= _peak_hz(whistle, RATE) <= 2600.0
    assert np.array_equal(events.synthesize_event("knocking", RATE), events.synthesize_event("knocking", RATE))
    assert len(events.synthesize_event("siren", 44100)) == 3 * 44100


def test_categories_already_in_the_caption_are_excluded(tmp_path):
    caption = make_caption().to_dict()
    present = events.present_sound_words(caption)
    assert {"doorbell", "bell", "ring", "knock", "door", "studio"} <= present
    kept, excluded = events.allowed_events(events.catalogue(), present)
    # "doorbell"/"bell" -> the chime, "rings" -> the telephone, "knocks" -> knocking
    assert excluded == ["doorbell chime", "telephone ringing", "knocking"]
    assert [c.category for c in kept] == ["electronic beeping", "whistling", "clock ticking", "siren", "car horn"]
    folder = tmp_path / "clips"
    for name in ("dog_barking.wav", "church-bell.wav"):
        write_audio(folder / name, 0.1 * np.ones(RATE * 3, np.float32), RATE)
    (folder / "notes.txt").write_text("not a clip")
    choices = events.catalogue(folder)
    assert [c.category for c in choices] == ["church bell", "dog barking"]
    kept, excluded = events.allowed_events(choices, present)
    assert excluded == ["church bell"] and [c.category for c in kept] == ["dog barking"]
    clip = events.materialize(kept[0], tmp_path / "bench", RATE)
    assert (
        clip == tmp_path / "bench/audio/events/dog_barking.wav"
        and clip.read_bytes() == (folder / "dog_barking.wav").read_bytes()
    )
    built = events.materialize(events.catalogue()[0], tmp_path / "bench", 22050)
    assert built.name == "builtin-electronic-beeping-22050hz.wav" and events.clip_seconds(built, 22050) == 3.0


# ------------------------------------------------------------------------------------------ pass 2 and the edit
def test_pass_two_places_windows_inside_the_shortlisted_segments_over_speech(talk):
    path, _ = talk
    caption = make_caption()
    speech = silero_speech(path)
    assert edit.usable_segments(caption, 180.0, 3.0) == [0, 1, 2, 3]
    assert edit.usable_segments(caption, 180.0, 3.0, PlacementRules(edge_seconds=50.0)) == [
        1,
        2,
    ]  # 0-45 and 135-180 fall in the edges
    windows, notes = edit.place_in_segments(caption, [1, 3], speech, 180.0, count=2, length=3.0)
    assert notes == [] and sorted(w.segment for w in windows) == ["1", "3"]
    for w in windows:
        _, lo, hi = SEGMENTS[int(w.segment)]
        assert lo <= w.start < w.end <= hi and 30.0 <= w.start and w.end <= 150.0
        assert w.end - w.start == pytest.approx(3.0) and w.speech >= 0.5
        assert speech(w.start, w.end) == pytest.approx(w.speech)
    assert windows == edit.place_in_segments(caption, [1, 3], speech, 180.0, count=2, length=3.0)[0]
    # three positions asked of two segments: one per segment, two placed
    assert len(edit.place_in_segments(caption, [1, 3], speech, 180.0, count=3, length=3.0)[0]) == 2


def test_the_anchored_file_manifest_and_perception_answer(talk, tmp_path):
    path, _ = talk
    caption = make_caption()
    windows, _ = edit.place_in_segments(caption, [1, 2, 3], silero_speech(path), 180.0, count=3)
    manifest = edit.write_anchored(caption, path, tmp_path, "deletion", {"deletion_mode": "silence"}, windows)
    assert manifest["output"]["path"] == "audio/anchored/talk.wav" and (tmp_path / "audio/anchored/talk.wav").is_file()
    assert [p["segment"] for p in manifest["positions"]] == ["1", "2", "3"]
    assert verify_anchored(manifest, anchored=tmp_path / "audio/anchored/talk.wav", source=path)["ok"]
    edited = load_audio(tmp_path / "audio/anchored/talk.wav", sampling_rate=RATE)[0]
    for w in windows:  # silence inside the 10 ms fades
        assert np.abs(edited[int((w.start + 0.02) * RATE) : int((w.end - 0.02) * RATE)]).max() < 1e-3
    positions = anchor_positions(caption, manifest)
    assert [p.number for p in positions] == [1, 2, 3]
    for p, w in zip(positions, windows):
        assert (p.start, p.end) == (pytest.approx(w.start), pytest.approx(w.end))
        assert p.local == local_records(caption, p.segment, w.start, w.end) and p.local
        assert all(caption.evidence_by_id()[i].segment == p.segment for i in p.local)
    from audioreason.audio.anchor_questions import perception_item

    item = perception_item(manifest, occurrence=2, seed=3)
    assert item["answer"] == f"3 times; occurrence 2 begins at {clock(round(windows[1].start))}"


def test_local_records_are_the_window_widened_by_fifteen_seconds():
    caption = make_caption()
    # segment 1 records: 45-50 (001), 50-55 (002), ..., 85-90 (009); window 70-73 widened: 55-88
    assert local_records(caption, 1, 70.0, 73.0) == tuple(f"s01.speech.{n:03d}" for n in range(3, 10))


# ------------------------------------------------------------------------------------------ the option layout
class Positions:
    @staticmethod
    def of(caption):
        manifest = {
            "operation": "deletion",
            "positions": [
                {"segment": "1", "original_start": 60.0, "original_end": 63.0, "start": 60.0, "end": 63.0},
                {"segment": "3", "original_start": 140.0, "original_end": 143.0, "start": 140.0, "end": 143.0},
            ],
        }
        return anchor_positions(caption, manifest)


def good_chain(k: int = 2) -> dict:
    return {
        "understanding": {
            "question": f"What is being discussed at occurrence {k} of the silence?",
            "options": [
                {"text": "The rain forecast for Thursday", "position": 1, "evidence": ["s01.speech.004"]},
                {"text": "Where the market will be held", "position": 2, "evidence": ["s03.speech.002"]},
                {"text": "The price of bread at the bakery", "position": 0, "evidence": []},
                {"text": "A lost dog near the station", "position": 0, "evidence": ["s00.speech.001"]},
            ],
        },
        "reasoning": {
            "question": f"How does the content at the {['', 'first', 'second'][k]} occurrence relate to the rest?",
            "options": [
                {"text": "It causes the later move indoors", "position": 1, "evidence": ["x.001"]},
                {"text": "It follows from the earlier forecast", "position": 2, "evidence": ["s01.speech.004"]},
                {"text": "It contradicts the opening greeting", "position": 0, "evidence": []},
            ],
        },
    }


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: c["understanding"]["options"][1].update(position=1), "give occurrence 1 2 times"),
        (lambda c: c["understanding"]["options"][2].update(position=2), "give occurrence 2 2 times"),
        (lambda c: c["understanding"]["options"][1].update(evidence=["s03.speech.009"]), "must cite a record at it"),
        (lambda c: c["understanding"]["options"][0].update(evidence=["s09.speech.001"]), "does not exist"),
        (lambda c: c["reasoning"]["options"][1].update(evidence=["s03.speech.001"]), "another segment"),
        (lambda c: c["reasoning"]["options"][2].update(text=NO_RELATION), "repeat"),
        (lambda c: c["understanding"].update(question="What is being discussed at the edit?"), "occurrence 2"),
    ],
)
def test_the_chain_check_refuses_a_broken_layout(change, message):
    caption = make_caption()
    positions = Positions.of(caption)
    assert positions[0].local == tuple(f"s01.speech.{n:03d}" for n in range(1, 8))  # 60-63 widened: 45-78
    assert check_chain(good_chain(), caption, positions, 2)["understanding"]["options"][1]["position"] == 2
    broken = good_chain()
    change(broken)
    with pytest.raises(ValueError, match=message):
        check_chain(broken, caption, positions, 2)


def test_chain_items_make_the_asked_occurrence_right():
    caption = make_caption()
    checked = check_chain(good_chain(2), caption, Positions.of(caption), 2)
    manifest = new_manifest("deletion", [[60.0, 63.0], [140.0, 143.0]], deletion_mode="silence")
    for level, answer in (
        ("understanding", "Where the market will be held"),
        ("reasoning", "It follows from the earlier forecast"),
    ):
        item = chain_item(level, checked[level], 2, recording_id="talk", item_id=f"talk-{level}", manifest=manifest)
        assert item["answer"] == answer and item["choices"][item["answer_index"]] == answer
        assert len(item["choices"]) == 4 and item["link_position"] == {"understanding": 2, "reasoning": 3}[level]
        assert (NO_RELATION in item["choices"]) == (level == "reasoning")
        assert item["evidence"][0] == {"understanding": "s03.speech.002", "reasoning": "s01.speech.004"}[level]
        placed = chain_item(
            level, checked[level], 2, recording_id="talk", item_id="x", manifest=manifest, answer_position=3
        )
        assert placed["answer_index"] == 3 and placed["choices"][3] == answer
    # a miscount lands on another position's genuine material: occurrence 1's option is the first position's
    wrong = chain_item(
        "understanding", checked["understanding"], 1, recording_id="talk", item_id="u", manifest=manifest
    )
    assert wrong["answer"] == "The rain forecast for Thursday"


def test_selection_check_refuses_unknown_and_ineligible_segments():
    caption = make_caption()
    schema = selection_schema(caption, [1, 2])
    ok = schema.validate({"anchors": [{"segment": 2, "related_segments": [2, 0], "reason": "the interview"}]})
    assert ok == [{"segment": 2, "related_segments": [0], "reason": "the interview"}]
    for anchors, message in (
        ([{"segment": 7, "related_segments": [1], "reason": "r"}], "7"),
        ([{"segment": 0, "related_segments": [1], "reason": "r"}], "0"),
        ([{"segment": 1, "related_segments": [9], "reason": "r"}], "9"),
        ([{"segment": 1, "related_segments": [1], "reason": "r"}], "OTHER segment"),
        ([{"segment": 1, "related_segments": [3], "reason": "r"}] * 2, "twice"),
    ):
        with pytest.raises(ValueError, match=message):
            schema.validate({"anchors": anchors})


# ------------------------------------------------------------------------------------------ the whole chain
class ScriptedCalls:
    """Plays generator, solver and critic; the solver is an honest oracle at the full level, wrong at blind and
    text-only unless ``blind_right``."""

    def __init__(self, blind_right: bool = False):
        self.log: list[tuple[str, str, str, int]] = []
        self.truth: dict[str, int] = {}
        self.blind_right = blind_right

    def context_chars(self, role):
        return None  # the caption views whole, as an endpoint's model reads them

    def describe(self, role):
        return f"scripted {role}"

    async def ask(self, role, schema, messages, *, item, rollout=0):
        self.log.append((role, schema.name, item, rollout))
        value = getattr(self, schema.name.replace("solve_", "solve"))(messages[-1]["content"])
        return schema.validate(value)

    def anchor_segments(self, text):
        return {
            "anchors": [
                {"segment": 1, "related_segments": [3], "reason": "the forecast"},
                {"segment": 3, "related_segments": [1], "reason": "the market"},
            ]
        }

    def chain_questions(self, text):
        k = int(re.search(r"ask about occurrence (\d)", text).group(1))
        local: dict[int, list[str]] = {}
        current = None
        for line in text.splitlines():
            m = re.match(r"Occurrence (\d): segment \d+", line)
            if m:
                current = int(m.group(1))
                local[current] = []
            elif current and line.startswith("  ["):
                local[current].append(line[3 : line.index("]")])
        n = len(local)
        u = [{"text": f"what is said at position {i}", "position": i, "evidence": local[i][:1]} for i in local]
        u += [{"text": f"an unrelated subject {j}", "position": 0, "evidence": []} for j in range(4 - n)]
        r = [{"text": f"a link from position {i}", "position": i, "evidence": ["x.001"]} for i in local]
        r += [{"text": f"an invented link {j}", "position": 0, "evidence": []} for j in range(3 - n)]
        self.truth.update({o["text"]: o["position"] for o in u + r})
        return {
            "understanding": {"question": f"What is discussed at occurrence {k}?", "options": u},
            "reasoning": {"question": f"What does occurrence {k} connect to?", "options": r},
        }

    def _solve(self, text, right):
        k = int(re.search(r"occurrence (\d)", text).group(1))
        options = re.findall(r"^([ABCD])\. (.*)$", text, re.MULTILINE)
        pick = [letter for letter, body in options if (self.truth.get(body, 0) == k) == right][0]
        return {"reasoning": "scripted", "answer": pick}

    def solveblind(self, text):
        return self._solve(text, self.blind_right)

    def solvetext(self, text):
        return self._solve(text, False)

    def solvefull(self, text):
        assert "The recording was edited" in text  # the full level reads the anchor's ground truth
        return self._solve(text, True)

    def critic(self, text):
        return {"shortcut": "specificity bias", "lesson": "Keep every option as specific as the correct one."}


@pytest.fixture
def verified(monkeypatch):
    seen = []

    async def fake(calls, caption, ids, audio_path):
        seen.append((list(ids), Path(audio_path)))
        return {"passed": True, "records": [{"id": i, "confirmed": True} for i in ids]}

    monkeypatch.setattr(pipeline, "_verify", fake)
    return seen


def run(calls, caption, audio, bench, **kwargs):
    return asyncio.run(
        pipeline.anchor_candidates(
            calls, caption, audio, bench, rollouts=3, bank=kwargs.pop("bank", None), order_start=10, **kwargs
        )
    )


def test_an_addition_chain_is_kept_with_its_items(talk, tmp_path, verified):
    path, _ = talk
    rid = rid_with("addition")
    caption = make_caption(rid)
    calls = ScriptedCalls()
    out = run(calls, caption, path, tmp_path)
    assert [(c["level"], c["order"], c["outcome"]) for c in out] == [
        ("perception", 10, "kept"),
        ("understanding", 11, "kept"),
        ("reasoning", 12, "kept"),
    ]
    manifest = out[0]["edit_manifest"]
    assert manifest["operation"] == "addition" and 6.0 <= manifest["snr_db"] <= 10.0
    anchor = out[0]["provenance"]["anchor"]
    assert anchor["excluded_categories"] == ["doorbell chime", "telephone ringing", "knocking"]
    assert manifest["event_category"] not in anchor["excluded_categories"]
    assert manifest["event_clip"]["path"].startswith("audio/events/builtin-")
    assert (tmp_path / "audio/anchored" / f"{rid}.wav").is_file()
    n = len(manifest["positions"])
    assert n == edit.position_count(rid, 2) and len({p["segment"] for p in manifest["positions"]}) == n
    for p in manifest["positions"]:
        _, lo, hi = SEGMENTS[int(p["segment"])]
        assert p["segment"] in ("1", "3") and lo <= p["original_start"] < p["original_end"] <= hi
    p_item, u_item, r_item = (c["items"][0] for c in out)
    k = 1 + seed_of(rid, "anchor-occurrence") % n
    start = manifest["positions"][k - 1]["start"]
    assert p_item["answer"] == f"{n} time{'s' if n > 1 else ''}; occurrence {k} begins at {clock(round(start))}"
    assert u_item["answer"] == f"what is said at position {k}" and r_item["answer"] == f"a link from position {k}"
    assert NO_RELATION in r_item["choices"] and f"occurrence {k}" in u_item["question"]
    positions = anchor_positions(caption, manifest)
    assert u_item["evidence"][0] in positions[k - 1].local
    assert [ids for ids, _ in verified] == [u_item["evidence"], r_item["evidence"]]
    assert all(audio == Path(path) for _, audio in verified)  # the records describe the original audio
    assert out[0]["gates"] == {"evidence": None, "blind": None, "text": None, "full": None}
    assert out[1]["gates"] == {"evidence": True, "blind": [False] * 3, "text": [False] * 3, "full": [True] * 3}
    stages = [(role, stage) for role, stage, _, _ in calls.log]
    assert stages.count(("generator", "anchor_segments")) == 1 and stages.count(("generator", "chain_questions")) == 1
    assert stages.count(("solver", "solve_full")) == 6 and ("critic", "critic") not in stages
    assert all(item["chain_id"] == rid and item["edit_manifest"] == manifest for item in (p_item, u_item, r_item))


def test_a_shortcut_breaks_the_chain_and_teaches_the_bank(talk, tmp_path, verified):
    path, _ = talk
    rid = rid_with("modification")
    bank = MemoryBank()
    out = run(ScriptedCalls(blind_right=True), make_caption(rid), path, tmp_path, bank=bank)
    assert [(c["outcome"], c["rejected_at"]) for c in out] == [
        ("rejected", "chain"),
        ("rejected", "blind"),
        ("rejected", "blind"),
    ]
    assert out[0]["reason"] == "the chain broke: understanding at blind, reasoning at blind"
    assert out[1]["reason"] == "the blind solver was correct in 3/3 rollouts (more than 1/3)"
    assert out[1]["critic"]["shortcut"] == "specificity bias" and "items" not in out[1]
    assert [(x.pipeline, x.level, x.order) for x in bank.lessons()] == [
        ("anchor", "understanding", 11),
        ("anchor", "reasoning", 12),
    ]
    assert not (tmp_path / "audio/anchored" / f"{rid}.wav").exists()  # no item plays it


def test_placement_failures_are_counted_rejections(tmp_path, verified):
    short = tmp_path / "short.wav"
    write_audio(short, np.zeros(60 * RATE, np.float32), RATE)
    calls = ScriptedCalls()
    out = run(calls, make_caption("s", 60.0, [(0, 0.0, 30.0), (1, 30.0, 60.0)]), short, tmp_path)
    assert [(c["rejected_at"], c["reason"][:9]) for c in out] == [("placement", "too short")] * 3
    assert calls.log == []  # decided before any model call
    silent = tmp_path / "silent.wav"
    write_audio(silent, np.zeros(180 * RATE, np.float32), RATE)
    out = run(calls, make_caption(rid_with("deletion")), silent, tmp_path, rules=PlacementRules(attempts=3))
    assert {c["rejected_at"] for c in out} == {"placement"} and "windows over speech" in out[0]["reason"]
    assert [stage for _, stage, _, _ in calls.log] == ["anchor_segments"]
