"""Recall of search_memory on REALTALK (real people's chats), through a real MCP session (issue 35).

REALTALK (Lee et al., 2025; github.com/danny911kr/REALTALK) carries no licence, so nothing of it is
committed: ``--repo`` names a local copy of the repository, of which exactly the ten files directly in
``data/`` (``Chat_1_*.json`` ... ``Chat_10_*.json``) are read, and nothing else (no subfolder of
``data/``: the rest of the repository is kept for an independent check).  The benchmark checks that it
read exactly those ten files.

The protocol (fixed by issue 35; do not change it to improve a figure):

* each chat goes into a namespace of its own, served by ``kg-neo4j serve --namespace <ns>`` over stdio
  with the default model, driven by the MCP Python client;
* one ``create_entities`` call makes one ``person`` entity per speaker, no observations; the name is the
  speaker's as in the data with its first letter capitalised ("elise" -> "Elise");
* then for each day (the ``D<day>`` of the messages' ids) in order, one ``add_observations`` call writes
  that day's non-empty messages in order, one item per message: ``{"entityName": speaker, "contents":
  ["Speaker: text"]}``;
* each question goes verbatim to ``search_memory`` with ``limit`` 10; a hit counts when its observation's
  text is one of the evidence messages (matched by text to message ids);
* evidence: each evidence string split at ``;``, ``,`` and whitespace; a piece counts when it is exactly
  ``D<day>:<n>`` or ``D:<day>:<n>`` (leading zeros of ``<n>`` dropped) and names a message of the chat;
  a question none of whose pieces does is left out;
* reported per category and overall: hit@10, ev@10 (share of the evidence found), MRR, day-level hit@10,
  ingest time, query p50/p95.  The split: dev = chats 1-5, frozen = chats 6-10.

    .venv/bin/python -m benchmarks.bench_realtalk --repo /path/to/REALTALK --split dev

``--tiny`` (CI's smoke run) needs no copy: it writes ten two-day chats of its own in REALTALK's format to a
temporary directory and runs the same protocol on them.

``--keep PREFIX`` keeps the namespaces (``PREFIX-chat<N>``) and ``--reuse PREFIX`` asks a kept copy
again without writing (for fusion-only changes: a change to what is written needs a fresh ingest).
Progress goes to stderr, the tables to stdout.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from benchmarks.harness import (
    Results,
    arguments,
    connection,
    delete_namespace,
    kg_serve,
    log,
    mcp_session,
    percentile,
    structured,
    sync_driver,
)

LIMIT = 10
CHAT_FILE = re.compile(r"^Chat_(\d+)_[A-Za-z]+_[A-Za-z]+\.json$")
SPLITS = {"dev": range(1, 6), "frozen": range(6, 11), "all": range(1, 11)}
_PIECE = re.compile(r"^D:?(\d+):(\d+)$")


@dataclass
class Chat:
    number: int
    speakers: list[str]
    days: list[tuple[int, list[tuple[str, str, str]]]]  # (day, [(message id, speaker, text)])
    questions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def messages(self) -> dict[str, tuple[str, str]]:
        return {mid: (sp, tx) for _, msgs in self.days for mid, sp, tx in msgs}


def _speaker(name: str) -> str:
    return name[:1].upper() + name[1:]


def message_id(day: int, n: int) -> str:
    return f"D{day}:{n}"


def evidence_ids(evidence: list[str], known: set[str]) -> list[str]:
    """The protocol's reading of a question's evidence (module docstring)."""
    out: list[str] = []
    for item in evidence:
        for piece in re.split(r"[;,\s]+", item):
            m = _PIECE.match(piece)
            if m:
                mid = message_id(int(m.group(1)), int(m.group(2)))
                if mid in known and mid not in out:
                    out.append(mid)
    return out


def load_chats(repo: Path) -> list[Chat]:
    """The ten chat files directly in ``repo/data`` and nothing else."""
    data = repo / "data"
    if not data.is_dir():
        raise SystemExit(f"--repo: {data} is not a directory (give the repository's root)")
    files = sorted(
        (p for p in data.iterdir() if p.is_file() and CHAT_FILE.match(p.name)),
        key=lambda p: int(CHAT_FILE.match(p.name).group(1)),  # type: ignore[union-attr]
    )
    numbers = [int(CHAT_FILE.match(p.name).group(1)) for p in files]  # type: ignore[union-attr]
    if numbers != list(range(1, 11)):
        raise SystemExit(f"--repo: expected Chat_1 ... Chat_10 directly in {data}, found {numbers}")
    chats = []
    for path, number in zip(files, numbers, strict=True):
        raw = json.loads(path.read_text())
        speakers = [_speaker(raw["name"][k]) for k in sorted(raw["name"])]
        by_day: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
        order: list[int] = []
        for key in sorted((k for k in raw if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k[8:])):
            for msg in raw[key]:
                text = (msg.get("clean_text") or "").strip()
                m = _PIECE.match(msg["dia_id"])
                if not text or not m:
                    continue
                day = int(m.group(1))
                if day not in by_day:
                    order.append(day)
                by_day[day].append((message_id(day, int(m.group(2))), _speaker(msg["speaker"]), text))
        chat = Chat(number, speakers, [(d, by_day[d]) for d in order])
        known = set(chat.messages)
        for i, q in enumerate(raw.get("qa", [])):
            ev = evidence_ids([str(e) for e in q.get("evidence", [])], known)
            if ev:
                chat.questions.append(
                    {
                        "id": f"c{number}q{i}",
                        "question": q["question"],
                        "category": q["category"],
                        "evidence": ev,
                    }
                )
        chats.append(chat)
    return chats


def tiny_repo(root: Path) -> Path:
    """Ten small chats in REALTALK's file format (our own text), for the smoke run."""
    data = root / "data"
    data.mkdir(parents=True)
    topics = ["pasta with peas", "skiing in Colorado", "a trip to Miami", "a new job at the bakery"]
    for n in range(1, 11):
        chat: dict[str, Any] = {"name": {"speaker_1": "Ana", "speaker_2": "bo"}, "qa": []}
        for day in (1, 2):
            topic = topics[(n + day) % len(topics)]
            chat[f"session_{day}"] = [
                {"clean_text": f"Hi! Today I tried {topic}.", "speaker": "Ana", "dia_id": f"D{day}:1"},
                {"clean_text": "", "speaker": "bo", "dia_id": f"D{day}:2"},
                {"clean_text": f"Nice, tell me about {topic}?", "speaker": "bo", "dia_id": f"D{day}:3"},
            ]
            chat["qa"].append(
                {"question": f"What did Ana try on day {day}?", "evidence": [f"D{day}:1"], "category": day}
            )
        chat["qa"].append({"question": "Unanswerable?", "evidence": ["D9:99"], "category": 3})
        (data / f"Chat_{n}_Ana_Bo.json").write_text(json.dumps(chat))
    return root


