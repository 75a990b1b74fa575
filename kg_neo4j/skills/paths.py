"""**Safe paths.** ``resolve_skill_path(root, rel)`` is the only way a skill file is found:
``rel`` must be a relative path (no ``..`` component, no drive, no NUL) to an existing
regular ``.md`` file of at most ``MAX_SKILL_FILE_BYTES`` whose real path (symlinks
resolved) lies inside the real ``root``.  Anything else is a ``ValidationError`` naming
the path as given (never where a link points).  ``read_skill_file`` opens the resolved
file without following a link in its last component and reads at most the cap, so
nothing outside the root is ever read.  As in the example of docs/knowledge-model.md#skill-files
(``skill_paths=["skills/coding/..."]``), a path that starts with the root directory's own
name (``skills/...`` for a root called ``skills``) is also tried without that first part.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from pathlib import Path, PurePosixPath, PureWindowsPath

from kg_neo4j.errors import ValidationError
from kg_neo4j.skills.limits import MAX_PATH_CHARS, MAX_SKILL_FILE_BYTES, SKILL_SUFFIX

log = logging.getLogger("kg_neo4j.skills")


def skills_root(root: Path | str) -> Path:
    """``root`` resolved (symlinks and all); a ValidationError when it is not a directory."""
    try:
        real = Path(root).expanduser().resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ValidationError(f"skills directory {str(root)!r} does not exist", field="skills_dir") from exc
    if not real.is_dir():
        raise ValidationError(f"skills directory {str(root)!r} is not a directory", field="skills_dir")
    return real


def _relative_parts(rel: object) -> tuple[str, ...]:
    """The components of a caller's relative path, or a ValidationError saying why it is refused."""
    if not isinstance(rel, str):
        raise ValidationError(f"a skill path must be a string, got {type(rel).__name__}", field="skill_paths")
    shown = rel if len(rel) <= 200 else rel[:200] + "..."
    if not rel.strip():
        raise ValidationError("a skill path must not be empty", field="skill_paths")
    if len(rel) > MAX_PATH_CHARS:
        raise ValidationError(
            f"skill path {shown!r} is longer than {MAX_PATH_CHARS} characters", field="skill_paths"
        )
    if "\x00" in rel:
        raise ValidationError(f"skill path {shown!r} contains a NUL character", field="skill_paths")
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or PureWindowsPath(rel).drive:
        raise ValidationError(
            f"skill path {shown!r} is absolute; give a path relative to the skills directory",
            field="skill_paths",
        )
    parts = tuple(p for p in re.split(r"[/\\]", rel) if p not in ("", "."))
    if ".." in parts:
        raise ValidationError(
            f"skill path {shown!r} contains '..'; only paths inside the skills directory are read",
            field="skill_paths",
        )
    if not parts:
        raise ValidationError(
            f"skill path {shown!r} names the skills directory itself, not a .md file", field="skill_paths"
        )
    return parts


def resolve_skill_path(root: Path, rel: str) -> Path:
    """The real path of the skill file ``rel`` under ``root``; ValidationError unless it is an
    existing regular ``.md`` file of at most MAX_SKILL_FILE_BYTES inside ``root`` (after
    resolving symlinks).  Reads nothing: only resolves and stats."""
    base = skills_root(root)
    parts = _relative_parts(rel)
    shown = rel if len(rel) <= 200 else rel[:200] + "..."
    candidates = [parts]
    if len(parts) > 1 and parts[0] == base.name:  # the docs' example writes skill_paths=["skills/coding/..."]
        candidates.append(parts[1:])
    found: Path | None = None
    for cand in candidates:
        path = base.joinpath(*cand)
        if path.exists() or path.is_symlink():
            found = path
            break
    if found is None:
        raise ValidationError(
            f"skill path {shown!r}: no such file in the skills directory", field="skill_paths"
        )
    if not found.name.lower().endswith(SKILL_SUFFIX):
        raise ValidationError(
            f"skill path {shown!r} is not a markdown file (only {SKILL_SUFFIX} files are read)",
            field="skill_paths",
        )
    try:
        real = found.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # dangling or looping link
        raise ValidationError(f"skill path {shown!r} is a broken link", field="skill_paths") from exc
    if real != base and not real.is_relative_to(base):
        raise ValidationError(
            f"skill path {shown!r} leads outside the skills directory (through a symbolic "
            "link); only files inside it are read",
            field="skill_paths",
        )
    if not real.name.lower().endswith(SKILL_SUFFIX):
        raise ValidationError(
            f"skill path {shown!r} links to a file that is not a {SKILL_SUFFIX} file", field="skill_paths"
        )
    st = real.stat()
    if stat.S_ISDIR(st.st_mode):
        raise ValidationError(
            f"skill path {shown!r} is a directory; name a {SKILL_SUFFIX} file", field="skill_paths"
        )
    if not stat.S_ISREG(st.st_mode):
        raise ValidationError(f"skill path {shown!r} is not a regular file", field="skill_paths")
    if st.st_size > MAX_SKILL_FILE_BYTES:
        raise ValidationError(
            f"skill path {shown!r} is {st.st_size} bytes; skill files of at most "
            f"{MAX_SKILL_FILE_BYTES} bytes are read",
            field="skill_paths",
        )
    return real


def read_skill_file(root: Path, rel: str) -> tuple[Path, str]:
    """``(real path, text)`` of the skill file ``rel`` under ``root`` (see resolve_skill_path).

    The file is opened without following a link in its last component and at most
    MAX_SKILL_FILE_BYTES + 1 bytes are read, so a file swapped after the check cannot make
    this read outside the root or read without bound."""
    real = resolve_skill_path(root, rel)
    shown = rel if len(rel) <= 200 else rel[:200] + "..."
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise ValidationError(
            f"skill path {shown!r} cannot be opened: {exc.strerror}", field="skill_paths"
        ) from exc
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValidationError(f"skill path {shown!r} is not a regular file", field="skill_paths")
        data = fh.read(MAX_SKILL_FILE_BYTES + 1)
    if len(data) > MAX_SKILL_FILE_BYTES:
        raise ValidationError(
            f"skill path {shown!r} is larger than {MAX_SKILL_FILE_BYTES} bytes", field="skill_paths"
        )
    if b"\x00" in data:
        raise ValidationError(f"skill path {shown!r} is not a text file", field="skill_paths")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"skill path {shown!r} is not UTF-8 text (byte {exc.start})", field="skill_paths"
        ) from exc
    return real, text


def list_skill_files(root: Path) -> list[str]:
    """Relative POSIX paths of the ``.md`` files under ``root``, sorted; hidden (``.``) files
    and directories are left out and directory links are not followed (a file link is
    listed, and resolve_skill_path decides whether it may be read)."""
    base = skills_root(root)
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel_dir = Path(dirpath).relative_to(base)
        found.extend(
            (rel_dir / name).as_posix()
            for name in filenames
            if not name.startswith(".") and name.lower().endswith(SKILL_SUFFIX)
        )
    return sorted(found)
