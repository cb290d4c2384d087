"""Fencing judged text inside a prompt so that it cannot end its own fence.

A judged submission sits between an opening and a closing marker. With fixed markers, a submission that
writes the closing marker itself puts what follows it outside the submission, where the judge may read it
as instructions. Here each marker carries a tag derived from the text (the first 12 hex digits of its
sha256), so the markers are the same for the same text (the judge cache still works) and a text cannot
contain its own closing marker: it would have to contain a hash of itself.
"""

from __future__ import annotations

import hashlib

TAG_CHARS = 12


def fence(text: str, label: str) -> tuple[str, str, str]:
    """(opening marker, closing marker, the fenced block: opening, text, closing on their own lines)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    tag = digest[:TAG_CHARS]
    while f"{label}-{tag}" in text:  # only by chance or by a hash pre-image: move on to more digits
        digest = hashlib.sha256(digest.encode("ascii")).hexdigest()
        tag = digest[:TAG_CHARS]
    opening, closing = f"<<<{label}-{tag}", f"{label}-{tag}>>>"
    return opening, closing, f"{opening}\n{text}\n{closing}"


__all__ = ["fence"]
