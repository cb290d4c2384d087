"""Phase 1 offline, end to end (AudioSpan, arXiv:2608.26431, §4.2, App. B.1): packaged Whisper, the constrained
local model for segmentation and dependency analysis, signal measurements for the acoustic caption; then every
record of the caption verified offline. Built twice over one call cache: the same caption, ids included, and no
model call the second time."""

from __future__ import annotations

import asyncio
import re

import pytest
from construct_audio import caption_recording

from audioreason.construct.offline_audio import OFFLINE_CAPTIONER

TEXT_MODEL = "packaged:SmolLM2-135M-Instruct"  # the fastest constrained local model


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    return caption_recording(tmp_path_factory.mktemp("offline"))


@pytest.fixture(scope="module")
def offline_calls(tmp_path_factory):
    from audioreason.construct.calls import Calls
    from audioreason.construct.roles import offline_roles

    cache = tmp_path_factory.mktemp("calls") / "calls.sqlite"
    return lambda: Calls(offline_roles(TEXT_MODEL), cache)


ID_FORMS = r"s\d\d\.speech\.\d{3}|s\d\d\.sound\.\d{3}|s\d\d\.env|x\.\d{3}|g\.\d{3}"


def test_offline_caption_end_to_end_and_rebuilt_from_the_cache(layout, offline_calls):
    from audioreason.construct.caption import build_caption

    calls = offline_calls()
    caption = asyncio.run(build_caption(calls, layout.path, "rec", audio_file="audio/original/rec.wav"))
    assert len(caption.transcript) == 3
    assert all(abs(s["start"] - a) <= 0.6 for s, (a, _, _) in zip(caption.transcript, layout.sentences))
    segments = caption.segments
    assert segments[0]["start"] == 0.0 and segments[-1]["end"] == pytest.approx(layout.duration, abs=1e-3)
    assert all(a["end"] == b["start"] for a, b in zip(segments, segments[1:]))
    assert all(0 < s["end"] - s["start"] <= 300 and s["title"] for s in segments)
    ids = [e.id for e in caption.evidence]
    assert all(re.fullmatch(ID_FORMS, i) for i in ids) and len(set(ids)) == len(ids)
    speech = [e for e in caption.evidence if e.modality == "speech"]
    assert [e.start for e in speech] == [s["start"] for s in caption.transcript]
    (sound,) = [e for e in caption.evidence if e.modality == "sound"]
    assert abs(sound.start - layout.event[0]) <= 0.1
    assert {e.id for e in caption.evidence if e.modality == "environment"} == {
        f"s{s['index']:02d}.env" for s in segments
    }
    assert caption.evidence_by_id()["g.001"].segment is None
    assert caption.provenance["captioner_mode"] == OFFLINE_CAPTIONER
    assert caption.provenance["dependency_role"] == "segmenter"
    dense = caption.dense_text([s["index"] for s in segments])
    assert f"[{sound.id}]" in dense and f"[{speech[0].id}]" in dense
    assert "Segment 0" in caption.summary_text() and "[g.001]" in caption.summary_text()
    # what the offline stand-in measured is what offline verification measures again
    from audioreason.construct.verify import verify_evidence

    cited = [sound.id, "s00.env", "g.001"]
    verdicts = asyncio.run(verify_evidence(calls, caption, cited, layout.path))
    assert [r["confirmed"] for r in verdicts["records"]] == [True, True, None] and verdicts["passed"] is True
    # built again by a new session over the same cache: the same caption, and no model call made
    again = offline_calls()
    rebuilt = asyncio.run(build_caption(again, layout.path, "rec", audio_file="audio/original/rec.wav"))
    assert rebuilt.to_dict() == caption.to_dict()
    assert again.calls_made()["segmenter"] == 0
    from audioreason.construct.records import Caption

    assert Caption.from_dict(caption.to_dict()).to_dict() == caption.to_dict()
