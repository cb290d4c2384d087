"""The Anchor QA pipeline of AudioSpan (arXiv:2608.26431) §4.4, App. B.3 and B.4, for one recording.

1. Anchor selection, two passes (B.3). Pass 1: the generator reads the summary view and shortlists 1-3 segments
   with semantic weight and relations to other segments (``selection_schema``: only segments that can hold a
   window are offered, each names the segments it relates to). Pass 2: ``anchor_edit.place_in_segments``, the
   placement rules of ``audio.placement`` inside those segments over speech (Silero VAD), one per segment.
2. The edit: the recording's operation and settings (``anchor_edit``), for an addition an event clip not already
   present in the recording (``anchor_events``), applied by ``audio.anchor_files.anchor_recording`` to
   ``BENCH/audio/anchored/<recording_id>.wav``; the completed manifest is the ground truth.
3. The chain: P from the manifest (``audio.anchor_questions.perception_item``); U and R written by the generator
   from the dense captions of the positions' segments and their related segments, in the option layout of
   ``anchor_options`` (its check makes the asked occurrence's option correct by construction).
4. Verification and refinement on U and R only (§4.4): every cited record re-checked against the ORIGINAL audio
   (the caption describes it; an edited span would fail by design), the three-level solver and its gate rule,
   the critic on a shortcut rejection with the anchor memory bank. The full solver level reads the dense caption
   headed by the anchor's ground truth (the "text oracle given the anchors" of Figure 4b): the caption alone
   cannot tell which occurrence is which. No rubric.

Every recording gives three candidate records (P, U, R, in ``order_start`` .. ``order_start + 2``). The chain is
kept only when U and R both pass; then each candidate carries its item (the loader's anchor.jsonl form) under
``"items"``. A recording that cannot take an anchor (too short, no speech in the shortlisted segments, a single
segment, no event category left) gives three rejections at ``"placement"`` with the reason; P is rejected at
``"chain"`` when U or R is rejected (it is never gated itself), as is a U or R that passed its own gates while
the other link failed (its gates stay recorded), and then the anchored file is removed again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from audioreason.audio.anchor_manifest import ManifestError
from audioreason.audio.anchor_questions import perception_item
from audioreason.audio.errors import AudioError
from audioreason.audio.placement import PlacementError, PlacementRules, SpeechFraction, silero_speech

from . import anchor_edit as edit
from . import anchor_events as events
from .anchor_options import anchor_positions, chain_item, mcq_of, occurrence_for
from .anchor_prompts import (
    WithAnchors,
    anchor_note,
    chain_messages,
    chain_schema,
    citable,
    context_segments,
    selection_messages,
    selection_schema,
)
from .gates import new_candidate
from .memory import MemoryBank
from .question_space import LEVEL_LETTER, LEVEL_ORDER
from .records import Caption, seed_of
from .screening import screen

DIMENSION = {"perception": "localization", "understanding": "interpretation", "reasoning": "relational"}


# ---------------------------------------------------------------------- the pipeline
def _candidate(caption: Caption, level: str, order: int) -> dict[str, Any]:
    cid = f"{caption.recording_id}-anchor-{LEVEL_LETTER[level]}"
    return new_candidate(cid, "anchor", caption.recording_id, level, DIMENSION[level], order, {})


def _reject_all(candidates: list[dict], at: str, reason: str) -> list[dict]:
    for c in candidates:
        c.update(outcome="rejected", rejected_at=at, reason=reason)
    return candidates


async def _verify(calls: Any, caption: Caption, ids: list[str], audio_path: Any) -> Mapping[str, Any]:
    from .verify import verify_evidence

    return await verify_evidence(calls, caption, ids, audio_path)


async def _gate(calls, caption, solver_caption, audio_path, candidate, item, *, rollouts, bank) -> None:
    """Evidence, solver and critic for a U or R candidate (updates it in place)."""
    mcq = mcq_of(item)
    candidate.update(mcq=mcq, evidence=list(item["evidence"]))
    passed = await screen(
        calls, caption, audio_path, candidate, mcq, rollouts=rollouts, bank=bank, solver_caption=solver_caption,
        verify=_verify,
    )  # fmt: skip
    if passed is not None:
        candidate.update(outcome="kept", rejected_at=None, reason="passed every gate")


def _choose_event(caption, event_clips, bench, rate, duration, rules) -> tuple[Optional[Path], dict[str, Any]]:
    """(the clip file, what was decided: category, excluded categories, clips that do not fit) for an addition."""
    choices = events.catalogue(Path(event_clips) if event_clips is not None else None)
    allowed, excluded = events.allowed_events(choices, events.present_sound_words(caption.to_dict()))
    info: dict[str, Any] = {"excluded_categories": excluded, "unfit_clips": []}
    seconds = max(events.CLIP_SECONDS, rules.min_seconds)
    fitting = []
    for choice in allowed:
        if choice.source != "builtin":
            length = events.clip_seconds(Path(choice.source), rate)
            if edit.length_problem(duration, length, rules):
                info["unfit_clips"].append(f"{choice.category} ({length:.2f} s)")
                continue
        fitting.append(choice)
    if not fitting:
        return None, info
    choice = fitting[seed_of(caption.recording_id, "anchor-event") % len(fitting)]
    clip = events.materialize(choice, bench, rate, seconds)
    if choice.source == "builtin":
        source = f"built-in numpy synthesis ({choice.recipe}), not recorded audio"
    else:
        source = f"event clip {Path(choice.source).name}"
    info.update(category=choice.category, clip_source=source)
    return clip, info


async def anchor_candidates(
    calls: Any,
    caption: Caption,
    audio_path: os.PathLike | str,
    bench_dir: os.PathLike | str,
    *,
    rollouts: int,
    bank: Optional[MemoryBank],
    order_start: int,
    event_clips: Optional[os.PathLike | str] = None,
    run_ids: Optional[Sequence[str]] = None,
    rules: PlacementRules = PlacementRules(),
    speech: Optional[SpeechFraction] = None,
    answer_positions: Optional[Any] = None,
) -> list[dict[str, Any]]:
    """The P, U and R candidate records of one recording (module docstring). ``run_ids``: the run's recording ids,
    for exactly balanced operations; ``speech``: the speech-fraction function (default Silero VAD on the file);
    ``answer_positions``: the run's ``native_items.PositionCycle`` for U and R (default: seeded shuffles)."""
    from audioreason.audio.anchor_files import file_info

    rid, bench = caption.recording_id, Path(bench_dir)
    candidates = [_candidate(caption, level, order_start + i) for i, level in enumerate(LEVEL_ORDER)]
    operation, variant = edit.choose_operation(rid, run_ids)
    fields = edit.draw_parameters(rid, operation, variant)
    shared = {"operation": operation, "variant": variant, **fields}
    for c in candidates:
        c["provenance"]["anchor"] = shared
    try:
        info = file_info(audio_path)
    except AudioError as err:
        return _reject_all(candidates, "placement", f"the recording cannot be read: {err}")
    rate, duration = info.sampling_rate, info.frames / info.sampling_rate
    clip, length = None, None
    if operation == "addition":
        clip, chosen = _choose_event(caption, event_clips, bench, rate, duration, rules)
        shared.update(chosen)
        if clip is None:
            return _reject_all(candidates, "placement", "no event category is left: " + str(chosen))
        fields["event_category"] = chosen["category"]
        length = events.clip_seconds(clip, rate)
    problem = edit.length_problem(duration, length, rules)
    if problem:
        return _reject_all(candidates, "placement", problem)
    if len(caption.segments) < 2:
        return _reject_all(candidates, "placement", "one segment: the reasoning link needs another to point to")
    eligible = edit.usable_segments(caption, duration, length, rules)
    if not eligible:
        return _reject_all(candidates, "placement", "no segment can hold a window clear of the opening and close")
    shortlist = await calls.ask(
        "generator",
        selection_schema(caption, eligible),
        selection_messages(caption, eligible, calls.context_chars("generator")),
        item=f"{rid}-anchor",
    )
    if shortlist is None:
        return _reject_all(candidates, "generation", "anchor selection failed (see the call failures)")
    shared["shortlist"] = shortlist
    count = edit.position_count(rid, len(shortlist))
    try:
        windows, notes = edit.place_in_segments(
            caption,
            [a["segment"] for a in shortlist],
            speech or silero_speech(audio_path),
            duration,
            count=count,
            length=length,
            rules=rules,
        )
        shared.update(placement_notes=notes, positions_wanted=count)
        manifest = edit.write_anchored(caption, audio_path, bench, operation, fields, windows, clip=clip)
    except (PlacementError, ManifestError, AudioError) as err:
        return _reject_all(candidates, "placement", str(err))
    for c in candidates:
        c["edit_manifest"] = manifest
    return await _chain(
        calls, caption, audio_path, bench, manifest, shortlist, candidates, rollouts, bank, answer_positions
    )


