"""A judge that replays replies written beside the records it judges (``judge_replies``), so the
``mmar_rubrics`` Space scores its example with no server: recorded replies are validated, trimmed and
averaged exactly as live ones (arXiv:2602.14224 §3.2)."""

from __future__ import annotations

import json
from typing import Sequence

from audioreason.judges import Completion, JudgeCallError
from audioreason.judges.base import CLIENT_ERROR


class RecordedReplies:
    """A judge that answers with the replies written in the records (``judge_replies``, one per rater, in
    order) for the record whose question and reasoning the request quotes. A call with no reply left is a
    failed call, counted like any other."""

    name = "recorded replies"

    def __init__(self, rows: Sequence[dict]):
        self._queues = [(str(r["question"]), str(r["reasoning"]), list(r.get("judge_replies") or [])) for r in rows]

    async def complete(self, messages, params, budget=None):
        text = "\n".join(str(m.get("content", "")) for m in messages)
        for question, reasoning, queue in self._queues:
            if question in text and reasoning in text:
                if not queue:
                    raise JudgeCallError("the record has no recorded reply left for this rater", kind=CLIENT_ERROR)
                reply = queue.pop(0)
                return Completion(reply if isinstance(reply, str) else json.dumps(reply))
        raise JudgeCallError("no record matches the judge request", kind=CLIENT_ERROR)

    async def aclose(self):
        return None


__all__ = ["RecordedReplies"]
