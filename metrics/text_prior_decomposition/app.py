"""Space widget for the `text_prior_decomposition` metric: paste per-condition records (JSON Lines) and
see the text-prior rate, the retention curve, the item decomposition and the per-category table; or
upload a clip and cut it into the paper's equal-duration fragments."""

import json
import os
import tempfile

import gradio as gr

from audioreason.audio import AudioError
from audioreason.audio.fragments import fragment_audio
from audioreason.base.scale import rounded
from audioreason.scorers.text_prior.examples import demo_records
from audioreason.scorers.text_prior.inputs import records_from_jsonl
from audioreason.scorers.text_prior.scorer import score_text_prior
from audioreason.scorers.text_prior.tables import summary_tables

EXAMPLE = "\n".join(json.dumps(r) for r in demo_records())
MODES = ["separate", "sufficient"]
ZERO_AN = ["as_zero", "exclude"]


def score(records_text: str, errored_fragments: str, chance: float, zero_an_models: str = "as_zero"):
    try:
        result = score_text_prior(
            records_from_jsonl(records_text),
            errored_fragments=errored_fragments,
            chance=chance or None,
            zero_an_models=zero_an_models,
        )
    except ValueError as err:
        raise gr.Error(str(err))
    tables = summary_tables(result)
    by_category = tables.get("by_category", (["category"], []))
    frames = [
        {"headers": h, "data": rows}
        for h, rows in (tables["text_prior"], tables["retention"], tables["decomposition"], by_category)
    ]
    return (*frames, rounded(json.loads(json.dumps(result, default=str))))  # 0-1, 4 decimals for reading


def fragment(audio_path, ns, rate, progress=gr.Progress()):
    if not audio_path:
        raise gr.Error("Upload an audio file.")
    if not ns:
        raise gr.Error("Choose at least one N.")
    out_dir = tempfile.mkdtemp(prefix="fragments-")
    progress(0.1, desc=f"cutting into N = {', '.join(sorted(ns))} fragments (one streaming pass)")
    try:
        result = fragment_audio(audio_path, out_dir, ns=[int(n) for n in ns], sampling_rate=int(rate) or None)
    except (AudioError, ValueError) as err:
        raise gr.Error(str(err))
    rows = [[f.condition, f.start, f.stop, round(f.seconds, 3), "written"] for f in result.fragments]
    rows += [[s.condition, s.start, s.stop, 0.0, f"skipped: {s.reason}"] for s in result.skipped]
    rows.sort(key=lambda r: tuple(int(x) for x in r[0].split(":")[1:]))
    return {"headers": ["condition", "start", "stop", "seconds", "status"], "data": rows}, [
        str(f.path) for f in result.fragments
    ]


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="Text prior and audio reliance") as demo:
        gr.Markdown(
            "# All That Glitters Is Not Audio\nText-prior rate, retention R_N and the TS/FS/XS/AH/UN "
            "decomposition (see the metric card). One JSON record per line: model, item_id, condition "
            "(full | none | tb | frag:N:k), prediction (true/false, raw output, or null), and optionally "
            "reference, choices, category."
        )
        with gr.Tab("Score"):
            with gr.Row():
                with gr.Column():
                    records = gr.Textbox(label="Records (JSON Lines)", lines=14, value=EXAMPLE)
                    mode = gr.Dropdown(MODES, value="separate", label="Errored fragment predictions")
                    chance = gr.Number(
                        value=0,
                        label="TB chance level for every item (0: 1 / number of choices; "
                        "the paper's MMAU and MMAR numbers use 0.25)",
                    )
                    zero_an = gr.Dropdown(
                        ZERO_AN, value="as_zero", label="XS/AN model mean: a model with no audio-needed item counts"
                    )
                    button = gr.Button("Score", variant="primary")
                with gr.Column():
                    text_prior = gr.Dataframe(label="Text prior (0-1)")
                    retention = gr.Dataframe(label="Retention curve R_N (fraction of Full)")
                    decomposition = gr.Dataframe(label="Item decomposition (counts)")
                    by_category = gr.Dataframe(label="By category (Table 5)")
                    full = gr.JSON(label="Full result")
            button.click(
                score,
                [records, mode, chance, zero_an],
                [text_prior, retention, decomposition, by_category, full],
                api_name="score",
            )
        with gr.Tab("Fragments"):
            with gr.Row():
                with gr.Column():
                    audio = gr.Audio(label="Audio", type="filepath")
                    ns = gr.CheckboxGroup(["2", "3", "4", "5"], value=["2", "3", "4", "5"], label="N")
                    rate = gr.Number(value=16000, label="Output rate (Hz; 0 keeps the file's)")
                    cut = gr.Button("Cut", variant="primary")
                with gr.Column():
                    listing = gr.Dataframe(label="Fragments")
                    files = gr.File(label="Fragment files", file_count="multiple")
            cut.click(fragment, [audio, ns, rate], [listing, files], api_name="fragment")
    return demo


if __name__ == "__main__":
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_demo().launch(show_error=True)
