"""Report Space: the HTML report of `audioreason report` for scored results, in the browser. Upload
results.json files of `audioreason score` (or zipped run folders, or any scorer's output saved as JSON) and
get the tables, the figures and ARIA-Rubrics §4's validity statistics, with the self-contained HTML file and
its Markdown tables to download.

It opens with the runs in ``runs/`` beside this file (a built Space: ``audioreason space build report``),
else the results given on the command line (``python app.py RESULTS...``), else the demo's run. All the
logic is in ``audioreason.report``. Uploads are unpacked into a folder removed once the report is drawn;
each report's files live an hour (Gradio serves its own copies), then go with the next report."""

import os
import shutil
import sys

import gradio as gr

from audioreason.apps.scratch import Scratch
from audioreason.apps.spaces import opening_runs
from audioreason.report import ResultsError, build_report
from audioreason.report.bundles import stage_uploads

SCRATCH = Scratch("report", max_age_s=3600.0)


def initial_results() -> list:
    return opening_runs(__file__, sys.argv[1:] if __name__ == "__main__" else [])


def render(paths: list, title: str, progress=gr.Progress()):
    """(the report as HTML, the files to download, a status line)."""
    if not paths:
        raise gr.Error("Upload results.json of `audioreason score`, a zipped run folder, or a scorer's output (.json).")
    progress(0.1, desc=f"reading {len(paths)} result file(s) and drawing the figures")
    out = SCRATCH.folder("report") / "report.html"
    try:
        summary = build_report(paths, out, title=title or "audioreason report")
    except (ResultsError, ValueError) as err:
        raise gr.Error(str(err))
    progress(1.0, desc="done")
    status = (
        f"{summary['entries']} results ({', '.join(summary['scorers'])}): {len(summary['figures'])} figures, "
        f"{len(summary['tables'])} tables"
        + "".join(f"\n- not run: {n['scorer']} ({n['status']}): {n['reason']}" for n in summary["not_run"])
    )
    page = out.read_text(encoding="utf-8")
    body = page[page.index("<body>") + len("<body>") : page.rindex("</body>")]
    style = page[page.index("<style>") : page.index("</style>") + len("</style>")]
    return style + body, [summary["html"], summary["markdown"]], status


def upload(files, title, progress=gr.Progress()):
    if not files:
        raise gr.Error("Upload results.json of `audioreason score`, a zipped run folder, or a scorer's output (.json).")
    staged = SCRATCH.folder("upload")
    try:
        try:
            paths = stage_uploads([getattr(f, "name", f) for f in files], staged)
        except ValueError as err:
            raise gr.Error(str(err))
        return render([str(p) for p in paths], title, progress)
    finally:  # the report holds what it needs of the uploads
        shutil.rmtree(staged, ignore_errors=True)


def build_demo(paths=None) -> gr.Blocks:
    paths = initial_results() if paths is None else [str(p) for p in paths]
    with gr.Blocks(title="audioreason report") as demo:
        gr.Markdown(
            "# audioreason report\nTables, figures and validity statistics of scored results (the HTML of "
            "`audioreason report`). It opens with the bundled run; upload `results.json` of `audioreason "
            "score`, a zipped run folder, or a scorer's output saved as JSON to see yours."
        )
        with gr.Row():
            files = gr.File(label="Results to report on", file_count="multiple", file_types=[".json", ".zip", ".jsonl"])
            with gr.Column():
                title = gr.Textbox("audioreason report", label="Title")
                again = gr.Button("Report on the bundled run", variant="secondary")
                make = gr.Button("Report on the uploaded files", variant="primary")
        status = gr.Markdown()
        downloads = gr.File(label="report.html and report.md", file_count="multiple")
        page = gr.HTML()
        bundled = gr.State(paths)
        make.click(upload, [files, title], [page, downloads, status], api_name="upload")
        again.click(render, [bundled, title], [page, downloads, status], api_name="render")
        if paths:
            demo.load(render, [bundled, title], [page, downloads, status])
    return demo


if __name__ == "__main__":
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_demo().launch(show_error=True)
