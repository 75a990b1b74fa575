"""Issue 31: entity resolution's rules (kg_neo4j/resolution.py): normalisation, the name rules, blocking
keys and the score's signals.  Pure: no Neo4j."""

from __future__ import annotations

import json
import random
import string
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import pytest

from kg_neo4j.resolution import (
    AUTO_MERGE_THRESHOLD,
    HUB,
    NO_NAME_RULE_CAP,
    PEER,
    SPOKE,
    Side,
    ambiguous_short_forms,
    blocking_keys,
    name_rule,
    normalise,
    parse_name,
    peer_pairs,
    score_pair,
)
from kg_neo4j.store.duplicates import _blocked_pairs, _blocked_touching

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("  Alice   SMITH ", "alice smith"),
        ("Zoë O'Brien-Smith", "zoe obrien smith"),
        ("José Álvarez", "jose alvarez"),
        ("Ｆｕｌｌｗｉｄｔｈ", "fullwidth"),
        ("A.  Smith", "a smith"),
        ("Straße", "strasse"),
    ],
)
def test_normalise(raw: str, normalised: str) -> None:
    assert normalise(raw) == normalised


@pytest.mark.parametrize(
    ("raw", "tokens"),
    [
        ("Dr. Alice Smith", ("alice", "smith")),
        ("Smith, Alice", ("alice", "smith")),
        ("Prof Sir Alan Turing PhD", ("alan", "turing")),
        ("John Smith Jr.", ("john", "smith")),
        ("Acme, Inc.", ("acme",)),
        ("Dr", ("dr",)),  # the word is the name
        ("Mrs Smith", ("smith",)),
    ],
)
def test_parse_name(raw: str, tokens: tuple[str, ...]) -> None:
    assert parse_name(raw).tokens == tokens


@pytest.mark.parametrize(
    ("a", "b", "code"),
    [
        ("Alice Smith", "alice smith", "same_normalised_name"),
        ("Alice Smith", "Dr. Alice Smith", "same_normalised_name"),
        ("Zoë Durand", "Zoe Durand", "same_normalised_name"),
        ("Smith, Alice", "Alice Smith", "same_normalised_name"),
        ("Alice Mary Smith", "Smith Alice Mary", "reordered_tokens"),
        ("A. Smith", "Alice Smith", "initials"),
        ("J. R. Tolkien", "John Ronald Tolkien", "initials"),
        ("Alice B. Smith", "Alice Smith", "initials"),
        ("Bob Smith", "Robert Smith", "nickname"),
        ("Liz Taylor", "Elizabeth Taylor", "nickname"),
        ("IBM", "International Business Machines", "acronym"),
        ("Dr Smith", "Alice Smith", "surname_only"),
        ("Alison Smythe", "Alice Smith", None),
        ("John Smith", "John Smyth", "similar_spelling"),  # a rule: the observations tell them apart
        ("Martha Okafor", "Marhta Okafor", "similar_spelling"),
        ("Tomas Berg", "Tomas Bregg", "similar_spelling"),
        ("Aaron Dekker", "Aaron Decker", "similar_spelling"),
        ("Cameron Torres", "Torres Camaron", "similar_spelling"),
        ("Daniel Ferreira", "Danile Ferreyra", None),  # two words mistyped: other parts must agree
        ("Al Smith", "Ed Smith", None),  # words under 3 letters are never similar
        ("Room 101", "Room 102", None),  # a number or a code one edit apart names another thing
        ("Invoice 1234", "Invoice 1235", None),
        ("Sensor A12", "Sensor A13", None),
        ("Jane Smith", "John Smith", None),
        ("B. Smith", "Alice Smith", None),
        ("ibm", "International Business Machines", None),  # only a written acronym is one
    ],
)
def test_name_rule(a: str, b: str, code: str | None) -> None:
    for x, y in ((a, b), (b, a)):
        rule = name_rule(x, y)
        assert (rule.code if rule else None) == code, (x, y, rule)
        if rule:
            assert x in rule.detail or y in rule.detail


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Alice Smith", "alice smith"),
        ("A. Smith", "Alice Smith"),
        ("Bob Smith", "Robert Smith"),
        ("Dr Smith", "Alice Smith"),
        ("IBM", "International Business Machines"),
        ("Smith, Alice", "Alice Smith"),
        # typing errors (issue 38): a surname mistyped, a given name mistyped at its initial, a
        # sound-alike spelling, the parts swapped with a typo
        ("Martha Okafor", "Martha Okafpr"),
        ("Patrick Mensah", "Latrick Mensah"),
        ("Tomas Berg", "Tomas Bregg"),
        ("Aaron Dekker", "Aaron Decker"),
        ("Cameron Torres", "Torres Camaron"),
    ],
)
def test_related_names_share_a_key_as_pairable_roles(a: str, b: str) -> None:
    ka, kb = blocking_keys(a), blocking_keys(b)
    shared = set(ka) & set(kb)
    assert any(ka[k] == kb[k] == PEER or HUB in (ka[k], kb[k]) for k in shared), (
        f"{a!r} and {b!r} are never compared: {ka} {kb}"
    )


