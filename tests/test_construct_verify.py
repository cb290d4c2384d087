"""Evidence verification offline (AudioSpan, arXiv:2608.26431, §4.5): each cited record re-checked against its
own stretch of audio (ASR re-transcription for speech, signal measurement for sounds and the environment),
derived records left unchecked, unknown ids and impossible times refuted; the caption records and their views;
the stage checks that decide a re-ask."""

from __future__ import annotations

import asyncio
import hashlib
import re

import pytest
from construct_audio import caption_recording

from audioreason.construct.records import Caption, Evidence, seed_of
from audioreason.construct.transcribe import CaptionStepFailed
from audioreason.construct.verify import SPEECH_RECALL, quoted, verify_evidence, word_recall

TEXT_MODEL = "packaged:SmolLM2-135M-Instruct"


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    return caption_recording(tmp_path_factory.mktemp("verify"))


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    from audioreason.construct.calls import Calls
    from audioreason.construct.roles import offline_roles

    return Calls(offline_roles(TEXT_MODEL), tmp_path_factory.mktemp("calls") / "calls.sqlite")


def hand_caption(layout) -> Caption:
    (a0, b0, t0), (a1, b1, _), (a2, b2, _) = layout.sentences
    e0, e1 = layout.event
    d = layout.duration
    records = [
        Evidence("s00.env", 0, 0.0, d, "environment", "noise floor -60.2 dBFS (10th percentile of 50 ms frame levels)"),
        Evidence("s00.speech.001", 0, a0, b0, "speech", f'"{t0}" [measured: level -14.0 dBFS]'),
        Evidence("s00.speech.002", 0, a1, b1, "speech", '"The orchestra played a slow waltz under the bright lights."'),
        Evidence("s00.sound.001", 0, e0, e1, "sound", "non-speech energy event: a two-tone chime"),
        Evidence("s00.sound.002", 0, b2 + 0.3, b2 + 1.0, "sound", "a door slams"),  # the silent tail
        Evidence("s00.speech.003", 0, d + 2.0, d + 4.0, "speech", '"after the end"'),
        Evidence("x.001", 0, 0.0, d, "cross-segment", "reference dependency, segment 0 -> segment 1: ..."),
        Evidence("g.001", None, 0.0, d, "global", "Topic: a committee meeting."),
    ]
    summary = {
        "topic": "a committee meeting",
        "genre": "meeting",
        "narrative_arc": "",
        "tone": "",
        "speakers": [],
        "segments": [{"index": 0, "start": 0.0, "end": d, "title": "All", "summary": "", "key_topics": []}],
        "dependencies": [],
    }
    return Caption("rec", d, "rec.wav", [], summary, [], records, {})


def _by_id(result):
    return {r["id"]: r for r in result["records"]}


def test_offline_verification_of_each_kind(layout, calls):
    from audioreason.construct.offline_audio import frame_levels, noise_floor, read_span

    caption = hand_caption(layout)
    floor = noise_floor(frame_levels(read_span(layout.path, 0.0, layout.duration)))
    assert floor == pytest.approx(-60.2, abs=0.5)  # what the hand-written environment record states
    ids = [e.id for e in caption.evidence if e.id != "s00.speech.003"]
    result = asyncio.run(verify_evidence(calls, caption, ids, layout.path))
    got = _by_id(result)
    assert got["s00.speech.001"]["confirmed"] is True  # the words spoken there
    assert got["s00.speech.002"]["confirmed"] is False  # other words than those spoken there
    assert "word recall" in got["s00.speech.002"]["detail"]
    assert got["s00.sound.001"]["confirmed"] is True and "source is not checked" in got["s00.sound.001"]["method"]
    assert got["s00.sound.002"]["confirmed"] is False  # nothing but the noise bed there
    assert got["s00.env"]["confirmed"] is True
    assert got["x.001"]["confirmed"] is None and got["x.001"]["method"] == "unchecked offline: derived record"
    assert got["g.001"]["confirmed"] is None
    assert result["passed"] is False  # the false speech and sound records
    passing = asyncio.run(verify_evidence(calls, caption, ["s00.speech.001", "s00.sound.001", "x.001"], layout.path))
    assert passing["passed"] is True and [r["confirmed"] for r in passing["records"]] == [True, True, None]


