"""How long the first write waits, and what the two embedding runtimes cost.

Three parts (see benchmarks/README.md, "bench_first_write.py"):

1. **End to end**: a real ``kg-neo4j serve`` driven by the MCP client over stdio: process start ->
   ``initialize`` answered -> ``tools/list`` -> first ``create_entities`` (one entity, three
   observations) answered, per embedding runtime, with a cold OS cache (``drop_caches``, needs
   root) and a warm one.  ``--embedding-model none`` gives the write without any model.
2. **Parts**, each in a fresh process: torch import, sentence-transformers import, weight load,
   first encode; numpy + tokenizers import, weight load, first encode; and the server's own path
   to a first write (module imports, driver connection, schema bootstrap, statement loading,
   first and second ``create_entities`` through ``GraphStore``).
3. **Same vectors, and throughput**: 1,000 varied texts (conversation turns and questions of
   recall_eval/, texts far beyond the 256-token limit, many scripts and emoji, whitespace, the
   empty string) through both runtimes, each in its own worker process, run in alternation:
   cosine between the two vectors of every text; texts/s for calls of 100 and of 1,000 texts.

Nothing is downloaded (HF_HUB_OFFLINE=1): the model is the packaged all-MiniLM-L6-v2.

    .venv/bin/python benchmarks/bench_first_write.py                 # everything (~10 min)
    .venv/bin/python benchmarks/bench_first_write.py --only e2e --runs 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# _common (and with it the Neo4j driver, which imports numpy) is imported only where needed: the
# "parts" workers time imports in an interpreter that has loaded nothing else.
sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
MODEL = "all-MiniLM-L6-v2"
RUNTIMES = ("numpy", "sentence-transformers")
FIRST_ENTITY: dict[str, Any] = {
    "name": "Ada Lovelace",
    "entityType": "person",
    "observations": ["Wrote the first published program", "Worked with Charles Babbage", "Lived in London"],
}
FIRST_TEXTS = [*FIRST_ENTITY["observations"], "Ada Lovelace (person)"]  # what create_entities embeds

#: Starts the server with another runtime when the settings have no embedding-runtime setting yet:
#: it changes the default of SentenceEmbedder(runtime=...) before the CLI runs.
_LAUNCH = (
    "import sys\nfrom kg_neo4j.embeddings.encoder import SentenceEmbedder\n"
    "SentenceEmbedder.__init__.__kwdefaults__['runtime'] = sys.argv.pop(1)\n"
    "from kg_neo4j.cli import main\nsys.exit(main())\n"
)


def drop_caches() -> None:
    subprocess.run(["sync"], check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def can_drop_caches() -> bool:
    try:
        drop_caches()
        return True
    except OSError:
        return False


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# --- 1. end to end ---------------------------------------------------------------------------------
def serve_command(runtime: str | None, model: str, ns: str) -> tuple[str, list[str], dict[str, str]]:
    from _common import KG, connection, server_env

    from kg_neo4j.settings import Settings

    env = server_env(connection())
    env["HF_HUB_OFFLINE"] = "1"
    args = ["serve", "--namespace", ns, "--embedding-model", model]
    if runtime is None:
        return KG, args, env
    if "embedding_runtime" in Settings.model_fields:
        env["KG_NEO4J_EMBEDDING_RUNTIME"] = runtime
        return KG, args, env
    return PYTHON, ["-c", _LAUNCH, runtime, *args], env


async def first_write(runtime: str | None, model: str, ns: str) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command, args, env = serve_command(runtime, model, ns)
    params = StdioServerParameters(command=command, args=args, env=env)
    with tempfile.TemporaryFile(mode="w+") as errlog:
        t0 = time.perf_counter()
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            t_init = time.perf_counter()
            await session.list_tools()
            t_list = time.perf_counter()
            result = await session.call_tool("create_entities", {"entities": [FIRST_ENTITY]})
            t_write = time.perf_counter()
            if getattr(result, "is_error", getattr(result, "isError", False)):
                raise RuntimeError(f"create_entities failed: {result}")
        errlog.seek(0)
        stderr = errlog.read()
    loaded = re.search(r"loaded with the (\S+) runtime in ([0-9.]+) s", stderr)
    if model != "none" and loaded is None:
        raise RuntimeError(f"no model-loaded line in the server's stderr:\n{stderr[-2000:]}")
    return {
        "start_to_init": t_init - t0,
        "init_to_list": t_list - t_init,
        "init_to_write": t_write - t_init,
        "runtime": loaded.group(1) if loaded else "-",
        "load_s": float(loaded.group(2)) if loaded else 0.0,
    }


def run_e2e(runs: int, cold: bool) -> None:
    from _common import connection, delete_namespace, new_namespace, sync_driver

    conn = connection()
    drv = sync_driver(conn)
    configs: list[tuple[str, str | None, str]] = [
        ("numpy (auto)", None, MODEL),
        ("sentence-transformers", "sentence-transformers", MODEL),
        ("no model", None, "none"),
    ]
    rows: list[tuple[str, str, dict[str, float], str]] = []
    try:
        for cache in ["cold", "warm"] if cold else ["warm"]:
            for label, runtime, model in configs:
                got: list[dict[str, Any]] = []
                if cache == "warm":  # one unmeasured start fills the OS cache
                    ns = new_namespace("firstwrite", 0)
                    asyncio.run(first_write(runtime, model, ns))
                    delete_namespace(drv, conn.database, ns)
                for i in range(runs):
                    ns = new_namespace("firstwrite", i)
                    if cache == "cold":
                        drop_caches()
                    try:
                        got.append(asyncio.run(first_write(runtime, model, ns)))
                    finally:
                        delete_namespace(drv, conn.database, ns)
                    log(f"e2e {cache} {label} run {i + 1}: {got[-1]}")
                keys = ("start_to_init", "init_to_list", "init_to_write", "load_s")
                rows.append(
                    (cache, label, {k: median([g[k] for g in got]) for k in keys}, got[-1]["runtime"])
                )
    finally:
        drv.close()
    print(f"\n## End to end: kg-neo4j serve over MCP stdio, first create_entities (median of {runs})\n")
    print(
        "| OS cache | embedding | runtime loaded | start -> initialize | initialize -> tools/list "
        "| initialize -> first create_entities answered | model load (server log) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for cache, label, m, rt in rows:
        print(
            f"| {cache} | {label} | {rt} | {m['start_to_init']:.2f} s | {m['init_to_list']:.2f} s "
            f"| {m['init_to_write']:.2f} s | {m['load_s']:.2f} s |"
        )


# --- 2. parts, each in a fresh process ---------------------------------------------------------------
def part_worker(which: str) -> dict[str, float]:
    """Runs inside a fresh interpreter: times one path's steps."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    out: dict[str, float] = {}
    t = time.perf_counter()

    def step(name: str) -> None:
        nonlocal t
        now = time.perf_counter()
        out[name] = now - t
        t = now

    def model_dir() -> Path:
        nonlocal t
        from kg_neo4j.embeddings import resolve_model

        found = resolve_model(MODEL)
        assert found is not None
        t = time.perf_counter()  # finding the model's files is not one of the timed steps
        return found.path

    if which == "sentence-transformers":
        import torch  # noqa: F401

        step("torch import")
        import sentence_transformers

        step("sentence-transformers import")
        path = model_dir()
        model = sentence_transformers.SentenceTransformer(str(path), device="cpu", local_files_only=True)
        step("weight load")
        model.encode(FIRST_TEXTS, normalize_embeddings=True, show_progress_bar=False)
        step("first encode")
        model.encode(FIRST_TEXTS, normalize_embeddings=True, show_progress_bar=False)
        step("second encode")
    elif which == "numpy":
        import numpy  # noqa: F401

        step("numpy import")
        import tokenizers  # noqa: F401

        step("tokenizers import")
        path = model_dir()
        from kg_neo4j.embeddings.numpy_encoder import NumpyEncoder
        from kg_neo4j.embeddings.numpy_support import check_model

        encoder = NumpyEncoder(check_model(path))
        step("weight load")
        encoder.encode(FIRST_TEXTS)
        step("first encode")
        encoder.encode(FIRST_TEXTS)
        step("second encode")
    else:
        out.update(asyncio.run(_server_path()))
    return out


