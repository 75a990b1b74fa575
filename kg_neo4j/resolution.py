"""Entity resolution's rules, pure (no store, no server): which names may be one thing, and how sure.

Used by ``find_duplicates`` and ``kg-neo4j dedupe`` (store/duplicates.py runs them over a namespace;
docs/entities.md#finding-duplicates says what users see).  Never an LLM: every decision is a rule here
or a number the graph holds (an embedding, shared neighbours, observation text).

* :func:`normalise`: case, whitespace, punctuation, diacritics (Unicode NFKD, combining marks dropped).
* :func:`parse_name`: the normalised tokens without honorifics ("Dr", "Mrs", "Prof", ...) and suffixes
  ("Jr", "PhD", "Inc", ...) where some other token is left, and "Smith, Alice" read as "Alice Smith".
* :func:`blocking_keys`: the keys that put two entities in one block; only entities that share a key are
  compared (no all-pairs comparison): the canonical name, its sorted tokens, surname plus first initial,
  surname plus every canonical form of a nickname, an acronym.
* :func:`name_rule`: the strongest relation between two names (same name, reordered, initials,
  nickname, acronym, surname only) or None.
* :func:`score_pair`: the signals combined into one score in [0, 1] with its reasons.

The score is a logistic combination (``sigmoid`` of a sum of evidence, the weights below, each reason's
share reported): a name rule gives a prior, shared neighbours and overlapping observations confirm it,
context on both sides that shares nothing speaks against it, different types speak strongly against it
(a planet and an element both named "Mercury").  Same name alone scores 0.5: below the auto-merge
threshold, listed for review.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache

#: ``kg-neo4j dedupe --apply`` merges groups scoring at least this.  Chosen on the labelled set's dev half
#: only, model on: of the 0.05 grid above ``NO_NAME_RULE_CAP`` (a pair no name rule relates is never merged
#: without review), the threshold with the best F0.5 (precision weighted twice: a wrong merge costs more
#: than a missed one): 0.65 (dev: precision 0.985, recall 0.850); the frozen half is measured at it
#: (benchmarks/entity_pairs/README.md, docs/entities.md#finding-duplicates).
AUTO_MERGE_THRESHOLD = 0.65
#: ``find_duplicates``' default ``minScore``: groups at or above it are listed for review.
DEFAULT_MIN_SCORE = 0.5

#: Words dropped before comparing names, when another token is left ("Dr" alone stays a name).
HONORIFICS = frozenset(
    "dr mr mrs ms miss mx prof professor sir dame lord lady rev fr sr st madam mme mlle herr frau".split()
)
#: Person and company suffixes dropped the same way ("sr" is an honorific above, "senior" here).
SUFFIXES = frozenset(
    "jr junior senior ii iii iv phd md esq dds mba msc bsc inc ltd llc plc gmbh corp co sa ag bv nv".split()
)
#: Words an acronym skips ("Bank of America" is "BOA" or "BA": both are keys).
ACRONYM_SKIP = frozenset("of the and for de du des la le von van der".split())

#: Evidence weights of the score (a logit; see the module docstring and docs/entities.md).
BASE = -4.0
NAME_WEIGHTS: dict[str, float] = {
    "same_normalised_name": 4.0,
    "reordered_tokens": 3.6,
    "initials": 3.5,
    "nickname": 3.5,
    "acronym": 3.5,
    "surname_only": 2.0,
}
#: The name rules whose names have the same words: the embedding adds nothing to them.
SAME_WORDS = frozenset({"same_normalised_name", "reordered_tokens"})
#: Embedding cosine of name and type: weight per unit above/below the pivot (model on only).
EMBED_PIVOT, EMBED_WEIGHT = 0.85, 8.0
#: Shared neighbours: a first shared neighbour, then more by the Jaccard index; none shared while both
#: have neighbours counts against (two people of one name usually know different people).
NEIGHBOUR_FIRST, NEIGHBOUR_JACCARD, NEIGHBOUR_NONE = 1.5, 3.0, -1.0
#: Overlapping observations (exact texts or proper-noun tokens), likewise; observations that share nothing
#: are no evidence either way (two mentions of one person usually record different facts).
OBS_FIRST, OBS_JACCARD = 1.0, 2.5
#: Different types after normalisation.
DIFFERENT_TYPES = -6.0
#: Without a name rule a pair scores at most this (below the auto-merge threshold): colleagues share
#: neighbours and observations, and near names ("John Smith", "John Smyth") share embeddings.
NO_NAME_RULE_CAP = 0.6


#: Letters NFKD does not decompose into a base letter and a mark.
_FOLD = str.maketrans(
    {
        "ł": "l",
        "Ł": "L",
        "ø": "o",
        "Ø": "O",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "þ": "th",
        "Þ": "TH",
        "ı": "i",
        "ħ": "h",
    }
)


def normalise(text: str) -> str:
    """Lower case, no diacritics, punctuation as spaces (apostrophes and dots inside words dropped),
    single spaces: "  Zoë  O'Brien-Smith " -> "zoe obrien smith"."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    plain = re.sub(r"['’`]", "", plain)
    plain = re.sub(r"[^\w]+|_", " ", plain)
    return " ".join(plain.split())


@dataclass(frozen=True)
class ParsedName:
    """A name as the rules compare it."""

    tokens: tuple[str, ...]  # normalised, honorifics and suffixes dropped, "Last, First" turned round
    acronym_form: bool  # written as one upper-case token of 2 to 6 letters ("IBM")

    @property
    def canonical(self) -> str:
        return " ".join(self.tokens)

    @property
    def surname(self) -> str:
        return self.tokens[-1] if self.tokens else ""

    @property
    def given(self) -> tuple[str, ...]:
        return self.tokens[:-1]


@cache
def parse_name(name: str) -> ParsedName:
    """Tokens of ``name`` as compared: "Smith, Dr. Alice" -> ("alice", "smith")."""
    raw = name.strip()
    acronym_form = bool(re.fullmatch(r"[A-Z][A-Z&.]{1,7}", raw)) and 2 <= len(re.sub(r"[&.]", "", raw)) <= 6
    parts = raw.split(",")
    if len(parts) == 2 and parts[0].strip() and parts[1].strip():
        tail = normalise(parts[1]).split()
        if not all(t in SUFFIXES for t in tail):  # "Smith, Alice", not "Acme, Inc."
            raw = f"{parts[1]} {parts[0]}"
    tokens = normalise(raw).split()
    kept = [t for t in tokens if t not in HONORIFICS and t not in SUFFIXES]
    if not kept:  # "Dr", "Inc": the word is the name
        kept = tokens
    return ParsedName(tuple(kept), acronym_form)


def normalise_type(entity_type: str) -> str:
    return normalise(entity_type).replace(" ", "_")


@cache
def _nicknamer() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """carltonnorthern's hand-curated names.csv (package ``nicknames``, Apache-2.0): canonical -> nicknames
    and nickname -> canonicals."""
    from nicknames import NickNamer

    nn = NickNamer()
    return nn.nickname_lookup, nn.canonical_lookup


def given_forms(given: str) -> set[str]:
    """``given`` and every canonical name it is a nickname of ("bob" -> {"bob", "robert"})."""
    _, canonicals = _nicknamer()
    return {given} | canonicals.get(given, set())


def is_nickname_pair(a: str, b: str) -> bool:
    """``a`` is a listed nickname of ``b`` or the other way round ("bob", "robert")."""
    if a == b:
        return False
    nicks, _ = _nicknamer()
    return b in nicks.get(a, set()) or a in nicks.get(b, set())


def acronym(tokens: Sequence[str]) -> str:
    """First letters of the words that are not ``ACRONYM_SKIP`` ("" for fewer than two such words)."""
    words = [t for t in tokens if t not in ACRONYM_SKIP]
    return "".join(w[0] for w in words) if len(words) >= 2 else ""


#: A blocking key's role: ``peer`` names are compared with every other name of the key; a ``hub`` (a
#: one-word name: "Dr Smith", "IBM") with every ``spoke`` and hub of its key, spokes not with each other
#: (so the many "... Smith" of a namespace are not compared all with all through their surname).
Role = str
PEER, HUB, SPOKE = "peer", "hub", "spoke"


def blocking_keys(name: str) -> dict[str, Role]:
    """The keys under which ``name`` is compared with others, each with its role; two names that share
    no key (or only as spokes) are never paired."""
    p = parse_name(name)
    if not p.tokens:
        return {}
    keys: dict[str, Role] = {"n:" + p.canonical: PEER, "s:" + " ".join(sorted(p.tokens)): PEER}
    if len(p.tokens) == 1:
        keys["l:" + p.surname] = HUB  # "Dr Smith" and every Smith
        if p.acronym_form:
            keys["a:" + p.surname] = HUB  # "IBM" and the names whose acronym it is
        return keys
    keys[f"i:{p.given[0][0]} {p.surname}"] = PEER  # initials and shorter forms
    for form in given_forms(p.given[0]):  # nicknames: "Bob Smith" and "Robert Smith" share "robert smith"
        keys[f"k:{form} {p.surname}"] = PEER
    keys["l:" + p.surname] = SPOKE
    ac = acronym(p.tokens)
    if ac:
        keys["a:" + ac] = SPOKE
    return keys


@dataclass(frozen=True)
class Reason:
    code: str
    detail: str
    weight: float = 0.0

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "detail": self.detail}


