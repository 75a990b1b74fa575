"""Builds the labelled typo pairs of issue 38 (README.md beside this file): deterministic (seed 38).

    .venv/bin/python -m benchmarks.entity_pairs.typos.build      # writes frozen.jsonl, then dev.jsonl

Each line is one record: ``{"id", "label" (1: one person, 0: two), "kind", "hard", "a", "b"}`` and, for
the "A. Smith beside two Smiths" records, ``"others"``: more entities that go into the same namespace
(each side a person with ``name``, ``type``, ``observations``, ``neighbours`` as in the first set).

People are records as typed into a form: a name, an address, a birth date and an id number, one
observation each ("lives at 14 Baker Street, Leith", "born 1984-03-12", "id number 48213377").  A
positive is one person typed twice: each mention keeps 2 or 3 of the three facts (so two mentions
share at least one, possibly mistyped) and the name and the facts are corrupted by the model below.
A negative is two people with facts of their own.

The corruption model (:func:`corrupt_word`, :func:`phonetic`, :func:`corrupt_fact`):

* keyboard-neighbour substitution: a letter replaced by one of its QWERTY neighbours;
* transposition: two adjacent letters swapped;
* dropped letter; doubled letter;
* phonetic spelling: one of a list of sound-alike rewrites (ph/f, ck/k, ee/ea, y/i, ou/ow, ...), or a
  doubled consonant made single and the other way round;
* swapped name parts ("Okafor Martha"), clean or with one typo;
* in the observations, each fact of the second mention mistyped with probability 0.3: a word of the
  address by the word model above, a birth date's two adjacent digits swapped or one digit changed, an
  id number's digit changed, dropped or two adjacent digits swapped.

Hard negatives: different people whose names are one edit apart (given name or surname, different
facts); Smith/Smyth families (one given name, the surnames a sound-alike pair, different facts); "A.
Smith" beside two Smiths (the initials form is one of them, typed with the address only: its pair with
the other is a labelled non-match, and ambiguous forms must never be merged).  Easy negatives: two
unrelated people.

Given names come from the nicknames registry package (carltonnorthern's names.csv), surnames from the
first set's list plus the list below.  The split: a record is frozen when the first byte of
sha256("38:" + id) is even; frozen.jsonl is written first and its sha256 printed.
"""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
from benchmarks.entity_pairs import build as first_set  # noqa: E402  (the first set's name pools)

SEED = 38
SURNAMES = (
    first_set.SURNAMES
    + (
        "Okafor Ferreira Raman Berg Nakamura Kowalski Novak Lindqvist Haddad Mensah Silva Costa Ivanova "
        "Petrov Horvat Kaya Yilmaz Chen Wong Nguyen Tran Kim Park Singh Patel Sharma Gupta Mehta Iyer Rossi "
        "Russo Romano Bianchi Ricci Greco Moreau Laurent Lefebvre Girard Fontaine Bauer Becker Schulz Hoffmann "
        "Wagner Keller Vogel Jansen Visser Smit Bakker Dekker Mulder Larsen Hansen Nielsen Jensen Andersen "
        "Johansson Karlsson Nilsson Eriksson Virtanen Korhonen Nieminen Murray Doyle Byrne Walsh Quinn Brennan "
        "Gallagher Fitzgerald Kavanagh Mahoney Sheridan Whitaker Pemberton Ashworth Blackwood Thornton Hawkins "
        "Lawrence Chambers Fletcher Holloway Kingsley Montgomery Ramsey Sinclair Sutherland Vaughan Winslow"
    ).split()
)
STREETS = (
    "Baker Market Church Mill Station Victoria Albert Park Queen King High Bridge Castle Chapel Garden "
    "Harbour Lime Maple Orchard Rose Willow Cedar Elm Oak Ash Birch Meadow River Hill Forest"
).split()
STREET_KINDS = ["Street", "Road", "Lane", "Avenue", "Close", "Terrace", "Gardens", "Way"]
TOWNS = (
    "Leith Dundee Bristol Leeds Norwich Exeter Cardiff Swansea Belfast Galway Cork Limerick Derby "
    "Preston Bolton Reading Oxford Cambridge Brighton Plymouth Aberdeen Inverness Stirling Perth Bath "
    "Chester Durham Lincoln Carlisle Kendal Harrogate Whitby Ipswich Colchester Salisbury Truro"
).split()

