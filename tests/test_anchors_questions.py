"""The perception question of an anchor chain from its manifest (App. B.3): true or off-by-one count x
true or far-off position, in the item form the anchor_chain scorer, the C.1 prompt template and the
AudioSpan loader read."""

from __future__ import annotations

import pytest

from audioreason.audio.anchor_questions import perception_item, perception_options, trace_phrase
from audioreason.scorers.anchor_chain.scorer import score_anchor_chain
from audioreason.text.audiospan_templates import build_prompt
from audioreason.text.timestamps import parse_timestamp


def completed(operation="addition", starts=(125.4, 1830.0, 3000.6), frames=3600 * 16000, **fields):
    """A completed manifest as apply writes it (only what the options read), one hour at 16 kHz."""
    fields = fields or {"event_category": "dog bark", "snr_db": 8.0}
    return {
        "operation": operation,
        "recording_id": "rec-7",
        **fields,
        "positions": [{"start": s, "end": s + 2, "original_start": s, "original_end": s + 2} for s in starts],
        "source": {"sampling_rate": 16000},
        "output": {"frames": frames},
    }


def test_the_four_options_cross_count_and_position():
    built = perception_options(completed(), seed=4, occurrence=2)
    cells = built["cells"]
    assert sorted((c[2], c[3]) for c in cells) == [(False, False), (False, True), (True, False), (True, True)]
    counts = {c[0] for c in cells}
    assert 3 in counts and counts - {3} <= {2, 4} and len(counts) == 2
    times = {c[1] for c in cells}
    assert 1830 in times and len(times) == 2
    far = (times - {1830}).pop()
    assert all(abs(far - s) >= 0.15 * 3600 for s in (125.4, 1830.0, 3000.6))
    gold = built["choices"][built["answer_index"]]
    assert gold == "3 times; occurrence 2 begins at 30:30"
    assert parse_timestamp(gold.split(" at ")[1]) == 1830.0
    assert built["question"] == (
        "How many times does the sound of dog bark occur in the audio, and when does occurrence 2 begin?"
    )
    assert perception_options(completed(), seed=4, occurrence=2) == built  # deterministic


def test_a_single_position_is_miscounted_as_two_and_times_past_an_hour_read_back():
    built = perception_options(completed(starts=(3725.0,), frames=2 * 3600 * 16000), seed=0)
    assert built["occurrence"] == 1
    assert {c[0] for c in built["cells"]} == {1, 2}
    gold = built["choices"][built["answer_index"]]
    assert gold == "1 time; occurrence 1 begins at 01:02:05"


def test_the_item_scores_and_prompts_like_any_anchor_item():
    item = perception_item(completed(), seed=1)
    assert (item["link_position"], item["cognitive_level"], item["format"], item["chain_id"]) == (
        1,
        "perception",
        "MCQ",
        "rec-7",
    )
    assert item["answer"] == item["choices"][item["answer_index"]]
    links = [item] + [
        {
            "chain_id": "rec-7",
            "link_position": k,
            "choices": ["a", "b", "c", "d"],
            "answer": "a",
            "operation": "addition",
        }
        for k in (2, 3)
    ]
    letter = "ABCD"[item["answer_index"]]
    assert score_anchor_chain(links, [letter, "A", "A"])["chain"] == 1.0
    wrong = "ABCD"[(item["answer_index"] + 1) % 4]
    assert score_anchor_chain(links, [wrong, "A", "A"])["chain"] == 0.0
    prompt = build_prompt(item)
    assert prompt.splitlines()[1] == item["question"] and f"{letter}. {item['answer']}" in prompt
    assert item["edit_manifest"]["positions"][0]["start"] == 125.4


@pytest.mark.parametrize(
    "operation,fields,phrase",
    [
        ("deletion", {"deletion_mode": "silence"}, "a stretch where the audio drops to silence"),
        ("deletion", {"deletion_mode": "noise"}, "a stretch where the speech is muffled under noise"),
        ("modification", {"attribute": "loudness", "gain_db": -9.0}, "a passage whose volume is suddenly lowered"),
        ("modification", {"attribute": "speed", "speed_factor": 2.0}, "a passage played faster than the rest"),
    ],
)
def test_each_operation_names_its_trace(operation, fields, phrase):
    assert trace_phrase(completed(operation, **fields)) == phrase


def test_options_need_a_completed_manifest_and_room_for_a_far_time():
    plan = {"operation": "deletion", "deletion_mode": "silence", "positions": [[10, 14]]}
    with pytest.raises(ValueError, match="completed manifest"):
        perception_options(plan)
    with pytest.raises(ValueError, match="no whole second"):
        perception_options(completed(starts=(1800.0,)), far_fraction=0.6)
    with pytest.raises(ValueError, match="occurrence 4"):
        perception_options(completed(), occurrence=4)
