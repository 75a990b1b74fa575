"""The one place that reads the environment.

Every setting has an environment variable (shown in the README's configuration
table); CLI flags override them.  Nothing else in the package calls ``os.getenv``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

Transport = Literal["stdio", "http"]

#: Profiles known to ``--tools``; the server module maps each to its tool list.
PROFILES = ("reference", "default", "memorymesh", "knowledge", "all")

MAX_NAMESPACE_CHARS = 255


def default_home() -> Path:
    return Path.home() / ".kg-neo4j"


class Settings(BaseSettings):
    """kg-neo4j configuration (environment first, CLI flags override)."""

    model_config = SettingsConfigDict(env_prefix="KG_NEO4J_", extra="ignore", populate_by_name=True)

    # --- Neo4j connection (standard NEO4J_* names, as Neo4j's own tools use) ---
    neo4j_uri: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_URI", "neo4j_uri"))
    neo4j_username: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_USERNAME", "NEO4J_USER", "neo4j_username")
    )
    neo4j_password: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_PASSWORD", "neo4j_password")
    )
    neo4j_database: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_DATABASE", "neo4j_database"))

    # --- what the server exposes ---
    namespace: str = "default"
    transport: Transport = "stdio"
    tools: str = "default"
    host: str = "127.0.0.1"
    port: int = 8000
    auth_token: str | None = None
    allowed_origins: list[str] = Field(default_factory=list)
    #: directory of MemoryMesh ``*.schema.json`` files (None: the 11 examples shipped with the package)
    schemas_dir: Path | None = None

    # --- the knowledge layer (spec 004) ---
    #: the only directory crystallize_skill and import-skills read skill markdown from (None: crystallize_skill
    #: refuses; import-skills takes its directory argument and reads only under it)
    skills_dir: Path | None = None
    #: the session recorded on knowledge a tool touches when the call gives no sessionId (None: the MCP session)
    session_id: str | None = None
    #: at most this many characters of knowledge a hook (kg-neo4j hook ...) prints for injection
    hook_budget_chars: int = 4000

    # --- semantic search ---
    #: sentence-transformers model: a packaged name, a local directory, a model already in the
    #: Hugging Face cache, or "none" (search_memory then uses fulltext and graph only).
    embedding_model: str = "all-MiniLM-L6-v2"

    # --- limits (documented in the README) ---
    max_answer_bytes: int = 8 * 1024 * 1024
    max_batch_items: int = 10_000

    # --- the local (no-Docker) Neo4j server ---
    home: Path = Field(default_factory=default_home)
    local_neo4j_version: str = "5.26.30"
    local_bolt_port: int = 7687
    local_http_port: int = 7474
    local_heap: str = "1g"
    local_pagecache: str = "1g"
    #: how much transaction log the local server keeps beyond what recovery needs
    #: (Neo4j's ``db.tx_log.rotation.retention_policy``; its own default of 2 days grew to 31 GB
    #: under our benchmarks and filled a disk)
    local_tx_log_retention: str = "256M size"
    #: Java used for the local server: ``JAVA_HOME`` (a JDK/JRE directory) and/or an explicit
    #: ``java`` binary (``KG_NEO4J_LOCAL_NEO4J_JAVA``); otherwise ``java`` on PATH, then /usr/lib/jvm/*.
    java_home: Path | None = Field(default=None, validation_alias=AliasChoices("JAVA_HOME", "java_home"))
    local_neo4j_java: Path | None = None

    log_level: str = "INFO"

    @field_validator("namespace")
    @classmethod
    def _check_namespace(cls, v: str) -> str:
        if not v or len(v) > MAX_NAMESPACE_CHARS:
            raise ValueError(f"namespace must be a non-empty string of at most {MAX_NAMESPACE_CHARS} characters")
        return v

    @field_validator("tools")
    @classmethod
    def _check_profile(cls, v: str) -> str:
        if v not in PROFILES:
            raise ValueError(f"unknown tool profile {v!r}; choose one of: {', '.join(PROFILES)}")
        return v

    @property
    def local_dir(self) -> Path:
        """Where the local Neo4j keeps its binaries, config, data and logs."""
        return self.home / "neo4j"

    def with_overrides(self, **overrides: object) -> Settings:
        """Return a copy with CLI flags applied (``None`` means "not given")."""
        given = {k: v for k, v in overrides.items() if v is not None}
        merged = self.model_dump()
        merged.update(given)
        return Settings.model_validate(merged)
