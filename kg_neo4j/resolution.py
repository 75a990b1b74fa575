"""Entity resolution's rules, pure (no store, no server): which names may be one thing, and how sure.

Used by ``find_duplicates`` and ``kg-neo4j dedupe`` (store/duplicates.py runs them over a namespace;
docs/entities.md#finding-duplicates says what users see).  Never an LLM: every decision is a rule here
or a number the graph holds (an embedding, shared neighbours, observation text).

* :func:`normalise`: case, whitespace, punctuation, diacritics (Unicode NFKD, combining marks dropped).
* :func:`parse_name`: the normalised tokens without honorifics ("Dr", "Mrs", "Prof", ...) and suffixes
  ("Jr", "PhD", "Inc", ...) where some other token is left, and "Smith, Alice" read as "Alice Smith".
* :func:`blocking_keys`: the keys that put two entities in one block; only entities that share a key are
  compared (no all-pairs comparison): its sorted tokens (the same name, or reordered), surname plus first initial,
  surname plus every canonical form of a nickname, an acronym, and for typing errors the name with one
  word cut to its first or last two letters (one edit leaves one of them whole) and its words' sorted
  Metaphone codes.
* :func:`name_rule`: the strongest relation between two names (same name, reordered, initials,
  nickname, acronym, surname only, similar spelling) or None.
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
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from itertools import combinations, product
from typing import Any

import jellyfish
import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import OSA, JaroWinkler

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
    "initials": 4.0,
    "nickname": 3.5,
    "acronym": 3.5,
    "surname_only": 2.0,
    "similar_spelling": 3.0,
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
#: Observations of one shape ("born #-#-#") whose numbers are more than one edit apart: two people's
#: birth dates or id numbers (one apart is a typo, and counts as the same observation).
CONFLICTING_OBS = -2.5
#: An ambiguous short form's pair with a longer form when it scores higher with another.
OUTRANKED = -2.0
#: Different types after normalisation.
DIFFERENT_TYPES = -6.0
#: Without a name rule a pair scores at most this (below the auto-merge threshold): colleagues share
#: neighbours and observations, and near names ("John Smith", "John Smyth") share embeddings.
NO_NAME_RULE_CAP = 0.6
#: The name rules whose pairs score at most ``NO_NAME_RULE_CAP`` too: a typo and another real name look
#: alike ("Smith", "Smyth"): listed for review, never merged.
CAPPED_RULES = frozenset({"similar_spelling"})


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

_APOSTROPHES = re.compile(r"['’`]")
_NOT_WORD = re.compile(r"[^\w]+|_")
#: :func:`normalise` of ASCII text in one ``str.translate``: apostrophes dropped, the rest but letters and
#: digits a space.
_ASCII_PLAIN = {c: None if chr(c) in "'`" else " " for c in range(128) if not chr(c).isalnum()}


@lru_cache(maxsize=1 << 16)  # the same words, types and observations again and again while scoring
def normalise(text: str) -> str:
    """Lower case, no diacritics, punctuation as spaces (apostrophes and dots inside words dropped),
    single spaces: "  Zoë  O'Brien-Smith " -> "zoe obrien smith"."""
    if text.isascii():  # most text: nothing to fold or decompose, one table does the rest (same answer)
        return " ".join(text.lower().translate(_ASCII_PLAIN).split())
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    plain = _APOSTROPHES.sub("", plain)
    plain = _NOT_WORD.sub(" ", plain)
    return " ".join(plain.split())


@dataclass(frozen=True)
class ParsedName:
    """A name as the rules compare it."""

    tokens: tuple[str, ...]  # normalised, honorifics and suffixes dropped, "Last, First" turned round
    acronym_form: bool  # written as one upper-case token of 2 to 6 letters ("IBM")

    @cached_property  # compared for every pair blocked (parse_name's answers are cached, so is this)
    def canonical(self) -> str:
        return " ".join(self.tokens)

    @property
    def surname(self) -> str:
        return self.tokens[-1] if self.tokens else ""

    @property
    def given(self) -> tuple[str, ...]:
        return self.tokens[:-1]


_ACRONYM = re.compile(r"[A-Z][A-Z&.]{1,7}")


@cache
def parse_name(name: str) -> ParsedName:
    """Tokens of ``name`` as compared: "Smith, Dr. Alice" -> ("alice", "smith")."""
    raw = name.strip()
    acronym_form = bool(_ACRONYM.fullmatch(raw)) and 2 <= len(raw.replace("&", "").replace(".", "")) <= 6
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


@cache
def given_forms(given: str) -> frozenset[str]:
    """``given`` and every canonical name it is a nickname of ("bob" -> {"bob", "robert"})."""
    _, canonicals = _nicknamer()
    return frozenset({given} | canonicals.get(given, set()))


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
    t = p.tokens
    # the sorted words: a name's canonical form and its words reordered (every name of one canonical form
    # has the same sorted words, so this key's block holds that form's block too)
    keys: dict[str, Role] = {"s:" + " ".join(sorted(t)): PEER}
    if len(t) == 1:
        keys["l:" + t[0]] = HUB  # "Dr Smith" and every Smith
        if p.acronym_form:
            keys["a:" + t[0]] = HUB  # "IBM" and the names whose acronym it is
        return keys
    surname = t[-1]
    keys[f"i:{t[0][0]} {surname}"] = PEER  # initials and shorter forms
    # typing errors: one edit leaves a word's first two or last two letters as they were, so a name
    # with one word mistyped meets its pair under its other words beside the mistyped one's first or
    # last two letters (a two-word name in either order: swapped parts too, only its last word cut in
    # each order, as cutting the first word of one order is cutting the last of the other); sound-alike
    # spellings share Metaphone codes
    if len(t) == 2:
        for head, w in ((t[0], t[1]), (t[1], t[0])):
            if len(w) >= 3 and w.isalpha():
                keys[f"f:{head}|{w[:2]}|"] = PEER
                keys[f"e:{head}|{w[-2:]}|"] = PEER
    else:
        for i, w in enumerate(t):
            if len(w) >= 3 and w.isalpha():
                head, tail = " ".join(t[:i]), " ".join(t[i + 1 :])
                keys[f"f:{head}|{w[:2]}|{tail}"] = PEER
                keys[f"e:{head}|{w[-2:]}|{tail}"] = PEER
    codes = [_sound(w) for w in t]
    if all(codes):
        keys["p:" + " ".join(sorted(codes))] = PEER
    for form in given_forms(t[0]):  # nicknames: "Bob Smith" and "Robert Smith" share "robert smith"
        keys[f"k:{form} {surname}"] = PEER
    keys["l:" + surname] = SPOKE
    ac = acronym(t)
    if ac:
        keys["a:" + ac] = SPOKE
    return keys


def peer_pairs(key: str, names: Sequence[str]) -> Iterator[tuple[str, str]]:
    """The pairs of ``names``, which share the peer key ``key`` of :func:`blocking_keys`, that a name rule
    could relate (:func:`name_rule` decides): every pair but where the key says the names differ in one
    word, which no name rule allows unless the two words are two edits apart or less, of one Metaphone
    code, or of one given name (a nickname); then only those pairs.  A typing-error key (``f:``, ``e:``):
    the same words but one, and that one's first or last two letters.  A surname-and-initial key
    (``i:``): for two two-word names with no initial, the given name.  Most blocks hold names that
    differ in just that way and are not related: a block of 40 "John Ka..." names is 780 pairs, of which
    a few are typos."""
    if key.startswith(("f:", "e:")):
        # the word's place; a two-word name's other order when its first word is not the key's
        head = key[2:].split("|")[0]
        at = len(head.split())
        tokens = [parse_name(n).tokens for n in names]
        words = [t[0] if len(t) == 2 and t[0] != head else t[at] for t in tokens]
        yield from _one_word_apart(names, words)
    elif key.startswith("i:"):
        # a two-word name with no initial is related to another by the same, a nickname or a mistyped
        # given name only; an initials form or a longer name by its own rules: compared with every name
        plain = [n for n in names if len(t := parse_name(n).tokens) == 2 and len(t[0]) > 1]
        if len(plain) < 2:
            yield from combinations(names, 2)
            return
        yield from _one_word_apart(plain, [parse_name(n).tokens[0] for n in plain])
        kept = set(plain)
        other = [n for n in names if n not in kept]
        yield from combinations(other, 2)
        yield from product(other, plain)
    else:
        yield from combinations(names, 2)


def _one_word_apart(names: Sequence[str], words: Sequence[str]) -> Iterator[tuple[str, str]]:
    """The pairs of ``names`` whose ``words`` (one a name) could be one word to a name rule."""
    if len(words) > ONE_CALL_BLOCK:
        # the edit distances of all pairs in one call, then the shared codes and forms
        close = process.cdist(words, words, scorer=OSA.distance, score_cutoff=2, workers=1)
        found = {(i, j) for i, j in zip(*np.nonzero(close <= 2), strict=True) if i < j}
        groups: dict[str, list[int]] = defaultdict(list)
        for i, w in enumerate(words):
            for g in {"p:" + _sound(w), *("k:" + f for f in given_forms(w))}:
                groups[g].append(i)
        for members in groups.values():
            found.update(combinations(members, 2))
        yield from ((names[i], names[j]) for i, j in found)
        return
    for i, x in enumerate(words):
        for j in range(i + 1, len(words)):
            y = words[j]
            if (
                OSA.distance(x, y, score_cutoff=2) <= 2
                or _sound(x) == _sound(y)
                or not given_forms(x).isdisjoint(given_forms(y))
            ):
                yield names[i], names[j]


#: A block of more names than this has its pairs' edit distances computed in one call (rapidfuzz's
#: ``cdist``); a smaller one costs less a pair at a time.
ONE_CALL_BLOCK = 8


@cache
def _sound(word: str) -> str:
    return jellyfish.metaphone(word)


def hint_keys(name: str) -> dict[str, str]:
    """The keys create_entities' duplicate hint finds a name's likely duplicates by, stored on the entity
    and range-indexed ("" where a name has none): its last normalised word (``dup_last``: the name rules
    of one surname, swapped and reordered words); the words before the last with the last's first or
    last two letters (``dup_start``, ``dup_end``: :func:`blocking_keys`' typing-error keys of the last
    word); the sorted Metaphone codes of its words (``dup_sound``: :func:`blocking_keys`' ``p:`` key)."""
    p = parse_name(name)
    keys = {"dup_last": p.surname, "dup_start": "", "dup_end": "", "dup_sound": ""}
    if len(p.tokens) >= 2:  # the spelling rule needs two words
        head, last = " ".join(p.given), p.surname
        keys["dup_start"], keys["dup_end"] = f"{head}|{last[:2]}", f"{head}|{last[-2:]}"
        codes = [jellyfish.metaphone(t) for t in p.tokens]
        if all(codes):
            keys["dup_sound"] = " ".join(sorted(codes))
    return keys


def hint_seeks(name: str) -> dict[str, Any]:
    """What create_entities' duplicate hint seeks for ``name``: the values of :func:`hint_keys` under
    which the names find_duplicates compares with it (:func:`blocking_keys`) and a name rule other than
    the acronym could relate to it are stored.  One surname, or a word swapped or reordered: the last word
    is one of this name's words (``dup_last``), and of one surname only those of the same first initial,
    first word's last two letters or given name (``first``, ``forms``: nicknames), a one-word name, or
    the same sounds.  The last word mistyped: its first or last two letters (``dup_start``, ``dup_end``)
    or the words' Metaphone codes (``dup_sound``), the two words of a two-word name in either order."""
    p = parse_name(name)
    seeks: dict[str, Any] = {
        "dup_last": sorted(set(p.tokens)),
        "last": p.surname,
        "first": "",
        "forms": [],
        "dup_start": [],
        "dup_end": [],
    }
    if len(p.tokens) >= 2:
        nicks, _ = _nicknamer()
        forms = given_forms(p.tokens[0])
        seeks["first"] = p.tokens[0]
        seeks["forms"] = sorted(forms.union(*(nicks.get(f, set()) for f in forms)))
        for words in [p.tokens, p.tokens[::-1]] if len(p.tokens) == 2 else [p.tokens]:
            head, last = " ".join(words[:-1]), words[-1]
            seeks["dup_start"].append(f"{head}|{last[:2]}")
            seeks["dup_end"].append(f"{head}|{last[-2:]}")
    sound = hint_keys(name)["dup_sound"]
    seeks["dup_sound"] = [sound] if sound else []
    return seeks


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
    if len(pa.tokens) == len(pb.tokens) and sorted(pa.tokens) == sorted(pb.tokens):
        return _reason("reordered_tokens", f"{a!r} and {b!r} have the same words in another order")
    for x, y, px, py in ((a, b, pa, pb), (b, a, pb, pa)) if pa.acronym_form or pb.acronym_form else ():
        if px.acronym_form and len(px.tokens) == 1 and acronym(py.tokens) == px.surname:
            return _reason("acronym", f"{x!r} is the acronym of {y!r}")
    if pa.surname != pb.surname:
        return _spelling_rule(a, b, pa, pb)
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
    return _spelling_rule(a, b, pa, pb)


def similar_words(x: str, y: str) -> bool:
    """``x`` and ``y`` could be one word mistyped: one edit apart (a letter changed, dropped, added, or two
    adjacent letters swapped; rapidfuzz's optimal string alignment distance), two apart in words of 7
    letters or more, or the same Metaphone code (jellyfish) with Jaro-Winkler similarity 0.8 or more
    (phonetic spellings: "Decker" / "Dekker").  Initials, words under 3 letters and words with a digit are
    never similar: a number or a code one edit apart ("Room 101" / "Room 102", "Invoice 1234" /
    "Invoice 1235") names another thing, not the same one mistyped."""
    if x == y or min(len(x), len(y)) < 3 or (not (x + y).isalpha() and any(c.isdigit() for c in x + y)):
        return False
    d = OSA.distance(x, y, score_cutoff=2)
    if d <= 1 or (d == 2 and min(len(x), len(y)) >= 7):
        return True
    return _sound(x) == _sound(y) and JaroWinkler.similarity(x, y) >= 0.8


def _spelling_rule(a: str, b: str, pa: ParsedName, pb: ParsedName) -> Reason | None:
    """Names of two or more words, the same number, whose words agree (in order, or the two of a
    two-word name swapped) except one that is :func:`similar_words`: "Marhta Okafor" / "Martha Okafor",
    "Tomas Bregg" / "Berg Tomas"; never "Room 101" / "Room 102"."""
    ta, tb = pa.tokens, pb.tokens
    if len(ta) != len(tb) or len(ta) < 2:
        return None
    orders = [tb] + ([tb[::-1]] if len(tb) == 2 else [])
    for order in orders:
        differ = [(x, y) for x, y in zip(ta, order, strict=True) if x != y]
        if len(differ) == 1 and similar_words(*differ[0]):
            x, y = differ[0]
            swapped = " (given name and surname swapped)" if order is not tb else ""
            return _reason(
                "similar_spelling", f"{a!r} and {b!r}: {x!r} and {y!r} may be one word mistyped{swapped}"
            )
    return None


#: The name rules whose shorter name could stand for more than one person.
SHORT_FORMS = frozenset({"initials", "surname_only"})


def ambiguous_short_forms(pairs: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    """The shorter names of ``pairs`` that fit two people: an initials or surname-only form whose longer
    forms include two that no name rule relates ("A. Smith" beside "Alice Smith" and "Adam Smith"),
    each with its longer forms.  Such a form is listed for review with each, merged with neither."""
    longer: dict[str, set[str]] = defaultdict(set)
    for x, y in pairs:
        rule = name_rule(x, y)
        if rule is not None and rule.code in SHORT_FORMS:
            short, full = (x, y) if len(parse_name(x).canonical) < len(parse_name(y).canonical) else (y, x)
            longer[short].add(full)
    return {
        short: fulls
        for short, fulls in longer.items()
        if any(name_rule(f, g) is None for f in fulls for g in fulls if f < g)
    }


def _reason(code: str, detail: str) -> Reason:
    return Reason(code, detail, NAME_WEIGHTS[code])


_WORD = re.compile(r"\b[A-Z0-9][\w'’.-]*")


def proper_tokens(texts: Iterable[str]) -> set[str]:
    """The capitalised words and numbers of observations, not first in their sentence, normalised: what
    names an employer, a city, a year ("works at Acme in Paris" -> {"acme", "paris"})."""
    out: set[str] = set()
    for text in texts:
        out |= _proper_words(text)
    return out


_SENTENCE = re.compile(r"[.!?;:]\s+|\n")


@lru_cache(maxsize=1 << 16)  # an entity's observations again for each pair it is in
def _proper_words(text: str) -> frozenset[str]:
    out: set[str] = set()
    for sentence in _SENTENCE.split(text):
        for m in _WORD.finditer(sentence):
            if m.start() == 0 and not m.group().isupper():
                continue
            word = normalise(m.group())
            if word and word not in HONORIFICS:
                out.add(word)
    return frozenset(out)


_DIGITS = re.compile(r"\d+")


def _numbers_near(x: str, y: str) -> bool:
    """Numbers equal or one edit apart (a digit changed, dropped, added, or two swapped)."""
    return OSA.distance(x, y, score_cutoff=1) <= 1


def _observation_pairs(a: Sequence[str], b: Sequence[str]) -> tuple[int, list[str]]:
    """How many of ``a`` have an observation in ``b`` that is the same text once normalised, or the same
    but for one typo (its numbers one edit apart, or its words two edits apart with the numbers equal);
    and the conflicts: observations of one shape (the text with its numbers taken out: "born #-#-#")
    whose numbers are further apart, none of that shape agreeing (two birth dates, two id numbers)."""
    na = {normalise(t) for t in a}
    nb = {normalise(t) for t in b}
    shapes_b: dict[str, list[str]] = defaultdict(list)
    for t in nb:
        shapes_b[_shape(t)[0]].append(t)
    same = 0
    conflicts: list[str] = []
    for t in sorted(na):
        if t in nb:
            same += 1
            continue
        shape, digits = _shape(t)
        alike = shapes_b.get(shape, [])
        if alike and digits and any(_numbers_near(digits, _shape(u)[1]) for u in alike):
            same += 1
        elif len(t) >= 12 and any(
            _shape(u)[1] == digits and OSA.distance(t, u, score_cutoff=3) <= 2 for u in nb
        ):
            same += 1
        elif alike and digits:
            conflicts.append(f"{t!r} / {alike[0]!r}")
    return same, conflicts


@lru_cache(maxsize=1 << 16)  # an entity's observations again for each pair it is in
def _shape(text: str) -> tuple[str, str]:
    """A normalised observation's shape (its numbers as "#") and its digits."""
    return _DIGITS.sub("#", text), "".join(_DIGITS.findall(text))


def _common_words(ta: set[str], tb: set[str]) -> set[str]:
    """Words of both, or of one and typed differently in the other: place words by
    :func:`similar_words`, numbers of six digits or more (id numbers) one edit apart.  Shorter numbers
    one edit apart are usually two different years or house numbers; dates and whole observations are
    :func:`_observation_pairs`'."""
    common = ta & tb
    for x in ta - tb:
        for y in tb - ta:
            if x.isalpha() and y.isalpha():
                near = min(len(x), len(y)) >= 4 and similar_words(x, y)
            else:
                near = x.isdigit() and y.isdigit() and min(len(x), len(y)) >= 6 and _numbers_near(x, y)
            if near:
                common.add(x)
                break
    return common


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


def score_pair(
    a: Side, b: Side, *, cos: float | None = None, ambiguous: bool = False, outranked: bool = False
) -> Scored:
    """The pair's score (``sigmoid`` of the evidence) and its reasons, strongest first.

    ``cos``: the name-and-type embedding cosine when the model is on (store/duplicates.py computes it).
    ``ambiguous``: one name is a short form that fits another entity of the namespace too (:func:`ambiguous_short_forms`): at most ``NO_NAME_RULE_CAP``;
    ``outranked``: and it scores higher with another of them (its evidence points there)."""
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
    same_text, conflicts = _observation_pairs(a.observations, b.observations)
    ta, tb = proper_tokens(a.observations), proper_tokens(b.observations)
    common = _common_words(ta, tb)
    if same_text or common:
        j = max(
            len(common) / len(ta | tb) if ta and tb else 0.0,
            same_text / max(len(a.observations), len(b.observations)),
        )
        what = f"{same_text} identical observation(s) (or one typo apart)" if same_text else ""
        if common:
            what += ("; " if what else "") + "observations name " + ", ".join(sorted(common)[:5])
        reasons.append(Reason("overlapping_observations", what, OBS_FIRST + OBS_JACCARD * j))
    if conflicts:
        reasons.append(
            Reason(
                "conflicting_observations",
                "observations of one kind with other numbers: " + "; ".join(conflicts[:3]),
                CONFLICTING_OBS,
            )
        )
    ta_type, tb_type = normalise_type(a.entity_type), normalise_type(b.entity_type)
    if ta_type != tb_type:
        reasons.append(
            Reason(
                "different_types",
                f"types differ: {a.entity_type!r} and {b.entity_type!r}",
                DIFFERENT_TYPES,
            )
        )
    if outranked:
        reasons.append(
            Reason("better_fit_elsewhere", "the shorter name scores higher with another entity", OUTRANKED)
        )
    logit = BASE + sum(r.weight for r in reasons)
    score = 1.0 / (1.0 + math.exp(-logit))
    if rule is None and score > NO_NAME_RULE_CAP:
        score = NO_NAME_RULE_CAP
        reasons.append(Reason("no_name_rule", f"no name rule relates the names: at most {NO_NAME_RULE_CAP}"))
    if rule is not None and rule.code in CAPPED_RULES and score > NO_NAME_RULE_CAP:
        score = NO_NAME_RULE_CAP
        reasons.append(Reason("spelling_only", f"the names differ in spelling: at most {NO_NAME_RULE_CAP}"))
    if ambiguous:  # listed for review, never merged: the name alone cannot tell which one it is
        score = min(score, NO_NAME_RULE_CAP)
        reasons.append(
            Reason(
                "ambiguous_short_form",
                f"the shorter name fits another entity too: at most {NO_NAME_RULE_CAP}",
            )
        )
    reasons.sort(key=lambda r: -abs(r.weight))
    return Scored(round(score, 4), tuple(reasons))
