"""A file read again whenever it changes, checked on each use (the grants file, a local JWKS file).

Each :meth:`WatchedFile.get` stats the file (one system call) and parses it again when its
(mtime_ns, size, inode) changed: a revocation or a key rotation is seen by the next request, with no
timer and no thread.  ``inode`` catches an atomic replace (temp file + rename) within one mtime tick.

Fail closed: while the file is missing or does not parse, :meth:`get` raises :class:`Unreadable`
(the callers resolve no principal), one error is logged per distinct problem, and the next change
that parses again is used.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

log = logging.getLogger("kg_neo4j.auth")

T = TypeVar("T")
Signature = tuple[int, int, int]
#: A file whose mtime is younger than this is read again at the next use (2 s: FAT's mtime tick).
_RACY_NS = 2_000_000_000


class Unreadable(Exception):
    """The file is missing, unreadable or does not parse; ``str(exc)`` names the file and the problem."""


class WatchedFile(Generic[T]):
    """``parse(text)`` of the file at ``path``, kept until the file changes.  ``parse`` raises
    ValueError (or OSError) with a message naming what is wrong."""

    def __init__(self, path: Path, parse: Callable[[str], T], what: str) -> None:
        self.path = path
        self._parse = parse
        self._what = what
        self._signature: Signature | None = None
        self._value: T | None = None
        self._text: str | None = None
        self._problem: str | None = None
        self._logged: str | None = None

    def get(self) -> T:
        """The parsed content as of now; :class:`Unreadable` while it is missing or broken."""
        try:
            st = os.stat(self.path)
            signature: Signature | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError as exc:
            signature = None
            self._fail(f"cannot read the {self._what} {self.path}: {exc.strerror}")
        if signature is not None and signature != self._signature:
            self._signature = signature
            try:
                text = self.path.read_text(encoding="utf-8")
                if text != self._text or self._problem is not None:  # parsing costs more than reading
                    self._text = None
                    self._value, self._problem = self._parse(text), None
                    self._text = text
            except (OSError, ValueError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                self._fail(f"the {self._what} {self.path} does not parse: {reason}")
            else:
                if self._logged is not None:
                    log.warning("the %s %s parses again: using it", self._what, self.path)
                self._logged = None
        if signature is None or time.time_ns() - signature[0] < _RACY_NS:
            # a file changed within the last moments may change again within the same mtime tick
            # (mtime is only as fine as the kernel's coarse clock, 2 s on FAT) and keep its size and
            # inode: read it again next time (parsed again only if its text differs) until it is older
            self._signature = None
        if self._problem is not None or self._value is None:
            raise Unreadable(self._problem or f"the {self._what} {self.path} was never read")
        return self._value

    def _fail(self, problem: str) -> None:
        self._value, self._problem, self._text = None, problem, None
        if problem != self._logged:  # one line per distinct problem, not one per request
            log.error("%s; refusing the tokens it vouches for until it is fixed", problem)
            self._logged = problem
