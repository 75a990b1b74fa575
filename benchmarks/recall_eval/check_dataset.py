#!/usr/bin/env python3
"""Validate a recall evaluation set: v1 (benchmarks/recall_eval/dataset.json) or a v2 split (v2/*.json).

Stdlib only.  Checks structure and ids, prints statistics, and measures the
share of questions that share no content word with any of their evidence
turns ("zero-overlap" questions).  Exit status 1 on any error, if the
zero-overlap share is below 40 %, or if there are fewer than 300 questions.

A v2 split (a ``split`` key) is also held to issue 15's shape: the categories
single-hop / multi-hop / temporal / open-domain, every conversation 500+ turns,
500+ questions in the frozen split, a speaker's evidence turn text not repeated
by that speaker (a hit is matched by speaker and text), multi-hop evidence from
two sessions or more, and every question with an ``answer``.  Given both splits,
it also checks that they share no speaker and no question.

Usage:  python benchmarks/recall_eval/check_dataset.py [path/to/dataset.json ...]
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

MIN_QUESTIONS = 300
MIN_ZERO_OVERLAP_SHARE = 0.40
CATEGORIES = {"single-hop", "multi-hop", "temporal", "paraphrase", "preference"}
V2_CATEGORIES = {"single-hop", "multi-hop", "temporal", "open-domain"}
V2_MIN_TURNS = 500  # per conversation
V2_MIN_FROZEN_QUESTIONS = 500

# A common English stop-word list (NLTK-style plus a few modals and
# contraction stubs).  Only tokens of 3+ letters matter, but short words are
# kept so the list reads like a normal stop-word list.
STOP_WORDS = frozenset(
    """
