"""Results explorer Space: open scored runs (``audioreason run`` + ``audioreason score`` folders, their zipped
bundles, or any scorer's per-item output) and look at them item by item: a leaderboard across models and
conditions (each headline with its 95% interval when recorded); per item a page with the audio, the chain
of thought split into its slots, each extracted answer with its rule, the ARIA metrics, the rubric verdicts
with their justifications, and the anchors on the audio's timeline (the raw records behind a toggle); a
second run's output for the same item beside it, and a filter for the items where the two disagree; filters
by category, duration tier, anchor operation and reasoning mode.

It opens with the runs in ``runs/`` beside this file (a built Space: ``audioreason space build explorer``),
else the run folders given on the command line (``python app.py RUN_DIR...``), else the demo's run. All the
logic is in ``audioreason.report``: ``runs``, ``leaderboard``, ``item_table``, ``item_page`` and ``bundles``."""

import os
import shutil
import sys
from pathlib import Path

import gradio as gr

from audioreason.apps.scratch import Scratch
from audioreason.apps.spaces import opening_runs
from audioreason.report.bundles import stage_uploads
from audioreason.report.item_page import item_detail
from audioreason.report.item_table import FILTERS, ITEM_COLUMNS, facet_values, item_rows, same_item
from audioreason.report.leaderboard import (
    LEADERBOARD_COLUMNS,
    correct_legend,
    filled_columns,
    interval_legend,
    leaderboard,
)
from audioreason.report.runs import open_run

_VIEWS: dict = {}  # run path -> RunView, opened once per process
# Uploaded runs, unpacked per upload; a session's are removed when Gradio drops its state (``forget``).
SCRATCH = Scratch("explorer")


def initial_runs() -> list:
    return opening_runs(__file__, sys.argv[1:] if __name__ == "__main__" else [])


def _register(path: str, view) -> None:
    """Keep an opened run; its name is made unique among the open runs (it labels rows and items)."""
    taken = {v.name for p, v in _VIEWS.items() if p != path}
    base, n = view.name, 2
    while view.name in taken:
        view.name, n = f"{base} ({n})", n + 1
    _VIEWS[path] = view


def forget(paths: list) -> list:
    """A session's end (its state deleted): its uploaded runs are closed and their folders removed; the runs it
    opened with stay. The paths released."""
    released = SCRATCH.release(paths or [])
    for path in released:
        _VIEWS.pop(path, None)
    return released


def _views(paths: list) -> list:
    for path in paths:
        if path not in _VIEWS:
            _register(path, open_run(path))
    return [_VIEWS[p] for p in paths]


NO_SECOND = "(none)"
SHOWN = {"all items": None, "disagree on the benchmark's rule": "benchmark", "disagree on any rule": "any"}
EMPTY = ("Open a run to see its items.", None, "", None, "", {})


def _second(paths: list, value) -> "int | None":
    """The second run's index among the open runs (None: no comparison, or one that is not open)."""
    if value in (None, "", NO_SECOND):
        return None
    number = int(value)
    return number if 0 <= number < len(paths) else None


def _rows(paths: list, filters=(), second=None, shown="all items") -> list:
    values = dict(zip(FILTERS, filters))
    second = _second(paths, second)
    return item_rows(_views(paths), values, second, SHOWN.get(shown) if second is not None else None)


def _table(rows: list, comparing: bool) -> dict:
    """The item table without its empty columns; the second run's columns only while comparing."""
    width = len(ITEM_COLUMNS) - (0 if comparing else 2)
    headers, data = filled_columns(ITEM_COLUMNS[:width], [r.cells[:width] for r in rows])
    return {"data": data or [[""] * len(headers)], "headers": headers}


def _board(views: list) -> dict:
    headers, data = filled_columns(LEADERBOARD_COLUMNS, leaderboard(views))
    return {"data": data or [[""] * len(headers)], "headers": headers}


def _widths(table: dict) -> list:
    """Column widths that keep every header on one line (a long cell wraps instead, up to 40 characters)."""
    return [
        f"{int(8.5 * min(max([len(h)] + [len(str(r[n])) for r in table['data']]), 40)) + 28}px"
        for n, h in enumerate(table["headers"])
    ]


def _sized(table: dict):
    return gr.update(value=table, column_widths=_widths(table))


def _choices(paths: list, rows: list) -> list:
    """Dropdown entries (label, "run-number::output key") for the item table's rows: the item id, model,
    condition and run, never the record's key."""
    return [(f"{r.cells[1]} | {r.cells[2]} | {r.cells[3]} | {r.cells[0]}", f"{r.run}::{r.key}") for r in rows]


def _notes(paths: list, errors: list) -> str:
    lines = [f"- **{v.name}**: {note}" for v in _views(paths) for note in v.notes]
    lines += [f"- {e}" for e in errors]
    return "\n".join(lines) or "All runs opened with their outputs, scores and items."


def _legend(views: list) -> str:
    return "\n\n".join(x for x in (correct_legend(views), interval_legend(views)) if x)


def _state(paths: list, errors: list = ()):
    views = _views(paths)
    facets = facet_values(views)
    rows = _rows(paths)
    choices = _choices(paths, rows)
    runs = [(NO_SECOND, NO_SECOND)] + [(v.name, str(n)) for n, v in enumerate(views)]
    return (
        paths,
        _sized(_board(views)),
        _legend(views),
        gr.update(choices=runs, value=NO_SECOND),
        *(gr.update(choices=facets[f], value=[]) for f in FILTERS),
        _sized(_table(rows, False)),
        gr.update(choices=choices, value=choices[0][1] if choices else None),
        _notes(paths, list(errors)),
    )


