"""Neo4j Browser as the window onto an agent's memory (docs/neo4j-versions.md#neo4j-browser).

- ``memory.grass``: the style sheet (built by :mod:`kg_neo4j.browser.style`);
- the guide: HTML slides for ``:play URL``, rendered here from ``cypher/guide.cypher`` (the one copy
  of its queries, also shipped as a plain ``.cypher`` file for query tools that run no guides);
- :mod:`kg_neo4j.browser.endpoint`: the small loopback HTTP server that serves both to the local
  Browser, started by ``kg-neo4j neo4j start``.

A guide slide is a ``<slide>`` element; Browser puts a play icon before each ``pre.runnable``, which
runs its text (a query, ``:param ...``, ``:style ...``) in a new frame; a click on the text copies it
into the editor.
"""

from __future__ import annotations

import html
from importlib import resources

from kg_neo4j.cypher import default_cypher_dir, queries

__all__ = ["GUIDE_FILE", "GUIDE_PARAMS", "SLIDES", "STYLE_FILE", "guide_cypher", "guide_html", "style_text"]

STYLE_FILE = "memory.grass"
GUIDE_FILE = "guide.html"
GUIDE_CYPHER_FILE = "guide.cypher"

#: The guide's parameters: name, the ``:param`` value the guide sets, what it is.
GUIDE_PARAMS: list[tuple[str, str, str]] = [
    ("ns", "'default'", "the namespace (kg-neo4j serve --namespace)"),
    ("name", "'Alice'", "the entity to look around"),
    ("since", "datetime() - duration('P1D')", "what changed since this moment"),
    ("at", "datetime() - duration('P7D')", "the moment to see the graph as of"),
]

#: The slides after the first: title, what it shows, the statements of cypher/guide.cypher on it.
SLIDES: list[tuple[str, str, list[str]]] = [
    (
        "The whole memory",
        "Entities coloured by type, knowledge by trust level; relations show their type, "
        "weight and, once closed, valid_until.",
        ["guide_whole_memory"],
    ),
    (
        "Around an entity",
        "Set <code>$name</code>, then look at depth 1 (with its observations), 2 or 3.",
        ["guide_around_1", "guide_around_2", "guide_around_3"],
    ),
    (
        "What changed, and a relation's history",
        "Set <code>$since</code>; the history shows current and closed relations with their validity.",
        ["guide_changed_since", "guide_relation_history"],
    ),
    (
        "The graph as of a past moment",
        "Set <code>$at</code>: what existed then, and the relations valid then.",
        ["guide_as_of"],
    ),
    (
        "Fading knowledge",
        "Retention below 0.3; <code>will_expire</code> marks what the next prune expires.",
        ["guide_fading"],
    ),
    (
        "Contradictions and must_precede chains",
        "Knowledge that disagrees, and the order knowledge must be applied in.",
        ["guide_contradictions", "guide_must_precede"],
    ),
    (
        "Hubs and orphans",
        "The most connected entities, and the ones nothing points to any more.",
        ["guide_hubs", "guide_orphans"],
    ),
]


def style_text() -> str:
    """The shipped GraSS style sheet."""
    return resources.files(__package__).joinpath(STYLE_FILE).read_text(encoding="utf-8")


def guide_cypher() -> str:
    """The guide's queries as a plain ``.cypher`` file (``cypher/guide.cypher`` as shipped)."""
    return default_cypher_dir().joinpath(GUIDE_CYPHER_FILE).read_text(encoding="utf-8")


def _runnable(text: str, name: str) -> str:
    # Browser puts a play icon before a pre.runnable: a click on it runs the text in a new frame, a
    # click on the text copies it into the editor (kg-query names the query for tests and readers)
    return f'<pre class="runnable kg-query" data-query="{name}">{html.escape(text)}</pre>\n'


def _query_block(name: str) -> str:
    st = queries().statement(name)
    return f"<h4>{html.escape(st.doc)}</h4>\n" + _runnable(st.text, name)


def guide_html(base_url: str) -> str:
    """The guide's slides; ``base_url`` is where the style sheet is served (its ``:style`` button)."""
    params = "".join(
        f"<li><code>${n}</code>: {html.escape(what)}\n{_runnable(f':param {n} => {v}', f'param_{n}')}</li>\n"
        for n, v, what in GUIDE_PARAMS
    )
    style_url = f"{base_url.rstrip('/')}/{STYLE_FILE}"
    first = (
        '<slide class="row-fluid">\n<div class="col-sm-12">\n'
        "<h3>An agent's memory (kg-neo4j)</h3>\n"
        "<p>Every query of this guide reads one namespace. Set the parameters first (edit a value "
        "in the editor for another namespace or entity):</p>\n"
        f"<ul>\n{params}</ul>\n"
        "<p>The style (applied on connect by <code>kg-neo4j neo4j start</code>):</p>\n"
        + _runnable(f":style {style_url}", "style")
        + "<p>On the next slides, the play icon before a query runs it.</p>\n"
        "</div>\n</slide>\n"
    )
    slides = [first]
    for title, intro, names in SLIDES:
        blocks = "".join(_query_block(n) for n in names)
        slides.append(
            f'<slide class="row-fluid">\n<div class="col-sm-12">\n<h3>{html.escape(title)}</h3>\n'
            f"<p>{intro}</p>\n{blocks}</div>\n</slide>\n"
        )
    return (
        '<article class="guide">\n<carousel class="deck container-fluid">\n'
        + "".join(slides)
        + "</carousel>\n</article>\n"
    )
