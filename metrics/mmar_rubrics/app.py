"""Space widget for the `mmar_rubrics` metric: paste MMAR records with a model's reasoning and answer
(JSON Lines) and see Rubrics and Accuracy overall and per modality, category and sub-category, with every
rater's verdicts. The judge is either an OpenAI-compatible server (the paper's gpt-4o-2024-11-20 by default)
or the judge replies written in the records (``judge_replies``: one per rater), which the widget's example
uses so that it scores with no server: recorded replies are validated, trimmed and averaged exactly as live
ones (arXiv:2602.14224 §3.2)."""

import json
import os
from importlib import resources

import gradio as gr

from audioreason.apps.recorded_replies import RecordedReplies
from audioreason.apps.spaces import load_file
from audioreason.base.jsonl import parse_json_records
from audioreason.base.scale import rounded
from audioreason.judges import MMAR_JUDGE_MODEL, JudgeUnavailable
from audioreason.scorers.mmar_rubrics.scorer import MMARRubricsScorer, default_judge

GROUPS = ["modality", "category", "sub-category"]
COLUMNS = ["rubrics", "accuracy", "n", "n_judged", "n_gated", "n_failed"]
NEEDED = ("question", "choices", "answer", "rubric", "reasoning", "predicted_answer")
JUDGES = ["replies in the records", "OpenAI-compatible server"]


def _example() -> str:
    """Two real MMAR records (the demo sample) with a reasoning each: the first answered right and judged by
    five recorded replies (5, 4, 4, 3 and 2 of 5 criteria met: middle three 0.8, 0.8, 0.6, item 0.7333), the
    second answered wrong (gated: 0, no judge call). By hand: Rubrics = (0.7333 + 0) / 2 = 0.3667,
    Accuracy = 0.5 (0-1, the project's one scale; the paper prints x100)."""
    rows = [
        json.loads(line)
        for line in (resources.files("audioreason") / "resources" / "demo" / "mmar_sample.jsonl")
        .read_text("utf-8")
        .splitlines()
        if line.strip()
    ]
    first, second = rows[0], rows[1]
    names = [c["name"] for c in first["rubric"]]

    def reply(met: int) -> list:
        return [
            {"name": n, "score": int(i < met), "justification": "met" if i < met else "not addressed"}
            for i, n in enumerate(names)
        ]

    first.update(
        reasoning="Throat singing and long-song phrasing point to Mongolian steppe music; the dry sound "
        "with no echo suits open, flat land rather than a canyon or a forest.",
        predicted_answer=first["answer"],
        judge_replies=[reply(m) for m in (5, 4, 4, 3, 2)],
    )
    wrong = next(c for c in second["choices"] if c != second["answer"])
    second.update(reasoning="The man sounds pleased and calm.", predicted_answer=wrong, judge_replies=[])
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in (first, second))


EXAMPLE = _example()


def _records(text: str) -> list:
    try:
        return parse_json_records(text, needed=NEEDED, hint="each line holds " + ", ".join(NEEDED))
    except ValueError as err:
        raise gr.Error(str(err))


def score(
    records_text: str,
    model: str,
    base_url: str,
    api_key_env: str,
    compat: bool,
    raters: float,
    judge_kind: str = JUDGES[1],
    progress=gr.Progress(),
):
    """The widget's /score endpoint; ``judge_kind`` comes last so that API calls written for the server judge
    (six arguments) keep working."""
    rows = _records(records_text)
    n_raters = int(raters or 5)
    if n_raters < 1:
        raise gr.Error("Raters must be at least 1.")
    if judge_kind == JUDGES[0]:
        judge = RecordedReplies(rows)
    else:
        judge = default_judge(
            bool(compat),
            model or MMAR_JUDGE_MODEL,
            base_url=base_url or None,
            api_key_env=api_key_env or "OPENAI_API_KEY",
        )
    progress(0.1, desc=f"judging {len(rows)} record(s) x {n_raters} rater(s)")
    try:
        scorer = MMARRubricsScorer(judge, compat=bool(compat), raters=n_raters)
        result = scorer.score(
            rows, [r["reasoning"] for r in rows], [r["predicted_answer"] for r in rows], return_items=True
        )
    except (ValueError, JudgeUnavailable) as err:  # a record check_items names, or a judge that cannot work
        raise gr.Error(str(err))
    progress(1.0, desc="done")
    overall = {
        "headers": ["group", "value"] + COLUMNS,
        "data": rounded(
            [["overall", "all"] + [result[c] for c in COLUMNS]]
            + [[g, name] + [t[c] for c in COLUMNS] for g in GROUPS for name, t in result[g].items()]
        ),
    }
    return overall, rounded(json.loads(json.dumps(result, default=str)))


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="MMAR-Rubrics") as demo:
        gr.Markdown(
            "# MMAR-Rubrics\nAnswer-gated rubric scoring by an LLM judge (see the metric card). One "
            "MMAR record per line (as in MMAR-meta.jsonl) plus `reasoning` and `predicted_answer`. The "
            "judge is an OpenAI-compatible server (its key is read from the named environment variable) "
            "or the replies written in each record's `judge_replies` (one per rater), as in the example."
        )
        with gr.Row():
            with gr.Column():
                records = gr.Textbox(label="Records (JSON Lines)", lines=12, value=EXAMPLE)
                upload = gr.File(label="or load a JSON Lines file", file_types=[".jsonl", ".json", ".txt"])
                judge_kind = gr.Radio(JUDGES, value=JUDGES[0], label="Judge")
                model = gr.Textbox(value=MMAR_JUDGE_MODEL, label="Judge model (server)")
                base_url = gr.Textbox(value="", label="Base URL (empty: OpenAI)")
                key_env = gr.Textbox(value="OPENAI_API_KEY", label="API key environment variable")
                compat = gr.Checkbox(value=True, label="Official scorer (compat)")
                raters = gr.Number(value=5, label="Raters (compat: 5)", precision=0)
                button = gr.Button("Score", variant="primary")
            with gr.Column():
                table = gr.Dataframe(label="Rubrics and Accuracy (0-1; the paper prints x100)")
                details = gr.JSON(label="Result, with every rater's verdicts")
        button.click(
            score, [records, model, base_url, key_env, compat, raters, judge_kind], [table, details], api_name="score"
        )
        upload.upload(load_file, [upload], [records], api_name=False)
    return demo


if __name__ == "__main__":
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_demo().launch(show_error=True)
