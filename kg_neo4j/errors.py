"""One error family.  Every error a user can cause is a ``KgError``; the server maps
them to MCP tool errors in one place (``kg_neo4j.server.registry.call``)."""

from __future__ import annotations


class KgError(Exception):
    """Base of every kg-neo4j error; ``str(err)`` says what to fix, and ``suggestions`` may name
    concrete next steps (MemoryMesh's error answers list them)."""

    def __init__(self, message: str = "", *, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.suggestions = suggestions


class ValidationError(KgError):
    """Input that breaks a rule (size, emptiness, ranges); nothing was written."""

    def __init__(self, message: str, *, field: str | None = None, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(message, suggestions=suggestions)
        self.field = field


class ConflictError(ValidationError):
    """A name or key that must be new already exists; nothing was written."""


class NotFoundError(KgError):
    """A named thing that must exist does not, e.g. ``NotFoundError("entity", "Bob")``."""

    def __init__(
        self, kind: str, name: str, message: str | None = None, *, suggestions: tuple[str, ...] = ()
    ) -> None:
        super().__init__(
            message or f"{kind.capitalize()} with name {name} not found", suggestions=suggestions
        )
        self.kind = kind
        self.name = name


class TooLargeError(KgError):
    """An answer would exceed the server-wide cap; the message says how to page."""


class ConfigError(KgError):
    """Bad configuration, or a missing prerequisite such as Java or Maven."""


class CypherFileError(KgError):
    """A malformed ``cypher/*.cypher`` file; the message carries ``file:line``."""


class Neo4jUnavailableError(KgError):
    """Neo4j could not be reached or started."""


class SettingError(ConfigError):
    """A setting with a bad value: names its environment variable or flag, the value and what is allowed."""

    def __init__(
        self, source: str, shown: str, allowed: str, *, from_flag: bool, more: list[str] | None = None
    ) -> None:
        # argparse's own wording for a flag ("argument --port: ..."), shell-like for a variable
        first = (
            f"argument {source}: must be {allowed}; got {shown}"
            if from_flag
            else f"{source} must be {allowed}; got {shown}"
        )
        super().__init__("; also ".join([first, *(more or [])]))
        self.source = source
        self.from_flag = from_flag
