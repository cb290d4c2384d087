"""Space widget for the `audiospan_rubric` metric (AudioSpan, arXiv:2608.26431, §3.2 Eq. 2, App. C.2-C.3):
paste OEQ items, the model's answers and the judge's replies (JSON Lines) and see the Rubric, semantic% /
temporal%, where the deterministic timestamp check disagrees with the judge, and the breakdowns. The replies
are validated exactly as a judge's (index order, count, dimension rules). Scoring only: the judge runs
elsewhere (any OpenAI-compatible endpoint through
`audioreason.scorers.audiospan_rubric.scorer.AudioSpanRubricScorer`)."""

import json
import os

import gradio as gr

from audioreason.apps.spaces import load_file
from audioreason.base.jsonl import parse_json_records
from audioreason.base.scale import rounded
from audioreason.scorers.audiospan_rubric.scorer import demo_inputs, score_verdicts

# The first of the project demo's items, with the answer and the judge reply it is scored from (Rubric 5/6).
_ITEMS, _ANSWERS, _REPLIES = demo_inputs()
EXAMPLE = json.dumps({"item": _ITEMS[0], "response": _ANSWERS[0], "judge_reply": _REPLIES[0]})


def score(rows_text: str):
    try:
        rows = parse_json_records(
            rows_text, needed=("item", "judge_reply"), hint="each line holds item, response, judge_reply"
        )
    except ValueError as err:
        raise gr.Error(str(err))
    try:
        items = [row["item"] for row in rows]
        verdicts = [[row["judge_reply"]] for row in rows]  # validated by score_verdicts, as a judge's reply
        result = score_verdicts(items, verdicts, [row.get("response") for row in rows], return_items=True)
    except ValueError as err:  # score_verdicts names the item (position and id) and the field
        raise gr.Error(f"ValueError: {err}")
    return rounded(json.loads(json.dumps(result, default=str)))  # 0-1, 4 decimals for reading


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="AudioSpan Rubric") as demo:
        gr.Markdown(
            "# AudioSpan Rubric\nOne JSON object per line: `item` (with its `rubric` criteria), the "
            "model's `response`, and the judge's `judge_reply` ({criteria: [{index, semantic, "
            "temporal}]}). Verdicts are validated against the dimension rules before scoring."
        )
        with gr.Row():
            rows = gr.Textbox(label="Items, responses and judge replies (JSON Lines)", lines=14, value=EXAMPLE)
            upload = gr.File(label="or load a JSON Lines file", file_types=[".jsonl", ".json", ".txt"])
            result = gr.JSON(label="Result")
        gr.Button("Score", variant="primary").click(score, [rows], [result], api_name="score")
        upload.upload(load_file, [upload], [rows], api_name=False)
    return demo


if __name__ == "__main__":
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_demo().launch(show_error=True)