def load(files, paths, progress=gr.Progress()):
    """Add uploaded runs to the ones already open."""
    if not files:
        raise gr.Error(
            "Upload a zipped run folder, the files of one (results.json, items.jsonl, outputs.jsonl, "
            "run.json), or a scorer's output (.json)."
        )
    progress(0.1, desc="unpacking")
    folder = SCRATCH.folder("upload")
    try:
        staged = stage_uploads([getattr(f, "name", f) for f in files], folder)
    except ValueError as err:
        shutil.rmtree(folder, ignore_errors=True)
        raise gr.Error(str(err))
    new, errors = [], []
    for n, path in enumerate(staged):
        progress(0.2 + 0.8 * n / len(staged), desc=f"opening {Path(path).name}")
        try:
            _register(str(path), open_run(path))
            new.append(str(path))
        except (ValueError, OSError) as err:
            errors.append(f"{Path(path).name}: {err}")
    if not new:
        shutil.rmtree(folder, ignore_errors=True)
        raise gr.Error("Nothing could be opened: " + "; ".join(errors))
    return _state(list(paths or []) + new, errors)


def refilter(paths, second, shown, category, tier, operation, mode):
    rows = _rows(paths or [], (category, tier, operation, mode), second, shown)
    choices = _choices(paths or [], rows)
    return (
        _sized(_table(rows, _second(paths or [], second) is not None)),
        gr.update(choices=choices, value=choices[0][1] if choices else None),
    )


def _one(view, key) -> tuple:
    try:
        d = item_detail(view, key)
    except ValueError as err:  # a malformed record: one line naming the run
        raise gr.Error(str(err))
    return d["audio"], d["page"], d["raw"]


def show(paths, choice, second=NO_SECOND):
    """(A's audio, A's page, B's audio, B's page, the raw records of both) for the chosen item; B is the same
    item in the second run."""
    if not choice:
        raise gr.Error("Choose an item (no row matches the filters, or no run is open).")
    number, _, key = choice.partition("::")
    views = _views(paths or [])
    try:
        view = views[int(number)]
    except (ValueError, IndexError):
        raise gr.Error(f"unknown item {choice!r}; reload the runs")
    audio, page, raw = _one(view, key)
    other = _second(paths or [], second)
    if other is None:
        return audio, page, None, "<p><i>Choose a second run to see its output for this item beside it.</i></p>", raw
    other_key = same_item(view, key, views[other])
    if other_key is None:
        return (
            audio,
            page,
            None,
            f"<p><i>{views[other].name} has no output for this item under this condition.</i></p>",
            raw,
        )
    audio_b, page_b, raw_b = _one(views[other], other_key)
    return audio, page, audio_b, page_b, {view.name: raw, views[other].name: raw_b}


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
    facets = facet_values(views)
    rows = _rows(paths)
    choices = _choices(paths, rows)
    first = choices[0][1] if choices else None
    detail = show(paths, first) if first else EMPTY[1:]
    runs = [(NO_SECOND, NO_SECOND)] + [(v.name, str(n)) for n, v in enumerate(views)]
    with gr.Blocks(title="audioreason results explorer") as demo:
        gr.Markdown(
            "# Results explorer\nScored runs item by item (ARIA-Rubrics, MMAR-Rubrics, AudioSpan, text "
            "prior). Upload a zipped run folder of `audioreason run` + `audioreason score`, its files, or a "
            "scorer's per-item output (`compute(..., return_items=True)` saved as JSON)."
        )
        state = gr.State(paths, delete_callback=forget)
        notes = gr.Markdown(_notes(paths, errors))
        with gr.Row():
            upload = gr.File(label="Runs to add", file_count="multiple", file_types=[".zip", ".json", ".jsonl"])
            add = gr.Button("Open", variant="primary")
        board = gr.Dataframe(_board(views), label="Leaderboard", wrap=True, column_widths=_widths(_board(views)))
        legend = gr.Markdown(_legend(views))
        with gr.Row():
            second = gr.Dropdown(runs, value=NO_SECOND, label="Second run, side by side")
            shown = gr.Radio(list(SHOWN), value="all items", label="Items to list (with a second run)")
        with gr.Row():
            filters = [
                gr.Dropdown(facets[f], value=[], multiselect=True, label=label)
                for f, label in zip(FILTERS, ("category", "duration tier", "anchor operation", "reasoning mode"))
            ]
        table = gr.Dataframe(
            _table(rows, False), label="Items", wrap=True, max_height=320, column_widths=_widths(_table(rows, False))
        )
        item = gr.Dropdown(choices, value=first, label="Item (id | model | condition | run)")
        with gr.Row(equal_height=False):
            with gr.Column():
                audio = gr.Audio(detail[0], label="Audio", type="filepath")
                page = gr.HTML(detail[1])
            with gr.Column():
                audio_b = gr.Audio(detail[2], label="Audio (second run)", type="filepath")
                page_b = gr.HTML(detail[3])
        with gr.Accordion("Raw JSON (the records behind this item)", open=False):
            raw = gr.JSON(detail[4], label="outputs.jsonl, items.jsonl and the benchmark item")
        outputs = [state, board, legend, second, *filters, table, item, notes]
        add.click(load, [upload, state], outputs, api_name="load")
        for control in (second, shown, *filters):
            control.change(refilter, [state, second, shown, *filters], [table, item], api_name=False)
        item.change(show, [state, item, second], [audio, page, audio_b, page_b, raw], api_name="show")
        second.change(show, [state, item, second], [audio, page, audio_b, page_b, raw], api_name=False)
    return demo


if __name__ == "__main__":
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_demo().launch(show_error=True)
