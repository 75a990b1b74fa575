"""The GraSS style sheet for Neo4j Browser (docs/neo4j-versions.md#the-style-sheet), built from our
vocabularies.

``memory.grass`` next to this module is this module's output, committed and shipped in the wheel;
tests/test_browser_guide.py checks that it is up to date (regenerate with
``python -m kg_neo4j.browser.style > kg_neo4j/browser/memory.grass``).

How Browser applies it (neo4j-browser's GraphStyleModel): every rule whose labels are all on a node
applies, in the order of the sheet, a later rule overriding an earlier one.  So the order is: all
nodes, entities (a neutral colour), entity types, then what must win over a type: placeholders,
knowledge by trust level, experiences, expired knowledge.  A type the sheet does not list keeps the
neutral entity colour; click its label in Browser's result panel to give it one.  GraSS cannot
combine a relationship's type with its properties in one caption (``<type>`` is only replaced when
it is the whole caption), so the relationship types kg-neo4j knows (knowledge edges, the shipped
MemoryMesh schemas' edges, common reference types) get ``'<name> {weight} {valid_until}'``
captions and any other type shows its name.  Closed relations cannot be styled apart (GraSS
selects by type only): their caption shows the ``valid_until`` they were closed at.
"""

from __future__ import annotations

import json
from importlib import resources

from kg_neo4j.knowledge.vocabulary import EdgeType, KnowledgeType
from kg_neo4j.store.type_labels import TRUST_LABELS, type_labels

__all__ = ["ENTITY_TYPE_COLOURS", "grass", "relationship_types"]

#: Node colours by entity type: (fill, border, text).  The common types of the reference server's
#: examples, the 11 shipped MemoryMesh schemas, the knowledge types and experiences.
ENTITY_TYPE_COLOURS: dict[str, tuple[str, str, str]] = {
    "person": ("#4C8EDA", "#2870C2", "#FFFFFF"),
    "organization": ("#F79767", "#F36924", "#FFFFFF"),
    "organisation": ("#F79767", "#F36924", "#FFFFFF"),
    "company": ("#F79767", "#F36924", "#FFFFFF"),
    "project": ("#8DCC93", "#5DB665", "#2A2C34"),
    "place": ("#57C7E3", "#23B3D7", "#2A2C34"),
    "location": ("#57C7E3", "#23B3D7", "#2A2C34"),
    "city": ("#57C7E3", "#23B3D7", "#2A2C34"),
    "event": ("#FFC454", "#D7A013", "#2A2C34"),
    "concept": ("#C990C0", "#B261A5", "#FFFFFF"),
    "technology": ("#569480", "#447666", "#FFFFFF"),
    "tool": ("#569480", "#447666", "#FFFFFF"),
    "document": ("#D9C8AE", "#C0A378", "#2A2C34"),
    "preference": ("#ECB5C9", "#DA7298", "#2A2C34"),
    "npc": ("#4C8EDA", "#2870C2", "#FFFFFF"),
    "player_character": ("#2870C2", "#1B4F8A", "#FFFFFF"),
    "faction": ("#F79767", "#F36924", "#FFFFFF"),
    "artifact": ("#DA7194", "#CC3C6C", "#FFFFFF"),
    "quest": ("#FFC454", "#D7A013", "#2A2C34"),
    "inventory": ("#D9C8AE", "#C0A378", "#2A2C34"),
    "skills": ("#C990C0", "#B261A5", "#FFFFFF"),
    "currency": ("#E8D44D", "#BFA92A", "#2A2C34"),
    "transportation": ("#8DCC93", "#5DB665", "#2A2C34"),
    "temporal": ("#A5ABB6", "#7D8491", "#2A2C34"),
    KnowledgeType.RULE.value: ("#F16667", "#EB2728", "#FFFFFF"),
    KnowledgeType.PROCEDURE.value: ("#FFC454", "#D7A013", "#2A2C34"),
    KnowledgeType.OBSERVATION.value: ("#57C7E3", "#23B3D7", "#2A2C34"),
    KnowledgeType.INSIGHT.value: ("#C990C0", "#B261A5", "#FFFFFF"),
    KnowledgeType.CORE.value: ("#604A0E", "#423204", "#FFFFFF"),
}
for _type in ENTITY_TYPE_COLOURS:
    assert type_labels(_type) == [_type], _type  # only types whose label is the type itself

