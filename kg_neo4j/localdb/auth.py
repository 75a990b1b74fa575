"""The local server's password: generated once, set over Bolt on first start, kept in a 0600 file."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from kg_neo4j.errors import Neo4jUnavailableError
from kg_neo4j.localdb.process import write_private

__all__ = ["INITIAL_PASSWORD", "USERNAME", "Credentials"]

USERNAME = "neo4j"
INITIAL_PASSWORD = "neo4j"


class Credentials:
    """``credentials.json`` of one local server and the logins that check it."""

    def __init__(self, path: Path, bolt_uri: str, log_file: Path, data_dir: Path) -> None:
        self.path = path
        self.bolt_uri = bolt_uri
        self.log_file = log_file
        self.data_dir = data_dir

    def read(self) -> dict[str, object] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("password"), str) else None

    def write(self, password: str, initialized: bool) -> None:
        payload = {"username": USERNAME, "password": password, "initialized": initialized}
        write_private(self.path, json.dumps(payload, indent=2) + "\n")

    def ensure(self, deadline: float) -> None:
        """Make sure the server's password is ours and works (sets it on a fresh data directory)."""
        from neo4j.exceptions import AuthError

        creds = self.read()
        if creds is None:
            creds = {"password": secrets.token_urlsafe(24), "initialized": False}
            self.write(str(creds["password"]), False)
        password = str(creds["password"])
        if creds.get("initialized"):
            self._retry(deadline, lambda: self._login(password))
            return
        try:
            self._retry(deadline, lambda: self._change_initial_password(password))
        except AuthError:
            # A previous start may have changed the password but died before recording it.
            try:
                self._retry(deadline, lambda: self._login(password))
            except AuthError as exc:
                raise Neo4jUnavailableError(
                    f"the local Neo4j has a password kg-neo4j does not know ({self.path} is missing or "
                    f"stale). To start over, stop it and delete {self.data_dir} (this deletes the stored graph)."
                ) from exc
        self.write(password, True)

    def _change_initial_password(self, password: str) -> None:
        import neo4j

        with neo4j.GraphDatabase.driver(
            self.bolt_uri, auth=(USERNAME, INITIAL_PASSWORD), connection_timeout=5.0
        ) as driver:
            with driver.session(database="system") as session:
                session.run(
                    "ALTER CURRENT USER SET PASSWORD FROM $old TO $new", old=INITIAL_PASSWORD, new=password
                ).consume()

    def _login(self, password: str) -> None:
        import neo4j

        with neo4j.GraphDatabase.driver(
            self.bolt_uri, auth=(USERNAME, password), connection_timeout=5.0
        ) as driver:
            with driver.session(database="system") as session:
                session.run("SHOW DEFAULT DATABASE").consume()

    def _retry(self, deadline: float, action: Callable[[], None]) -> None:
        """Run ``action`` until it succeeds; retry only errors of a server that is still starting."""
        from neo4j.exceptions import (
            AuthError,
            ClientError,
            ServiceUnavailable,
            SessionExpired,
            TransientError,
        )

        while True:
            try:
                action()
                return
            except AuthError:
                raise
            except (ServiceUnavailable, SessionExpired, TransientError, OSError) as exc:
                error: Exception = exc
            except ClientError as exc:
                code = getattr(exc, "code", "") or ""
                if "DatabaseUnavailable" not in code and "DatabaseNotFound" not in code:
                    raise
                error = exc
            if time.monotonic() > deadline:
                raise Neo4jUnavailableError(
                    f"the local Neo4j on {self.bolt_uri} did not accept a login in time ({error}); "
                    f"see {self.log_file}"
                ) from error
            time.sleep(0.5)
