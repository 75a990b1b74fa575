"""Load beside the tests: CPU-bound busy loops that stop by themselves (issue 27).

``python .ci/load.py [--procs 2] [--seconds 3600]`` starts ``--procs`` worker processes, each a pure-Python
busy loop, so that the suite is run the way it runs on a developer's busy laptop.  Every worker stops on its
own after ``--seconds``, or as soon as the process that started this script is gone (its parent pid
changes), so a CI run that dies or is interrupted never leaves load behind.  SIGTERM or SIGINT to this
script stops the workers at once.  ``.ci/run`` starts it beside the whole run when ``KG_NEO4J_CI_LOAD=1``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import time
from types import FrameType


def burn(seconds: float, watch: int) -> None:
    """Spin until ``seconds`` have passed, this script is gone (the worker's parent changed) or process
    ``watch`` (whoever started this script) has exited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    script = os.getppid()
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for i in range(200_000):  # about a few ms of work between checks
            x = (x * 31 + i) % 1_000_003
        if os.getppid() != script or not _alive(watch):
            return


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--procs", type=int, default=2, help="busy processes (default 2)")
    ap.add_argument("--seconds", type=float, default=3600, help="stop after this long (default 3600)")
    args = ap.parse_args(argv)
    if args.procs < 1:
        ap.error("--procs: must be at least 1")
    if args.seconds <= 0:
        ap.error("--seconds: must be positive")
    parent = os.getppid()
    workers = [
        multiprocessing.Process(target=burn, args=(args.seconds, parent), daemon=True)
        for _ in range(args.procs)
    ]
    for w in workers:
        w.start()
    print(
        f"load: {args.procs} busy processes (pids {', '.join(str(w.pid) for w in workers)}) for at most "
        f"{args.seconds:g} s or until pid {parent} exits",
        file=sys.stderr,
        flush=True,
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        for w in workers:
            w.terminate()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for w in workers:
        w.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
