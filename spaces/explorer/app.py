"""Results explorer Space: open scored runs (``audioreason run`` + ``audioreason score`` folders, their zipped
bundles, or any scorer's per-item output) and look at them item by item: a leaderboard across models and
conditions; per item the audio, the chain of thought split into its slots, each extracted answer with its
rule, the ARIA metrics, the rubric verdicts with their justifications, and the anchors on the audio's
timeline; filters by category, duration tier, anchor operation and reasoning mode.

It opens with the runs in ``runs/`` beside this file (a built Space: ``audioreason space build explorer``),
else the run folders given on the command line (``python app.py RUN_DIR...``), else the demo's run. All the
logic is in ``audioreason.report.explore``."""
import os
import sys
import tempfile
from pathlib import Path

import gradio as gr

from audioreason.report import explore
from audioreason.spaces import opening_runs

_VIEWS: dict = {}  # run path -> RunView, opened once per process


def initial_runs() -> list:
    return opening_runs(__file__, sys.argv[1:] if __name__ == "__main__" else [])


def _register(path: str, view) -> None:
    """Keep an opened run; its name is made unique among the open runs (it labels rows and items)."""
    taken = {v.name for p, v in _VIEWS.items() if p != path}
    base, n = view.name, 2
    while view.name in taken:
        view.name, n = f"{base} ({n})", n + 1
    _VIEWS[path] = view


def _views(paths: list) -> list:
    for path in paths:
        if path not in _VIEWS:
            _register(path, explore.open_run(path))
    return [_VIEWS[p] for p in paths]


def _choices(paths: list, rows: list) -> list:
    """Dropdown entries (label, "run-number::output key") for the item table's rows."""
    index = {view.name: n for n, view in enumerate(_views(paths))}
    return [(f"{r[2]} | {r[3]} | {r[4]} | {r[0]}", f"{index[r[0]]}::{r[1]}") for r in rows]


def _notes(paths: list, errors: list) -> str:
    lines = [f"- **{v.name}**: {note}" for v in _views(paths) for note in v.notes]
    lines += [f"- {e}" for e in errors]
    return "\n".join(lines) or "All runs opened with their outputs, scores and items."


def _state(paths: list, errors: list = ()):
    views = _views(paths)
    facets = explore.facet_values(views)
    rows = explore.item_table(views)
    choices = _choices(paths, rows)
    return (paths, explore.leaderboard(views), *(gr.update(choices=facets[f], value=[]) for f in explore.FILTERS),
            rows, gr.update(choices=choices, value=choices[0][1] if choices else None), _notes(paths, list(errors)),
            explore.correct_legend(views))


def load(files, paths, progress=gr.Progress()):
    """Add uploaded runs to the ones already open."""
    if not files:
        raise gr.Error("Upload a zipped run folder, the files of one (results.json, items.jsonl, outputs.jsonl, "
                       "run.json), or a scorer's output (.json).")
    progress(0.1, desc="unpacking")
    try:
        staged = explore.stage_uploads([getattr(f, "name", f) for f in files], tempfile.mkdtemp(prefix="explorer-"))
    except ValueError as err:
        raise gr.Error(str(err))
    new, errors = [], []
    for n, path in enumerate(staged):
        progress(0.2 + 0.8 * n / len(staged), desc=f"opening {Path(path).name}")
        try:
            _register(str(path), explore.open_run(path))
            new.append(str(path))
        except (ValueError, OSError) as err:
            errors.append(f"{Path(path).name}: {err}")
    if not new:
        raise gr.Error("Nothing could be opened: " + "; ".join(errors))
    return _state(list(paths or []) + new, errors)


def refilter(paths, category, tier, operation, mode):
    views = _views(paths or [])
    rows = explore.item_table(views, {"category": category, "duration_tier": tier, "operation": operation,
                                      "reasoning_mode": mode})
    choices = _choices(paths or [], rows)
    return rows, gr.update(choices=choices, value=choices[0][1] if choices else None)


