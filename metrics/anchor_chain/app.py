"""Space widget for the `anchor_chain` metric: paste AudioSpan anchor links or native MCQs with the model's
replies (JSON Lines) and see the Chain score, per-link accuracy, the grounding split and the breakdowns,
or native MCQ Accuracy, each beside its random baseline."""

import json
import os

import gradio as gr

from audioreason.apps.spaces import load_file
from audioreason.base.jsonl import parse_json_records
from audioreason.base.scale import rounded
from audioreason.scorers.anchor_chain.scorer import demo_items, score_task

_anchor, _anchor_replies, _native, _native_replies = demo_items()
EXAMPLE_CHAIN = "\n".join(json.dumps({**item, "reply": reply}) for item, reply in zip(_anchor, _anchor_replies))
EXAMPLE_MCQ = "\n".join(json.dumps({**item, "reply": reply}) for item, reply in zip(_native, _native_replies))


def score(rows_text: str, task: str, parse: str):
    try:
        rows = parse_json_records(rows_text, what="an object (an item with its reply)")
    except ValueError as err:
        raise gr.Error(str(err))
    replies = [row.pop("reply", None) for row in rows]
    try:
        result = score_task(task, rows, replies, parse=parse)
    except ValueError as err:
        raise gr.Error(str(err))
    return rounded(json.loads(json.dumps(result, default=str)))  # 0-1, 4 decimals for reading


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="AudioSpan anchor Chain and MCQ Accuracy") as demo:
        gr.Markdown(
            "# AudioSpan: anchor Chain and MCQ Accuracy\nOne JSON object per line: the item "
            "(chain_id, link_position 1/2/3, choices, answer or answer_index, optional operation, "
            "duration_tier, language, cognitive_level, dimension) and the model's `reply`."
        )
        with gr.Row():
            with gr.Column():
                rows = gr.Textbox(label="Items with replies (JSON Lines)", lines=14, value=EXAMPLE_CHAIN)
                upload = gr.File(label="or load a JSON Lines file", file_types=[".jsonl", ".json", ".txt"])
                task = gr.Radio(["chain", "accuracy"], value="chain", label="Score")
                parse = gr.Radio(["exact", "tolerant"], value="exact", label="Answer parsing")
                button = gr.Button("Score", variant="primary")
            result = gr.JSON(label="Result")
        button.click(score, [rows, task, parse], [result], api_name="score")
        upload.upload(load_file, [upload], [rows], api_name=False)
    return demo


if __name__ == "__main__":
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_demo().launch(show_error=True)
