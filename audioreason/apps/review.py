"""The human review app (AudioSpan, arXiv:2608.26431, §4.5 and App. B.4): a Gradio page over a construction
folder that goes item by item, plays the stretch of audio the item cites (and, for an anchor item, the edited
audio at each anchor position), shows the open-ended item with its reference answer and criteria or the
multiple-choice item with its options and marked answer, and records accept / fix / reject decisions in the
folder's ``review.jsonl`` (``audioreason.data.review``), which the AudioSpan builder honours.

``build_review_app(folder)`` returns the Blocks; ``ReviewSession`` holds what its buttons call, each taking the
item number (1-based) first, so the page's API (``/show``, ``/accept``, ``/fix``, ``/reject``, ``/play``) is
usable from ``gradio_client``. A decision moves on to the next item. A fix is written as the difference between
the form and the item as generated (a later decision replaces an earlier one whole), checked against the item
first (options count, no repeated option) so that a fix the builder would refuse is never written.
``opening_folder`` picks the folder the Space opens: its argument, else ``$AUDIOREASON_REVIEW_FOLDER``, else a
tiny example written to a temporary folder (``review_example``).
"""

from __future__ import annotations

import html
import os
from typing import Any, Optional, Sequence

from audioreason.base.jsonl import DataFileError
from audioreason.data.review import fixed_item
from audioreason.data.review_log import make_decision, write_decision

from .review_folder import SCRATCH, ReviewFolder

FOLDER_VARIABLE = "AUDIOREASON_REVIEW_FOLDER"
REVIEWER_VARIABLE = "AUDIOREASON_REVIEWER"
ANCHOR_PLAYERS = 3  # an operation is applied at 1-3 positions (App. B.3)


def opening_folder(argv: Sequence[str] = ()) -> str:
    """The folder to review: the first argument, else ``$AUDIOREASON_REVIEW_FOLDER``, else the tiny example
    written afresh to a temporary folder."""
    given = argv[0] if argv else os.environ.get(FOLDER_VARIABLE)
    if given:
        return given
    from .review_example import write_example_folder

    return str(write_example_folder(SCRATCH.folder("example") / "bench"))


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _options_html(item: dict[str, Any]) -> str:
    rows = []
    for k, choice in enumerate(item["choices"]):
        marked = choice == item["answer"]
        mark = " <b>&#10003; answer</b>" if marked else ""
        rows.append(f"<li{' class=gold' if marked else ''}>({chr(65 + k)}) {_e(choice)}{mark}</li>")
    if item["answer"] not in item["choices"]:
        rows.append(f"<li><i>the marked answer {_e(item['answer'])} is none of the options</i></li>")
    return "<ol style='list-style:none;padding-left:0'>" + "".join(rows) + "</ol>"


def _criteria_html(item: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{k}</td><td>{_e(c['text'])}</td><td>{_e(c['importance'])}</td>"
        f"<td>{_e('-'.join(f'{t:g}' for t in c['time_range']) + ' s' if c['time_range'] else '')}</td></tr>"
        for k, c in enumerate(item["rubric"], 1)
    )
    return "<table><tr><th>#</th><th>criterion</th><th>importance</th><th>time range</th></tr>" + rows + "</table>"


def _evidence_html(folder: ReviewFolder, item: dict[str, Any]) -> str:
    records, note = folder.caption(item["recording_id"])
    rows = []
    for evidence_id in item["evidence"]:
        record = records.get(evidence_id)
        if record is None:
            rows.append(f"<tr><td>{_e(evidence_id)}</td><td colspan=3><i>not in the caption</i></td></tr>")
        else:
            when = f"{record.get('start')}-{record.get('end')} s"
            rows.append(
                f"<tr><td>{_e(evidence_id)}</td><td>{_e(when)}</td><td>{_e(record.get('modality'))}</td>"
                f"<td>{_e(record.get('content'))}</td></tr>"
            )
    head = f"<p><i>{_e(note)}</i></p>" if note else ""
    if not rows:
        return head + "<p><i>The item cites no evidence records.</i></p>"
    header = "<table><tr><th>evidence</th><th>time</th><th>modality</th><th>content</th></tr>"
    return head + header + "".join(rows) + "</table>"


