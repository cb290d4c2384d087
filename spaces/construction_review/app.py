"""Construction review Space: the human review of an AudioSpan-style benchmark built by ``audioreason construct``
(AudioSpan, arXiv:2608.26431, §4.5). Item by item it plays the stretch of audio the item cites (and the edited
audio at each anchor position), shows the open-ended item with its reference answer and criteria and the
multiple-choice item with its options and marked answer, and appends accept / fix / reject decisions to the
folder's ``review.jsonl``, which the AudioSpan builder honours (rejected items left out, fixes applied).

It opens the construction folder given on the command line (``python app.py BENCH``), else the one named by
``$AUDIOREASON_REVIEW_FOLDER``, else a tiny synthesized example. All the logic is in ``audioreason.apps.review``."""

import os
import sys

from audioreason.apps.review import build_review_app, opening_folder


def initial_folder() -> str:
    return opening_folder(sys.argv[1:] if __name__ == "__main__" else [])


def build_demo(folder=None):
    return build_review_app(folder or initial_folder())


if __name__ == "__main__":
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    build_demo().launch(show_error=True)