def test_unknown_ids_and_times_outside_the_recording_fail(layout, calls):
    caption = hand_caption(layout)
    unknown = asyncio.run(verify_evidence(calls, caption, ["x.001", "s07.speech.001"], layout.path))
    assert unknown["passed"] is False
    assert _by_id(unknown)["s07.speech.001"] == {
        "id": "s07.speech.001",
        "confirmed": False,
        "method": "lookup",
        "detail": "unknown evidence id",
    }
    outside = asyncio.run(verify_evidence(calls, caption, ["s00.speech.003"], layout.path))
    assert outside["passed"] is False and "outside the recording" in outside["records"][0]["detail"]
    assert asyncio.run(verify_evidence(calls, caption, [], layout.path)) == {"passed": False, "records": []}


def test_word_recall_rule():
    assert quoted('SPK1: "The vote was close." [calm]') == "The vote was close."
    assert word_recall("The vote was close.", "the vote was very close") == 1.0  # the, vote, was, close
    assert word_recall("The vote was close.", "a boat was close") == pytest.approx(2 / 4)  # was, close
    assert word_recall("Go on.", "go") == 0.5  # no word of 3+ letters: all words count
    assert SPEECH_RECALL == 0.5


def test_seed_of_and_caption_records():
    expected = int.from_bytes(hashlib.sha256(b"rec\x00native\x003").digest()[:8], "big") >> 1
    assert seed_of("rec", "native", 3) == expected
    e = Evidence("s01.speech.002", 1, 62.5, 65.25, "speech", '"Hello there."')
    assert e.line() == '[s01.speech.002] 01:02.5-01:05.2 (speech) "Hello there."'
    with pytest.raises(ValueError, match="modality"):
        Evidence("a", 0, 0.0, 1.0, "music", "x")
    with pytest.raises(ValueError, match="after end"):
        Evidence("a", 0, 2.0, 1.0, "sound", "x")
    with pytest.raises(ValueError, match="repeated"):
        Caption("r", 1.0, "r.wav", [], {}, [], [e, e], {})
    with pytest.raises(ValueError, match="missing dense"):
        Caption.from_dict({"recording_id": "r", "duration": 1, "audio_file": "a", "transcript": [], "summary": {},
                           "evidence": [], "provenance": {}})  # fmt: skip


def test_views(layout):
    caption = hand_caption(layout)
    caption.transcript = [{"start": a, "end": b, "text": t} for a, b, t in layout.sentences]
    dense = caption.dense_text([0]).splitlines()
    assert dense[0].startswith("Segment 0 [00:00-")
    assert dense[1].startswith("[s00.env]")  # the environment first, then the records in time order
    assert [line.split("]")[0][1:] for line in dense[2:]] == [
        "s00.speech.001",
        "s00.sound.001",  # the event lies between the first two sentences
        "s00.speech.002",
        "s00.sound.002",
        "s00.speech.003",
    ]
    assert caption.transcript_text().count("\n") == 2 and caption.transcript_text([0]) == caption.transcript_text()
    summary = caption.summary_text()
    assert "- [x.001] reference dependency" in summary and "- [g.001] Topic" in summary
    # A local model's prompt: the first whole lines within the limit, then how many were left out.
    full = "\n".join(dense)
    assert caption.dense_text([0], max_chars=len(full)) == full
    cut = caption.dense_text([0], max_chars=len(dense[0]) + len(dense[1]) + 2).splitlines()
    assert cut == dense[:2] + ["[5 more line(s) not shown: cut to fit a small model's context]"]
    assert caption.transcript_text(max_chars=10).splitlines() == [
        "[3 more line(s) not shown: cut to fit a small model's context]"
    ]