async def _server_path() -> dict[str, float]:
    """The server's own work before a first write, with the embedder already loaded."""
    out: dict[str, float] = {}
    t = time.perf_counter()

    def step(name: str) -> None:
        nonlocal t
        now = time.perf_counter()
        out[name] = now - t
        t = now

    import kg_neo4j.server.app  # noqa: F401  (everything `serve` imports)

    step("server module imports")
    from _common import connection, delete_namespace, new_namespace, sync_driver

    from kg_neo4j import cypher
    from kg_neo4j.embeddings import SentenceEmbedder
    from kg_neo4j.models import EntityIn
    from kg_neo4j.settings import Settings
    from kg_neo4j.store import GraphStore, connect
    from kg_neo4j.store.connection import bootstrap

    cypher._QUERIES = None  # time the statement loading itself (the import above already did it once)
    cypher.queries()
    step("statement loading")
    from kg_neo4j.embeddings import resolve_model

    info = resolve_model(MODEL)
    assert info is not None
    ns = new_namespace("firstwrite-parts", 0)
    driver, conn = await connect(Settings(namespace=ns, embedding_model=MODEL))
    step("driver + first connection")
    try:
        await bootstrap(driver, conn.database, None, info)
        step("schema bootstrap")
        embedder = SentenceEmbedder(info)
        embedder.encode(FIRST_TEXTS)  # loaded and warm: what follows is the write alone
        t = time.perf_counter()
        store = GraphStore(driver, database=conn.database, namespace=ns, embedder=embedder)
        await store.create_entities([EntityIn(**FIRST_ENTITY)])
        step("first create_entities (GraphStore)")
        await store.create_entities([EntityIn(**{**FIRST_ENTITY, "name": "Charles Babbage"})])
        step("second create_entities (GraphStore)")
    finally:
        await driver.close()
        drv = sync_driver(connection())
        delete_namespace(drv, conn.database, ns)
        drv.close()
    return out