#: QWERTY neighbours of each letter (same row and the rows above and below).
KEYBOARD = {
    "q": "wa", "w": "qase", "e": "wsdr", "r": "edft", "t": "rfgy", "y": "tghu", "u": "yhji", "i": "ujko",
    "o": "iklp", "p": "ol", "a": "qwsz", "s": "awedxz", "d": "serfcx", "f": "drtgvc", "g": "ftyhbv",
    "h": "gyujnb", "j": "huikmn", "k": "jiolm", "l": "kop", "z": "asx", "x": "zsdc", "c": "xdfv",
    "v": "cfgb", "b": "vghn", "n": "bhjm", "m": "njk",
}  # fmt: skip
#: Sound-alike rewrites (either way round), tried in a random order; the first that applies is used.
PHONETIC = [
    ("ph", "f"), ("ck", "k"), ("ee", "ea"), ("ie", "y"), ("y", "i"), ("ou", "ow"), ("c", "k"),
    ("s", "z"), ("th", "t"), ("ei", "ie"), ("er", "ar"), ("an", "en"), ("on", "an"), ("ow", "au"),
    ("ai", "ay"), ("ey", "y"), ("oo", "u"), ("qu", "kw"), ("x", "ks"), ("ch", "sh"), ("v", "w"),
]  # fmt: skip
WORD_KINDS = ("keyboard", "transposition", "dropped", "doubled", "phonetic")


def _case(template: str, word: str) -> str:
    return word.title() if template[:1].isupper() else word


def corrupt_word(rng: random.Random, word: str, kind: str) -> str:
    """``word`` with one error of ``kind`` (the first letter is kept for keyboard and dropped errors
    about as often as people keep it: 1 in len(word)); returns ``word`` when none applies."""
    w = word.lower()
    if len(w) < 3:
        return word
    if kind == "keyboard":
        i = rng.randrange(len(w))
        if w[i] not in KEYBOARD:
            return word
        out = w[:i] + rng.choice(KEYBOARD[w[i]]) + w[i + 1 :]
    elif kind == "transposition":
        i = rng.randrange(len(w) - 1)
        out = w[:i] + w[i + 1] + w[i] + w[i + 2 :]
    elif kind == "dropped":
        i = rng.randrange(1, len(w))
        out = w[:i] + w[i + 1 :]
    elif kind == "doubled":
        i = rng.randrange(len(w))
        out = w[: i + 1] + w[i] + w[i + 1 :]
    else:
        out = phonetic(rng, w)
    return _case(word, out)


def phonetic(rng: random.Random, w: str) -> str:
    rules = PHONETIC[:]
    rng.shuffle(rules)
    for a, b in rules:
        for x, y in ((a, b), (b, a)):
            if x in w[1:]:  # the sound of the first letter is rarely respelt
                i = w.index(x, 1)
                return w[:i] + y + w[i + len(x) :]
    for i in range(1, len(w) - 1):  # doubled consonant single, or a single one doubled
        if w[i] == w[i + 1] and w[i] not in "aeiou":
            return w[:i] + w[i + 1 :]
    i = next((i for i in range(1, len(w)) if w[i] not in "aeiouy"), len(w) - 1)
    return w[: i + 1] + w[i] + w[i + 1 :]


