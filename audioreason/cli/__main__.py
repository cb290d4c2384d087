"""``python -m audioreason.cli`` and the ``audioreason`` script: the command line, ending the process without
tearing down its modules."""

import sys

from audioreason.cli import main


def exit_process(status: object) -> None:
    """End the process as ``sys.exit(status)`` would, after the exit handlers and a flush of stdout and stderr,
    but without Python's teardown of every loaded module: after a run that has imported torch, transformers
    and datasets that teardown takes about 2 s on 2 CPU cores, and it has nothing left to write (the runner
    closes and fsyncs its files itself). With a live non-daemon thread the ordinary exit is kept, so that
    it is waited for."""
    import atexit
    import os
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(status)
    if status is None:
        code = 0
    elif isinstance(status, int):
        code = status
    else:  # sys.exit("message"): the message on stderr, status 1
        print(status, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be written anyway
            code = code or 1
    os._exit(code)


def console() -> None:
    """The ``audioreason`` console script and ``python -m``: ``main()``, then ``exit_process``."""
    try:
        status = main()
    except SystemExit as stop:  # argparse's and the commands' own exits (usage errors, --help)
        status = stop.code
    exit_process(status)


if __name__ == "__main__":
    console()
