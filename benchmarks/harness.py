"""The one harness of the benchmarks: servers, MCP client, timing, tables, results.

Every benchmark is a module of this package, run as ``python -m benchmarks.bench_x``; its ``main``
builds its arguments with :func:`arguments` (which adds ``--tiny`` and ``--out``), records its tables
in a :class:`Results` and saves them as JSON tagged with what produced them (:func:`tags`).
docs/performance.md's tables are rendered from those files (``python -m benchmarks.report``).

Nothing here is product code: the benchmarks only *call* the product (the MCP server over stdio,
``GraphStore`` and the named Cypher of ``cypher/*.cypher``).  Every benchmark uses its own
``bench-...`` namespaces and deletes them afterwards in batches, so a shared Neo4j does not bloat.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shlex
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from neo4j import Driver, GraphDatabase

from kg_neo4j import __version__
from kg_neo4j.models import EntityIn, RelationIn
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore, resolve_connection
from kg_neo4j.store.connection import Connection

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
#: The installed command beside this Python (what users run), so a venv's benchmark runs its own server.
KG = str(Path(sys.executable).with_name("kg-neo4j"))

ENTITY_TYPES = ["person", "project", "concept", "tool", "place"]
RELATION_TYPES = ["knows", "uses", "depends_on", "part_of"]

WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


def log(msg: str) -> None:
    """Progress goes to stderr; stdout holds the tables."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --- the command line and the results ------------------------------------------------------
def arguments(doc: str | None) -> argparse.ArgumentParser:
    """The benchmark's parser, with the two arguments every benchmark has (:func:`common`)."""
    return common(argparse.ArgumentParser(description=(doc or "").split("\n")[0]))