def digits_typo(rng: random.Random, digits: str, drop: bool = True) -> str:
    """One digit changed, dropped (when ``drop``), or two adjacent digits swapped."""
    i = rng.randrange(len(digits) - 1)
    r = rng.random()
    if r < 0.4:
        return digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :]
    if r < 0.8 or not drop:
        return digits[:i] + rng.choice([d for d in "0123456789" if d != digits[i]]) + digits[i + 1 :]
    return digits[:i] + digits[i + 1 :]


class Person:
    """One person's facts, typed as observations."""

    def __init__(self, rng: random.Random) -> None:
        self.number = rng.randrange(1, 200)
        self.street = f"{rng.choice(STREETS)} {rng.choice(STREET_KINDS)}"
        self.town = rng.choice(TOWNS)
        self.born = f"{rng.randrange(1940, 2005)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
        self.id = f"{rng.randrange(10**7, 10**8)}"

    def facts(self, rng: random.Random, typo: float) -> dict[str, str]:
        street, town, born, ident = self.street, self.town, self.born, self.id
        if rng.random() < typo:  # a word of the address
            if rng.random() < 0.5:
                w, k = street.split(" ", 1)
                street = f"{corrupt_word(rng, w, rng.choice(WORD_KINDS))} {k}"
            else:
                town = corrupt_word(rng, town, rng.choice(WORD_KINDS))
        if rng.random() < typo:
            d = born.replace("-", "")
            d = digits_typo(rng, d, drop=False)
            born = f"{d[:4]}-{d[4:6]}-{d[6:8]}"
        if rng.random() < typo:
            ident = digits_typo(rng, ident)
        return {
            "address": f"lives at {self.number} {street}, {town}",
            "born": f"born {born}",
            "id": f"id number {ident}",
        }


def mention(
    rng: random.Random, name: str, person: Person, typo: float, keep: int | None = None
) -> dict[str, Any]:
    facts = person.facts(rng, typo)
    kept = rng.sample(sorted(facts), keep or rng.randint(2, 3))
    return {
        "name": name,
        "type": "person",
        "observations": [facts[k] for k in ("address", "born", "id") if k in kept],
        "neighbours": [],
    }


def given(rng: random.Random) -> str:
    return first_set.first(rng)


Record = dict[str, Any]


def positives(rng: random.Random) -> list[tuple[str, int, Callable[[], Record]]]:
    """(kind, weight, maker): one person, two mentions, the second corrupted."""

    def word_typo(kind: str, where: str) -> Callable[[], Record]:
        def make() -> Record:
            f, s = given(rng), rng.choice(SURNAMES)
            part = rng.choice(["given", "surname"]) if where == "either" else where
            f2, s2 = (corrupt_word(rng, f, kind), s) if part == "given" else (f, corrupt_word(rng, s, kind))
            return pair(f"{kind}_{part}", 1, False, f"{f} {s}", f"{f2} {s2}")

        return make

    def swapped() -> Record:
        f, s = given(rng), rng.choice(SURNAMES)
        if rng.random() < 0.5:
            return pair("swapped", 1, False, f"{f} {s}", f"{s} {f}")
        return pair(
            "swapped_typo", 1, False, f"{f} {s}", f"{s} {corrupt_word(rng, f, rng.choice(WORD_KINDS))}"
        )

    def two_typos() -> Record:
        f, s = given(rng), rng.choice(SURNAMES)
        f2, s2 = corrupt_word(rng, f, rng.choice(WORD_KINDS)), corrupt_word(rng, s, rng.choice(WORD_KINDS))
        return pair("typo_both_parts", 1, False, f"{f} {s}", f"{f2} {s2}")

    def pair(kind: str, label: int, hard: bool, a: str, b: str) -> Record:
        person = Person(rng)
        return {
            "kind": kind,
            "label": label,
            "hard": hard,
            "a": mention(rng, a, person, 0.0),
            "b": mention(rng, b, person, 0.3),
        }

    out = [(k, 12, word_typo(k, "either")) for k in WORD_KINDS]
    return out + [("swapped", 8, swapped), ("typo_both_parts", 4, two_typos)]