def run_parts(runs: int, cold: bool) -> None:
    print(f"\n## Parts, each in a fresh process (median of {runs})\n")
    for which in ("sentence-transformers", "numpy", "server"):
        for cache in ["cold", "warm"] if cold and which != "server" else ["warm"]:
            got: list[dict[str, float]] = []
            if cache == "warm":
                _part(which)
            for _ in range(runs):
                if cache == "cold":
                    drop_caches()
                got.append(_part(which))
            steps = {k: median([g[k] for g in got]) for k in got[0]}
            total = sum(v for k, v in steps.items() if not k.startswith("second"))
            line = ", ".join(f"{k} {v:.3f} s" for k, v in steps.items())
            print(f"- **{which}**, {cache} cache: {line}; total {total:.2f} s")
            log(f"parts {which} {cache}: {steps}")


def _part(which: str) -> dict[str, float]:
    proc = subprocess.run(
        [PYTHON, __file__, "--part", which],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"part {which} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --- 3. same vectors, and throughput -------------------------------------------------------------------
def varied_texts(n: int = 1000) -> list[str]:
    """Real conversation text plus the awkward cases: over-long, many scripts, emoji, whitespace, empty."""
    data = json.loads((ROOT / "benchmarks" / "recall_eval" / "dataset.json").read_text())
    turns = [t["text"] for c in data["conversations"] for s in c["sessions"] for t in s["turns"]]
    questions = [q["question"] for c in data["conversations"] for q in c["questions"]]
    rng = random.Random(20261123)
    odd = [
        "",
        " ",
        "\t\n",
        "a",
        "A" * 600,
        "12345 67890",
        "https://example.com/a?b=c#d",
        "def f(x):\n    return x * 2",
        "日本語のテキストと漢字",
        "Привет, как дела?",
        "مرحبا بالعالم",
        "שלום עולם",
        "Γειά σου Κόσμε",
        "हिन्दी पाठ",
        "한국어 문장입니다",
        "emoji 🙂🚀🔥 👩‍👩‍👧 🇩🇪",
        "Cafe\u0301 vs Café",
        "zero\u200bwidth\u200djoiner",
        "ÀÉÎÕÜ ÇÑ ß",
        "!!!???...,,,",
        "MiXeD CaSe WoRdS",
        "tabs\tand\nnewlines\r\n",
        "\u00a0nbsp\u00a0",
    ]
    texts = list(odd)
    texts += [rng.choice(odd) + " " + rng.choice(turns) for _ in range(60)]  # scripts mixed into real text
    texts += [" ".join(rng.sample(turns, rng.randint(15, 80))) for _ in range(80)]  # 300-1,700 tokens
    texts += rng.sample(questions, 150)
    texts += rng.sample(turns, n - len(texts))
    rng.shuffle(texts)
    return texts[:n]


def encode_worker(runtime: str, texts_file: str) -> None:
    """Runs in its own process: loads one runtime, then answers commands on stdin."""
    import resource

    import numpy as np

    texts: list[str] = json.loads(Path(texts_file).read_text())
    from kg_neo4j.embeddings import resolve_model

    info = resolve_model(MODEL)
    assert info is not None
    threads = int(os.environ.get("BENCH_THREADS", "0")) or None  # None: the runtime's own default
    if runtime == "numpy":
        from kg_neo4j.embeddings.numpy_encoder import NumpyEncoder
        from kg_neo4j.embeddings.numpy_support import check_model

        numpy_encoder = NumpyEncoder(check_model(info.path), workers=threads)

        def encode(batch: list[str]) -> Any:
            return numpy_encoder.encode(batch)
    else:
        import torch
        from sentence_transformers import SentenceTransformer

        if threads:
            torch.set_num_threads(threads)
        model = SentenceTransformer(str(info.path), device="cpu", local_files_only=True)

        def encode(batch: list[str]) -> Any:  # as SentenceEmbedder calls it
            return model.encode(
                batch,
                batch_size=64,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )

    encode(texts[:8])
    print("ready", flush=True)
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "vectors":
            np.save(arg, np.asarray(encode(texts), dtype=np.float32))
            reply: Any = "ok"
        elif cmd == "run":
            size = int(arg)
            t0 = time.perf_counter()
            for i in range(0, len(texts), size):
                encode(texts[i : i + size])
            reply = time.perf_counter() - t0
        else:  # rss
            reply = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(reply), flush=True)