a about above after again against all also am an and any are as at
be because been before being below between both but by
can could did do does doing down during
each few for from further
had has have having he her here hers herself him himself his how
i if in into is it its itself just
me more most my myself
no nor not now of off on once only or other our ours ourselves out over own
same she should so some such
than that the their theirs them themselves then there these they this those
through to too under until up very
was we were what when where which while who whom why will with would
you your yours yourself yourselves
don doesn didn isn wasn aren weren won wouldn couldn shouldn haven hasn hadn
mustn needn ain ll ve re let may might must shall yes yeah okay
""".split()
)

TOKEN_RE = re.compile(r"[^\W\d_]+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text.lower())


def content_words(text: str, ignore: set[str]) -> set[str]:
    return {t for t in tokens(text) if len(t) >= 3 and t not in STOP_WORDS and t not in ignore}


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv[1:]] or [Path(__file__).with_name("dataset.json")]
    status = 0
    seen: dict[str, tuple[set[str], set[str]]] = {}
    for path in paths:
        status |= check(path, seen)
    if len(seen) > 1:
        (a, (sa, qa)), (b, (sb, qb)) = list(seen.items())[:2]
        shared = (sa & sb) | (qa & qb)
        if shared:
            print(f"\nFAILED: {a} and {b} share speakers or questions: {sorted(shared)[:10]}")
            status = 1
        else:
            print(f"\nsplits {a} and {b}: no shared speaker or question")
    return status


def check(path: Path, seen: dict[str, tuple[set[str], set[str]]]) -> int:
    data = json.loads(path.read_text(encoding="utf-8"))
    errors: list[str] = []
    v2 = "split" in data
    categories = V2_CATEGORIES if v2 else CATEGORIES
    questions_seen: set[str] = set()

    for key in ("name", "frozen", "description", "conversations"):
        if key not in data:
            errors.append(f"missing top-level key {key!r}")

    seen_ids: set[str] = set()

    def claim(id_: str, what: str) -> None:
        if not isinstance(id_, str) or not id_:
            errors.append(f"bad {what} id {id_!r}")
        elif id_ in seen_ids:
            errors.append(f"duplicate id {id_!r} ({what})")
        else:
            seen_ids.add(id_)

    n_conv = n_sess = n_turn = n_q = n_zero = 0
    cat_counts: Counter[str] = Counter()
    cat_zero: Counter[str] = Counter()
    ev_sizes: Counter[int] = Counter()
    all_speakers: list[str] = []
    per_conv: list[str] = []

    for conv in data.get("conversations", []):
        n_conv += 1
        cid = conv.get("id")
        claim(cid, "conversation")
        speakers = conv.get("speakers", [])
        if len(speakers) != 2 or len(set(speakers)) != 2:
            errors.append(f"{cid}: needs two different speakers, got {speakers!r}")
        all_speakers.extend(speakers)
        ignore = {t for s in speakers for t in tokens(s)}
        turns: dict[str, str] = {}
        speaker_of: dict[str, str] = {}
        session_of: dict[str, str] = {}
        said: Counter[tuple[str, str]] = Counter()
        c_sess = c_turn = 0
        last_date = ""
        for sess in conv.get("sessions", []):
            c_sess += 1
            claim(sess.get("id"), "session")
            date = sess.get("date", "")
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date or ""):
                errors.append(f"{sess.get('id')}: bad date {date!r}")
            elif date <= last_date:
                errors.append(f"{sess.get('id')}: date {date} not after previous session {last_date}")
            last_date = date or last_date
            for turn in sess.get("turns", []):
                c_turn += 1
                tid = turn.get("id")
                claim(tid, "turn")
                if turn.get("speaker") not in speakers:
                    errors.append(f"{tid}: speaker {turn.get('speaker')!r} not in {speakers!r}")
                if not str(turn.get("text", "")).strip():
                    errors.append(f"{tid}: empty text")
                turns[tid] = turn.get("text", "")
                speaker_of[tid] = turn.get("speaker", "")
                session_of[tid] = sess.get("id", "")
                said[(speaker_of[tid], turns[tid])] += 1
        if v2 and c_turn < V2_MIN_TURNS:
            errors.append(f"{cid}: {c_turn} turns (< {V2_MIN_TURNS})")
        c_q = c_zero = 0
        for q in conv.get("questions", []):
            c_q += 1
            qid = q.get("id")
            claim(qid, "question")
            cat = q.get("category")
            if cat not in categories:
                errors.append(f"{qid}: unknown category {cat!r}")
            cat_counts[cat] += 1
            ev = q.get("evidence", [])
            ev_sizes[len(ev)] += 1
            if not 1 <= len(ev) <= 3:
                errors.append(f"{qid}: needs 1-3 evidence ids, has {len(ev)}")
            missing = [e for e in ev if e not in turns]
            if missing:
                errors.append(f"{qid}: evidence not found in {cid}: {missing}")
                continue
            if len(set(ev)) != len(ev):
                errors.append(f"{qid}: repeated evidence id")
            if v2:
                questions_seen.add(q.get("question", ""))
                if "answer" not in q:
                    errors.append(f"{qid}: no answer")
                twice = [e for e in ev if said[(speaker_of[e], turns[e])] > 1]
                if twice:
                    errors.append(f"{qid}: evidence text said twice by its speaker: {twice}")
                if cat == "multi-hop" and len({session_of[e] for e in ev}) < 2:
                    errors.append(f"{qid}: multi-hop evidence from one session")
            qwords = content_words(q.get("question", ""), ignore)
            evwords: set[str] = set()
            for e in ev:
                evwords |= content_words(turns[e], ignore)
            if not qwords & evwords:
                c_zero += 1
                cat_zero[cat] += 1
        n_sess += c_sess
        n_turn += c_turn
        n_q += c_q
        n_zero += c_zero
        per_conv.append(
            f"  {cid}: {' & '.join(speakers):<22} sessions={c_sess:2d} turns={c_turn:4d} "
            f"questions={c_q:3d} zero-overlap={c_zero:3d}"
        )

    dup_names = [n for n, k in Counter(all_speakers).items() if k > 1]
    if dup_names:
        errors.append(f"speaker names reused across conversations: {dup_names}")

    share = n_zero / n_q if n_q else 0.0
    print(f"dataset: {data.get('name')}  (frozen {data.get('frozen')})")
    print(f"conversations: {n_conv}")
    print(f"sessions:      {n_sess}")
    print(f"turns:         {n_turn}")
    print(f"questions:     {n_q}")
    print("per conversation:")
    print("\n".join(per_conv))
    print("questions by category (zero-overlap / total):")
    for cat in sorted(cat_counts, key=str):
        print(f"  {cat:<11} {cat_zero[cat]:3d} / {cat_counts[cat]:3d}")
    print("evidence turns per question: " + ", ".join(f"{k}: {v}" for k, v in sorted(ev_sizes.items())))
    print(f"zero content-word overlap with evidence: {n_zero}/{n_q} = {share:.1%}")

    if v2:
        seen[str(path)] = (set(all_speakers), questions_seen)
        if data.get("split") == "frozen" and n_q < V2_MIN_FROZEN_QUESTIONS:
            errors.append(f"frozen split has {n_q} questions (< {V2_MIN_FROZEN_QUESTIONS})")
    if n_q < MIN_QUESTIONS:
        errors.append(f"only {n_q} questions (< {MIN_QUESTIONS})")
    if share < MIN_ZERO_OVERLAP_SHARE:
        errors.append(f"zero-overlap share {share:.1%} below {MIN_ZERO_OVERLAP_SHARE:.0%}")

    if errors:
        print(f"\nFAILED with {len(errors)} error(s):")
        for e in errors[:50]:
            print("  - " + e)
        if len(errors) > 50:
            print(f"  ... and {len(errors) - 50} more")
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