def negatives(rng: random.Random) -> list[tuple[str, int, Callable[[], Record]]]:
    """(kind, weight, maker): two people."""

    def two(kind: str, a: str, b: str, hard: bool = True) -> Record:
        return {
            "kind": kind,
            "label": 0,
            "hard": hard,
            "a": mention(rng, a, Person(rng), 0.0),
            "b": mention(rng, b, Person(rng), 0.0),
        }

    def one_edit() -> Record:
        f, s = given(rng), rng.choice(SURNAMES)
        if rng.random() < 0.5:
            return two(
                "one_edit_given", f"{f} {s}", f"{corrupt_word(rng, f, rng.choice(WORD_KINDS[:4]))} {s}"
            )
        return two("one_edit_surname", f"{f} {s}", f"{f} {corrupt_word(rng, s, rng.choice(WORD_KINDS[:4]))}")

    def families() -> Record:
        f = given(rng)
        s = rng.choice(SURNAMES)
        return two("sound_alike_family", f"{f} {s}", f"{f} {phonetic(rng, s.lower()).title()}")

    def initials_two() -> Record:
        s = rng.choice(SURNAMES)
        f1 = given(rng)
        f2 = next(g for g in iter(lambda: given(rng), None) if g[0] == f1[0] and g != f1)
        p1, p2 = Person(rng), Person(rng)
        short = {
            "name": f"{f1[0]}. {s}",
            "type": "person",
            "observations": [p1.facts(rng, 0.0)["address"]],
            "neighbours": [],
        }
        return {
            "kind": "initials_two_people",
            "label": 0,
            "hard": True,
            "a": short,
            "b": mention(rng, f"{f2} {s}", p2, 0.0),
            # the person the initials form is: listed with it is right, merged with it is not (ambiguous)
            "others": [mention(rng, f"{f1} {s}", p1, 0.0)],
        }

    def unrelated() -> Record:
        return two(
            "unrelated", f"{given(rng)} {rng.choice(SURNAMES)}", f"{given(rng)} {rng.choice(SURNAMES)}", False
        )

    return [
        ("one_edit", 14, one_edit),
        ("sound_alike_family", 8, families),
        ("initials_two_people", 4, initials_two),
        ("unrelated", 4, unrelated),
    ]


def frozen(record_id: str) -> bool:
    return hashlib.sha256(f"{SEED}:{record_id}".encode()).digest()[0] % 2 == 0


def build(n_pos: int = 420, n_neg: int = 220) -> list[Record]:
    rng = random.Random(SEED)
    pos = [m for _, w, m in positives(rng) for _ in range(w)]
    neg = [m for _, w, m in negatives(rng) for _ in range(w)]
    makers = [pos[i % len(pos)] for i in range(n_pos)] + [neg[i % len(neg)] for i in range(n_neg)]
    out: list[Record] = []
    for i, make in enumerate(makers):
        rec = make()
        names = [rec["a"]["name"], rec["b"]["name"], *(o["name"] for o in rec.get("others", []))]
        if len(set(names)) < len(names):  # a corruption that changed nothing ("Li" is too short): drawn again
            rec = make()
            names = [rec["a"]["name"], rec["b"]["name"], *(o["name"] for o in rec.get("others", []))]
            if len(set(names)) < len(names):
                continue
        out.append({"id": f"t{i:04d}", **rec})
    return out


def main() -> int:
    rows = build()
    frozen_rows = [r for r in rows if frozen(r["id"])]
    dev_rows = [r for r in rows if not frozen(r["id"])]
    digest = first_set.write(HERE / "frozen.jsonl", frozen_rows)  # first, before anything is tuned
    print(f"frozen.jsonl: {len(frozen_rows)} records, sha256 {digest}", file=sys.stderr)
    dev_digest = first_set.write(HERE / "dev.jsonl", dev_rows)
    print(f"dev.jsonl: {len(dev_rows)} records, sha256 {dev_digest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