def test_spokes_are_not_paired_through_a_surname() -> None:
    """ "Alice Smith" and "Bob Smith" share the surname key only as spokes: not compared through it."""
    ka, kb = blocking_keys("Alice Smith"), blocking_keys("Bob Smith")
    for k in set(ka) & set(kb):
        assert ka[k] == kb[k] == SPOKE


def test_mercury_planet_and_element_are_not_one() -> None:
    planet = Side("Mercury", "planet", {"Solar System"}, ["the closest planet to the Sun"])
    element = Side("mercury", "element", {"Periodic Table"}, ["a metal, liquid at room temperature"])
    scored = score_pair(planet, element)
    codes = [r.code for r in scored.reasons]
    assert "same_normalised_name" in codes and "different_types" in codes
    assert scored.score < 0.05


def test_alison_smythe_is_not_alice_smith() -> None:
    a = Side("Alice Smith", "person", {"Acme"}, ["works at Acme"])
    b = Side("Alison Smythe", "person", {"Acme"}, ["works at Acme"])
    scored = score_pair(a, b)
    assert name_rule(a.name, b.name) is None
    assert scored.score < AUTO_MERGE_THRESHOLD


@pytest.mark.parametrize(
    ("context", "above"),
    [
        # same name, a shared employer: one person
        ((({"Acme"}, ["works at Acme in Paris"]), ({"Acme", "Paris"}, ["lives in Paris"])), True),
        # same name, different employers and cities: two people named John Smith
        ((({"Acme"}, ["works at Acme in Paris"]), ({"Globex"}, ["works at Globex in Berlin"])), False),
        # same name and nothing else known: listed for review, not merged
        (((set(), []), (set(), [])), False),
    ],
)
def test_context_decides_same_names(
    context: tuple[tuple[set[str], list[str]], tuple[set[str], list[str]]], above: bool
) -> None:
    (na, oa), (nb, ob) = context
    scored = score_pair(Side("John Smith", "person", na, oa), Side("john smith", "person", nb, ob))
    assert (scored.score >= AUTO_MERGE_THRESHOLD) == above, scored
    assert scored.reasons[0].code in {"same_normalised_name", "no_shared_neighbours", "shared_neighbours"}


def test_initials_with_a_shared_neighbour_pass_without_embeddings() -> None:
    scored = score_pair(Side("A. Smith", "person", {"Acme"}), Side("Alice Smith", "person", {"Acme", "Bob"}))
    assert scored.score >= AUTO_MERGE_THRESHOLD
    assert {r.code for r in scored.reasons} == {"initials", "shared_neighbours"}


@pytest.mark.parametrize("cos", [0.99, 0.5])
def test_embedding_cosine_is_a_signal(cos: float) -> None:
    a, b = Side("Alice Smith", "person", {"Acme"}), Side("A. Smith", "person", {"Acme"})
    without = score_pair(a, b).score
    scored = score_pair(a, b, cos=cos)
    assert "embedding_cosine" in {r.code for r in scored.reasons}
    assert (scored.score > without) == (cos > 0.85)


def test_observations_one_typo_apart_count_as_the_same() -> None:
    """A birth date with two digits swapped, an id number with one changed, a town mistyped: the same
    observations; other numbers in an observation of one shape speak against."""
    a = Side("Priya Raman", "person", set(), ["born 1984-03-12", "id number 48213377", "lives in Leith"])
    typo = Side("Priya Ramen", "person", set(), ["born 1984-03-21", "id number 48213371", "lives in Lieth"])
    other = Side("Priya Ramen", "person", set(), ["born 1961-11-30", "id number 90817263"])
    found = score_pair(a, typo)
    overlap = next(r for r in found.reasons if r.code == "overlapping_observations")
    assert overlap.detail.startswith("3 identical")
    # listed for review, never merged: a spelling difference may be two names (Smith, Smyth)
    assert found.score == NO_NAME_RULE_CAP and "spelling_only" in {r.code for r in found.reasons}
    against = score_pair(a, other)
    assert "conflicting_observations" in {r.code for r in against.reasons}
    assert against.score < score_pair(a, Side("Priya Ramen", "person")).score


def test_an_initials_form_fitting_two_people_is_ambiguous() -> None:
    pairs = [("A. Smith", "Alice Smith"), ("A. Smith", "Adam Smith"), ("B. Jones", "Bob Jones")]
    assert ambiguous_short_forms(pairs) == {"A. Smith": {"Alice Smith", "Adam Smith"}}
    # two forms of one person are not two people
    assert ambiguous_short_forms([("A. Smith", "Alice Smith"), ("A. Smith", "alice smith")]) == {}
    same = ["lives in Leith", "born 1980"]
    scored = score_pair(
        Side("A. Smith", "person", set(), same), Side("Alice Smith", "person", set(), same), ambiguous=True
    )
    assert scored.score == NO_NAME_RULE_CAP < AUTO_MERGE_THRESHOLD
    assert "ambiguous_short_form" in {r.code for r in scored.reasons}


