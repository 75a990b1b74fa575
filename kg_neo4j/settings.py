"""The one place that reads the environment.

Every setting has an environment variable (shown in the table of docs/configuration.md);
CLI flags override them.  Nothing else in the package calls ``os.getenv``.
A bad value, from either, is a :class:`~kg_neo4j.errors.SettingError` naming the
variable or flag, the value and what is allowed (see :func:`load`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import pydantic
from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from kg_neo4j.errors import SettingError

Transport = Literal["stdio", "http"]

#: Profiles known to ``--tools``; the server module maps each to its tool list.
PROFILES = ("reference", "default", "memorymesh", "knowledge", "all")

MAX_NAMESPACE_CHARS = 255

#: URI schemes of the Bolt driver (the driver's ``http(s)`` preview needs extras we do not ship).
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
#: Levels both Python's logging and uvicorn know (any case); WARN and FATAL are read as WARNING and CRITICAL.
LOG_LEVELS = {
    "DEBUG": "DEBUG",
    "INFO": "INFO",
    "WARNING": "WARNING",
    "WARN": "WARNING",
    "ERROR": "ERROR",
    "CRITICAL": "CRITICAL",
    "FATAL": "CRITICAL",
}
#: A browser ``Origin`` header: scheme://host[:port], nothing after (the HTTP guard compares whole strings).
_ORIGIN_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s]+")

Port = Annotated[int, Field(ge=1, le=65535)]
#: A Claude Code tool name (``Edit``, ``Bash``, ``mcp__server__tool``); ``*`` guards every tool.
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.:*-]+")
Positive = Annotated[int, Field(ge=1)]

#: What each checked setting must be (the end of "X must be ...; got 'v'").
ALLOWED: dict[str, str] = {
    "neo4j_uri": f"a {', '.join(s + '://' for s in NEO4J_SCHEMES)} URI with a host (port 1-65535), no user:password@ "
    "(they go in NEO4J_USERNAME / NEO4J_PASSWORD), and a ?query only after neo4j schemes",
    "namespace": f"a non-empty string of at most {MAX_NAMESPACE_CHARS} characters",
    "transport": "one of stdio, http",
    "tools": f"one of {', '.join(PROFILES)}",
    "host": "a non-empty host name or IP address",
    "port": "an integer from 1 to 65535",
    "allowed_origins": 'a JSON list of origins (scheme://host[:port]), e.g. ["https://app.example.com"]',
    "hook_budget_chars": "an integer >= 1",
    "hook_time_budget": "a number of seconds above 0 and at most 60",
    "hook_corrections": "true or false",
    "hook_guard_tools": "a comma-separated list of tool names (e.g. Edit,Write,Bash; * for every tool)",
    "hook_search_url": "the http(s) URL of a running `kg-neo4j serve --transport http` endpoint, "
    "e.g. http://127.0.0.1:8000/mcp",
    "max_answer_bytes": "an integer >= 1",
    "max_batch_items": "an integer >= 1",
    "local_bolt_port": "an integer from 1 to 65535",
    "local_http_port": "an integer from 1 to 65535",
    "local_guide_port": "an integer from 1 to 65535",
    "embedding_runtime": "one of auto, numpy, sentence-transformers",
    "fulltext_analyzer": "the name of a Neo4j fulltext analyzer (e.g. english, standard-no-stop-words, cjk, german; "
    "the server checks it against db.index.fulltext.listAvailableAnalyzers())",
    "log_level": "one of DEBUG, INFO, WARNING, ERROR, CRITICAL (any case)",
    "public_url": "an http(s) URL with a host and no query, e.g. https://memory.example.com",
    "oauth_issuer": "an http(s) URL with a host, e.g. https://login.example.com/realms/team",
    "oauth_jwks": "an http(s) URL or the path of a local JWKS file",
    "oauth_jwks_lifespan": "a number of seconds from 1 to 86400",
    "http_stateless": "true or false",
    "resolve_writes": "true or false",
    "duplicate_hint": "true or false (unset: on with the embedding model)",
}
#: Never echoed in an error.
_SECRETS = {"neo4j_password", "auth_token", "source_neo4j_password"}


def default_home() -> Path:
    return Path.home() / ".kg-neo4j"


class Settings(BaseSettings):
    """kg-neo4j configuration (environment first, CLI flags override)."""

    model_config = SettingsConfigDict(env_prefix="KG_NEO4J_", extra="ignore", populate_by_name=True)

    # --- Neo4j connection (standard NEO4J_* names, as Neo4j's own tools use) ---
    #: None or "" means the local server of ``kg-neo4j neo4j start``
    neo4j_uri: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_URI", "neo4j_uri"))
    neo4j_username: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_USERNAME", "NEO4J_USER", "neo4j_username")
    )
    neo4j_password: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_PASSWORD", "neo4j_password")
    )
    neo4j_database: str = Field(
        default="neo4j", validation_alias=AliasChoices("NEO4J_DATABASE", "neo4j_database")
    )
    #: ``import --from``: the peer's Neo4j credentials (None: kg-neo4j's own)
    source_neo4j_username: str | None = Field(
        default=None, validation_alias=AliasChoices("SOURCE_NEO4J_USERNAME", "source_neo4j_username")
    )
    source_neo4j_password: str | None = Field(
        default=None, validation_alias=AliasChoices("SOURCE_NEO4J_PASSWORD", "source_neo4j_password")
    )

    # --- what the server exposes ---
    namespace: str = "default"
    transport: Transport = "stdio"
    tools: str = "default"
    host: str = "127.0.0.1"
    port: Port = 8000
    auth_token: str | None = None
    #: NoDecode: the environment's JSON is parsed by the validator below, so a bad value is a
    #: validation error carrying the value (pydantic-settings' own parse error names neither)
    allowed_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: directory of MemoryMesh ``*.schema.json`` files (None: the 11 examples shipped with the package)
    schemas_dir: Path | None = None

    # --- one service for a team (docs/team.md) ---
    #: the grants file (TOML): principals, the SHA-256 of their tokens, their grants; re-read when it changes
    grants_file: Path | None = None
    #: serve HTTP without server-side MCP sessions, so replicas can sit behind any load balancer
    http_stateless: bool = False
    #: this server's public base URL (the OAuth resource and audience; default http://<host>:<port>)
    public_url: str | None = None
    #: OAuth 2.1 resource server: the issuer whose JWT access tokens are accepted (None: OAuth off)
    oauth_issuer: str | None = None
    #: the issuer's signing keys: a JWKS URL or a local JWKS file (required with oauth_issuer)
    oauth_jwks: str | None = None
    #: how long keys fetched from a JWKS URL are kept, in seconds: a key the issuer removed is still
    #: trusted this long (a new key is fetched at once: its unknown key id fetches the JWKS again)
    oauth_jwks_lifespan: Annotated[float, Field(ge=1, le=86400)] = 300
    #: the audience the tokens must carry (default: the public URL)
    oauth_audience: str | None = None
    #: the claim naming the principal
    oauth_subject_claim: str = "sub"
    #: the claim listing the principal's groups (grants may name a group)
    oauth_groups_claim: str = "groups"
    #: who writes over stdio are recorded as (None: the OS user)
    actor: str | None = None

    # --- entity resolution (docs/entities.md) ---
    #: create_entities / add_observations outside the reference profile attach to the entity an alias names
    resolve_writes: bool = False
    #: create_entities outside the reference profile names the existing entity each new one probably duplicates;
    #: None (unset): on where the embedding model is, whose encoding hides its cost, off without it, where
    #: it does not (docs/performance.md#the-duplicate-hint); see :meth:`hint_on`
    duplicate_hint: bool | None = None

    # --- the knowledge layer (docs/knowledge-model.md) ---
    #: the only directory crystallize_skill and import-skills read skill markdown from (None: crystallize_skill
    #: refuses; import-skills takes its directory argument and reads only under it)
    skills_dir: Path | None = None
    #: the session recorded on knowledge a tool touches when the call gives no sessionId (None: the MCP session)
    session_id: str | None = None
    #: at most this many characters of knowledge a hook (kg-neo4j hook ...) prints for injection
    hook_budget_chars: Positive = 4000
    #: where per-session hook state and search markers live (None: <home>/hooks; docs/hooks.md)
    hook_state_dir: Path | None = None
    #: the correction detector records `corrected` accesses (false: it does nothing)
    hook_corrections: bool = True
    #: tools the search-enforcer blocks until a memory search happened (comma-separated; empty: off)
    hook_guard_tools: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: the /mcp URL of a running `kg-neo4j serve --transport http` that recall asks for recall by meaning
    hook_search_url: str | None = None
    #: seconds a hook may spend, connecting included (None: 1, session-start 0.8; docs/hooks.md#latency):
    #: raise it on a machine too slow for the default, where a hook would print nothing
    hook_time_budget: Annotated[float, Field(gt=0, le=60)] | None = None

    # --- semantic search ---
    #: sentence-transformers model: a packaged name, a local directory, a model already in the
    #: Hugging Face cache, or "none" (search_memory then uses fulltext and graph only).
    embedding_model: str = "all-MiniLM-L6-v2"
    #: what computes the vectors: numpy for the models it runs exactly (no torch; docs/recall.md#embeddings),
    #: else sentence-transformers ("auto"), or one of them forced
    embedding_runtime: Literal["auto", "numpy", "sentence-transformers"] = "auto"
    #: analyzer of the fulltext index (one per database; docs/recall.md#languages); checked against Neo4j at
    #: start
    fulltext_analyzer: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,63}$")] = "english"

    # --- limits (documented in docs/input-validation.md#limits) ---
    max_answer_bytes: Positive = 8 * 1024 * 1024
    max_batch_items: Positive = 10_000

    # --- the local (no-Docker) Neo4j server (version, sizes and retention are checked by LocalNeo4j) ---
    home: Path = Field(default_factory=default_home)
    local_neo4j_version: str = "5.26.30"
    local_bolt_port: Port = 7687
    local_http_port: Port = 7474
    #: the loopback endpoint serving the Browser style and guide (kg_neo4j/browser/endpoint.py)
    local_guide_port: Port = 7478
    local_heap: str = "1g"
    local_pagecache: str = "1g"
    #: how much transaction log the local server keeps beyond what recovery needs
    #: (Neo4j's ``db.tx_log.rotation.retention_policy``; its own default of 2 days filled a disk
    #: under our benchmarks)
    local_tx_log_retention: str = "256M size"
    #: Java used for the local server: ``JAVA_HOME`` (a JDK/JRE directory) and/or an explicit
    #: ``java`` binary (``KG_NEO4J_LOCAL_NEO4J_JAVA``); otherwise ``java`` on PATH, then /usr/lib/jvm/*.
    java_home: Path | None = Field(default=None, validation_alias=AliasChoices("JAVA_HOME", "java_home"))
    local_neo4j_java: Path | None = None

    log_level: str = "INFO"

    @field_validator("neo4j_uri")
    @classmethod
    def _check_uri(cls, v: str | None) -> str | None:
        if not v:
            return v
        try:
            parts = urlsplit(v)
            port = parts.port  # raises ValueError on a port that is not 0-65535
        except ValueError as exc:
            raise ValueError(f"bad URI: {exc}") from exc
        scheme = parts.scheme.lower()
        # the driver refuses (with a traceback) userinfo, and a routing ?query on a direct bolt URI
        if (
            scheme not in NEO4J_SCHEMES
            or not parts.hostname
            or port == 0
            or "@" in parts.netloc
            or (parts.query and scheme.startswith("bolt"))
        ):
            raise ValueError("not a Neo4j Bolt URI the driver accepts")
        return v

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, v: str) -> str:
        if not v or len(v) > MAX_NAMESPACE_CHARS:
            raise ValueError(
                f"namespace must be a non-empty string of at most {MAX_NAMESPACE_CHARS} characters"
            )
        return v

    @field_validator("tools")
    @classmethod
    def _check_profile(cls, v: str) -> str:
        if v not in PROFILES:
            raise ValueError(f"unknown tool profile {v!r}; choose one of: {', '.join(PROFILES)}")
        return v

    @field_validator("host")
    @classmethod
    def _check_host(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("empty host")
        return v

    @field_validator("allowed_origins", mode="before")
    @classmethod
    def _check_origins(cls, v: Any) -> Any:
        if isinstance(v, str):
            try:
                v = json.loads(v)
            except ValueError as exc:
                raise ValueError(f"not JSON: {exc}") from exc
        if not isinstance(v, list) or not all(isinstance(o, str) and _ORIGIN_RE.fullmatch(o) for o in v):
            raise ValueError("not a list of origins")
        return v

    @field_validator("hook_guard_tools", mode="before")
    @classmethod
    def _check_guard_tools(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = [t.strip() for t in v.split(",") if t.strip()]
            if not v:
                return []
        if not isinstance(v, list) or not all(isinstance(t, str) and _TOOL_NAME.fullmatch(t) for t in v):
            raise ValueError("not a list of tool names")
        return v

    @field_validator("hook_search_url")
    @classmethod
    def _check_search_url(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("not an http(s) URL")
        return v

    @field_validator("public_url", "oauth_issuer")
    @classmethod
    def _check_http_url(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise ValueError("not an http(s) URL")
        return v

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, v: str) -> str:
        if v.upper() not in LOG_LEVELS:
            raise ValueError(f"unknown log level {v!r}")
        return LOG_LEVELS[v.upper()]

    @property
    def local_dir(self) -> Path:
        """Where the local Neo4j keeps its binaries, config, data and logs."""
        return self.home / "neo4j"

    def hint_on(self, model: bool) -> bool:
        """Whether create_entities' duplicate hint is on, for a server with (``model``) or without the
        embedding model: as set, else with the model."""
        return model if self.duplicate_hint is None else self.duplicate_hint


def load(overrides: Mapping[str, object], flags: Mapping[str, str]) -> Settings:
    """Settings from the environment with ``overrides`` (CLI flags; ``None`` means "not given") on top.

    ``flags`` maps a field to its flag (``{"port": "--port"}``).  A bad value raises one
    :class:`SettingError` naming the flag when it came from a flag, else the environment
    variable, with the value and what is allowed.
    """
    given: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)  # init arguments take precedence over the environment
    except pydantic.ValidationError as exc:
        raise _setting_error(exc, given, flags) from None


def env_name(field: str) -> str:
    """The environment variable a field was read from (as spelt there), else its first name."""
    alias = Settings.model_fields[field].validation_alias
    names = (
        [c for c in alias.choices if isinstance(c, str) and c.isupper()]
        if isinstance(alias, AliasChoices)
        else [f"KG_NEO4J_{field.upper()}"]
    )
    present = {k.upper(): k for k in os.environ}  # pydantic-settings matches names case-insensitively
    return next((present[n] for n in names if n in present), names[0])


def _setting_error(
    exc: pydantic.ValidationError, given: Mapping[str, object], flags: Mapping[str, str]
) -> SettingError:
    problems: list[tuple[str, str, str, bool]] = []
    for err in exc.errors():
        field = str(err["loc"][0]) if err["loc"] else ""
        if field not in Settings.model_fields:  # loc is an alias (e.g. NEO4J_URI): find its field
            field = next(
                (
                    f
                    for f, info in Settings.model_fields.items()
                    if isinstance(info.validation_alias, AliasChoices)
                    and field in info.validation_alias.choices
                ),
                field,
            )
        from_flag = field in given
        if from_flag:
            source = flags.get(field, f"--{field.replace('_', '-')}")
        else:
            source = env_name(field) if field in Settings.model_fields else field or "settings"
        raw = given[field] if from_flag else err["input"]
        if field in _SECRETS:
            shown = "(hidden)"
        else:  # a password inside a URI is not echoed either
            shown = _show(
                re.sub(r"://[^/@]*@", "://***@", raw)
                if field == "neo4j_uri" and isinstance(raw, str)
                else raw
            )
        allowed = ALLOWED.get(field) or str(err["msg"]).removeprefix("Value error, ")
        if any(p[0] == source for p in problems):
            continue  # one line per setting (a list can fail several times)
        problems.append((source, shown, allowed, from_flag))
    source, shown, allowed, from_flag = problems[0]
    return SettingError(
        source,
        shown,
        allowed,
        from_flag=from_flag,
        more=[f"{s} must be {a}; got {v}" for s, v, a, _ in problems[1:]],
    )


def _show(value: object, limit: int = 60) -> str:
    """A bad value as it is quoted in an error: repr, cut after ``limit`` characters."""
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        value = json.dumps(list(value))
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"
