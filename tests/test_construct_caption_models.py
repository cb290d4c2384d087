"""Phase 1 and evidence verification on their model paths (an ASR endpoint, an audio-language captioner and
verifier), with the replies scripted per stage and held to each stage's own schema and check, as ``Calls.ask``
holds a server's: window offsets, piece offsets, speaker labels mapped onto the registry, the evidence records
assembled from them, the stretches of audio each verdict is asked about, and audio over a verifier's limit left
unchecked. No model runs here; the scripted OpenAI-compatible server tests cover the transport."""

from __future__ import annotations

import asyncio
import re

import pytest
from construct_audio import caption_recording

from audioreason.construct.acoustic import model_dense
from audioreason.construct.caption import build_caption
from audioreason.construct.verify import verify_evidence

RATE = 16000


class ScriptedCalls:
    """``Calls``' interface with scripted replies: ``replies[stage](item, text, audio)`` (audio: the samples in
    each audio part) gives the reply JSON, which goes
    through the stage schema's ``validate`` (the JSON Schema, then the stage's check); a reply that fails is a
    counted failure (None), as after ``Calls``' re-asks."""

    def __init__(self, replies, limits=None):
        self.replies, self.limits = replies, dict(limits or {})
        self.asked, self.failed = [], []

    def local_asr(self):
        return None

    def has_audio_model(self, role):
        return True

    def max_audio_s(self, role):
        return self.limits.get(role)

    def context_chars(self, role):
        return None  # the caption views whole, as an endpoint's model reads them

    def is_local(self, role):
        return False

    def prompt_fits(self, role, messages):
        return True  # an endpoint's window is not known: every prompt is sent

    def describe(self, role):
        return f"scripted {role}"

    def audio_part(self, role, samples, rate=RATE):
        return {"type": "input_audio", "input_audio": {"data": "", "format": "wav"}, "samples": len(samples)}

    async def ask(self, role, schema, messages, *, item, rollout=0):
        parts = [p for m in messages if isinstance(m["content"], list) for p in m["content"]]
        audio = [p["samples"] for p in parts if p["type"] == "input_audio"]
        text = "\n".join(
            [p["text"] for p in parts if p["type"] == "text"]
            + [m["content"] for m in messages if isinstance(m["content"], str)]
        )
        self.asked.append((role, schema.name, item, audio))
        try:
            return schema.validate(self.replies[schema.name](item, text, audio))
        except ValueError as err:
            self.failed.append((schema.name, item, str(err)))
            return None


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    return caption_recording(tmp_path_factory.mktemp("models"))


@pytest.fixture(autouse=True)
def short_segments(monkeypatch):
    """Segments down to 5 s (the reply's bound is one per 30 s: a 20 s recording would get one segment)."""
    from audioreason.construct import segment

    monkeypatch.setattr(segment, "MIN_SEGMENT_S", 5.0)


def scripted_asr(layout):
    """Hears the layout's sentences inside the window (item "rec@offset"), times from the window's start; a
    sentence cut by the window's end comes back cut."""

    def reply(item, text, audio):
        offset = float(item.split("@")[1])
        cut = offset + audio[0] / RATE
        out = []
        for a, b, t in layout.sentences:
            if a < cut and b > offset:
                whole = b <= cut
                out.append(
                    {"start": max(a, offset) - offset, "end": min(b, cut) - offset, "text": t if whole else t[:20]}
                )
        return {"sentences": out}

    return reply


def scripted_caption(item, text, audio):
    segment = int(item.split(":s")[1][:2])
    lines = re.findall(r"^(\d+)\. \[", text, flags=re.M)
    event = (
        [{"start": 6.231, "end": 6.831, "label": "chime", "description": "a two-tone chime"}] if segment == 0 else []
    )
    return {
        "environment": f"quiet room (segment {segment})",
        "speakers": [{"label": "S1", "voice": "synthetic male voice, steady pitch"}],
        "sentences": [{"line": int(n), "speaker": "S1", "paralinguistic": "calm"} for n in lines],
        "events": event,
    }


REPLIES = {
    "segments": lambda item, text, audio: {
        "segments": [
            {"first_line": 0, "title": "Budget and bridge", "summary": "s", "key_topics": ["budget"]},
            {"first_line": 2, "title": "The vote", "summary": "s", "key_topics": ["vote"]},
        ]
    },
    "acoustic": scripted_caption,
    "dependencies": lambda item, text, audio: {
        "topic": "a committee meeting",
        "genre": "meeting",
        "narrative_arc": "debate, then a vote",
        "tone": "formal",
        "speakers": [{"description": "the chair", "role": "chair", "labels": ["s00:S1", "s01:S1"]}],
        "dependencies": [{"kind": "causal", "segments": "0 -> 1", "description": "the debate leads to the vote"}],
    },
    "verify": lambda item, text, audio: {
        "verdict": "refuted" if item.endswith("g.001") else "confirmed",
        "reason": "scripted",
    },
}