async def write_chat(session: Any, chat: Chat) -> None:
    structured(
        await session.call_tool(
            "create_entities",
            {"entities": [{"name": s, "entityType": "person", "observations": []} for s in chat.speakers]},
        ),
        "create_entities",
    )
    for _, msgs in chat.days:
        items = [{"entityName": sp, "contents": [f"{sp}: {tx}"]} for _, sp, tx in msgs]
        structured(await session.call_tool("add_observations", {"observations": items}), "add_observations")


async def run_chat(
    chat: Chat, ns: str, conn: Any, write: bool, bar: tqdm
) -> tuple[float, list[dict[str, Any]]]:
    by_text: dict[tuple[str, str], str] = {}
    for mid, (sp, tx) in chat.messages.items():
        by_text.setdefault((sp, f"{sp}: {tx}"), mid)
    rows = []
    async with mcp_session(kg_serve(conn, ns)) as session:
        ingest_s = 0.0
        if write:
            bar.set_postfix_str(f"chat {chat.number} writing")
            t0 = time.perf_counter()
            await write_chat(session, chat)
            ingest_s = time.perf_counter() - t0
        bar.set_postfix_str(f"chat {chat.number} asking")
        for q in chat.questions:
            t0 = time.perf_counter()
            data = structured(
                await session.call_tool("search_memory", {"query": q["question"], "limit": LIMIT}),
                "search_memory",
            )
            ms = (time.perf_counter() - t0) * 1000
            found = [by_text.get((h["name"], h.get("observation") or "")) for h in data["hits"]]
            rows.append(score_row(chat, q, found, ms))
            bar.update(1)
    return ingest_s, rows


async def ask_store(
    chats: list[Chat], prefix: str, weights: dict[str, Any], bar: tqdm
) -> list[dict[str, Any]]:
    """The questions asked of kept namespaces in this process, through ``GraphStore.search_memory`` with
    fusion weights overridden (a store-level switch of the benchmark for tuning, not a server setting)."""
    import dataclasses

    from kg_neo4j.embeddings import load_embedder
    from kg_neo4j.fusion import FusionWeights
    from kg_neo4j.settings import Settings
    from kg_neo4j.store import GraphStore
    from kg_neo4j.store.connection import connect

    drv, _ = await connect(Settings())
    embedder = load_embedder("all-MiniLM-L6-v2")
    rows: list[dict[str, Any]] = []
    try:
        for chat in chats:
            store = GraphStore(
                drv,
                database=connection().database,
                namespace=f"{prefix}-chat{chat.number}",
                embedder=embedder,
            )
            store.fusion = dataclasses.replace(FusionWeights(), **weights)
            by_text = {(sp, f"{sp}: {tx}"): mid for mid, (sp, tx) in chat.messages.items()}
            for q in chat.questions:
                t0 = time.perf_counter()
                res = await store.search_memory(q["question"], limit=LIMIT)
                ms = (time.perf_counter() - t0) * 1000
                rows.append(
                    score_row(chat, q, [by_text.get((h.name, h.observation or "")) for h in res.hits], ms)
                )
                bar.update(1)
    finally:
        await drv.close()
    return rows