# --------------------------------------------------------------------------------- the stage checks
def test_segmentation_check_rules():
    from audioreason.construct.segment import GAP_PIECE_S, segment_schema, units_of

    transcript = [{"start": 1.0, "end": 5.0, "text": "One."}, {"start": 200.0, "end": 204.0, "text": "Two."}]
    units = units_of(transcript, 400.0)
    # 5-200 s without speech: 195 s cut into 4 pieces of 48.75 s (at most 60 s each); 204-400 s: 4 of 49 s
    assert [u["text"] for u in units] == ["One."] + ["(no speech)"] * 4 + ["Two."] + ["(no speech)"] * 4
    assert units[1]["start"] == 5.0 and units[4]["end"] == 200.0 and GAP_PIECE_S == 60.0
    assert units[0]["extent"] == (0.0, 5.0) and units[-1]["extent"] == (351.0, 400.0)
    schema = segment_schema(units, 0, len(units), 400.0)

    def seg(first):
        return {"first_line": first, "title": "t", "summary": "s", "key_topics": ["k"]}

    ok = schema.validate({"segments": [seg(0), seg(5)]})
    assert [(s["start"], s["end"], s["last_line"]) for s in ok] == [(0.0, 200.0, 4), (200.0, 400.0, 9)]
    with pytest.raises(ValueError, match="first line shown"):
        schema.validate({"segments": [seg(1), seg(5)]})
    with pytest.raises(ValueError, match="increasing"):
        schema.validate({"segments": [seg(0), seg(5), seg(3)]})
    with pytest.raises(ValueError, match="over the 300 s cap"):
        schema.validate({"segments": [seg(0), seg(8)]})  # lines 0-7: 0-302 s
    with pytest.raises(ValueError):  # the schema asks for at least ceil(400 / 300) = 2 segments
        schema.validate({"segments": [seg(0)]})


class _ShortChunksOnly:
    """A segmenter that answers chunks of at most ``most`` lines (a segment every two lines) and fails longer
    ones, as a small model does; ``asked`` logs (item, first line, last line)."""

    def __init__(self, most, local=True):
        self.most, self.local, self.asked = most, local, []

    def is_local(self, role):
        return self.local

    async def ask(self, role, schema, messages, *, item, rollout=0):
        lines = [int(n) for n in re.findall(r"^(\d+)\. \[", messages[-1]["content"], flags=re.M)]
        self.asked.append((item, lines[0], lines[-1]))
        if len(lines) > self.most:
            return None
        seg = [{"first_line": n, "title": f"t{n}", "summary": "s", "key_topics": ["k"]} for n in lines[::2]]
        return schema.validate({"segments": seg})


def test_a_chunk_without_a_valid_reply_is_asked_again_in_halves():
    from audioreason.construct.segment import segment_transcript

    transcript = [{"start": 40.0 * k, "end": 40.0 * k + 35.0, "text": f"Sentence {k}."} for k in range(12)]
    calls = _ShortChunksOnly(most=4)
    tally = {}
    segments = asyncio.run(segment_transcript(calls, transcript, 480.0, "rec", tally=tally))
    # 0-11 fails, its halves 0-5 (fails) and 0-2 answer: the segment at 0 is kept (the last one of a chunk
    # that does not reach the end is asked again), and the next chunk (full size again) starts at line 2.
    assert calls.asked == [
        ("rec:0", 0, 11), ("rec:0-5", 0, 5), ("rec:0-2", 0, 2),
        ("rec:2", 2, 11), ("rec:2-6", 2, 6), ("rec:2-4", 2, 4),
        ("rec:4", 4, 11), ("rec:4-7", 4, 7),
        ("rec:6", 6, 11), ("rec:6-8", 6, 8),
        ("rec:8", 8, 11),
    ]  # fmt: skip
    assert tally == {"requests": 11, "halved": 6, "filled": 0}
    assert [(s["index"], s["start"], s["end"], s["title"]) for s in segments] == [
        (k, 80.0 * k, 80.0 * (k + 1), f"t{2 * k}") for k in range(6)
    ]
    never = _ShortChunksOnly(most=0)
    with pytest.raises(CaptionStepFailed, match="transcript line 0, even asked alone"):
        asyncio.run(segment_transcript(never, transcript, 480.0, "rec", tally=tally))
    assert [a[1:] for a in never.asked] == [(0, 11), (0, 5), (0, 2), (0, 1), (0, 0)]
    assert tally == {"requests": 5, "halved": 4, "filled": 0}
    # An endpoint's failed chunk is not halved: the recording fails at once.
    endpoint = _ShortChunksOnly(most=4, local=False)
    with pytest.raises(CaptionStepFailed, match="transcript lines 0-11$"):
        asyncio.run(segment_transcript(endpoint, transcript, 480.0, "rec", tally=tally))
    assert endpoint.asked == [("rec:0", 0, 11)] and tally == {"requests": 1, "halved": 0, "filled": 0}


class _OnePerLine:
    """A segmenter that answers one segment per line shown, as SmolLM2-135M does; ``asked`` logs the lines."""

    def __init__(self):
        self.asked = []

    def is_local(self, role):
        return True

    async def ask(self, role, schema, messages, *, item, rollout=0):
        lines = [int(n) for n in re.findall(r"^(\d+)\. \[", messages[-1]["content"], flags=re.M)]
        self.asked.append((item, lines[0], lines[-1]))
        return schema.validate(
            {"segments": [{"first_line": n, "title": f"t{n}", "summary": "s", "key_topics": ["k"]} for n in lines]}
        )


