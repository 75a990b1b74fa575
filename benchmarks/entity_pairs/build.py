"""Builds the labelled entity pairs of issue 31 (benchmarks/entity_pairs/README.md): deterministic (seed 31).

    .venv/bin/python benchmarks/entity_pairs/build.py            # writes frozen.jsonl, then dev.jsonl

Each line is one pair: ``{"id", "label" (1: one thing, 0: two), "kind", "hard", "a", "b"}``, each side an
entity with ``name``, ``type``, 1 to 3 ``observations`` and ``neighbours`` ({name, type, relation}).
Given names come from the nicknames registry package (carltonnorthern's names.csv, the same data the
nickname rule reads: a nickname pair in this set is one the registry lists); surnames, organisations,
homonyms and the context (employers, cities, projects) are the lists below.

A positive is two mentions of one underlying thing: each mention keeps each of its profile's
neighbours with probability 0.6 and draws 1 to 3 of its profile's facts, so shared context is likely
but not certain (some positives share nothing and are expected misses).  A negative is two things with
profiles of their own (drawn from the same pools, so they sometimes share a city or an employer).

The split: a pair is frozen when the first byte of sha256("31:" + id) is even.  The frozen half is
written first and its sha256 printed; benchmarks/entity_pairs/README.md records it.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicknames import NickNamer

SEED = 31
HERE = Path(__file__).resolve().parent

SURNAMES = (
    "Smith Johnson Williams Brown Jones Miller Davis Wilson Anderson Taylor Thomas Moore Martin Jackson "
    "Thompson White Harris Clark Lewis Robinson Walker Young Allen King Wright Scott Green Baker Adams "
    "Nelson Hill Campbell Mitchell Roberts Carter Phillips Evans Turner Torres Parker Collins Edwards "
    "Stewart Morris Murphy Cook Rogers Morgan Peterson Cooper Reed Bailey Bell Kelly Howard Ward Cox "
    "Richardson Wood Watson Brooks Bennett Gray James Hughes Price Sanders Myers Long Ross Foster Powell "
    "Jenkins Perry Russell Sullivan Fisher Henderson Coleman Simmons Patterson Jordan Reynolds Hamilton "
    "Graham Wallace Woods Cole West Owens Marshall Ellis Hunt Palmer Black Stone Hart Lane Fox Warren"
).split()
#: Surnames written with diacritics, and the forms agents type without them.
ACCENTED = (
    "Müller Núñez Dvořák Lefèvre Gómez Søndergaard Åberg Kovačić Özdemir Höglund Pérez Ibáñez Martín "
    "Jiménez Fernández Bøgh Łukasz Szabó Horváth Renée Beyoncé Chloé Zoë Dupré Citroën Brontë"
).split()
HONORIFICS = ["Dr", "Dr.", "Mr", "Mrs.", "Ms", "Prof.", "Sir"]
SUFFIXES = ["Jr.", "PhD", "Sr.", "III"]
#: Organisations: full name, written acronym (None: none in use), a corporate suffix form.
ORGS = [
    ("International Business Machines", "IBM"),
    ("National Aeronautics and Space Administration", "NASA"),
    ("World Health Organization", "WHO"),
    ("European Space Agency", "ESA"),
    ("British Broadcasting Corporation", "BBC"),
    ("Massachusetts Institute of Technology", "MIT"),
    ("General Electric", "GE"),
    ("Hewlett Packard", "HP"),
    ("United Nations Children's Fund", "UNICEF"),
    ("North Atlantic Treaty Organization", "NATO"),
    ("Federal Bureau of Investigation", "FBI"),
    ("European Central Bank", "ECB"),
    ("Bank of America", "BOA"),
    ("Royal Dutch Shell", "RDS"),
    ("Advanced Micro Devices", "AMD"),
    ("Electronic Arts", "EA"),
    ("Internal Revenue Service", "IRS"),
    ("Central Intelligence Agency", "CIA"),
    ("International Monetary Fund", "IMF"),
    ("World Trade Organization", "WTO"),
]
COMPANY_STEMS = (
    "Acme Globex Initech Umbrella Hooli Vandelay Wonka Stark Wayne Tyrell Cyberdyne Soylent Massive "
    "Dynamic Aperture Gringotts Monarch Oscorp Virtucon Nakatomi Pendant Sterling Cooper Dunder "
    "Prestige Weyland Yoyodyne Zorg Blue Sun"
).split()
COMPANY_FORMS = ["{} Corp", "{} Inc.", "{} Ltd", "{} LLC", "{} GmbH", "{}"]
#: Same name, different things (type, neighbours, facts).
HOMONYMS: list[tuple[str, list[tuple[str, list[str], list[tuple[str, str, str]]]]]] = [
    (
        "Mercury",
        [
            (
                "planet",
                ["the closest planet to the Sun", "orbits the Sun every 88 days"],
                [("Solar System", "system", "part_of")],
            ),
            (
                "element",
                ["Hg, atomic number 80", "a metal that is liquid at room temperature"],
                [("Periodic Table", "table", "part_of")],
            ),
            (
                "deity",
                ["the Roman messenger god", "identified with Hermes"],
                [("Roman Pantheon", "pantheon", "part_of")],
            ),
        ],
    ),
    (
        "Jaguar",
        [
            (
                "animal",
                ["a big cat of the Americas", "hunts in the Amazon"],
                [("Panthera", "genus", "member_of")],
            ),
            (
                "company",
                ["a British car maker", "owned by Tata Motors"],
                [("Tata Motors", "company", "owned_by")],
            ),
        ],
    ),
    (
        "Apple",
        [
            ("fruit", ["grows on trees in Kent", "a pome fruit"], [("Rosaceae", "family", "member_of")]),
            ("company", ["makes the iPhone", "based in Cupertino"], [("Cupertino", "city", "based_in")]),
        ],
    ),
    (
        "Amazon",
        [
            (
                "river",
                ["flows through Brazil", "the largest river by discharge"],
                [("Brazil", "country", "flows_through")],
            ),
            (
                "company",
                ["an online retailer founded by Jeff Bezos", "based in Seattle"],
                [("Seattle", "city", "based_in")],
            ),
        ],
    ),
    (
        "Java",
        [
            ("island", ["an island of Indonesia", "home of Jakarta"], [("Indonesia", "country", "part_of")]),
            (
                "programming language",
                ["runs on the JVM", "released by Sun Microsystems in 1995"],
                [("JVM", "tool", "runs_on")],
            ),
        ],
    ),
    (
        "Python",
        [
            (
                "animal",
                ["a constrictor snake", "lives in Africa and Asia"],
                [("Pythonidae", "family", "member_of")],
            ),
            (
                "programming language",
                ["created by Guido van Rossum", "first released in 1991"],
                [("CPython", "tool", "implemented_by")],
            ),
        ],
    ),
    (
        "Saturn",
        [
            ("planet", ["the ringed planet", "has the moon Titan"], [("Solar System", "system", "part_of")]),
            (
                "rocket",
                ["launched Apollo to the Moon", "built for NASA"],
                [("Apollo Program", "program", "part_of")],
            ),
        ],
    ),
    (
        "Orion",
        [
            (
                "constellation",
                ["has the stars Betelgeuse and Rigel", "visible in Winter"],
                [("Milky Way", "galaxy", "part_of")],
            ),
            (
                "spacecraft",
                ["built by Lockheed Martin for Artemis", "crew capsule of NASA"],
                [("Artemis Program", "program", "part_of")],
            ),
        ],
    ),
    (
        "Delta",
        [
            ("airline", ["based in Atlanta", "a SkyTeam member"], [("Atlanta", "city", "based_in")]),
            ("landform", ["where a river meets the sea", "the Nile has one"], [("Nile", "river", "part_of")]),
        ],
    ),
    (
        "Ruby",
        [
            ("gemstone", ["a red corundum", "mined in Myanmar"], [("Myanmar", "country", "mined_in")]),
            (
                "programming language",
                ["created by Yukihiro Matsumoto", "used by Rails"],
                [("Rails", "framework", "used_by")],
            ),
        ],
    ),
    (
        "Phoenix",
        [
            ("city", ["the capital of Arizona", "hot in July"], [("Arizona", "state", "capital_of")]),
            (
                "mythical bird",
                ["reborn from its ashes", "from Greek mythology"],
                [("Greek Mythology", "mythology", "part_of")],
            ),
        ],
    ),
    (
        "Oracle",
        [
            (
                "company",
                ["sells the Oracle Database", "founded by Larry Ellison"],
                [("Austin", "city", "based_in")],
            ),
            (
                "role",
                ["gave prophecies at Delphi", "consulted by Greeks"],
                [("Delphi", "place", "located_in")],
            ),
        ],
    ),
    (
        "Shell",
        [
            (
                "company",
                ["an oil company from London", "sells fuel in Europe"],
                [("London", "city", "based_in")],
            ),
            (
                "concept",
                ["the Bash program reads commands", "a Unix command interpreter"],
                [("Unix", "system", "part_of")],
            ),
        ],
    ),
    (
        "Titan",
        [
            (
                "moon",
                ["the largest moon of Saturn", "has lakes of methane"],
                [("Saturn System", "system", "part_of")],
            ),
            (
                "deity",
                ["an elder god of Greek mythology", "Cronus was one"],
                [("Greek Mythology", "mythology", "part_of")],
            ),
        ],
    ),
    (
        "Nile",
        [
            (
                "river",
                ["flows through Egypt", "ends in the Mediterranean"],
                [("Egypt", "country", "flows_through")],
            ),
            (
                "project",
                ["the Nile migration at Acme", "planned for Q3"],
                [("Acme Corp", "company", "run_by")],
            ),
        ],
    ),
    (
        "Atlas",
        [
            (
                "deity",
                ["a Titan who holds up the sky", "from Greek mythology"],
                [("Greek Mythology", "mythology", "part_of")],
            ),
            (
                "tool",
                ["the MongoDB cloud service", "hosts databases on AWS"],
                [("MongoDB", "company", "made_by")],
            ),
        ],
    ),
]
CITIES = (
    "Paris Berlin London Madrid Lisbon Rome Vienna Prague Warsaw Dublin Oslo Stockholm Helsinki Athens "
    "Zurich Geneva Amsterdam Brussels Munich Hamburg Milan Barcelona Seville Porto Lyon Marseille Toronto "
    "Boston Chicago Denver Austin Seattle Portland Dallas Miami Atlanta Tokyo Osaka Seoul Sydney"
).split()
PROJECTS = (
    "Apollo Borealis Cascade Dynamo Everest Falcon Granite Horizon Ironclad Jupiter Keystone Lighthouse "
    "Meridian Neptune Obsidian Pegasus Quasar Redwood Sentinel Tundra Umbra Vanguard Whirlwind Zenith"
).split()
UNIVERSITIES = "Oxford Cambridge Harvard Stanford Yale Princeton Sorbonne Heidelberg Bologna Leiden".split()
ROLES = [
    "the CTO",
    "a data engineer",
    "the product manager",
    "a designer",
    "the team lead",
    "an SRE",
    "a research scientist",
    "the head of sales",
    "a backend developer",
    "the CFO",
]


@dataclass
class Profile:
    """One underlying thing: the neighbours and facts its mentions draw from."""

    type: str
    neighbours: list[tuple[str, str, str]] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)


def person_profile(rng: random.Random) -> Profile:
    employer = rng.choice(COMPANY_FORMS).format(rng.choice(COMPANY_STEMS))
    city, project = rng.choice(CITIES), rng.choice(PROJECTS)
    colleague = f"{rng.choice(FIRSTS).title()} {rng.choice(SURNAMES)}"
    year = rng.randrange(1995, 2025)
    facts = [
        f"works at {employer} in {city}",
        f"joined {employer} in {year}",
        f"lives in {city}",
        f"leads the {project} project",
        f"studied at {rng.choice(UNIVERSITIES)}",
        f"is {rng.choice(ROLES)}",
    ]
    neighbours = [
        (employer, "organization", "works_at"),
        (city, "city", "lives_in"),
        (f"Project {project}", "project", "works_on"),
        (colleague, "person", "knows"),
    ]
    return Profile("person", neighbours, facts)


def org_profile(rng: random.Random) -> Profile:
    city = rng.choice(CITIES)
    ceo = f"{rng.choice(FIRSTS).title()} {rng.choice(SURNAMES)}"
    year = rng.randrange(1900, 2020)
    facts = [
        f"headquartered in {city}",
        f"founded in {year}",
        f"led by {ceo}",
        f"partners with {rng.choice(COMPANY_STEMS)} on {rng.choice(PROJECTS)}",
    ]
    neighbours = [
        (city, "city", "based_in"),
        (ceo, "person", "led_by"),
        (f"Project {rng.choice(PROJECTS)}", "project", "funds"),
    ]
    return Profile("organization", neighbours, facts)


def mention(rng: random.Random, name: str, p: Profile, entity_type: str | None = None) -> dict[str, Any]:
    kept = [n for n in p.neighbours if rng.random() < 0.6]
    facts = rng.sample(p.facts, rng.randint(1, min(3, len(p.facts))))
    return {
        "name": name,
        "type": entity_type or p.type,
        "observations": facts,
        "neighbours": [{"name": n, "type": t, "relation": r} for n, t, r in kept],
    }


_NN = NickNamer()
NICKS = {k: sorted(v) for k, v in _NN.nickname_lookup.items() if v}
FIRSTS = sorted(k for k in NICKS if len(k) > 3)


def first(rng: random.Random) -> str:
    return rng.choice(FIRSTS).title()


def case_variant(rng: random.Random, name: str) -> str:
    return (
        rng.choice([name.lower(), name.upper(), "  ".join(name.split()), name.lower().title() + " "]).strip()
        if rng.random() < 0.9
        else name.swapcase()
    )


def near_surname(rng: random.Random, surname: str) -> str:
    """One letter changed ("Smith" -> "Smyth"): another person's name, not a typo (the set's label)."""
    i = rng.randrange(1, len(surname))
    letters = "aeiouy" if surname[i].lower() in "aeiouy" else "bcdfghklmnprstvwz"
    repl = rng.choice([c for c in letters if c != surname[i].lower()])
    return surname[:i] + repl + surname[i + 1 :]


Pair = tuple[str, int, bool, dict[str, Any], dict[str, Any]]


def positives(rng: random.Random) -> list[Callable[[], Pair]]:
    def person(
        kind: str, make: Callable[[str, str], tuple[str, str]], surnames: list[str] = SURNAMES
    ) -> Callable[[], Pair]:
        def build() -> Pair:
            f, s = first(rng), rng.choice(surnames)
            a, b = make(f, s)
            p = person_profile(rng)
            return kind, 1, False, mention(rng, a, p), mention(rng, b, p)

        return build

    def org(kind: str, make: Callable[[], tuple[str, str]]) -> Callable[[], Pair]:
        def build() -> Pair:
            a, b = make()
            p = org_profile(rng)
            return kind, 1, False, mention(rng, a, p), mention(rng, b, p)

        return build

    def acr() -> tuple[str, str]:
        full, short = rng.choice(ORGS)
        return full, short

    def suffix_form() -> tuple[str, str]:
        stem = rng.choice(COMPANY_STEMS)
        x, y = rng.sample(COMPANY_FORMS, 2)
        return x.format(stem), y.format(stem)

    def abbreviation() -> tuple[str, str]:
        full, _ = rng.choice(ORGS)
        words = full.split()
        i = rng.randrange(len(words))
        words[i] = words[i][:4] + "."
        return full, " ".join(words)

    return [
        person("case", lambda f, s: (f"{f} {s}", case_variant(rng, f"{f} {s}"))),
        person(
            "punctuation",
            lambda f, s: (f"{f} {s}", rng.choice([f"{f}. {s}", f"{f} {s}.", f"{s}, {f}", f"{f}-{s}"])),
        ),
        person("diacritics", lambda f, s: (f"{f} {s}", f"{f} {strip_accents(s)}"), ACCENTED),
        person(
            "honorific",
            lambda f, s: (
                f"{f} {s}",
                rng.choice([f"{rng.choice(HONORIFICS)} {f} {s}", f"{f} {s} {rng.choice(SUFFIXES)}"]),
            ),
        ),
        person(
            "initials", lambda f, s: (f"{f} {s}", rng.choice([f"{f[0]}. {s}", f"{f[0]} {s}", f"{f[0]}. {s}"]))
        ),
        person("middle_name", lambda f, s: (f"{f} {s}", f"{f} {first(rng)[0]}. {s}")),
        person("nickname", lambda f, s: (f"{f} {s}", f"{rng.choice(NICKS[f.lower()]).title()} {s}")),
        person("reordered", lambda f, s: (f"{f} {s}", f"{s} {f}")),
        person("surname_only", lambda f, s: (f"{f} {s}", f"{rng.choice(HONORIFICS)} {s}")),
        person("misspelling", lambda f, s: (f"{f} {s}", f"{f[:-1]}{f[-1]}{f[-1]} {s}")),
        org("acronym", acr),
        org("corporate_suffix", suffix_form),
        org("abbreviation", abbreviation),
    ]


def strip_accents(s: str) -> str:
    import unicodedata

    return (
        "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
        .replace("Ł", "L")
        .replace("ø", "o")
    )


def negatives(rng: random.Random) -> list[Callable[[], Pair]]:
    def two_people(
        kind: str, make: Callable[[str, str], tuple[str, str]], share_employer: float = 0.0
    ) -> Callable[[], Pair]:
        def build() -> Pair:
            f, s = first(rng), rng.choice(SURNAMES)
            a, b = make(f, s)
            pa, pb = person_profile(rng), person_profile(rng)
            if rng.random() < share_employer:  # colleagues: one employer, different people
                pb.neighbours[0] = pa.neighbours[0]
                pb.facts[0] = pa.facts[0].replace(pa.neighbours[1][0], pb.neighbours[1][0])
            return kind, 0, True, mention(rng, a, pa), mention(rng, b, pb)

        return build

    def other_first(f: str) -> str:
        while (
            (g := first(rng)) == f
            or g.lower() in NICKS.get(f.lower(), [])
            or f.lower() in NICKS.get(g.lower(), [])
        ):
            pass
        return g

    def same_initial(f: str) -> str:
        pool = [
            x for x in FIRSTS if x[0] == f[0].lower() and x != f.lower() and x not in NICKS.get(f.lower(), [])
        ]
        return rng.choice(pool).title() if pool else other_first(f)

    def homonym() -> Pair:
        word, senses = rng.choice(HOMONYMS)
        (ta, fa, na), (tb, fb, nb) = rng.sample(senses, 2)
        pa, pb = Profile(ta, list(na), list(fa)), Profile(tb, list(nb), list(fb))
        b = rng.choice([word, word.lower(), word.upper()])
        side_a, side_b = mention(rng, word, pa), mention(rng, b if b != word else word.lower(), pb)
        return "same_name_different_type", 0, True, side_a, side_b

    return [
        two_people("same_name_different_people", lambda f, s: (f"{f} {s}", case_variant(rng, f"{f} {s}"))),
        two_people(
            "same_name_honorific_different_people",
            lambda f, s: (f"{f} {s}", f"{rng.choice(HONORIFICS)} {f} {s}"),
        ),
        two_people("near_name", lambda f, s: (f"{f} {s}", f"{f} {near_surname(rng, s)}"), share_employer=0.3),
        two_people("shared_surname", lambda f, s: (f"{f} {s}", f"{other_first(f)} {s}"), share_employer=0.3),
        two_people("initial_of_another", lambda f, s: (f"{same_initial(f)} {s}", f"{f[0]}. {s}")),
        homonym,
    ]


def easy_negatives(rng: random.Random) -> list[Callable[[], Pair]]:
    def build() -> Pair:
        pa, pb = person_profile(rng), person_profile(rng)
        a = f"{first(rng)} {rng.choice(SURNAMES)}"
        b = f"{first(rng)} {rng.choice(SURNAMES)}"
        return "different_people", 0, False, mention(rng, a, pa), mention(rng, b, pb)

    return [build]


#: Shares of the positive kinds, in the order of :func:`positives` (case, punctuation, diacritics,
#: honorific, initials, middle_name, nickname, reordered, surname_only, misspelling, acronym,
#: corporate_suffix, abbreviation).
POSITIVE_WEIGHTS = (15, 10, 6, 12, 12, 6, 10, 5, 5, 4, 6, 5, 4)


def frozen(pair_id: str) -> bool:
    return hashlib.sha256(f"{SEED}:{pair_id}".encode()).digest()[0] % 2 == 0


def build(n_pos: int = 780, n_hard: int = 420, n_easy: int = 60) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    pos, hard, easy = positives(rng), negatives(rng), easy_negatives(rng)
    # positives in proportions of what agents write (case and honorific variants most, misspellings least)
    weighted = [m for m, w in zip(pos, POSITIVE_WEIGHTS, strict=True) for _ in range(w)]
    makers = [weighted[i % len(weighted)] for i in range(n_pos)] + [
        hard[i % len(hard)] for i in range(n_hard)
    ]
    makers += [easy[0]] * n_easy
    out = []
    for i, make in enumerate(makers):
        kind, label, is_hard, a, b = make()
        if (
            a["name"] == b["name"]
        ):  # one namespace cannot hold two entities of one name: make it a case variant
            b["name"] = b["name"].lower() if b["name"] != b["name"].lower() else b["name"].upper()
        out.append({"id": f"p{i:04d}", "label": label, "kind": kind, "hard": is_hard, "a": a, "b": b})
    return out


def write(path: Path, rows: list[dict[str, Any]]) -> str:
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode()).hexdigest()


def main() -> int:
    rows = build()
    frozen_rows = [r for r in rows if frozen(r["id"])]
    dev_rows = [r for r in rows if not frozen(r["id"])]
    digest = write(HERE / "frozen.jsonl", frozen_rows)  # first, before anything is tuned
    print(f"frozen.jsonl: {len(frozen_rows)} pairs, sha256 {digest}", file=sys.stderr)
    if "--frozen-only" not in sys.argv:
        dev_digest = write(HERE / "dev.jsonl", dev_rows)
        print(f"dev.jsonl: {len(dev_rows)} pairs, sha256 {dev_digest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
