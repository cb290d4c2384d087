"""The errors the library raises for a caller's mistake, and how one reads as one line. The command line maps
them to exit statuses (``UsageError`` 2, ``DataError`` 3); they live at the bottom so that any layer can raise
them without importing the command line."""

from __future__ import annotations


class UsageError(Exception):
    """A command-line argument that cannot work; printed as one line, exit status 2."""


class DataError(Exception):
    """A file named on the command line exists but its content cannot be used (a manifest field, an audio
    file, a path a manifest gives); printed as one line, exit status 3."""


def describe_error(err: BaseException, limit: int = 400) -> str:
    """An error as one line: its type and its message with line breaks folded, cut at ``limit`` characters
    (``--debug`` shows everything)."""
    text = "; ".join(line.strip() for line in str(err).splitlines() if line.strip()) or "(no message)"
    if len(text) > limit:
        text = text[:limit].rstrip() + " ... (cut; --debug shows the whole message)"
    return f"{type(err).__name__}: {text}"
