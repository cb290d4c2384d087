"""The audio files a benchmark's metadata names: resolved inside the dataset's folder, checked before use.

A metadata audio path is relative to the folder (an absolute path is taken as it is). It is resolved with
every symlink followed, and refused when its real location is not inside the folder's real location: a
"../" path, an absolute path elsewhere (``/etc/hostname``), a symlink (to a file or to a folder on the way)
that points out. A refused path is never opened, never decoded and never exported; the builders report it
as ``audio_outside_root``. A path inside is then checked cheaply: it must be a regular file whose header a
reader opens (``audioreason.audio.stream.audio_info``: soundfile, else torchcodec; a few kB read, no
decoding), so a text file given as audio is ``unreadable_audio`` at build time, not an error mid-run.
The folder itself may be a symlink (it is resolved first); audio kept on another disk must be reached
through the folder by a bind mount, not a symlink.

The same rule guards what leaves or enters a Hub-ready folder: ``check_inside(dataset, root)`` refuses a
dataset whose audio (stored as a file path, not embedded bytes) lies outside ``root``; the exporters run it
before writing a byte and the Hub-folder loader runs it on what it loaded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

from ..audio.errors import AudioError
from .validation import ValidationReport

if TYPE_CHECKING:
    import datasets

    from ..audio.stream import AudioInfo


class AudioPathError(ValueError):
    """A metadata audio path that cannot be used: it leads outside the folder (``outside`` is True), or it
    cannot be resolved at all (a NUL byte, a symlink loop)."""

    def __init__(self, message: str, outside: bool):
        super().__init__(message)
        self.outside = outside


def resolve_inside(
    root: Union[str, os.PathLike], name: Union[str, os.PathLike], folders: Optional[dict[str, str]] = None
) -> Path:
    """The real path of ``name`` (relative to ``root``, or absolute), every symlink followed; raises
    AudioPathError unless it lies inside the real ``root``. ``folders``: resolved folders kept between calls
    (``AudioFiles`` keeps one), so each folder is resolved once, not once per file in it."""
    folders = {} if folders is None else folders
    real_root = _resolved(folders, os.fspath(root))
    try:
        path = _real_path(folders, real_root, os.fspath(name))
    except (OSError, RuntimeError, ValueError) as err:  # ValueError: NUL byte; RuntimeError: symlink loop
        raise AudioPathError(f"{str(name)!r} cannot be resolved ({err})", outside=False) from None
    if not (path == real_root or path.startswith(real_root.rstrip(os.sep) + os.sep)):
        raise AudioPathError(
            f"{str(name)!r} resolves to {path}, outside the raw folder {real_root} "
            "(refused: never read, never exported)",
            outside=True,
        )
    return Path(path)


def _resolved(folders: dict[str, str], folder: str) -> str:
    if folder not in folders:
        folders[folder] = str(Path(folder).resolve())
    return folders[folder]


def _real_path(folders: dict[str, str], real_root: str, name: str) -> str:
    """``str((Path(real_root) / name).resolve())``: the folder part resolved once (cached), then the file
    name, which adds nothing to its real folder unless it is itself a symlink."""
    head, tail = os.path.split(name)
    if "\0" in name or tail in ("", ".", ".."):
        return str((Path(real_root) / name).resolve())
    path = os.path.join(_resolved(folders, os.path.join(real_root, head)), tail)
    return str(Path(path).resolve()) if os.path.islink(path) else path


def audio_info(path: Path) -> AudioInfo:
    """The file's header (``audioreason.audio.stream.audio_info``); the audio readers are imported with the
    first file there is to read, so a folder without audio is checked without them."""
    from ..audio.stream import audio_info as read_header

    return read_header(path)


class AudioFiles:
    """Resolves and checks the audio paths of one raw folder, reporting every problem under its item.

    Each file's header is read once, however many items share it. ``candidates`` lists every path inside
    the folder that an item names, present or not (the build's cache key depends on them).
    """

    def __init__(self, root: Union[str, os.PathLike], report: ValidationReport):
        self.root = Path(root).resolve()
        self.report = report
        self.candidates: list[Path] = []
        self._folders: dict[str, str] = {}  # resolved folders (resolve_inside)
        self._headers: dict[Path, Union[AudioInfo, str]] = {}  # header info, or why no reader opens the file

    def check(self, item_id: str, name: str) -> tuple[Optional[Path], Optional[AudioInfo]]:
        """(real path, header info) of a usable file, else (None, None) once the reason is reported:
        ``audio_outside_root``, ``missing_audio`` (absent, not a regular file, or unresolvable) or
        ``unreadable_audio``."""
        try:
            path = resolve_inside(self.root, name, self._folders)
        except AudioPathError as err:
            self.report.add("audio_outside_root" if err.outside else "missing_audio", item_id, str(err))
            return None, None
        self.candidates.append(path)
        if not path.is_file():
            self.report.add("missing_audio", item_id, str(path))
            return None, None
        if path not in self._headers:
            try:
                self._headers[path] = audio_info(path)
            except AudioError as err:
                self._headers[path] = str(err)
        header = self._headers[path]
        if isinstance(header, str):
            self.report.add("unreadable_audio", item_id, header)
            return None, None
        return path, header


def check_inside(dataset: datasets.Dataset, root: Union[str, os.PathLike], *, action: str) -> None:
    """Raise ValueError naming every item whose audio is a file path (no embedded bytes) that resolves
    outside ``root``. Reads only the Arrow column (no decoding, no file opened)."""
    if "audio" not in dataset.column_names:
        return
    real_root = Path(root).resolve()
    columns = ["audio"] + (["id"] if "id" in dataset.column_names else [])
    table = dataset.select_columns(columns).with_format("arrow")[:]
    ids = table.column("id").to_pylist() if "id" in columns else list(range(len(table)))
    outside: list[str] = []
    row = 0
    for chunk in table.column("audio").chunks:
        fields = dict(zip((f.name for f in chunk.type), chunk.flatten()))  # flatten: offsets and nulls applied
        paths, embedded = fields["path"].to_pylist(), fields["bytes"].is_valid().to_pylist()
        for present, path, has_bytes in zip(chunk.is_valid().to_pylist(), paths, embedded):
            if present and not has_bytes and path:
                try:
                    resolve_inside(real_root, path)
                except AudioPathError:
                    outside.append(f"  {ids[row]}: {path}")
            row += 1
    if outside:
        shown = "\n".join(outside[:20]) + (f"\n  ... (+{len(outside) - 20})" if len(outside) > 20 else "")
        raise ValueError(
            f"{len(outside)} audio file(s) lie outside {real_root} (a path or symlink that leaves "
            f"it); {action}:\n{shown}"
        )


__all__ = ["AudioFiles", "AudioPathError", "check_inside", "resolve_inside"]
