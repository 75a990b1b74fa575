"""What users install: the sdist and wheel carry every statement of ``cypher/`` and every data
file, the statements load from the built wheel (installed, and straight from the zip), and the
Dockerfile builds and installs the wheel exactly as .ci/run does.

The installed product end to end (a second venv, an MCP stdio session, export/import) is
.ci/run's installed-wheel step (.ci/installed_wheel_check.py), too heavy for a test: it needs a
venv of its own with torch.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kg_neo4j import __version__
from kg_neo4j.cypher import queries
from support.servers import Neo4jInfo, free_port, http_server

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
DIST = f"kg_neo4j-{VERSION}"


def checkout_files() -> dict[str, str]:
    """Every file a distribution must carry, as (path in the wheel) -> (path in the checkout)."""
    files = {f"kg_neo4j/_cypher/{p.name}": f"cypher/{p.name}" for p in (ROOT / "cypher").glob("*.cypher")}
    for path in (ROOT / "kg_neo4j").rglob("*"):
        rel = path.relative_to(ROOT).as_posix()
        if path.is_file() and "__pycache__" not in rel:
            files[rel] = rel
    return files


@pytest.mark.unit
def test_the_package_says_the_version_pyproject_builds() -> None:
    """``kg_neo4j.__version__`` (what the server reports to clients) is the version of the wheel."""
    assert __version__ == VERSION


@pytest.mark.unit
def test_pyproject_lists_every_package_of_the_checkout() -> None:
    """The packages are listed in pyproject.toml (the cypher/ mapping needs that): a new
    subpackage must be added there, or the wheel would lack it.  A directory without Python
    modules (e.g. the shipped model's files) is package data of the package above it: the wheel
    test below checks that it is carried."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    package = ROOT / "kg_neo4j"
    dirs = {
        p.relative_to(ROOT).as_posix().replace("/", ".")
        for p in [package, *package.rglob("*")]
        if p.is_dir() and p.name != "__pycache__" and any(p.glob("*.py"))
    }
    assert sorted(dirs - set(setuptools["packages"])) == [], "add these to [tool.setuptools] packages"
    assert setuptools["package-dir"] == {"kg_neo4j._cypher": "cypher"}


def build(srcdir: Path, outdir: Path, args: list[str]) -> tuple[Path, Path]:
    """Run ``python -m build`` with ``args`` (as .ci/run and the Dockerfile do); the sdist and wheel."""
    done = subprocess.run(
        [sys.executable, "-m", "build", *args], cwd=srcdir, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (
        f"python -m build {args} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    out = outdir if outdir.is_absolute() else srcdir / outdir
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, f"{out}: {wheels} {sdists}"
    return sdists[0], wheels[0]


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sdist and wheel of the checkout, built by .ci/run's command (into a temporary dist/)."""
    out = tmp_path_factory.mktemp("dist")
    args = ci_build_args()
    args[args.index("--outdir") + 1] = str(out)
    return build(ROOT, out, args)


@pytest.mark.line_independent
def test_wheel_carries_every_statement_module_and_data_file(dists: tuple[Path, Path]) -> None:
    _, wheel = dists
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        expected = checkout_files()
        assert sorted(set(expected) - names) == [], "missing from the wheel"
        for inside, source in expected.items():
            assert zf.read(inside) == (ROOT / source).read_bytes(), f"{inside} differs from {source}"
    statements = sorted(n for n in names if n.endswith(".cypher"))
    assert statements == sorted(f"kg_neo4j/_cypher/{p.name}" for p in (ROOT / "cypher").glob("*.cypher"))
    assert len(statements) >= 11
    schemas = [n for n in names if n.startswith("kg_neo4j/schemas/examples/") and n.endswith(".schema.json")]
    assert len(schemas) == 11 and "kg_neo4j/server/reference_tools.json" in names
    packaged = {n for n in names if not n.startswith(f"{DIST}.dist-info/")}
    assert packaged == set(expected), (
        f"files in the wheel that are not in the checkout: {packaged - set(expected)}"
    )


@pytest.mark.line_independent
def test_sdist_carries_the_sources_of_the_wheel(dists: tuple[Path, Path]) -> None:
    sdist, _ = dists
    with tarfile.open(sdist) as tf:
        members = {m.name.removeprefix(f"{DIST}/"): m for m in tf.getmembers() if m.isfile()}
        expected = set(checkout_files().values()) | {"pyproject.toml", "MANIFEST.in", "README.md"}
        assert sorted(expected - set(members)) == [], "missing from the sdist"
        for rel in expected:
            extracted = tf.extractfile(members[rel])
            assert extracted is not None and extracted.read() == (ROOT / rel).read_bytes(), rel


def run_python(code: str, path_entry: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -c code`` from ``cwd`` with ``path_entry`` first on sys.path (before the editable
    install of this checkout, which is a finder appended after the path-based ones)."""
    env = {**os.environ, "PYTHONPATH": str(path_entry)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


LOAD = """
import json, kg_neo4j
from kg_neo4j.cypher import default_cypher_dir, queries
q = queries()
print(json.dumps({"package": kg_neo4j.__file__, "dir": str(default_cypher_dir()),
                  "statements": {n: [q[n], q.statement(n).file] for n in q.names()}}))
"""


@pytest.fixture(scope="module")
def installed(dists: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel installed by pip (not editable) into a directory of its own."""
    where = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(where), str(dists[1])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return where


@pytest.mark.line_independent
@pytest.mark.parametrize("how", ["installed", "zip"])
def test_statements_load_from_the_built_wheel(
    dists: tuple[Path, Path], installed: Path, tmp_path: Path, how: str
) -> None:
    """Installed with pip (a plain directory) and imported straight from the wheel (a zip), outside
    the checkout: the same statements as the checkout, read from the wheel's ``kg_neo4j/_cypher``."""
    where = installed if how == "installed" else dists[1]
    cypher_dir = where / "kg_neo4j" / "_cypher"
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    done = run_python(LOAD, where, cwd)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert Path(loaded["package"]).is_relative_to(where), loaded["package"]
    assert loaded["dir"].rstrip("/") == str(cypher_dir)  # a directory in a zip ends in "/"
    checkout = queries()
    assert sorted(loaded["statements"]) == checkout.names()
    for name, (text, file) in loaded["statements"].items():
        assert text == checkout[name], name
        assert file == str(cypher_dir / Path(checkout.statement(name).file).name), file


DATA = """
import json, kg_neo4j
from kg_neo4j.schemas import load_schemas
from kg_neo4j.server.reference import _SCHEMAS
print(json.dumps({"package": kg_neo4j.__file__, "schemas": sorted(s.name for s in load_schemas()),
                  "reference": sorted(_SCHEMAS)}))
"""


@pytest.mark.line_independent
@pytest.mark.parametrize("how", ["installed", "zip"])
def test_data_files_load_from_the_built_wheel(
    dists: tuple[Path, Path], installed: Path, tmp_path: Path, how: str
) -> None:
    """The example schemas and the reference tool definitions, read from the installed wheel and
    straight from the wheel's zip."""
    from kg_neo4j.schemas import load_schemas
    from kg_neo4j.server.reference import _SCHEMAS

    where = installed if how == "installed" else dists[1]
    done = run_python(DATA, where, tmp_path)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert Path(loaded["package"]).is_relative_to(where), loaded["package"]
    assert loaded["schemas"] == sorted(s.name for s in load_schemas()) and len(loaded["schemas"]) == 11
    assert loaded["reference"] == sorted(_SCHEMAS) and len(loaded["reference"]) == 9


@pytest.mark.line_independent
def test_a_malformed_statement_in_a_zip_is_reported_with_file_and_line(
    dists: tuple[Path, Path], tmp_path: Path
) -> None:
    """The loader's file:line errors hold inside a zip too (the path names the file in the archive)."""
    _, wheel = dists
    broken = tmp_path / "broken.whl"
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(broken, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, src.read(item))
        dst.writestr(
            "kg_neo4j/_cypher/zz_bad.cypher",
            "// name: fine\n// ok\nRETURN 1\n\nMATCH (n) RETURN n;\n// name: Bad-Name\n// x\nRETURN 2\n",
        )
    code = (
        "from kg_neo4j.cypher import queries\nfrom kg_neo4j.errors import CypherFileError\n"
        "try:\n    queries()\nexcept CypherFileError as e:\n    print(e)\n"
    )
    done = run_python(code, broken, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{broken}/kg_neo4j/_cypher/zz_bad.cypher:6: bad statement name"), (
        done.stdout
    )


# --- the Dockerfile ----------------------------------------------------------------------------------


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def dockerfile_stages() -> list[Stage]:
    text = (ROOT / "docker" / "Dockerfile").read_text()
    text = re.sub(r"\\\n", " ", text)  # continuation lines
    stages: list[Stage] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, args = line.partition(" ")
        keyword, args = keyword.upper(), args.strip()
        if keyword == "FROM":
            m = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", args, re.IGNORECASE)
            assert m, line
            stages.append(Stage(m.group(1), m.group(2)))
        else:
            assert stages, f"{line!r} before FROM"
            stages[-1].instructions.append((keyword, args))
    return stages


def ci_build_args() -> list[str]:
    """The arguments of ``python -m build`` in .ci/run (its one build of the distributions)."""
    found = re.findall(
        r"^\.venv/bin/python -m build ([^>\n]*?)\s*(?:>|$)", (ROOT / ".ci" / "run").read_text(), re.MULTILINE
    )
    assert len(found) == 1, found
    return shlex.split(found[0])


@pytest.mark.line_independent
def test_dockerfile_builds_the_wheel_as_ci_does_and_installs_only_that(
    dists: tuple[Path, Path], tmp_path: Path
) -> None:
    stages = dockerfile_stages()
    assert len(stages) == 2, [s.base for s in stages]
    build_stage, runtime = stages
    assert build_stage.name and build_stage.base == runtime.base == "python:3.11-slim"

    # the build stage runs .ci/run's command, in its WORKDIR, on what it copied in
    args = ci_build_args()
    runs = [shlex.split(r) for r in build_stage.all("RUN")]
    assert [r[3:] for r in runs if r[:3] == ["python", "-m", "build"]] == [args], runs
    workdir = build_stage.all("WORKDIR")
    assert len(workdir) == 1
    outdir = Path(workdir[0]) / args[args.index("--outdir") + 1]

    # Rebuild from exactly the files the build stage copies, with its command: the same wheel as CI's.
    context = tmp_path / "context"
    for copy in build_stage.all("COPY"):
        *sources, dest = shlex.split(copy)
        for src in sources:
            path = ROOT / src
            if path.is_dir():  # COPY dir dest: the directory's contents into dest
                shutil.copytree(path, context / dest, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target = context / dest / path.name if dest.endswith("/") else context / dest
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    _, docker_wheel = build(context, Path(args[args.index("--outdir") + 1]), args)
    with zipfile.ZipFile(docker_wheel) as a, zipfile.ZipFile(dists[1]) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())
        assert any(n.startswith("kg_neo4j/_cypher/") for n in a.namelist())

    # the runtime stage takes only the wheel from the build stage and installs it
    copies = runtime.all("COPY")
    assert len(copies) == 1, f"the runtime stage copies more than the wheel: {copies}"
    wheel_copy = shlex.split(copies[0])
    assert wheel_copy[0] == f"--from={build_stage.name}" and wheel_copy[1] == f"{outdir}/*.whl", wheel_copy
    dest = wheel_copy[2].rstrip("/")
    installs = [r for r in runtime.all("RUN") if f"pip install {dest}/*.whl" in r]
    assert len(installs) == 1, runtime.all("RUN")
    keywords = [kw for kw, _ in runtime.instructions]
    assert keywords.index("USER") > keywords.index("RUN"), "the install runs as root, the server does not"
    user = runtime.all("USER")
    assert len(user) == 1 and user[0] not in ("root", "0") and not user[0].startswith(("root:", "0:"))
    assert runtime.all("ENTRYPOINT") == ['["kg-neo4j"]']


def healthcheck_command() -> list[str]:
    (check,) = dockerfile_stages()[-1].all("HEALTHCHECK")
    exec_form = check[check.index("CMD") + 3 :].strip()
    command = json.loads(exec_form)
    assert isinstance(command, list) and command[0] == "python", command
    return [sys.executable, *command[1:]]


def test_the_image_healthcheck_passes_on_a_running_server_without_a_token(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    """The HEALTHCHECK's own command, against ``kg-neo4j serve --transport http`` with a token set:
    /healthz needs none.  Against a port where nothing listens it fails."""
    command = healthcheck_command()
    assert "/healthz" in " ".join(command)
    with http_server(neo4j_info, "--namespace", namespace, "--auth-token", "s3cret-token") as url:
        port = url.rsplit(":", 1)[1]
        ok = subprocess.run(
            command, env={**os.environ, "KG_NEO4J_PORT": port}, capture_output=True, text=True, timeout=30
        )
        assert ok.returncode == 0, ok.stderr
    down = subprocess.run(
        command,
        env={**os.environ, "KG_NEO4J_PORT": str(free_port())},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert down.returncode != 0