def test_an_initials_form_fitting_many_people_is_scored_once_per_form_with_the_same_answers() -> None:
    """ "J. Smith" beside four J-named Smiths: listed with each at most at the cap, the one its evidence
    points at (a shared employer) not outranked, the others outranked; the scorer computes the form's
    scores with its longer forms once (store/duplicates.Scorer), with the answers score_pair gives."""
    from kg_neo4j.store.duplicates import Scorer, _Entity

    fulls = ["Jane Smith", "John Smith", "Judy Smith", "Jake Smith"]
    context = {"J. Smith": _Entity("J. Smith", "person", observations=["works at Acme in Leith"])}
    for i, name in enumerate(fulls):
        place = "works at Acme in Leith" if i == 2 else f"works at Other{i} in Town{i}"
        context[name] = _Entity(name, "person", observations=[place])
    ambiguous = ambiguous_short_forms(("J. Smith", f) for f in fulls)
    assert ambiguous == {"J. Smith": set(fulls)}
    scorer = Scorer(context, {}, ambiguous)
    short = context["J. Smith"].side()
    for full in fulls:
        outranked = full != "Judy Smith"
        expected = score_pair(short, context[full].side(), ambiguous=True, outranked=outranked)
        got = scorer.score("J. Smith", full)
        assert got == expected
        assert got.score <= NO_NAME_RULE_CAP
        assert ("better_fit_elsewhere" in [r.code for r in got.reasons]) == outranked


def test_a_names_blocks_are_the_whole_namespaces_pairs_that_hold_it() -> None:
    """find_duplicates with ``names`` compares only the blocks of the names it reaches
    (store/duplicates.py ``_blocked_touching``): for every name of both labelled sets' dev halves, in one
    crowded namespace, exactly the whole namespace's blocked pairs holding it."""
    root = Path(__file__).parent.parent / "benchmarks" / "entity_pairs"
    names: dict[str, str] = {}
    for path in (root / "dev.jsonl", root / "typos" / "dev.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            names.update({row[side]["name"]: row[side]["type"] for side in ("a", "b")})
    whole = _blocked_pairs(names)
    touching = _blocked_touching(names)
    assert len(whole) > 500  # a crowded namespace: many related pairs
    for name in names:
        assert touching({name}) == {p for p in whole if name in p}, name


def _labelled_names() -> list[str]:
    root = Path(__file__).parent.parent / "benchmarks" / "entity_pairs"
    names: dict[str, None] = {}
    for path in (root / "dev.jsonl", root / "typos" / "dev.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            names.update({row[side]["name"]: None for side in ("a", "b")})
    return list(names)


def test_a_blocks_narrowed_pairs_hold_every_pair_a_name_rule_relates() -> None:
    """``peer_pairs`` leaves out of a block only pairs no name rule relates (blocking's answers are those
    of comparing every pair of every block): for every peer block of both labelled sets' dev names, one
    crowded namespace, and of names made to land in one block (a surname with given names one edit,
    a nickname or a sound apart, initials, three words, a surname that is a given name too)."""
    made = [
        "Kate Smith",
        "Katherine Smith",
        "Kathryn Smith",
        "Kat Smith",
        "K. Smith",
        "Kate J Smith",
        "Bob Smith",
        "Rob Smith",
        "Robert Smith",
        "Smith Smith",
        "Smith Kate",
        "Katy Smith",
        "Kade Smith",
        "Cate Smith",
        "Kate Smyth",
        "Kate Smithe",
        "Kate Smiht",
        "Jon Kaplan",
        "John Kaplan",
        "Jhon Kaplan",
        "Jo Kaplan",
        "J Kaplan",
        "Jon Paul Kaplan",
        "Jon Paulo Kaplan",
        "Kaplan Jon",
        "Kaplan John",
    ]
    rng = random.Random(38)
    made += [
        f"{g} {''.join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 7)))}"
        for g in ("Jon", "Kate", "Bob", "Smith")
        for _ in range(40)
    ]
    blocks: dict[str, list[str]] = defaultdict(list)
    for name in dict.fromkeys([*_labelled_names(), *made]):
        for key, role in blocking_keys(name).items():
            if role == PEER:
                blocks[key].append(name)
    checked = 0
    for key, names in blocks.items():
        kept = {frozenset(p) for p in peer_pairs(key, names)}
        for a, b in combinations(names, 2):
            if name_rule(a, b) is not None:
                checked += 1
                assert frozenset((a, b)) in kept, (key, a, b)
    assert checked > 1000