def _initial_match(short: Sequence[str], long: Sequence[str]) -> bool:
    """Each given token of ``short`` is the same word, a nickname, or the initial of the token of
    ``long`` at its place (matched in order, ``long`` may have more middle names)."""
    j = 0
    for s in short:
        while j < len(long):
            t = long[j]
            j += 1
            if s == t or (len(s) == 1 and t.startswith(s)) or is_nickname_pair(s, t):
                break
        else:
            return False
    return True


def name_rule(a: str, b: str) -> Reason | None:
    """The strongest name relation between ``a`` and ``b`` (types aside), or None."""
    pa, pb = parse_name(a), parse_name(b)
    if not pa.tokens or not pb.tokens:
        return None
    if pa.canonical == pb.canonical:
        return _reason("same_normalised_name", f"{a!r} and {b!r} are both {pa.canonical!r} once normalised")
    if sorted(pa.tokens) == sorted(pb.tokens):
        return _reason("reordered_tokens", f"{a!r} and {b!r} have the same words in another order")
    for x, y, px, py in ((a, b, pa, pb), (b, a, pb, pa)):
        if px.acronym_form and len(px.tokens) == 1 and acronym(py.tokens) == px.surname:
            return _reason("acronym", f"{x!r} is the acronym of {y!r}")
    if pa.surname != pb.surname:
        return None
    ga, gb = pa.given, pb.given
    if not ga or not gb:
        short, long_name = (a, b) if not ga else (b, a)
        if not ga and not gb:
            return None
        return _reason("surname_only", f"{short!r} is only the surname of {long_name!r}")
    nick = ga[0] != gb[0] and is_nickname_pair(ga[0], gb[0])
    for short_g, long_g, short, long_name in ((ga, gb, a, b), (gb, ga, b, a)):
        if len(short_g) > len(long_g):
            continue
        if any(len(t) == 1 for t in short_g) and _initial_match(short_g, long_g):
            return _reason("initials", f"{short!r} is an initials form of {long_name!r} (same surname)")
        if nick and _initial_match(short_g[1:], long_g[1:]):
            return _reason(
                "nickname",
                f"{short!r} and {long_name!r}: {short_g[0]!r} and {long_g[0]!r} are one given name "
                "(nicknames registry)",
            )
        if set(short_g) < set(long_g) and _initial_match(short_g, long_g):
            return _reason("initials", f"{short!r} is a shorter form of {long_name!r} (same surname)")
    return None


