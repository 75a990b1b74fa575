"""How long work reports its progress: a bar per step on stderr in the CLI, nothing in a tool call."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

#: Told a number: a bar's total, or how far it advanced.
Count = Callable[[int], None]
#: A progress reporter: a step's name -> (set its total, advance by n).
Progress = Callable[[str], tuple[Count, Count]]


def no_progress(_step: str) -> tuple[Count, Count]:
    """A reporter that shows nothing."""
    return (lambda _n: None), (lambda _n: None)


@contextlib.contextmanager
def stderr_bars(shown: bool, unit: str) -> Iterator[Progress]:
    """A reporter drawing a tqdm bar per step on stderr (stdout may be the answer), hidden unless
    ``shown``; the bars are closed on leaving."""
    from tqdm import tqdm

    opened: list[Any] = []

    def bar(step: str) -> tuple[Count, Count]:
        b = tqdm(total=0, unit=unit, desc=step, file=sys.stderr, disable=not shown, leave=True)
        opened.append(b)

        def total(n: int) -> None:
            b.total = n
            b.refresh()

        return total, b.update

    try:
        yield bar
    finally:
        for b in opened:
            b.close()
