"""Space widget for the `aria` metric: paste a four-step CoT, the choices and the gold answer (and,
for M1, upload the audio); see the parsed slots, the extracted answer and M1-M6."""

import os

import gradio as gr

from audioreason.base.scale import rounded
from audioreason.scorers.aria.scorer import AriaScorer
from audioreason.text.cot import parse_cot

EXAMPLE = (
    "[PERCEPTION]\nEntities: dog, car horn\nDescription: A dog barks twice, then a car horn sounds.\n"
    "[ANALYSIS]\nThe barks are close and loud; the horn is further away.\n"
    "[REASONING]\nThe main sound source is the dog.\n[ANSWER]\n(A) Dog barking"
)


def score(cot: str, choices_text: str, gold: str, audio_path, backbones: str, m3_mode: str, progress=gr.Progress()):
    choices = [c.strip() for c in (choices_text or "").splitlines() if c.strip()]
    if not choices or not (gold or "").strip():
        raise gr.Error("Give one choice per line and the gold answer.")
    if gold.strip() not in choices:
        raise gr.Error(f"The gold answer {gold.strip()!r} is not one of the choices.")
    # The first call loads the backbones (the packaged offline weights: about a minute on a CPU Space).
    progress(0.1, desc=f"loading the {backbones} backbones and scoring M1-M6")
    try:
        result = AriaScorer(backbones=backbones, m3_mode=m3_mode).score(
            [cot or ""], [gold.strip()], [choices], audio=[audio_path] if audio_path else None, return_items=True
        )
    except ValueError as err:  # input the scorer refuses (it names the field)
        raise gr.Error(str(err))
    progress(1.0, desc="done")
    item = result.pop("items")[0]
    slots = parse_cot(cot)
    table = [
        [name, getattr(slots, name) if name != "entities" else ", ".join(slots.entities)]
        for name in ("entities", "description", "analysis", "reasoning", "answer")
    ]
    return table, item["extracted"], rounded(result)  # 0-1, 4 decimals for reading


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="ARIA-Rubrics") as demo:
        gr.Markdown("# ARIA-Rubrics\nSix chain-of-thought metrics for audio reasoning (see the metric card).")
        with gr.Row():
            with gr.Column():
                cot = gr.Textbox(label="Model output (four-step CoT)", lines=12, value=EXAMPLE)
                choices = gr.Textbox(label="Choices, one per line", lines=4, value="Dog barking\nRain\nMusic")
                gold = gr.Textbox(label="Gold answer", value="Dog barking")
                audio = gr.Audio(label="Audio (for M1)", type="filepath")
                backbones = gr.Dropdown(["offline", "paper"], value="offline", label="Backbones")
                m3_mode = gr.Dropdown(["generate", "logprob"], value="generate", label="M3 mode")
                button = gr.Button("Score", variant="primary")
            with gr.Column():
                slots = gr.Dataframe(headers=["slot", "text"], label="Parsed slots")
                extracted = gr.JSON(label="Extracted answer (ARIA Appendix E)")
                metrics = gr.JSON(label="Scores")
        button.click(
            score, [cot, choices, gold, audio, backbones, m3_mode], [slots, extracted, metrics], api_name="score"
        )
    return demo


if __name__ == "__main__":
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_demo().launch(show_error=True)
