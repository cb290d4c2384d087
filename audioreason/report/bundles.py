"""Runs into and out of a Space: ``export_bundle`` packs a scored run with its items' metadata and audio (a
*bundle*, read as any run: ``run_view``); ``stage_uploads`` turns uploaded files into paths ``runs.open_run``
takes, an uploaded zip within caps (``MAX_ZIP_BYTES``, ``MAX_ZIP_MEMBERS``), checked from its headers and again
while extracting."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Sequence

from .load import ITEMS_FILE, RESULTS_FILE
from .run_view import BENCHMARK_ITEMS_FILE, OUTPUTS_FILE, RUN_FILE
from .runs import open_run

# ---------------------------------------------------------------------------------------------
# What a Space ships
# ---------------------------------------------------------------------------------------------


def export_bundle(run_folder: Any, out: Any) -> Path:
    """Copy a scored run into ``out`` with its items' metadata and audio (``benchmark_items.jsonl`` and
    ``audio/``), so that it opens with no benchmark folder. Returns ``out``."""
    view = open_run(run_folder)
    if not view.outputs or not view.results.entries:
        raise ValueError(f"{run_folder}: a bundle needs a scored run folder (run.json, outputs.jsonl, results.json)")
    if not view.items:
        raise ValueError(
            f"{run_folder}: the benchmark items cannot be read ({'; '.join(view.notes)}); a bundle "
            "ships the questions and audio"
        )
    out = Path(out)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    for name in (RUN_FILE, OUTPUTS_FILE, RESULTS_FILE, ITEMS_FILE):
        if (view.folder / name).is_file():
            shutil.copyfile(view.folder / name, out / name)
    used = {r.get("id") for r in view.outputs.values()}
    with open(out / BENCHMARK_ITEMS_FILE, "w", encoding="utf-8") as f:
        for n, (item_id, item) in enumerate(view.items.items()):
            if item_id not in used:
                continue
            item = dict(item)
            source = Path(item["audio"]) if item.get("audio") else None
            if source is not None and source.is_file():
                target = Path("audio") / f"{n:05d}{source.suffix}"
                shutil.copyfile(source, out / target)
                item["audio"] = str(target)
            else:
                item["audio"] = None
            f.write(json.dumps(item, ensure_ascii=False, default=str) + "\n")
    return out


# ---------------------------------------------------------------------------------------------
# What a Space receives
# ---------------------------------------------------------------------------------------------

RUN_FOLDER_FILES = (RUN_FILE, OUTPUTS_FILE, RESULTS_FILE, ITEMS_FILE, BENCHMARK_ITEMS_FILE)
# What an uploaded zip may expand to: a bundle of results with its items' audio fits easily; a zip bomb does not.
# A bigger run opens from its folder (``python app.py RUN_DIR`` or ``open_run``), which has no cap.
MAX_ZIP_BYTES = 200 * 2**20
MAX_ZIP_MEMBERS = 5000
_CHUNK = 2**20


def _unzip(path: Path, target: Path, max_bytes: int, max_members: int) -> None:
    """Extract a zip into ``target`` within the caps: refused from its headers first (member count, declared
    sizes, unsafe names), then counted while extracting, since headers can lie."""
    import zipfile

    def too_big(size: int) -> ValueError:
        return ValueError(
            f"{path.name}: expands to {size:,} bytes or more; an uploaded zip may expand to at most "
            f"{max_bytes:,} (open a bigger run from its folder)"
        )

    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            if len(members) > max_members:
                raise ValueError(
                    f"{path.name}: {len(members):,} files in the zip; an upload may hold at most {max_members:,}"
                )
            unsafe = [m.filename for m in members if m.filename.startswith("/") or ".." in Path(m.filename).parts]
            if unsafe:
                raise ValueError(f"{path.name}: unsafe paths in the zip: {unsafe[:3]}")
            declared = sum(m.file_size for m in members)
            if declared > max_bytes:
                raise too_big(declared)
            written = 0
            for member in members:
                out = target / member.filename
                if member.is_dir():
                    out.mkdir(parents=True, exist_ok=True)
                    continue
                out.parent.mkdir(parents=True, exist_ok=True)
                with z.open(member) as source, open(out, "wb") as sink:
                    while chunk := source.read(_CHUNK):
                        written += len(chunk)
                        if written > max_bytes:
                            raise too_big(written)
                        sink.write(chunk)
    # What zipfile raises on an upload it cannot unpack: a damaged archive (BadZipFile, EOFError), a member
    # needing ZIP64 (LargeZipFile), an unsupported compression method (NotImplementedError), an encrypted
    # member (RuntimeError), a file system refusal (OSError): each is the upload's fault, named in one line.
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, OSError) as err:
        raise ValueError(f"{path.name}: cannot be unpacked ({type(err).__name__}: {err})") from None


def stage_uploads(
    files: Sequence[Any], dest: Any, max_bytes: int = MAX_ZIP_BYTES, max_members: int = MAX_ZIP_MEMBERS
) -> list[Path]:
    """Uploaded files as paths ``open_run`` and ``load_results`` take: a .zip is unpacked (at most
    ``max_bytes`` uncompressed in ``max_members`` files) and each folder in it that holds results.json or
    run.json is one run; loose run-folder files (run.json, outputs.jsonl, results.json, items.jsonl,
    benchmark_items.jsonl) are put together as one run; any other .json file is a scorer's own output."""
    dest = Path(dest)
    loose, paths = dest / "uploaded-run", []
    for n, given in enumerate(files or []):
        path = Path(given)
        if path.suffix == ".zip":
            target = dest / f"zip-{n}"
            try:
                _unzip(path, target, max_bytes, max_members)
            except ValueError:
                shutil.rmtree(target, ignore_errors=True)  # nothing half-extracted is left behind
                raise
            found = sorted({p.parent for p in target.rglob("*") if p.name in (RESULTS_FILE, RUN_FILE)})
            if not found:
                raise ValueError(f"{path.name}: the zip holds no run folder (no results.json or run.json in it)")
            paths += found
        elif path.name in RUN_FOLDER_FILES:
            loose.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, loose / path.name)
        elif path.suffix == ".json":
            paths.append(path)
        else:
            raise ValueError(
                f"{path.name}: give a zipped run folder, run-folder files ({', '.join(RUN_FOLDER_FILES)}) "
                "or a scorer's output (.json)"
            )
    if loose.is_dir():
        paths.append(loose)
    return paths


__all__ = ["MAX_ZIP_BYTES", "MAX_ZIP_MEMBERS", "RUN_FOLDER_FILES", "export_bundle", "stage_uploads"]