def test_a_reply_that_fills_every_slot_is_kept_whole():
    from audioreason.construct.segment import segment_count_bounds, segment_transcript, unit_line, units_of

    transcript = [{"start": 40.0 * k, "end": 40.0 * k + 35.0, "text": f"Sentence {chr(65 + k)}."} for k in range(12)]
    units = units_of(transcript, 480.0)
    four = sum(len(unit_line(k, units[k])) + 1 for k in range(8, 12))  # a chunk holds four lines
    # Lines 0-3 span 0-160 s: at least 1 segment, at most min(4 lines, ceil(160 / 30) = 6, 24) = 4.
    assert segment_count_bounds(units, 0, 4, 480.0) == (1, 4)
    calls, tally = _OnePerLine(), {}
    segments = asyncio.run(segment_transcript(calls, transcript, 480.0, "rec", max_chars=four, tally=tally))
    # Each reply holds four segments, all its schema allows: kept whole, the next chunk starts after it.
    assert calls.asked == [("rec:0", 0, 3), ("rec:4", 4, 7), ("rec:8", 8, 11)]
    assert tally == {"requests": 3, "halved": 0, "filled": 2}  # the last chunk reaches the end: not counted
    assert [(s["start"], s["end"], s["title"]) for s in segments] == [
        (0.0 if k == 0 else 40.0 * k, 40.0 * (k + 1), f"t{k}") for k in range(12)
    ]
    # A reply with a free slot keeps all but its last segment (asked again with the next chunk).
    halves = _ShortChunksOnly(most=4)
    asyncio.run(segment_transcript(halves, transcript, 480.0, "rec", max_chars=four, tally=tally))
    assert [a[1:] for a in halves.asked] == [(0, 3), (2, 5), (4, 7), (6, 9), (8, 11)]
    assert tally == {"requests": 5, "halved": 0, "filled": 0}


class _SmallWindow:
    """A dependency role whose window holds ``chars`` characters of prompt; replies by item: a stretch links
    its first two segments and hears one speaker (labelled from its first segment), the merge joins the
    first two stretches' speakers and leaves the third's out."""

    def __init__(self, chars):
        self.chars, self.asked = chars, []

    def prompt_fits(self, role, messages):
        return sum(len(m["content"]) for m in messages) <= self.chars

    async def ask(self, role, schema, messages, *, item, rollout=0):
        self.asked.append(item)
        if item.endswith(":merge"):
            assert "speaker W1.1: host" in messages[-1]["content"]
            return schema.validate(
                {
                    "topic": "a town's radio",
                    "genre": "magazine",
                    "narrative_arc": "news, then talk",
                    "tone": "warm",
                    "speakers": [{"description": "the host", "role": "host", "ids": ["W1.1", "W2.1"]}],
                }
            )
        shown = [int(k) for k in re.findall(r"^Segment (\d+) \[", messages[-1]["content"], flags=re.M)]
        first, last = shown[0], shown[-1]
        return schema.validate(
            {
                "topic": f"part {first}",
                "genre": "magazine",
                "narrative_arc": "a",
                "tone": "warm",
                "speakers": [{"description": f"voice {first}", "role": "host", "labels": [f"s{first:02d}:S1"]}],
                "dependencies": [
                    {"kind": "reference", "segments": f"{first} -> {first + 1}", "description": f"d{first}"},
                    {"kind": "causal", "segments": f"{last - 1} -> {last}", "description": f"e{last}"},
                ],
            }
        )