def common(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--tiny`` and ``--out`` (to a parser, or to each subcommand's)."""
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="the smoke size (seconds; what CI runs): writes no results file unless --out names one",
    )
    ap.add_argument("--out", type=Path, help="the results file (default: benchmarks/results/<name>.json)")
    return ap


def tags(conn: Connection | None = None) -> dict[str, Any]:
    """What produced a result: kg-neo4j's version, the commit, the Neo4j version, the machine and its load."""
    git = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=False,
    )
    neo4j = None
    if conn is not None:
        with sync_driver(conn) as drv:
            records, _, _ = drv.execute_query(
                "CALL dbms.components() YIELD versions, edition RETURN versions[0] AS v, edition AS e",
                database_=conn.database,
            )
            neo4j = f"{records[0]['v']} {records[0]['e']}"
    return {
        "kg_neo4j": __version__,
        "commit": git.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
        if git.returncode == 0
        else None,
        "neo4j": neo4j,
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


@dataclass
class Results:
    """One run's tables, notes and figures, saved as one JSON file."""

    name: str
    args: argparse.Namespace
    tables: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    load_at_start: list[float] = field(default_factory=lambda: [round(x, 2) for x in os.getloadavg()])

    def table(
        self, key: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str = ""
    ) -> str:
        """Record a table under ``key`` and return it as text (first column left-aligned)."""
        self.tables.append(
            {
                "key": key,
                "title": title,
                "headers": list(headers),
                "rows": [[_json(c) for c in r] for r in rows],
            }
        )
        return (title + "\n" if title else "") + table(headers, rows, left_first=True)

    def note(self, text: str) -> str:
        self.notes.append(text)
        return text

    def save(self, conn: Connection | None) -> Path | None:
        """Write the results file (``--out``, else benchmarks/results/<name>.json unless ``--tiny``)."""
        out: Path | None = self.args.out or (None if self.args.tiny else RESULTS / f"{self.name}.json")
        if out is None:
            return None
        given = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(self.args).items() if k != "out"}
        doc = {
            "benchmark": self.name,
            "command": "python -m " + shlex.join([_module(), *sys.argv[1:]]),
            "arguments": given,
            "tags": {**tags(conn), "loadavg_at_start": self.load_at_start},
            "tables": self.tables,
            "notes": self.notes,
            "figures": {k: _json(v) for k, v in self.figures.items()},
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        log(f"results: {out}")
        return out


def _module() -> str:
    main = sys.modules["__main__"]
    spec = getattr(main, "__spec__", None)
    return spec.name if spec is not None else Path(sys.argv[0]).stem


def _json(c: Any) -> Any:
    """A cell as JSON: NaN is null; everything else as it is (numbers stay numbers)."""
    if isinstance(c, float) and math.isnan(c):
        return None
    if isinstance(c, str | int | float | bool) or c is None:
        return c
    return str(c)


# --- connection and servers ----------------------------------------------------------------
def connection() -> Connection:
    return resolve_connection(Settings())


def server_env(conn: Connection) -> dict[str, str]:
    """Environment for ``kg-neo4j serve``: ours minus any KG_NEO4J_/NEO4J_ settings, plus the connection."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "KG_NEO4J_"))}
    env.update(
        {
            "NEO4J_URI": conn.uri,
            "NEO4J_USERNAME": conn.username,
            "NEO4J_PASSWORD": conn.password,
            "NEO4J_DATABASE": conn.database,
        }
    )
    return env


@dataclass
class Server:
    """An MCP stdio server: the command, its arguments and its environment."""

    command: str
    args: list[str]
    env: dict[str, str]


def kg_serve(conn: Connection, namespace: str, *args: str) -> Server:
    """``kg-neo4j serve --namespace NS`` (quiet) on the benchmark's Neo4j, with more ``args``."""
    return Server(KG, ["serve", "--namespace", namespace, "--log-level", "WARNING", *args], server_env(conn))


@asynccontextmanager
async def mcp_session(server: Server, errlog: TextIO | None = None) -> AsyncIterator[ClientSession]:
    """A real MCP client session over stdio, initialised, its tools listed (the client then validates
    every answer against the tool's output schema, as clients do); the server's stderr to ``errlog``,
    else to the sys.stderr of the moment (not of import time: it may be replaced since)."""
    params = StdioServerParameters(command=server.command, args=server.args, env=server.env)
    async with (
        stdio_client(params, errlog=errlog or sys.stderr) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        yield session


def own_neo4j(
    command: str,
    home: Path,
    ports: tuple[int, int, int],
    heap: str,
    pagecache: str,
    version: str | None = None,
) -> dict[str, str]:
    """``kg-neo4j neo4j start|stop|env`` for a local Neo4j of the benchmark's own (never the project's),
    under ``home`` on the (bolt, http, guide) ``ports``, of ``version`` (default: kg-neo4j's default);
    returns the variables ``env`` exports."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "KG_NEO4J_"))}
    env.update(
        KG_NEO4J_HOME=str(home),
        KG_NEO4J_LOCAL_BOLT_PORT=str(ports[0]),
        KG_NEO4J_LOCAL_HTTP_PORT=str(ports[1]),
        KG_NEO4J_LOCAL_GUIDE_PORT=str(ports[2]),
        KG_NEO4J_LOCAL_HEAP=heap,
        KG_NEO4J_LOCAL_PAGECACHE=pagecache,
        **({"KG_NEO4J_LOCAL_NEO4J_VERSION": version} if version else {}),
    )
    out = subprocess.run(
        [KG, "neo4j", command], env=env, check=command != "start", capture_output=True, text=True
    )
    sys.stderr.write(out.stderr)
    return dict(
        line.removeprefix("export ").split("=", 1)
        for line in out.stdout.splitlines()
        if line.startswith("export ")
    )


def text_of(result: Any) -> str:
    """The first text block of a tool answer ('' when none)."""
    block = result.content[0] if result.content else None
    return str(getattr(block, "text", "")) if block is not None else ""


def structured(result: Any, tool: str) -> dict[str, Any]:
    """A tool answer's structured content; an error answer raises, naming the tool."""
    if result.is_error:
        raise RuntimeError(f"{tool}: {text_of(result)[:300]}")
    return dict(result.structured_content or {})


def sync_driver(conn: Connection) -> Driver:
    drv = GraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    drv.verify_connectivity()
    return drv


def new_namespace(kind: str, size: int) -> str:
    return f"bench-{kind}-{size}-{uuid.uuid4().hex[:8]}"


def ensure_schema(conn: Connection) -> None:
    """The product's own schema bootstrap (constraints + indexes), so raw seeding writes under the same schema."""
    import asyncio

    from neo4j import AsyncGraphDatabase

    from kg_neo4j.store.connection import bootstrap

    async def _go() -> None:
        drv = AsyncGraphDatabase.driver(
            conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
        )
        try:
            await bootstrap(drv, conn.database)
        finally:
            await drv.close()

    asyncio.run(_go())


# --- the synthetic data set ---------------------------------------------------------------
def entity_name(i: int) -> str:
    return f"Entity-{i:07d}"


def entity_row(i: int, rng: random.Random, n_obs: int = 3) -> dict[str, Any]:
    """One entity in the store's row shape (same fields GraphStore.create_entities sends)."""
    name = entity_name(i)
    etype = ENTITY_TYPES[i % len(ENTITY_TYPES)]
    obs = [f"obs {k}: {' '.join(rng.choices(WORDS, k=6))} #{i}" for k in range(n_obs)]
    return {
        "name": name,
        "entityType": etype,
        "name_lower": name.lower(),
        "type_lower": etype.lower(),
        "observations": obs,
        "observations_lower": [o.lower() for o in obs],
    }


def entity_arg(i: int, rng: random.Random, n_obs: int = 3) -> dict[str, Any]:
    """The same entity as an MCP ``create_entities`` argument item."""
    r = entity_row(i, rng, n_obs)
    return {"name": r["name"], "entityType": r["entityType"], "observations": r["observations"]}


def ring_relation(i: int, n: int) -> dict[str, Any]:
    """Entity i's one relation of the ingest benchmark: i -> i+7919 (mod n), one of a few types."""
    return {
        "from": entity_name(i),
        "to": entity_name((i + 7919) % n),
        "relationType": RELATION_TYPES[i % len(RELATION_TYPES)],
        "weight": round(((i * 37) % 100) / 100, 2),
    }


def chunks(n: int, size: int) -> Iterator[range]:
    for start in range(0, n, size):
        yield range(start, min(n, start + size))


# --- the synthetic memory (bench_search, bench_scale): entities of varied sentences -------------
OBS_PER_ENTITY = 10

FIRST = (
    "Alice Bob Carol David Emma Frank Grace Henry Irene Jack Karen Liam Maria Noah Olivia Peter Quinn Rachel "
    "Samuel Tara Umar Vera William Xenia Yusuf Zoe Aisha Bruno Chloe Diego Elena Felix Greta Hugo Ines Jonas "
    "Kenji Lara Marco Nadia Oscar Priya Rafael Sofia Tomas Ulla Viktor Wendy Yara Zane"
).split()
LAST = (
    "Smith Johnson Lee Garcia Muller Rossi Tanaka Kowalski Nguyen Silva Novak Costa Schmidt Dubois Jensen Ivanova "
    "Okafor Haddad Kim Larsen Moreau Petrov Santos Weber Fischer Bianchi Yamamoto Lindqvist Horvat Brennan "
    "Castillo Dimitrov Eriksen Fontaine Gallo Hoffmann Iqbal Jovanovic Keller Lopez Mendes Nielsen "
    "OBrien Park Quintero Reyes Sato Torres Vargas Walsh"
).split()
ADJ = (
    "Blue Silent Rapid Golden Northern Hidden Bright Iron Crystal Amber Scarlet Quiet Swift Solar Lunar Arctic "
    "Coral Cobalt Velvet Emerald"
).split()
NOUN = (
    "Falcon Harbor Beacon Summit Compass Orchard Meadow Lantern Anchor Canyon Glacier Horizon Pioneer Atlas "
    "Cascade Ember Willow Granite Comet Prairie"
).split()
TOOLS = (
    "Postgres Kafka Redis Terraform Kubernetes Grafana Jenkins Airflow Spark Elasticsearch Docker Ansible "
    "Prometheus Vault Jira Figma Tableau Snowflake RabbitMQ Nginx"
).split()
CITIES = (
    "Lisbon Berlin Tokyo Toronto Nairobi Oslo Madrid Seoul Austin Dublin Prague Lyon Porto Zurich Melbourne "
    "Denver Bogota Krakow Helsinki Vienna"
).split()
ORGS = (
    "Acme Globex Initech Umbrella Stark Wayne Hooli Vandelay Soylent Tyrell Cyberdyne Wonka Aperture Gringotts "
    "Pied-Piper Monarch"
).split()
ROLES = (
    "data engineer;product manager;site reliability engineer;designer;backend developer;sales lead;"
    "research scientist;support engineer;finance analyst;frontend developer;security engineer;recruiter"
).split(";")
DRINKS = "green tea;black coffee;espresso;oat milk latte;mint tea;sparkling water;hot chocolate;matcha".split(
    ";"
)
FOODS = "peanuts;shellfish;gluten;dairy;strawberries;eggs;sesame;soy".split(";")
PETS = "dog;cat;parrot;rabbit;tortoise;goldfish;hamster".split(";")
PET_NAMES = "Biscuit Luna Pepper Mochi Rex Shadow Ziggy Nala Otis Pickles".split()
SPORTS = "tennis;football;chess;badminton;climbing;cycling;swimming;volleyball;running;yoga".split(";")
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = "January February March April May June July August September October November December".split()
LANGS = "Spanish Japanese German Portuguese Korean Italian Mandarin Swedish".split()
COUNTRIES = "Japan Brazil Italy Norway Mexico Vietnam Canada Kenya Portugal Iceland".split()
BOOKS = (
    "Thinking Fast and Slow;The Pragmatic Programmer;Deep Work;Atomic Habits;Sapiens;Clean Code;"
    "The Phoenix Project;Designing Data-Intensive Applications;Range;Shape Up"
).split(";")
MEETINGS = (
    "quarterly planning;weekly sync;architecture review;retrospective;budget;all-hands;design critique".split(
        ";"
    )
)
PROBLEMS = (
    "flaky tests;a memory leak;slow queries;vendor delays;missing requirements;a security audit;"
    "hiring freeze;a data migration;network outages;unclear ownership"
).split(";")
TASKS = (
    "log aggregation;nightly backups;feature flags;load testing;invoice processing;dashboards;"
    "schema migrations;on-call alerts;customer onboarding;model training"
).split(";")
AMENITIES = "rooftop terrace;gym;quiet room;bike storage;cafeteria;game room;library;nap pod".split(";")
TEAMS = "platform;payments;growth;data;mobile;infrastructure;search;billing".split(";")

TEMPLATES: dict[str, list[str]] = {
    "person": [
        "Works at {org} as a {role} since {year}.",
        "Prefers {drink} in the morning and {drink2} after lunch.",
        "Moved to {city} in {month} {year}.",
        "Is allergic to {food} and avoids it at team dinners.",
        "Recommended the book {book} during the {meeting} meeting.",
        "Has a {pet} named {petname}.",
        "Plays {sport} every {weekday} evening.",
        "Birthday is on {month} {day}.",
        "Is learning {language} to prepare for a trip to {country}.",
        "Mentioned that the {project} deadline slipped to {month} because of {problem}.",
        "Met {person} at a conference in {city}.",
        "Uses {tool} for {task} and complains about {problem}.",
        "Asked for help with {task} on {weekday}.",
        "Is the main contact for the {team} team.",
    ],
    "project": [
        "Deadline moved to {month} {day} after the {meeting} meeting.",
        "Budget increased by {pct} percent to cover {task}.",
        "Depends on {tool} for {task}.",
        "Owned by the {team} team in {city}.",
        "Blocked by {problem} since last {weekday}.",
        "Kick-off happened in {month} {year} with {person} as the lead.",
        "Ships a beta to {org} at the end of {month}.",
        "Retrospective found that {problem} caused most of the delays.",
    ],
    "tool": [
        "Version {ver} fixed the bug behind {problem}.",
        "Licensed per seat at {price} dollars a month.",
        "Replaced {tool} in the {team} team last {month}.",
        "Used by the {team} team for {task}.",
        "Upgrade to version {ver} is planned for {month}.",
        "Alerts go to the {team} channel when {task} fails.",
    ],
    "place": [
        "Office opens at {hour} am on weekdays.",
        "Has a {amenity} on floor {floor}.",
        "Parking costs {price} dollars per day.",
        "The {meeting} meeting is held here every {weekday}.",
        "Hosts the {team} team since {year}.",
        "Closed for renovation during {month} {year}.",
    ],
    "organization": [
        "Signed a contract for {task} worth {price} thousand dollars.",
        "Headquartered in {city} with offices in {city2}.",
        "Main customer contact is {person}.",
        "Switched from {tool} to {tool2} in {year}.",
        "Pays invoices within {pct} days.",
    ],
}
TYPE_SHARE = [("person", 0.5), ("project", 0.2), ("tool", 0.1), ("place", 0.1), ("organization", 0.1)]

QUESTIONS = [
    "What does {person} drink in the morning?",
    "Where does {person} work?",
    "Who works as a {role}?",
    "Which project deadline slipped because of {problem}?",
    "Who has a {pet}?",
    "Where did {person} move to?",
    "Which tool version fixed {problem}?",
    "Who is learning {language}?",
    "When is {person}'s birthday?",
    "Who plays {sport} on {weekday}s?",
    "What book was recommended at the {meeting} meeting?",
    "Is anyone allergic to {food}?",
    "Which office has a {amenity}?",
    "How much does parking cost at the office?",
    "Which team owns the {project} project?",
    "What is {project} blocked by?",
    "What do we use for {task}?",
    "Who is the contact for the {team} team?",
    "Which projects depend on {tool}?",
    "What did {person} complain about?",
    "Who is travelling to {country}?",
    "When was the {project} kick-off and who leads it?",
    "Which customer signed a contract for {task}?",
    "what did we decide about {task} in {month}",
    "{person} pet name",
    "Is {tool} licensed per seat?",
]


def _fill(template: str, rng: random.Random, names: dict[str, list[str]]) -> str:
    return template.format(
        org=rng.choice(ORGS),
        role=rng.choice(ROLES),
        year=rng.randint(2015, 2025),
        drink=rng.choice(DRINKS),
        drink2=rng.choice(DRINKS),
        city=rng.choice(CITIES),
        city2=rng.choice(CITIES),
        month=rng.choice(MONTHS),
        day=rng.randint(1, 28),
        food=rng.choice(FOODS),
        book=rng.choice(BOOKS),
        meeting=rng.choice(MEETINGS),
        pet=rng.choice(PETS),
        petname=rng.choice(PET_NAMES),
        sport=rng.choice(SPORTS),
        weekday=rng.choice(WEEKDAYS),
        language=rng.choice(LANGS),
        country=rng.choice(COUNTRIES),
        problem=rng.choice(PROBLEMS),
        tool=rng.choice(TOOLS),
        tool2=rng.choice(TOOLS),
        task=rng.choice(TASKS),
        team=rng.choice(TEAMS),
        pct=rng.randint(5, 60),
        ver=f"{rng.randint(1, 9)}.{rng.randint(0, 20)}",
        price=rng.randint(3, 90),
        hour=rng.randint(6, 10),
        floor=rng.randint(1, 12),
        amenity=rng.choice(AMENITIES),
        project=rng.choice(names["project"]) if names["project"] else "Blue Falcon",
        person=rng.choice(names["person"]) if names["person"] else "Alice Smith",
    )


def make_dataset(n_entities: int, seed: int = 42) -> list[EntityIn]:
    """n_entities entities (unique names per type), OBS_PER_ENTITY distinct sentences each."""
    rng = random.Random(seed)
    types = [t for t, share in TYPE_SHARE for _ in range(max(1, round(share * n_entities)))]
    types = (types * 2)[:n_entities]
    rng.shuffle(types)
    used: set[str] = set()
    names: dict[str, list[str]] = {t: [] for t, _ in TYPE_SHARE}

    def unique(base: str) -> str:
        name, i = base, 2
        while name.lower() in used:
            name, i = f"{base} {i}", i + 1
        used.add(name.lower())
        return name

    ent_names = []
    for t in types:
        if t == "person":
            base = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        elif t == "project":
            base = f"{rng.choice(ADJ)} {rng.choice(NOUN)}"
        elif t == "tool":
            base = (
                f"{rng.choice(TOOLS)} {rng.choice(['cluster', 'instance', 'pipeline', 'workspace', 'setup'])}"
            )
        elif t == "place":
            base = f"{rng.choice(CITIES)} {rng.choice(['office', 'warehouse', 'lab', 'studio', 'hub'])}"
        else:
            base = f"{rng.choice(ORGS)} {rng.choice(['Corp', 'Labs', 'Group', 'Partners', 'Systems'])}"
        name = unique(base)
        names[t].append(name)
        ent_names.append(name)
    out = []
    for name, t in zip(ent_names, types, strict=True):
        obs: list[str] = []
        while len(obs) < OBS_PER_ENTITY:
            s = _fill(rng.choice(TEMPLATES[t]), rng, names)
            if s not in obs:
                obs.append(s)
        out.append(EntityIn(name=name, entityType=t, observations=obs))
    return out


def make_questions(entities: Sequence[EntityIn], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    names: dict[str, list[str]] = {t: [] for t, _ in TYPE_SHARE}
    for e in entities:
        names[e.entityType].append(e.name)
    return [_fill(rng.choice(QUESTIONS), rng, names) for _ in range(n)]


REL_TYPES = {
    "person": ["works_with", "reports_to", "works_on"],
    "project": ["depends_on", "uses", "located_in"],
    "tool": ["integrates_with", "owned_by"],
    "place": ["near", "part_of"],
    "organization": ["partners_with", "customer_of"],
}
RELS_PER_ENTITY = 2


def make_relations(entities: Sequence[EntityIn], seed: int = 3) -> list[RelationIn]:
    """RELS_PER_ENTITY relations from every entity to random others (typed by the source's type)."""
    rng = random.Random(seed)
    out = []
    for e in entities:
        for _ in range(RELS_PER_ENTITY if len(entities) > 1 else 0):
            other = rng.choice(entities)
            while other.name == e.name:
                other = rng.choice(entities)
            out.append(
                RelationIn.model_validate(
                    {
                        "from": e.name,
                        "to": other.name,
                        "relationType": rng.choice(REL_TYPES[e.entityType]),
                        "weight": round(rng.uniform(0.2, 1.0), 2),
                    }
                )
            )
    return out


async def write_relations(store: GraphStore, relations: Sequence[RelationIn], batch: int = 1000) -> float:
    t0 = time.perf_counter()
    for i in range(0, len(relations), batch):
        await store.create_relations(relations[i : i + batch])
    return time.perf_counter() - t0


PERTURB = [
    "Reportedly: {s}",
    "{s} (as noted last week)",
    "Update - {s}",
    "{s} Still true as of today.",
    "Someone said: {s}",
    "{s} Needs double-checking.",
]


# --- raw-driver seeding (fast UNWIND; no product code, same data model) ----------------------
SEED_ENTITIES = """
UNWIND $rows AS row
CREATE (n:KgNode:Entity:KgText {namespace: $ns, name: row.name, entityType: row.entityType,
                                name_lower: row.name_lower, type_lower: row.type_lower,
                                text_lower: row.name_lower + '\n' + row.type_lower,
                                created_at: row.created_at, obs_next: size(row.observations)})
WITH n, row
UNWIND range(0, size(row.observations) - 1) AS i
CREATE (n)-[:HAS_OBSERVATION]->(:Observation:KgText {namespace: $ns, text: row.observations[i],
                                                     text_lower: row.observations_lower[i], seq: i,
                                                     created_at: row.created_at})
""".strip()

SEED_RELATIONS = """
UNWIND $rows AS row
MATCH (a:KgNode {namespace: $ns, name: row.from})
MATCH (b:KgNode {namespace: $ns, name: row.to})
CREATE (a)-[r:$(row.relationType)]->(b)
SET r.weight = row.weight, r.valid_from = row.valid_from, r.valid_until = row.valid_until,
    r.created_at = row.created_at
""".strip()


def seed_entities(
    drv: Driver,
    database: str,
    ns: str,
    n: int,
    *,
    created_at: Any,
    n_obs: int = 3,
    chunk: int = 10_000,
    seed: int = 1,
    progress: bool = True,
) -> float:
    """Create n entities (``created_at`` a datetime or a callable i -> datetime); returns seconds."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for rows_range in chunks(n, chunk):
        rows = []
        for i in rows_range:
            row = entity_row(i, rng, n_obs)
            row["created_at"] = created_at(i) if callable(created_at) else created_at
            rows.append(row)
        drv.execute_query(SEED_ENTITIES, rows=rows, ns=ns, database_=database)
        if progress and (rows_range.stop % 50_000 == 0 or rows_range.stop == n):
            log(f"  seeded {rows_range.stop}/{n} entities")
    return time.perf_counter() - t0


def seed_relations(
    drv: Driver,
    database: str,
    ns: str,
    n_entities: int,
    n_rel: int,
    *,
    row_fn: Any,
    chunk: int = 10_000,
    seed: int = 2,
    progress: bool = True,
) -> float:
    """Create n_rel relations, ``row_fn(k, rng)`` giving each row (from, to, relationType, weight, valid_*,
    created_at); grouped into transactions of ``chunk`` rows.  Returns seconds."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for rows_range in chunks(n_rel, chunk):
        rows = [row_fn(k, rng) for k in rows_range]
        drv.execute_query(SEED_RELATIONS, rows=rows, ns=ns, database_=database)
        if progress and (rows_range.stop % 100_000 == 0 or rows_range.stop == n_rel):
            log(f"  seeded {rows_range.stop}/{n_rel} relations")
    return time.perf_counter() - t0


# --- cleanup -------------------------------------------------------------------------------
DELETE_NAMESPACE = """
MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL
CALL (n) {
  OPTIONAL MATCH (n)-[:HAS_OBSERVATION]->(o:Observation)
  DETACH DELETE o
  WITH DISTINCT n
  DETACH DELETE n
} IN TRANSACTIONS OF 5000 ROWS
""".strip()

#: The same for expired knowledge (forgotten or merged away: no longer :KgNode).
DELETE_EXPIRED = DELETE_NAMESPACE.replace(
    "MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL",
    "MATCH (n:ExpiredKnowledge) WHERE n.namespace = $ns",
)
assert DELETE_EXPIRED != DELETE_NAMESPACE


def delete_namespace(drv: Driver, database: str, ns: str) -> float:
    """Delete every node of ``ns`` (entities, placeholders, expired knowledge, observations, relations)
    in batches."""
    t0 = time.perf_counter()
    with drv.session(database=database) as s:  # auto-commit: required by CALL { } IN TRANSACTIONS
        s.run(DELETE_NAMESPACE, ns=ns).consume()
        # Forgotten or merged-away knowledge left the (namespace, name) key (:KgNode) but keeps its
        # observations; then observations whose entity is gone (belt and braces).  Both batched.
        s.run(DELETE_EXPIRED, ns=ns).consume()
        s.run(
            """
            MATCH (o:Observation) WHERE o.namespace = $ns
            CALL (o) { DETACH DELETE o } IN TRANSACTIONS OF 10000 ROWS
        """,
            ns=ns,
        ).consume()
    return time.perf_counter() - t0


def count_namespace(drv: Driver, database: str, ns: str) -> int:
    records, _, _ = drv.execute_query(
        "MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL RETURN count(n) AS c",
        ns=ns,
        database_=database,
    )
    return int(records[0]["c"])


# --- stats ---------------------------------------------------------------------------------
def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return math.nan
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))
    return s[k]


def p50_ms(values: Sequence[float]) -> float:
    """The median of durations in seconds, in milliseconds (NaN when none)."""
    return percentile(values, 50) * 1000 if values else math.nan


def summary_ms(values: Sequence[float]) -> tuple[float, float, float]:
    """(p50, p95, mean) in milliseconds of durations given in seconds."""
    ms = [v * 1000 for v in values]
    return percentile(ms, 50), percentile(ms, 95), statistics.fmean(ms) if ms else math.nan


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, left_first: bool = False) -> str:
    """A bordered text table; numbers right-aligned (and the first column too unless ``left_first``)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [line, "| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths, strict=True)) + " |", line]
    for row in cells[1:]:
        out.append(
            "| "
            + " | ".join(
                c.ljust(w) if left_first and i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
            + " |"
        )
    out.append(line)
    return "\n".join(out)


def _fmt(c: Any) -> str:
    if isinstance(c, float):
        if math.isnan(c):
            return "-"
        return f"{c:,.2f}" if abs(c) < 1000 else f"{c:,.0f}"
    if isinstance(c, int):
        return f"{c:,}"
    return str(c)
