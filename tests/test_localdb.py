"""The no-Docker local Neo4j manager, against real servers (no mocks).

The shared server (``~/.kg-neo4j``, port 7687) is started if needed and never stopped here;
the lifecycle test runs a second instance in a temporary home on free ports.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import neo4j
import pytest

from kg_neo4j.errors import ConfigError, Neo4jUnavailableError
from kg_neo4j.localdb import (
    CURRENT_VERSION,
    LTS_VERSION,
    LocalNeo4j,
    choose_java,
    entry_point,
    java_requirement,
    parse_java_major,
)
from kg_neo4j.localdb.java import JAVA_LOCATIONS
from kg_neo4j.settings import Settings

# --------------------------------------------------------------------------- pure


@pytest.mark.unit
@pytest.mark.parametrize(
    ("version", "java"),
    [
        ("5.26.30", 17),
        ("5.1.0", 17),
        ("2025.01.0", 21),
        ("2025.10.1", 21),
        ("2026.01.0", 21),
        ("4.4.40", 11),
    ],
)
def test_java_requirement(version: str, java: int) -> None:
    assert java_requirement(version) == java


@pytest.mark.unit
@pytest.mark.parametrize("version", ["3.5.0", "latest", ""])
def test_java_requirement_rejects_unknown_versions(version: str) -> None:
    with pytest.raises(ConfigError):
        java_requirement(version)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("output", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6)', 17),
        ('java version "1.8.0_392"\nJava(TM) SE Runtime Environment', 8),
        ('openjdk version "21" 2023-09-19', 21),
        ('openjdk version "25" 2025-09-16 LTS\nOpenJDK Runtime Environment Temurin-25+36', 25),
        ('openjdk version "26-ea" 2026-03-17', 26),
        ("openjdk 21.0.2 2024-01-16", 21),
        ("command not found", None),
    ],
)
def test_parse_java_major(output: str, major: int | None) -> None:
    assert parse_java_major(output) == major


@pytest.mark.unit
def test_bad_settings_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KG_NEO4J_LOCAL_HEAP"):
        LocalNeo4j(Settings(home=tmp_path, local_heap="lots"))
    with pytest.raises(ConfigError, match="KG_NEO4J_LOCAL_NEO4J_VERSION"):
        LocalNeo4j(Settings(home=tmp_path, local_neo4j_version="newest"))
    with pytest.raises(ConfigError, match="KG_NEO4J_LOCAL_TX_LOG_RETENTION"):
        LocalNeo4j(Settings(home=tmp_path, local_tx_log_retention="forever"))
    with pytest.raises(ConfigError, match="ports must differ"):
        LocalNeo4j(Settings(home=tmp_path, local_bolt_port=7000, local_http_port=7000))


@pytest.mark.unit
@pytest.mark.parametrize(
    "policy",
    ["256M size", "2 files", "1 days", "2 days 1G", "12 hours 500M", "100k txs", "keep_none", "true"],
)
def test_tx_log_retention_accepts_neo4j_policies(tmp_path: Path, policy: str) -> None:
    db = LocalNeo4j(Settings(home=tmp_path, local_tx_log_retention=policy))
    assert f"db.tx_log.rotation.retention_policy={policy}\n" in db._conf_text()


@pytest.mark.unit
@pytest.mark.parametrize("policy", ["forever", "256M size\n", "2 files 1G", "0 files", "", "1 weeks"])
def test_tx_log_retention_rejects_the_rest(tmp_path: Path, policy: str) -> None:
    with pytest.raises(ConfigError, match="KG_NEO4J_LOCAL_TX_LOG_RETENTION"):
        LocalNeo4j(Settings(home=tmp_path, local_tx_log_retention=policy))


@pytest.mark.unit
def test_too_old_explicit_java_is_a_config_error(tmp_path: Path) -> None:
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(0o755)
    db = LocalNeo4j(Settings(home=tmp_path, local_neo4j_java=fake, local_neo4j_version=LTS_VERSION))
    with pytest.raises(ConfigError) as err:
        db.find_java()
    message = str(err.value)
    assert "Java 17" in message and "Java 11" in message
    assert "openjdk-17-jre-headless" in message


@pytest.mark.unit
def test_default_java_is_new_enough(tmp_path: Path) -> None:
    db = LocalNeo4j(Settings(home=tmp_path))  # the configured version (KG_NEO4J_LOCAL_NEO4J_VERSION or 5.26)
    java = db.find_java()
    out = subprocess.run([str(java), "-version"], capture_output=True, text=True, check=True)
    major = parse_java_major(out.stderr)
    assert major is not None and major >= java_requirement(db.version)


@pytest.mark.unit
def test_never_started_home(tmp_path: Path) -> None:
    db = LocalNeo4j(Settings(home=tmp_path, local_bolt_port=free_port(), local_http_port=free_port()))
    with pytest.raises(Neo4jUnavailableError, match="never been started"):
        db.credentials()
    with pytest.raises(Neo4jUnavailableError):
        db.env_lines()
    status = db.status()
    assert status["running"] is False and status["pid"] is None
    assert db.stop() is False


@pytest.mark.unit
def test_stale_pid_file_is_ignored_and_removed(tmp_path: Path) -> None:
    db = LocalNeo4j(Settings(home=tmp_path, local_bolt_port=free_port(), local_http_port=free_port()))
    db.home.mkdir(parents=True)
    # A live process that is not our JVM (this pytest process), as after a reboot that reused the pid.
    db.pid_file.write_text(
        json.dumps({"pid": os.getpid(), "bolt_port": db.bolt_port, "http_port": db.http_port})
    )
    assert db.status()["running"] is False
    assert not db.pid_file.exists()
    assert db.stop() is False


# --------------------------------------------------------------------------- choosing a JDK


def fake_jdk(root: Path, rel: str, version: str) -> Path:
    """A JDK directory whose bin/java answers ``-version`` like the real one (only the version
    string matters to the chooser; the real start uses the real JDK, see test_neo4j_versions.py)."""
    java = root / rel / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2025-01-21' >&2\n")
    java.chmod(0o755)
    return java


@pytest.fixture
def jdks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Debian packages, a Temurin tarball in /opt, an SDKMAN candidate and a Docker-style /opt/java,
    under ``tmp_path`` (the patterns are the real ones, re-rooted)."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    found = {
        "17": fake_jdk(tmp_path, "usr/lib/jvm/java-17-openjdk-amd64", "17.0.15"),
        "25": fake_jdk(tmp_path, "usr/lib/jvm/temurin-25-jdk-amd64", "25.0.3"),
        "21": fake_jdk(tmp_path, "opt/jdk-21.0.5+11", "21.0.5"),
        "sdk": fake_jdk(home, ".sdkman/candidates/java/22.0.2-tem", "22.0.2"),
        "docker": fake_jdk(tmp_path, "opt/java/openjdk", "23.0.1"),
    }
    locations = [p if p.startswith("~") else str(tmp_path) + p for p in JAVA_LOCATIONS]
    return {"root": tmp_path, "java": found, "locations": locations}


@pytest.mark.unit
def test_usual_locations_cover_this_machines_jdks() -> None:
    import glob as glob_

    found = {
        Path(p).resolve() for pattern in JAVA_LOCATIONS for p in glob_.glob(str(Path(pattern).expanduser()))
    }
    majors = {
        parse_java_major(subprocess.run([str(j), "-version"], capture_output=True, text=True).stderr)
        for j in found
    }
    assert {17, 25} <= majors  # OpenJDK 17 (Debian) and Temurin 25 in /usr/lib/jvm


@pytest.mark.unit
def test_oldest_good_jdk_is_chosen_from_the_usual_locations(jdks: dict[str, Any]) -> None:
    path_java = str(jdks["java"]["17"])
    lts = choose_java(
        LTS_VERSION, explicit=None, java_home=None, path_java=path_java, locations=jdks["locations"]
    )
    assert (lts.path, lts.major) == (jdks["java"]["17"], 17)
    current = choose_java(
        CURRENT_VERSION, explicit=None, java_home=None, path_java=path_java, locations=jdks["locations"]
    )
    assert (current.path, current.major) == (
        jdks["java"]["21"],
        21,
    )  # PATH's 17 is too old; 21 is the oldest good


@pytest.mark.unit
def test_sdkman_and_opt_java_are_looked_at(jdks: dict[str, Any]) -> None:
    for gone in ("21", "25"):
        jdks["java"][gone].unlink()
    chosen = choose_java(
        CURRENT_VERSION, explicit=None, java_home=None, path_java=False, locations=jdks["locations"]
    )
    assert chosen.major == 22 and chosen.path == jdks["java"]["sdk"]  # ~/.sdkman/candidates/java/*
    jdks["java"]["sdk"].unlink()
    chosen = choose_java(
        CURRENT_VERSION, explicit=None, java_home=None, path_java=False, locations=jdks["locations"]
    )
    assert chosen.major == 23 and chosen.path == jdks["java"]["docker"]  # /opt/java/*


@pytest.mark.unit
def test_java_home_wins_when_good_enough(jdks: dict[str, Any]) -> None:
    home25 = jdks["java"]["25"].parent.parent
    chosen = choose_java(
        CURRENT_VERSION,
        explicit=None,
        java_home=home25,
        path_java=str(jdks["java"]["17"]),
        locations=jdks["locations"],
    )
    assert (chosen.path, chosen.major) == (home25 / "bin" / "java", 25)
    home17 = jdks["java"]["17"].parent.parent
    chosen = choose_java(
        CURRENT_VERSION, explicit=None, java_home=home17, path_java=False, locations=jdks["locations"]
    )
    assert chosen.major == 21  # a JAVA_HOME too old for this version is passed over, not used


@pytest.mark.unit
def test_explicit_java_must_do(jdks: dict[str, Any]) -> None:
    chosen = choose_java(
        LTS_VERSION, explicit=jdks["java"]["25"], java_home=None, path_java=False, locations=[]
    )
    assert chosen.major == 25
    with pytest.raises(ConfigError, match=r"needs Java 21\+, but KG_NEO4J_LOCAL_NEO4J_JAVA=.* is Java 17"):
        choose_java(
            CURRENT_VERSION,
            explicit=jdks["java"]["17"],
            java_home=None,
            path_java=False,
            locations=jdks["locations"],
        )


@pytest.mark.unit
def test_no_good_jdk_names_what_was_found_and_how_to_get_one(jdks: dict[str, Any]) -> None:
    for gone in ("21", "25", "sdk", "docker"):
        jdks["java"][gone].unlink()
    with pytest.raises(ConfigError) as err:
        choose_java(
            CURRENT_VERSION, explicit=None, java_home=None, path_java=False, locations=jdks["locations"]
        )
    message = str(err.value)
    assert f"Neo4j {CURRENT_VERSION} needs Java 21+" in message
    assert f"{jdks['java']['17']} (Java 17)" in message
    assert "JAVA_HOME" in message and "KG_NEO4J_LOCAL_NEO4J_JAVA" in message and "PATH" in message
    assert (
        "openjdk-21-jre-headless" in message
        and "adoptium.net" in message
        and "sdk install java 21" in message
    )


@pytest.mark.unit
def test_the_real_jdk_for_each_line(tmp_path: Path) -> None:
    for version, required in ((LTS_VERSION, 17), (CURRENT_VERSION, 21)):
        chosen = LocalNeo4j(Settings(home=tmp_path, local_neo4j_version=version)).choose_java()
        out = subprocess.run([str(chosen.path), "-version"], capture_output=True, text=True, check=True)
        assert parse_java_major(out.stderr) == chosen.major >= required


# --------------------------------------------------------------------------- entry points and data versions


@pytest.mark.line_independent
def test_entry_point_is_read_from_the_jar(tmp_path: Path) -> None:
    import zipfile

    from support.neo4j_lines import cached_dist

    assert (
        entry_point(cached_dist(LTS_VERSION) / "lib", LTS_VERSION) == "org.neo4j.server.CommunityEntryPoint"
    )
    assert (
        entry_point(cached_dist(CURRENT_VERSION) / "lib", CURRENT_VERSION)
        == "org.neo4j.server.Neo4jCommunity"
    )
    # whatever the jar registers wins (comments and blank lines skipped) ...
    with zipfile.ZipFile(tmp_path / "neo4j-2027.01.0.jar", "w") as zf:
        zf.writestr(
            "META-INF/services/org.neo4j.server.startup.EntryPoint", "# comment\n\norg.example.Main\n"
        )
    assert entry_point(tmp_path, "2027.01.0") == "org.example.Main"
    # ... and a jar without the registration falls back to the main class of its line
    with zipfile.ZipFile(tmp_path / "neo4j-2027.02.0.jar", "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    assert entry_point(tmp_path, "2027.02.0") == "org.neo4j.server.Neo4jCommunity"
    assert entry_point(tmp_path, "5.26.0") == "org.neo4j.server.CommunityEntryPoint"


@pytest.mark.line_independent
def test_another_home_reuses_the_default_homes_jars(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from support.neo4j_lines import cached_dist

    source = cached_dist(LTS_VERSION) / "lib"
    db = LocalNeo4j(Settings(home=tmp_path, local_neo4j_version=LTS_VERSION))
    assert not db.is_installed()
    assert db.install(progress=False) == db.lib_dir and db.is_installed()
    assert "reused the" in capsys.readouterr().err
    ours = sorted(p.name for p in db.lib_dir.glob("*.jar"))
    assert ours == sorted(p.name for p in source.glob("*.jar")) and f"neo4j-{LTS_VERSION}.jar" in ours
    jar = f"neo4j-{LTS_VERSION}.jar"
    assert (db.lib_dir / jar).read_bytes() == (source / jar).read_bytes()


@pytest.mark.unit
def test_data_of_a_newer_line_is_refused_and_an_upgrade_is_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lts = LocalNeo4j(Settings(home=tmp_path, local_neo4j_version=LTS_VERSION))
    current = LocalNeo4j(Settings(home=tmp_path, local_neo4j_version=CURRENT_VERSION))
    assert lts.data_version() is None
    lts.check_data_version()  # fresh data: nothing to say
    lts.data_dir.mkdir(parents=True)
    lts.data_version_file.write_text(json.dumps({"version": LTS_VERSION}))
    current.check_data_version()
    err = capsys.readouterr()
    assert (
        f"upgrading the data in {current.data_dir} from Neo4j {LTS_VERSION} to {CURRENT_VERSION}" in err.err
    )
    assert err.out == ""
    lts.data_version_file.write_text(json.dumps({"version": CURRENT_VERSION}))
    with pytest.raises(ConfigError, match=f"KG_NEO4J_LOCAL_NEO4J_VERSION={CURRENT_VERSION}"):
        lts.check_data_version()
    with pytest.raises(ConfigError, match="cannot open it"):
        lts.start()  # refused before any JVM starts


# --------------------------------------------------------------------------- the shared server


@pytest.fixture(scope="module")
def shared() -> LocalNeo4j:
    """The local server of `kg-neo4j neo4j start` (started if needed, even when the rest of the
    suite uses NEO4J_URI: these tests are about the local manager itself)."""
    db = LocalNeo4j(Settings())
    db.start()
    return db


def test_shared_status_reports_running(shared: LocalNeo4j) -> None:
    status = shared.status()
    assert status["running"] is True
    assert status["bolt_uri"] == shared.bolt_uri == f"bolt://127.0.0.1:{shared.settings.local_bolt_port}"
    assert isinstance(status["pid"], int)
    assert status["version"] == shared.settings.local_neo4j_version
    assert Path(str(status["log_file"])).exists()
    assert Path(str(status["data_dir"])).is_dir()


def test_shared_start_is_idempotent(shared: LocalNeo4j) -> None:
    pid = shared.status()["pid"]
    started = time.monotonic()
    shared.start()
    assert time.monotonic() - started < 10
    assert shared.status()["pid"] == pid


def test_shared_env_lines(shared: LocalNeo4j) -> None:
    lines = shared.env_lines()
    assert [line.split("=", 1)[0] for line in lines] == [
        "export NEO4J_URI",
        "export NEO4J_USERNAME",
        "export NEO4J_PASSWORD",
    ]
    values = dict(shlex.split(line)[1].split("=", 1) for line in lines)
    uri, user, password = shared.credentials()
    assert values == {"NEO4J_URI": uri, "NEO4J_USERNAME": user, "NEO4J_PASSWORD": password}


def test_shared_credentials_log_in(shared: LocalNeo4j) -> None:
    uri, user, password = shared.credentials()
    assert user == "neo4j" and password != "neo4j" and len(password) >= 16
    assert_login(uri, user, password)
    mode = stat.S_IMODE(shared.credentials_file.stat().st_mode)
    assert mode == 0o600


# --------------------------------------------------------------------------- a second instance


def test_second_instance_lifecycle(tmp_path: Path) -> None:
    bolt, http = free_port(), free_port()
    settings = Settings(
        home=tmp_path,
        local_bolt_port=bolt,
        local_http_port=http,
        local_heap="512m",
        local_pagecache="128m",
        local_tx_log_retention="100M size",
    )
    db = LocalNeo4j(settings)
    try:
        # Two processes start at once: the lock lets only one JVM come up, both see it.
        script = textwrap.dedent(
            f"""
            from pathlib import Path
            from kg_neo4j.localdb import LocalNeo4j
            from kg_neo4j.settings import Settings
            db = LocalNeo4j(Settings(home=Path({str(tmp_path)!r}), local_bolt_port={bolt},
                                     local_http_port={http}, local_heap="512m", local_pagecache="128m",
                                     local_tx_log_retention="100M size"))
            db.start(timeout=240)
            print(db.status()["pid"])
            """
        )
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        results = [p.communicate(timeout=400) for p in procs]
        for proc, (out, err) in zip(procs, results, strict=True):
            assert proc.returncode == 0, err
            assert out.strip().isdigit(), f"only the pid may reach stdout, got {out!r}"
        pids = {int(out.strip()) for out, _ in results}
        assert len(pids) == 1
        (pid,) = pids

        status = db.status()
        assert status["running"] is True and status["pid"] == pid
        assert status["bolt_uri"] == f"bolt://127.0.0.1:{bolt}" == db.bolt_uri
        assert status["http_url"] == f"http://127.0.0.1:{http}"
        db.start()  # idempotent in this process too
        assert db.status()["pid"] == pid

        uri, user, password = db.credentials()
        assert_login(uri, user, password)
        # The server runs with the transaction-log retention we configured (not Neo4j's 2 days).
        with neo4j.GraphDatabase.driver(uri, auth=(user, password)) as drv:
            records, _, _ = drv.execute_query(
                "SHOW SETTINGS YIELD name, value WHERE name = $n RETURN value",
                n="db.tx_log.rotation.retention_policy",
            )
        assert [r["value"] for r in records] == ["100M size"]
        assert db.credentials_file == tmp_path / "neo4j" / "credentials.json"
        assert stat.S_IMODE(db.credentials_file.stat().st_mode) == 0o600
        assert f"--home-dir={db.home}" in Path(f"/proc/{pid}/cmdline").read_bytes().decode().replace(
            "\0", " "
        )

        assert db.pid_file.exists()
        assert db.stop() is True
        assert not db.pid_file.exists()
        assert db.status()["running"] is False
        assert not port_open(bolt)
        assert not process_running(pid)
        assert db.stop() is False
    finally:
        db.stop(timeout=10)


# --------------------------------------------------------------------------- helpers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def process_running(pid: int) -> bool:
    """True unless the process is gone or a zombie (its parent may not have reaped it yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def assert_login(uri: str, user: str, password: str) -> None:
    with neo4j.GraphDatabase.driver(uri, auth=(user, password)) as driver:
        records, _, _ = driver.execute_query("RETURN 1 AS one", database_="neo4j")
        assert records[0]["one"] == 1