def item_page(folder: ReviewFolder, n: int) -> str:
    """Item ``n`` (0-based) as HTML: what it is, its decision so far, the question, then the options and marked
    answer (MCQ) or the reference answer and criteria (OEQ), the evidence it cites and, for an anchor, its edit."""
    item, decision = folder.shown(n)
    kind = "anchor MCQ, link " + _e(item["link_position"]) if item["source"] == "anchor" else "native " + item["format"]
    parts = [
        f"<h3>{_e(item['id'])}</h3>",
        f"<p>{kind} &middot; {_e(item['cognitive_level'])} / {_e(item['dimension'])} &middot; "
        f"recording {_e(item['recording_id'])}</p>",
    ]
    if decision is None:
        parts.append("<p><b>Not reviewed yet.</b></p>")
    else:
        by = f" by {_e(decision.reviewer)}" if decision.reviewer else ""
        why = f": {_e(decision.reason)}" if decision.reason else ""
        shown = " (shown with its fixes)" if decision.decision == "fix" else ""
        parts.append(f"<p><b>Decision: {decision.decision}</b>{by} at {_e(decision.time)}{why}{shown}</p>")
    for anchored in (False, True) if item["source"] == "anchor" else (False,):
        if folder.duration(folder.audio_path(item, anchored)) is None:
            where = "audio/anchored" if anchored else "audio/original"
            parts.append(
                f"<p><b>No playable file for {_e(item['recording_id'])} in {where}</b> (missing or damaged).</p>"
            )
    parts.append(f"<p><b>Question:</b> {_e(item['question'])}</p>")
    if item["format"] == "MCQ":
        parts.append(_options_html(item))
    if item.get("reference_answer"):
        parts.append(f"<p><b>Reference answer:</b> {_e(item['reference_answer'])}</p>")
    if item["rubric"]:
        parts.append(_criteria_html(item))
    parts.append(_evidence_html(folder, item))
    manifest = folder.manifest(item) if item["source"] == "anchor" else None
    if item["source"] == "anchor":
        details = ", ".join(
            f"{k}: {_e(v)}" for k, v in (manifest or {}).items() if k not in ("recording_id", "operation")
        )
        parts.append(f"<p><b>Edit:</b> {_e(item['operation'])} &middot; {details or '<i>no edit manifest</i>'}</p>")
        parts.append(
            "<p><i>Play the edited audio at each position: the anchor must be audible, match its operation and "
            "not be confused with an event already in the audio.</i></p>"
        )
    return "\n".join(parts)


class ReviewSession:
    """What the page's controls call; every method takes the item number (1-based, held to the items)."""

    def __init__(self, folder: ReviewFolder):
        self.folder = folder

    def _n(self, number: Any) -> int:
        total = len(self.folder.items)
        try:
            number = int(float(number))
        except (TypeError, ValueError):
            number = 1
        return min(max(number, 1), max(total, 1)) - 1

    def progress(self) -> str:
        done, total = self.folder.progress()
        return f"**Reviewed {done} of {total}**"

    def show(self, number: Any, status: str = "") -> tuple:
        """The page for item ``number``: (number, progress, page, stretch choices, clip, the anchor players...,
        question, options, criteria, reference answer, reason, status)."""
        import gradio as gr

        folder = self.folder
        if not folder.items:
            empty = [gr.update(value=None, visible=False)] * ANCHOR_PLAYERS
            return (
                1,
                self.progress(),
                "<p>The folder holds no items.</p>",
                gr.update(choices=[], value=None),
                None,
                *empty,
                "",
                "",
                "",
                "",
                "",
                status,
            )
        n = self._n(number)
        item, _ = folder.shown(n)
        stretches = folder.stretches(item)
        choices = [(s.describe(), str(k)) for k, s in enumerate(stretches)]
        clip = folder.clip(item, stretches[0]) if stretches else None
        anchors = folder.anchor_stretches(item)
        players = [
            gr.update(value=folder.clip(item, s, anchored=True), label=f"Edited audio: {s.label}", visible=True)
            for s in anchors[:ANCHOR_PLAYERS]
        ] + [gr.update(value=None, visible=False)] * (ANCHOR_PLAYERS - min(len(anchors), ANCHOR_PLAYERS))
        mcq, oeq = item["format"] == "MCQ", bool(item["rubric"])
        return (
            n + 1,
            self.progress(),
            item_page(folder, n),
            gr.update(choices=choices, value=choices[0][1] if choices else None),
            clip,
            *players,
            item["question"],
            gr.update(value="\n".join(item["choices"]), visible=mcq),
            gr.update(value="\n".join(c["text"] for c in item["rubric"]), visible=oeq),
            gr.update(value=item.get("reference_answer") or "", visible=bool(item.get("reference_answer"))),
            "",
            status,
        )

    def go(self, number: Any, step: int) -> tuple:
        return self.show(self._n(number) + 1 + step)

    def play(self, number: Any, stretch: Any) -> Optional[str]:
        """The clip of the chosen stretch (its index among the item's stretches)."""
        item, _ = self.folder.shown(self._n(number))
        stretches = self.folder.stretches(item)
        try:
            return self.folder.clip(item, stretches[int(stretch)])
        except (TypeError, ValueError, IndexError):
            return None

    def _decide(self, number: Any, decision: str, reviewer: str, reason: str = "", fixes=None) -> tuple:
        import gradio as gr

        if not self.folder.items:
            raise gr.Error("The folder holds no items.")
        n = self._n(number)
        item = self.folder.items[n]
        try:
            made = make_decision(item["id"], decision, reason=reason or "", fixes=fixes, reviewer=reviewer or None)
            fixed_item(item, made)  # a fix the builder would refuse is never written
        except DataFileError as err:
            raise gr.Error(str(err).replace("the decision: ", "")) from None
        write_decision(self.folder.review_path, made)
        status = f"Saved: {decision} of {item['id']}."
        return self.show(n + 2 if n + 1 < len(self.folder.items) else n + 1, status)

    def accept(self, number: Any, reviewer: str = "") -> tuple:
        return self._decide(number, "accept", reviewer)

    def reject(self, number: Any, reviewer: str = "", reason: str = "") -> tuple:
        import gradio as gr

        if not (reason or "").strip():
            raise gr.Error("A rejection needs a reason: say what is wrong with the item.")
        return self._decide(number, "reject", reviewer, reason)

    def fix(
        self,
        number: Any,
        reviewer: str = "",
        question: str = "",
        options: str = "",
        criteria: str = "",
        reference: str = "",
        reason: str = "",
    ) -> tuple:
        """A fix of the item as generated: every field of the form that differs from it."""
        import gradio as gr

        item = self.folder.items[self._n(number)] if self.folder.items else None
        if item is None:
            raise gr.Error("The folder holds no items.")
        fixes: dict[str, Any] = {}
        if (question or "").strip() and question.strip() != item["question"]:
            fixes["question"] = question.strip()
        for name, given, current in (
            ("choices", options, item["choices"]),
            ("rubric", criteria, [c["text"] for c in item["rubric"]]),
        ):
            if not current:
                continue
            lines = [line.strip() for line in (given or "").splitlines() if line.strip()]
            if len(lines) != len(current):
                what = "options" if name == "choices" else "criteria"
                raise gr.Error(f"Give the {len(current)} {what} one per line (got {len(lines)} lines).")
            changed = {str(k): new for k, (new, old) in enumerate(zip(lines, current)) if new != old}
            if changed:
                fixes[name] = changed
        if item.get("reference_answer") and (reference or "").strip() not in ("", item["reference_answer"]):
            fixes["reference_answer"] = reference.strip()
        if not fixes:
            raise gr.Error("Nothing differs from the item as generated: edit a field, or press Accept.")
        return self._decide(number, "fix", reviewer, reason, fixes)