def test_a_long_segment_index_is_read_in_stretches_and_merged():
    from audioreason.construct.dependencies import OVERLAP, analyse_dependencies, dependency_messages, merge_schema

    segments = [
        {
            "index": k,
            "start": 60.0 * k,
            "end": 60.0 * (k + 1),
            "title": f"Part {k}",
            "summary": "s",
            "key_topics": ["k"],
        }
        for k in range(10)
    ]
    dense = [{"speakers": [{"label": f"s{k:02d}:S1", "voice": "a voice"}], "transcript": []} for k in range(10)]
    size = lambda n: sum(len(m["content"]) for m in dependency_messages(segments[:n], dense[:n], 10))  # noqa: E731
    calls = _SmallWindow(size(5))  # five segments' entries fit
    tally = {}
    context = asyncio.run(analyse_dependencies(calls, segments, dense, "rec", tally=tally))
    # Stretches of five, each starting OVERLAP (2) segments before the last one ended.
    assert OVERLAP == 2 and tally == {"stretches": [[0, 4], [3, 7], [6, 9]]}
    assert calls.asked == ["rec:links:0-4", "rec:links:3-7", "rec:links:6-9", "rec:links:merge"]
    assert (context["topic"], context["tone"]) == ("a town's radio", "warm")
    assert context["speakers"] == [
        {"id": "SPK1", "description": "the host", "role": "host", "labels": ["s00:S1", "s03:S1"]},
        {"id": "SPK2", "description": "voice 6", "role": "host", "labels": ["s06:S1"]},  # left out by the merge
    ]
    links = [(d["kind"], d["from_segment"], d["to_segment"], d["description"]) for d in context["dependencies"]]
    assert links == [
        ("reference", 0, 1, "d0"),
        ("causal", 3, 4, "e4"),
        ("reference", 3, 4, "d3"),
        ("causal", 6, 7, "e7"),
        ("reference", 6, 7, "d6"),
        ("causal", 8, 9, "e9"),
    ]
    # A window that fits the whole index asks once, as before; one too small for three entries fails the step.
    whole = _SmallWindow(10**6)
    asyncio.run(analyse_dependencies(whole, segments[:3], dense[:3], "rec", tally=tally))
    assert tally == {"stretches": []}
    with pytest.raises(CaptionStepFailed, match="segments 0-2 do not fit"):
        asyncio.run(analyse_dependencies(_SmallWindow(size(2)), segments, dense, "rec"))
    merge = merge_schema(["W1.1", "W2.1"])
    one = {"description": "d", "role": "host", "ids": ["W1.1"]}
    reply = {"topic": "t", "genre": "g", "narrative_arc": "a", "tone": "x", "speakers": [one, one]}
    with pytest.raises(ValueError, match="'W1.1' is given to two speakers"):
        merge.validate(reply)
    with pytest.raises(ValueError, match="at most 0 entries"):  # no stretch heard a speaker
        merge_schema([]).validate({**reply, "speakers": [{**one, "ids": [""]}]})


def test_caption_and_dependency_checks():
    from audioreason.construct.acoustic import caption_schema
    from audioreason.construct.dependencies import dependency_schema

    schema = caption_schema([0, 1], 10.0)
    good = {
        "environment": "a small room",
        "speakers": [{"label": "S1", "voice": "low"}],
        "sentences": [{"line": 0, "speaker": "S1", "paralinguistic": "calm"}],
        "events": [{"start": 2.0, "end": 3.0, "label": "cough", "description": "a cough"}],
    }
    assert schema.validate(good) == good
    with pytest.raises(ValueError, match="not in the speaker list"):
        schema.validate({**good, "sentences": [{"line": 0, "speaker": "S2", "paralinguistic": ""}]})
    with pytest.raises(ValueError, match="outside the 0-10.0 s clip"):
        schema.validate({**good, "events": [{"start": 9.0, "end": 12.0, "label": "bell", "description": ""}]})
    links = dependency_schema([0, 1, 2], ["s00:S1", "s01:S1"])
    reply = {
        "topic": "t",
        "genre": "g",
        "narrative_arc": "a",
        "tone": "x",
        "speakers": [{"description": "d", "role": "host", "labels": ["s00:S1", "s01:S1"]}],
        "dependencies": [
            {"kind": "causal", "segments": "0 -> 2", "description": "d"},
            {"kind": "causal", "segments": "0 -> 2", "description": "again"},
        ],
    }
    (link,) = links.validate(reply)["dependencies"]  # the repeated pair and kind kept once
    assert (link["from_segment"], link["to_segment"], link["description"]) == (0, 2, "d")
    with pytest.raises(ValueError):  # "2 -> 0" is not one of the schema's pairs
        links.validate({**reply, "dependencies": [{"kind": "causal", "segments": "2 -> 0", "description": "d"}]})
    two = [
        {"description": "d", "role": "r", "labels": ["s00:S1"]},
        {"description": "e", "role": "r", "labels": ["s00:S1"]},
    ]
    with pytest.raises(ValueError, match="two speakers"):
        links.validate({**reply, "speakers": two})