async def _chain(calls, caption, audio_path, bench, manifest, shortlist, candidates, rollouts, bank, cycle):
    rid = caption.recording_id
    p_cand, u_cand, r_cand = candidates
    positions = anchor_positions(caption, manifest)
    k = occurrence_for(rid, len(positions))
    p_item = perception_item(
        manifest, chain_id=rid, item_id=p_cand["id"], seed=seed_of(rid, "anchor-P") % 2**32, occurrence=k
    )
    p_item.update(dimension=DIMENSION["perception"], evidence=[])
    p_cand.update(mcq=mcq_of(p_item))
    segments = context_segments(caption, positions, shortlist)
    lessons = ""
    if bank is not None:
        lessons = "\n\n".join(
            t for t in (bank.prompt_text("anchor", lv, before=u_cand["order"]) for lv in LEVEL_ORDER[1:]) if t
        )
    chain = await calls.ask(
        "generator",
        chain_schema(caption, positions, k, citable(caption, segments)),
        chain_messages(caption, manifest, positions, k, shortlist, segments, lessons, calls.context_chars("generator")),
        item=f"{rid}-anchor-chain",
    )
    if chain is None:
        _reject_all([u_cand, r_cand], "generation", "no chain fitting the schema and checks (see the call failures)")
    else:
        solver_caption = WithAnchors(caption, anchor_note(manifest, positions))
        items = {}
        for cand in (u_cand, r_cand):
            level = cand["level"]
            items[level] = chain_item(
                level,
                chain[level],
                k,
                recording_id=rid,
                item_id=cand["id"],
                manifest=manifest,
                answer_position=cycle.next() if cycle is not None else None,
            )
            await _gate(calls, caption, solver_caption, audio_path, cand, items[level], rollouts=rollouts, bank=bank)
    if u_cand["outcome"] == "kept" and r_cand["outcome"] == "kept":
        p_cand.update(outcome="kept", rejected_at=None, reason="the chain's U and R passed every gate")
        for cand, item in ((p_cand, p_item), (u_cand, items["understanding"]), (r_cand, items["reasoning"])):
            item["provenance"] = {**item.get("provenance", {}), **_provenance(calls, caption, cand)}
            cand["items"] = [item]
        return candidates
    failed = [f"{c['level']} at {c['rejected_at']}" for c in (u_cand, r_cand) if c["outcome"] != "kept"]
    p_cand.update(rejected_at="chain", reason="the chain broke: " + ", ".join(failed))
    for cand in (u_cand, r_cand):  # a link that passed its own gates has no chain to stand in: not kept either
        if cand["outcome"] == "kept":
            cand.update(outcome="rejected", rejected_at="chain", reason="the chain broke: " + ", ".join(failed))
    anchored = bench / manifest["output"]["path"]
    if anchored.is_file():
        anchored.unlink()  # no item plays it; a rerun makes the same bytes again
    return candidates


def _provenance(calls, caption, candidate) -> dict[str, Any]:
    return {
        "pipeline": "anchor",
        "candidate": candidate["id"],
        "roles": {role: calls.describe(role) for role in ("generator", "verifier", "solver", "critic")},
        "captioner_mode": caption.provenance.get("captioner_mode"),
        "gates": {k: candidate["gates"][k] for k in ("evidence", "blind", "text", "full")},
        "anchor": {k: v for k, v in candidate["provenance"]["anchor"].items() if k != "shortlist"},
    }


__all__ = ["DIMENSION", "anchor_candidates"]