def build_review_app(folder: Any, reviewer: Optional[str] = None, clips_dir: Any = None):
    """The review page over a construction folder (a path or a ReviewFolder)."""
    import gradio as gr

    folder = folder if isinstance(folder, ReviewFolder) else ReviewFolder(folder, clips_dir)
    session = ReviewSession(folder)
    reviewer = reviewer if reviewer is not None else os.environ.get(REVIEWER_VARIABLE, "")
    with gr.Blocks(title="AudioSpan construction review") as demo:
        gr.Markdown(
            "# Construction review\nItem by item, against the audio (AudioSpan §4.5): play the stretch the item "
            "cites, check the open-ended item, then the multiple-choice one; accept it, fix a stem, option or "
            f"criterion, or reject it with a reason. Decisions go to `{folder.review_path}`."
        )
        progress = gr.Markdown(session.progress())
        with gr.Row():
            prev = gr.Button("Previous")
            number = gr.Number(1, label="Item", precision=0, minimum=1)
            after = gr.Button("Next")
        page = gr.HTML()
        # Any value is let through (play() answers an unknown one with no clip): the choices are the shown item's,
        # and a call of /play for another item names its stretch by index.
        stretch = gr.Dropdown(
            [], label="Cited stretch of the recording (a few seconds of margin)", allow_custom_value=True
        )
        clip = gr.Audio(label="Original audio: the cited stretch", type="filepath", interactive=False)
        players = [
            gr.Audio(label="Edited audio", type="filepath", interactive=False, visible=False)
            for _ in range(ANCHOR_PLAYERS)
        ]
        with gr.Group():
            who = gr.Textbox(reviewer, label="Reviewer", max_lines=1)
            question = gr.Textbox(label="Question (edit to fix)", lines=2)
            options = gr.Textbox(label="Options, one per line (edit to fix; the answer follows its option)")
            criteria = gr.Textbox(label="Criteria, one per line (edit to fix)")
            reference = gr.Textbox(label="Reference answer (edit to fix)", lines=2)
            reason = gr.Textbox(label="Reason (required to reject)", max_lines=2)
        with gr.Row():
            accept = gr.Button("Accept", variant="primary")
            fix = gr.Button("Fix")
            reject = gr.Button("Reject", variant="stop")
        status = gr.Markdown()
        outputs = [
            number,
            progress,
            page,
            stretch,
            clip,
            *players,
            question,
            options,
            criteria,
            reference,
            reason,
            status,
        ]
        demo.load(session.show, [number], outputs, api_name=False)
        number.submit(session.show, [number], outputs, api_name="show")
        prev.click(lambda n: session.go(n, -1), [number], outputs, api_name=False)
        after.click(lambda n: session.go(n, 1), [number], outputs, api_name=False)
        stretch.input(session.play, [number, stretch], [clip], api_name="play")
        accept.click(session.accept, [number, who], outputs, api_name="accept")
        fix.click(session.fix, [number, who, question, options, criteria, reference, reason], outputs, api_name="fix")
        reject.click(session.reject, [number, who, reason], outputs, api_name="reject")
    demo.session = session
    return demo


__all__ = ["FOLDER_VARIABLE", "REVIEWER_VARIABLE", "ReviewSession", "build_review_app", "item_page", "opening_folder"]