def show(paths, choice):
    if not choice:
        raise gr.Error("Choose an item (no row matches the filters, or no run is open).")
    number, _, key = choice.partition("::")
    views = _views(paths or [])
    try:
        view = views[int(number)]
    except (ValueError, IndexError):
        raise gr.Error(f"unknown item {choice!r}; reload the runs")
    try:
        d = explore.item_detail(view, key)
    except ValueError as err:  # a malformed record: one line naming the run
        raise gr.Error(str(err))
    return (d["header"], d["audio"], d["slots"], d["answers"], d["aria"], d["verdicts"], d["timeline"], d["scores"],
            d["output"])


def build_demo(paths=None) -> gr.Blocks:
    paths = initial_runs() if paths is None else list(paths)
    opened, errors = [], []
    for path in paths:
        try:
            _views([path])
            opened.append(path)
        except (ValueError, OSError) as err:
            errors.append(f"{path}: {err}")
    paths, views = opened, _views(opened)
    facets = explore.facet_values(views)
    rows = explore.item_table(views)
    choices = _choices(paths, rows)
    first = choices[0][1] if choices else None
    detail = show(paths, first) if first else ("Open a run to see its items.", None, [], [], {}, [], "", {}, "")
    with gr.Blocks(title="audioreason results explorer") as demo:
        gr.Markdown("# Results explorer\nScored runs item by item (ARIA-Rubrics, MMAR-Rubrics, AudioSpan, text "
                    "prior). Upload a zipped run folder of `audioreason run` + `audioreason score`, its files, or a "
                    "scorer's per-item output (`compute(..., return_items=True)` saved as JSON).")
        state = gr.State(paths)
        notes = gr.Markdown(_notes(paths, errors))
        with gr.Row():
            upload = gr.File(label="Runs to add", file_count="multiple", file_types=[".zip", ".json", ".jsonl"])
            add = gr.Button("Open", variant="primary")
        board = gr.Dataframe(explore.leaderboard(views), headers=explore.LEADERBOARD_COLUMNS, label="Leaderboard",
                             wrap=True)
        with gr.Row():
            filters = [gr.Dropdown(facets[f], value=[], multiselect=True, label=label) for f, label in
                       zip(explore.FILTERS, ("category", "duration tier", "anchor operation", "reasoning mode"))]
        table = gr.Dataframe(rows, headers=explore.ITEM_COLUMNS, label="Items", wrap=True, max_height=320)
        legend = gr.Markdown(explore.correct_legend(views))
        item = gr.Dropdown(choices, value=first, label="Item")
        header = gr.Markdown(detail[0])
        with gr.Row():
            with gr.Column():
                audio = gr.Audio(detail[1], label="Audio", type="filepath")
                timeline = gr.HTML(detail[6], label="Anchors and timed criteria on the audio's timeline")
                slots = gr.Dataframe(detail[2], headers=["slot", "text"], label="Chain of thought, by slot", wrap=True)
                answers = gr.Dataframe(detail[3], headers=["rule", "choice", "method", "correct"],
                                       label="Extracted answer per rule")
            with gr.Column():
                aria = gr.JSON(detail[4], label="ARIA metrics (M1-M6, ARIA)")
                verdicts = gr.Dataframe(detail[5], headers=["scorer", "rater", "criterion", "verdict", "justification"],
                                        label="Rubric verdicts", wrap=True)
                scores = gr.JSON(detail[7], label="Every scorer's values for this output")
                output = gr.Textbox(detail[8], label="Model output", lines=10)
        outputs = [state, board, *filters, table, item, notes, legend]
        add.click(load, [upload, state], outputs, api_name="load")
        for f in filters:
            f.change(refilter, [state, *filters], [table, item], api_name=False)
        item.change(show, [state, item], [header, audio, slots, answers, aria, verdicts, timeline, scores, output],
                    api_name="show")
    return demo


if __name__ == "__main__":
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_demo().launch(show_error=True)