def _reason(code: str, detail: str) -> Reason:
    return Reason(code, detail, NAME_WEIGHTS[code])


_WORD = re.compile(r"\b[A-Z0-9][\w'’.-]*")


def proper_tokens(texts: Iterable[str]) -> set[str]:
    """The capitalised words and numbers of observations, not first in their sentence, normalised: what
    names an employer, a city, a year ("works at Acme in Paris" -> {"acme", "paris"})."""
    out: set[str] = set()
    for text in texts:
        for sentence in re.split(r"[.!?;:]\s+|\n", text):
            for m in _WORD.finditer(sentence):
                if m.start() == 0 and not m.group().isupper():
                    continue
                word = normalise(m.group())
                if word and word not in HONORIFICS:
                    out.add(word)
    return out


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass
class Side:
    """What the score reads of one entity."""

    name: str
    entity_type: str
    neighbours: set[str] = field(default_factory=set)
    observations: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Scored:
    score: float
    reasons: tuple[Reason, ...]


def score_pair(a: Side, b: Side, *, cos: float | None = None) -> Scored:
    """The pair's score (``sigmoid`` of the evidence) and its reasons, strongest first.

    ``cos``: the name-and-type embedding cosine when the model is on (store/duplicates.py computes it)."""
    reasons: list[Reason] = []
    rule = name_rule(a.name, b.name)
    if rule is not None:
        reasons.append(rule)
    if cos is not None and (rule is None or rule.code not in SAME_WORDS):
        # evidence for only: initials and acronyms embed far from the names they stand for; and not for
        # names of the same words, whose embeddings are equal by construction (the name counted twice)
        w = EMBED_WEIGHT * max(0.0, cos - EMBED_PIVOT)
        reasons.append(Reason("embedding_cosine", f"name-and-type embedding cosine {cos:.3f}", w))
    shared = (a.neighbours & b.neighbours) - {a.name, b.name}
    if shared:
        j = _jaccard(a.neighbours - {b.name}, b.neighbours - {a.name})
        listed = ", ".join(sorted(shared)[:5])
        reasons.append(
            Reason(
                "shared_neighbours",
                f"{len(shared)} neighbour(s) in common ({listed}); Jaccard {j:.2f}",
                NEIGHBOUR_FIRST + NEIGHBOUR_JACCARD * j,
            )
        )
    elif a.neighbours - {b.name} and b.neighbours - {a.name}:
        reasons.append(Reason("no_shared_neighbours", "both have neighbours, none in common", NEIGHBOUR_NONE))
    same_text = {normalise(t) for t in a.observations} & {normalise(t) for t in b.observations}
    ta, tb = proper_tokens(a.observations), proper_tokens(b.observations)
    common = ta & tb
    if same_text or common:
        j = max(_jaccard(ta, tb), len(same_text) / max(len(a.observations), len(b.observations)))
        what = f"{len(same_text)} identical observation(s)" if same_text else ""
        if common:
            what += ("; " if what else "") + "observations name " + ", ".join(sorted(common)[:5])
        reasons.append(Reason("overlapping_observations", what, OBS_FIRST + OBS_JACCARD * j))
    ta_type, tb_type = normalise_type(a.entity_type), normalise_type(b.entity_type)
    if ta_type != tb_type:
        reasons.append(
            Reason(
                "different_types",
                f"types differ: {a.entity_type!r} and {b.entity_type!r}",
                DIFFERENT_TYPES,
            )
        )
    logit = BASE + sum(r.weight for r in reasons)
    score = 1.0 / (1.0 + math.exp(-logit))
    if rule is None and score > NO_NAME_RULE_CAP:
        score = NO_NAME_RULE_CAP
        reasons.append(Reason("no_name_rule", f"no name rule relates the names: at most {NO_NAME_RULE_CAP}"))
    reasons.sort(key=lambda r: -abs(r.weight))
    return Scored(round(score, 4), tuple(reasons))
