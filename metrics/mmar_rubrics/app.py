"""Space widget for the `mmar_rubrics` metric: paste MMAR records with a model's reasoning and answer
(JSON Lines), point it at an OpenAI-compatible judge, and see Rubrics and Accuracy overall and per
modality, category and sub-category, with every rater's verdicts."""
import json

import gradio as gr

from audioreason.judges import MMAR_JUDGE_MODEL
from audioreason.mmar_rubrics import MMARRubricsScorer, default_judge
from audioreason.scale import rounded

GROUPS = ["modality", "category", "sub-category"]
COLUMNS = ["rubrics", "accuracy", "n", "n_judged", "n_gated", "n_failed"]


def _records(text: str) -> list[dict]:
    rows = []
    for n, line in enumerate((text or "").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise gr.Error(f"line {n} is not JSON: {err}")
    if not rows:
        raise gr.Error("Paste at least one record.")
    missing = [r.get("id", f"line {n}") for n, r in enumerate(rows, 1)
               if not all(k in r for k in ("question", "choices", "answer", "rubric", "reasoning",
                                            "predicted_answer"))]
    if missing:
        raise gr.Error(f"records need question, choices, answer, rubric, reasoning, predicted_answer: {missing[:3]}")
    return rows


def score(records_text: str, model: str, base_url: str, api_key_env: str, compat: bool, raters: float):
    rows = _records(records_text)
    judge = default_judge(bool(compat), model or MMAR_JUDGE_MODEL, base_url=base_url or None,
                          api_key_env=api_key_env or "OPENAI_API_KEY")
    scorer = MMARRubricsScorer(judge, compat=bool(compat), raters=int(raters or 5))
    result = scorer.score(rows, [r["reasoning"] for r in rows], [r["predicted_answer"] for r in rows],
                          return_items=True)
    overall = {"headers": ["group", "value"] + COLUMNS,
               "data": rounded([["overall", "all"] + [result[c] for c in COLUMNS]]
                               + [[g, name] + [t[c] for c in COLUMNS] for g in GROUPS for name, t in result[g].items()])}
    return overall, rounded(json.loads(json.dumps(result, default=str)))


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="MMAR-Rubrics") as demo:
        gr.Markdown("# MMAR-Rubrics\nAnswer-gated rubric scoring by an LLM judge (see the metric card). One "
                    "MMAR record per line (as in MMAR-meta.jsonl) plus `reasoning` and `predicted_answer`. "
                    "The judge is any OpenAI-compatible server; its key is read from the named environment "
                    "variable.")
        with gr.Row():
            with gr.Column():
                records = gr.Textbox(label="Records (JSON Lines)", lines=12)
                model = gr.Textbox(value=MMAR_JUDGE_MODEL, label="Judge model")
                base_url = gr.Textbox(value="", label="Base URL (empty: OpenAI)")
                key_env = gr.Textbox(value="OPENAI_API_KEY", label="API key environment variable")
                compat = gr.Checkbox(value=True, label="Official scorer (compat)")
                raters = gr.Number(value=5, label="Raters (compat: 5)", precision=0)
                button = gr.Button("Score", variant="primary")
            with gr.Column():
                table = gr.Dataframe(label="Rubrics and Accuracy (0-1; the paper prints x100)")
                details = gr.JSON(label="Result, with every rater's verdicts")
        button.click(score, [records, model, base_url, key_env, compat, raters], [table, details])
    return demo


if __name__ == "__main__":
    build_demo().launch()