def test_model_caption_assembles_the_replies(layout):
    calls = ScriptedCalls({**REPLIES, "transcript": scripted_asr(layout)}, limits={"asr": 9.0})
    ended = []  # on_step: each step's name as it ends (benchmarks/construct_phase1.py times them by it)
    caption = asyncio.run(build_caption(calls, layout.path, "rec", on_step=ended.append))
    assert not calls.failed
    assert ended == ["transcription", "segmentation", "acoustic captioning", "dependency analysis", "assembly"]
    # step 1 through the endpoint in 9 s windows (guard 9 / 4 s): every sentence whole, once
    assert [(s["start"], s["end"], s["text"]) for s in caption.transcript] == [
        (round(a, 3), round(b, 3), t) for a, b, t in layout.sentences
    ]
    assert [asked[2] for asked in calls.asked if asked[1] == "transcript"][0] == "rec@0.000"
    assert all(max(a[3]) <= 9 * RATE for a in calls.asked if a[1] == "transcript")
    # step 2: lines 0-1 and 2 -> [0, start of sentence 2) and [start of sentence 2, end]
    s2 = round(layout.sentences[2][0], 3)
    assert [(s["start"], s["end"]) for s in caption.segments] == [(0.0, s2), (s2, round(layout.duration, 3))]
    # step 3: one piece per segment; the event at its time in the recording; labels mapped to SPK1 in step 5
    dense0 = caption.dense[0]
    assert [(e["start"], e["label"]) for e in dense0["events"]] == [(6.231, "chime")]
    assert {t["speaker"] for d in caption.dense for t in d["transcript"]} == {"SPK1"}
    records = caption.evidence_by_id()
    assert sorted(records) == sorted(
        ["s00.env", "s00.speech.001", "s00.speech.002", "s00.sound.001", "s01.env", "s01.speech.001"]
        + ["x.001", "g.001", "g.002"]
    )
    assert records["s00.speech.001"].content == f'SPK1: "{layout.sentences[0][2]}" [calm]'
    assert records["s00.sound.001"].content == "chime: a two-tone chime"
    x = records["x.001"]
    assert (x.segment, x.start, x.end, x.modality) == (0, 0.0, round(layout.duration, 3), "cross-segment")
    assert x.content == "causal dependency, segment 0 -> segment 1: the debate leads to the vote"
    assert records["g.002"].content == "SPK1 (chair): the chair (heard in segments 0, 1)"
    assert caption.summary["dependencies"][0]["id"] == "x.001"
    assert caption.provenance["captioner_mode"] == "model" and caption.provenance["captioner"] == "scripted captioner"
    assert caption.provenance["segmentation"] == {
        "cap_s": 300.0,
        "chunk_chars": 6000,
        "requests": 1,
        "halved": 0,
        "filled": 0,
    }
    assert caption.provenance["dependencies"] == {"stretches": []}  # the index read whole


def test_captioner_pieces_follow_the_endpoint_limit(layout):
    calls = ScriptedCalls(REPLIES, limits={"captioner": 10.0})
    segment = {"index": 0, "start": 0.0, "end": 14.494}
    sentences = [{"start": a, "end": b, "text": t} for a, b, t in layout.sentences[:2]]
    dense = asyncio.run(model_dense(calls, layout.path, "rec", segment, sentences))
    # 14.494 s over a 10 s limit: two pieces of 7.247 s, each with the sentences that start in it
    assert sorted(a[2] for a in calls.asked) == ["rec:s00@0.000", "rec:s00@7.247"]  # asked concurrently
    assert [a[3] for a in calls.asked] == [[round(7.247 * RATE)], [round(7.247 * RATE)]]
    assert [t["speaker"] for t in dense["transcript"]] == ["s00p0:S1", "s00p1:S1"]
    # each piece's reply says 6.231-6.831 s from its start; the second is cut at the segment's end
    assert [(e["start"], e["end"]) for e in dense["events"]] == [(6.231, 6.831), (13.478, 14.078)]
    assert dense["environment"].startswith("00:00-00:07.2: quiet room")


def test_model_verification_asks_about_each_records_stretch(layout):
    calls = ScriptedCalls({**REPLIES, "transcript": scripted_asr(layout)})
    caption = asyncio.run(build_caption(calls, layout.path, "rec"))
    calls.asked.clear()
    result = asyncio.run(verify_evidence(calls, caption, ["s00.sound.001", "x.001", "g.001"], layout.path))
    assert [r["confirmed"] for r in result["records"]] == [True, True, False] and result["passed"] is False
    lengths = [a[3] for a in calls.asked]
    s2, d = round(layout.sentences[2][0], 3), layout.duration
    assert lengths[0] == [round((6.831 + 0.5 - (6.231 - 0.5)) * RATE)]  # the event and 0.5 s either side
    assert lengths[1] == [round(s2 * RATE), round((d - s2) * RATE)]  # its two segments, one clip each
    assert lengths[2] == [round(d * RATE)]  # the whole recording
    limited = ScriptedCalls(REPLIES, limits={"verifier": 10.0})
    unchecked = asyncio.run(verify_evidence(limited, caption, ["x.001", "s00.sound.001"], layout.path))
    assert (
        unchecked["records"][0]["confirmed"] is None
        and "over the verifier's 10 s limit" in unchecked["records"][0]["detail"]
    )
    assert unchecked["passed"] is True and len(limited.asked) == 1