def run_equivalence(rounds: int, n: int, threads: int | None) -> None:
    import numpy as np

    texts = varied_texts(n)
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        workers = {
            rt: subprocess.Popen(
                [PYTHON, __file__, "--encode-worker", rt, str(texts_file)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "HF_HUB_OFFLINE": "1", "BENCH_THREADS": str(threads or 0)},
            )
            for rt in RUNTIMES
        }

        def ask(rt: str, cmd: str) -> Any:
            proc = workers[rt]
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(cmd + "\n")
            proc.stdin.flush()
            return json.loads(proc.stdout.readline())

        try:
            for rt, proc in workers.items():
                assert proc.stdout is not None
                if proc.stdout.readline().strip() != "ready":
                    raise RuntimeError(f"{rt} worker did not start")
            vectors = {}
            for rt in RUNTIMES:
                ask(rt, f"vectors {tmp}/{rt}.npy")
                vectors[rt] = np.load(f"{tmp}/{rt}.npy")
            times: dict[tuple[str, int], list[float]] = {}
            for r in range(rounds):
                for size in (100, 1000):
                    for rt in RUNTIMES if r % 2 == 0 else RUNTIMES[::-1]:  # alternate who goes first
                        times.setdefault((rt, size), []).append(ask(rt, f"run {size}"))
                        log(f"round {r + 1} {rt} calls of {size}: {times[(rt, size)][-1]:.2f} s")
            rss = {rt: ask(rt, "rss") for rt in RUNTIMES}
        finally:
            for proc in workers.values():
                proc.kill()
                proc.wait()
    a, b = vectors["numpy"], vectors["sentence-transformers"]
    cos = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    worst = int(np.argmin(cos))
    print(f"\n## Same vectors: {len(texts)} varied texts\n")
    print(
        f"cosine(numpy, sentence-transformers): min {cos.min():.7f}, mean {cos.mean():.7f}, "
        f"texts below 0.9999: {int((cos < 0.9999).sum())}; worst: {texts[worst][:60]!r}"
    )
    shown = f"{threads} thread(s) each" if threads else "each runtime's default threads"
    print(
        f"\n## Throughput (texts/s, median of {rounds} alternating rounds over the {len(texts)} texts; "
        f"{shown})\n"
    )
    print("| texts per encode call | numpy | sentence-transformers | numpy / sentence-transformers |")
    print("| --- | --- | --- | --- |")
    for size in (100, 1000):
        tn, ts = median(times[("numpy", size)]), median(times[("sentence-transformers", size)])
        print(f"| {size} | {len(texts) / tn:.0f} | {len(texts) / ts:.0f} | {ts / tn:.2f} |")
    print(
        f"\npeak RSS of the worker: numpy {rss['numpy']:.0f} MB, sentence-transformers "
        f"{rss['sentence-transformers']:.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=("e2e", "parts", "vectors"), help="run one part")
    parser.add_argument("--runs", type=int, default=3, help="runs per end-to-end / parts configuration")
    parser.add_argument("--rounds", type=int, default=3, help="alternating throughput rounds")
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument(
        "--threads",
        type=int,
        help="threads per runtime for the throughput part (torch "
        "intra-op threads; numpy worker threads); default: each runtime's own default",
    )
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-cache runs")
    parser.add_argument("--part", help=argparse.SUPPRESS)
    parser.add_argument("--encode-worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part:
        print(json.dumps(part_worker(args.part)))
        return
    if args.encode_worker:
        encode_worker(*args.encode_worker)
        return
    os.environ["HF_HUB_OFFLINE"] = "1"
    cold = not args.no_cold and can_drop_caches()
    if not args.no_cold and not cold:
        log("cannot write /proc/sys/vm/drop_caches (needs root): warm-cache figures only")
    print(
        f"# bench_first_write ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f})"
    )
    if args.only in (None, "e2e"):
        run_e2e(args.runs, cold)
    if args.only in (None, "parts"):
        run_parts(args.runs, cold)
    if args.only in (None, "vectors"):
        run_equivalence(args.rounds, args.texts, args.threads)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