def score_row(chat: Chat, q: dict[str, Any], found: list[str | None], ms: float) -> dict[str, Any]:
    ev = set(q["evidence"])
    rank = next((i for i, mid in enumerate(found, 1) if mid in ev), None)
    ev_days = {mid.split(":")[0] for mid in ev}
    return {
        "id": q["id"],
        "chat": chat.number,
        "category": q["category"],
        "rank": rank,
        "ev_found": len(ev & {m for m in found if m}) / len(ev),
        "day_hit": any(m and m.split(":")[0] in ev_days for m in found),
        "ms": ms,
        "found": found,
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def block(sel: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(sel)
        return {
            "questions": n,
            "hit@10": sum(1 for r in sel if r["rank"]) / n,
            "ev@10": sum(r["ev_found"] for r in sel) / n,
            "mrr": sum(1 / r["rank"] for r in sel if r["rank"]) / n,
            "day_hit@10": sum(1 for r in sel if r["day_hit"]) / n,
        }

    cats = sorted({r["category"] for r in rows})
    out: dict[str, Any] = {str(c): block([r for r in rows if r["category"] == c]) for c in cats}
    out["all"] = block(rows)
    ms = [r["ms"] for r in rows]
    out["query_ms"] = {"p50": statistics.median(ms), "p95": percentile(ms, 95)}
    return out


async def main() -> int:
    ap = arguments(__doc__)
    ap.add_argument("--repo", type=Path, help="a local copy of the REALTALK repository (not with --tiny)")
    ap.add_argument("--split", choices=sorted(SPLITS), default="dev")
    ap.add_argument("--chats", default="", help="comma-separated chat numbers within the split")
    ap.add_argument("--keep", metavar="PREFIX", help="keep the namespaces as PREFIX-chat<N>")
    ap.add_argument(
        "--reuse", metavar="PREFIX", help="ask the kept namespaces PREFIX-chat<N> without writing"
    )
    ap.add_argument(
        "--weights",
        type=json.loads,
        help="with --reuse: ask in this process through GraphStore.search_memory with these FusionWeights "
        "overrides (a JSON object), not through MCP: for tuning only",
    )
    ap.add_argument("--rows", type=Path, help="also write the per-question rows here (JSON)")
    args = ap.parse_args()
    if args.tiny == (args.repo is not None):
        ap.error("give --repo (a local copy of REALTALK) or --tiny, not both")
    if args.weights is not None and not args.reuse:
        ap.error("--weights needs --reuse")
    with tempfile.TemporaryDirectory() as tmp:
        repo = tiny_repo(Path(tmp)) if args.tiny else args.repo
        chats = [c for c in load_chats(repo) if c.number in SPLITS[args.split]]
    if args.chats:
        wanted = {int(x) for x in args.chats.split(",")}
        chats = [c for c in chats if c.number in wanted]
    conn = connection()
    sdrv = sync_driver(conn)
    prefix = args.reuse or args.keep or f"bench-realtalk-{uuid.uuid4().hex[:6]}"
    n_q = sum(len(c.questions) for c in chats)
    log(
        f"REALTALK {args.split}: {len(chats)} chats, {sum(len(c.messages) for c in chats)} messages, {n_q} questions"
    )
    results = Results(f"realtalk-{args.split}", args)
    rows: list[dict[str, Any]] = []
    ingest: dict[int, float] = {}
    try:
        with tqdm(total=n_q, file=sys.stderr, unit="q", dynamic_ncols=True) as bar:
            if args.weights is not None:
                rows = await ask_store(chats, args.reuse, args.weights, bar)
            else:
                for chat in chats:
                    ns = f"{prefix}-chat{chat.number}"
                    try:
                        ingest[chat.number], got = await run_chat(chat, ns, conn, args.reuse is None, bar)
                    finally:
                        if not (args.keep or args.reuse):
                            delete_namespace(sdrv, conn.database, ns)
                    rows.extend(got)
    finally:
        sdrv.close()
    summary = summarise(rows)
    how = (
        f"GraphStore.search_memory, weights {args.weights}"
        if args.weights is not None
        else "MCP search_memory"
    )
    print(f"REALTALK {args.split} (chats {', '.join(str(c.number) for c in chats)}): {how}")
    body = [
        [k if k != "all" else "all", s["questions"], s["hit@10"], s["ev@10"], s["mrr"], s["day_hit@10"]]
        for k, s in summary.items()
        if k != "query_ms"
    ]
    print(
        results.table(
            "by_category",
            ["category", "questions", "hit@10", "ev@10", "MRR", "day hit@10"],
            [[r[0], r[1], *(f"{x:.3f}" for x in r[2:])] for r in body],
        )
    )
    q = summary["query_ms"]
    print(results.note(f"query p50 {q['p50']:.0f} ms, p95 {q['p95']:.0f} ms"))
    results.figures.update(query_p50_ms=round(q["p50"]), query_p95_ms=round(q["p95"]), weights=args.weights)
    if ingest:
        total = sum(ingest.values())
        print(
            results.note(
                f"ingest {total:.1f} s: " + ", ".join(f"chat {k} {v:.1f} s" for k, v in ingest.items())
            )
        )
        results.figures["ingest_s"] = round(total, 1)
    if args.rows:
        args.rows.write_text(json.dumps({"summary": summary, "rows": rows}))
    results.save(conn)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
