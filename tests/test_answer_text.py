"""``reference_text`` writes the same bytes as ``json.dumps(x, indent=2, ensure_ascii=False)`` (the
reference server's ``JSON.stringify(x, null, 2)``) for every answer without floats, whatever the
strings hold: quotes, backslashes, control characters, non-ASCII, characters outside the BMP."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kg_neo4j.models import reference_text

#: No Neo4j, no server process, no network: the fast tier (pytest -m unit).
pytestmark = pytest.mark.unit

#: every control character, the characters JSON escapes, and a spread of non-ASCII ones
ALPHABET = [chr(c) for c in range(0x80)] + [
    chr(c) for c in (0x85, 0xA0, 0xE9, 0x2028, 0x2029, 0xFEFF, 0x1F600, 0x10FFFF, 0xFFFD, 0x7FF, 0x800)
]


def _text(rng: random.Random) -> str:
    return "".join(rng.choices(ALPHABET, k=rng.randint(0, 24)))


def _answer(rng: random.Random) -> Any:
    """A reference-shaped answer: entities, relations, results, or a scalar-bearing object."""
    kind = rng.randrange(4)
    if kind == 0:
        return [
            {
                "name": _text(rng),
                "entityType": _text(rng),
                "observations": [_text(rng) for _ in range(rng.randint(0, 4))],
            }
            for _ in range(rng.randint(0, 4))
        ]
    if kind == 1:
        return {
            "entities": [],
            "relations": [
                {"from": _text(rng), "to": _text(rng), "relationType": _text(rng)}
                for _ in range(rng.randint(0, 3))
            ],
            "nextCursor": rng.choice([None, "c"]),
        }
    if kind == 2:
        return [{"entityName": _text(rng), "addedObservations": [_text(rng)]}]
    return {
        "success": rng.random() < 0.5,
        "count": rng.randint(-(10**12), 10**12),
        "message": _text(rng),
        "none": None,
        "nested": {"empty_list": [], "empty_object": {}, "list": [[], [{}], [1, "a"]]},
    }


@pytest.mark.parametrize("seed", range(40))
def test_same_bytes_as_json_dumps(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        answer = _answer(rng)
        assert reference_text(answer) == json.dumps(answer, indent=2, ensure_ascii=False)