#: Knowledge colours by trust: expert principles strong, patterns middle, the agent's inferences pale.
TRUST_COLOURS: dict[str, tuple[str, str, str]] = {
    "principle": ("#B8860B", "#8B6508", "#FFFFFF"),
    "pattern": ("#6DCE9E", "#3FA46F", "#2A2C34"),
    "inference": ("#E0E0E0", "#9E9E9E", "#2A2C34"),
}
_RELATION_COLOURS = {
    EdgeType.CONTRADICTS.value: {"color": "#EB2728"},
    EdgeType.MUST_PRECEDE.value: {"color": "#2870C2"},
}
_COMMON_RELATIONS = (
    "works_at",
    "knows",
    "manages",
    "reports_to",
    "part_of",
    "uses",
    "depends_on",
    "related_to",
    "created_by",
    "owns",
    "lives_in",
    "member_of",
)


def relationship_types() -> list[str]:
    """The relationship types that get a ``type weight valid_until`` caption, in sheet order."""
    names = [e.value for e in EdgeType] + list(_COMMON_RELATIONS)
    examples = resources.files("kg_neo4j.schemas.examples")
    for f in sorted(examples.iterdir(), key=lambda f: f.name):
        if f.name.endswith(".schema.json"):
            for prop in json.loads(f.read_text(encoding="utf-8")).get("properties", {}).values():
                edge = (prop.get("relationship") or {}).get("edgeType")
                if edge and edge not in names:
                    names.append(edge)
    return names


def _rule(selector: str, props: dict[str, str]) -> str:
    body = "".join(f"  {k}: {v};\n" for k, v in props.items())
    return f"{selector} {{\n{body}}}\n"


def _colours(fill: str, border: str, text: str) -> dict[str, str]:
    return {"color": fill, "border-color": border, "text-color-internal": text}


def grass() -> str:
    """The whole style sheet."""
    # no comment in the sheet: Browser's GraSS parser has none (it would become part of a selector);
    # one rule per selector: a repeated selector replaces the earlier rule whole
    rules = [
        _rule(
            "node",
            {
                "diameter": "50px",
                **_colours("#A5ABB6", "#9AA1AC", "#FFFFFF"),
                "border-width": "2px",
                "font-size": "10px",
                "caption": "'{name}'",
            },
        ),
        _rule(
            "relationship",
            {
                "color": "#A5ABB6",
                "shaft-width": "1px",
                "font-size": "8px",
                "padding": "3px",
                "text-color-external": "#000000",
                "text-color-internal": "#FFFFFF",
                "caption": "'<type>'",
            },
        ),
        _rule(
            "node.Entity",
            {"diameter": "55px", **_colours("#A5ABB6", "#7D8491", "#2A2C34"), "caption": "'{name}'"},
        ),
    ]
    rules += [_rule(f"node.{t}", _colours(*c)) for t, c in ENTITY_TYPE_COLOURS.items()]
    rules += [
        _rule(
            "node.Placeholder",
            {"diameter": "35px", **_colours("#FFFFFF", "#A5ABB6", "#7D8491"), "caption": "'{name}'"},
        ),
        _rule(
            "node.Observation",
            {
                "diameter": "25px",
                **_colours("#F2F2F2", "#C8C8C8", "#555555"),
                "font-size": "7px",
                "caption": "'{text}'",
            },
        ),
        _rule("node.Knowledge", {"diameter": "60px", "caption": "'{name}'"}),
    ]
    rules += [_rule(f"node.{TRUST_LABELS[t]}", _colours(*c)) for t, c in TRUST_COLOURS.items()]
    rules += [
        _rule(
            "node.Experience",
            {"diameter": "55px", **_colours("#8E7CC3", "#674EA7", "#FFFFFF"), "caption": "'{outcome}'"},
        ),
        _rule(
            "node.ExpiredKnowledge",
            {"diameter": "40px", **_colours("#FFFFFF", "#CCCCCC", "#999999"), "caption": "'{name}'"},
        ),
        _rule(
            "node.KgMeta",
            {"diameter": "30px", **_colours("#333333", "#000000", "#FFFFFF"), "caption": "'{key}'"},
        ),
        _rule("relationship.HAS_OBSERVATION", {"color": "#DDDDDD", "shaft-width": "1px", "caption": "''"}),
    ]
    rules += [
        _rule(
            f"relationship.{t}",
            {
                "caption": f"'{t} {{weight}} {{valid_until}}'",
                "shaft-width": "2px",
                **_RELATION_COLOURS.get(t, {}),
            },
        )
        for t in relationship_types()
    ]
    return "\n".join(rules)


if __name__ == "__main__":  # pragma: no cover - regenerates memory.grass
    print(grass(), end="")
