"""``kg-neo4j import`` / ``kg-neo4j export``: memory files in and out of one namespace.

Import formats (``--format``, detected from the content when ``auto``):

``jsonl``
    The reference memory server's file: one ``{"type": "entity", "name", "entityType",
    "observations"}`` or ``{"type": "relation", "from", "to", "relationType"}`` per line.
``memory-json``
    The reference's legacy ``memory.json``: the same lines under the old name (its
    migration only renames the file).  Detected as ``jsonl`` content in a ``.json`` file.
``simple-memory``
    Simple Memory's single JSON object ``{"entities": [...], "relations": [...]}``.
``memorymesh``
    MemoryMesh JSONL: ``{"type": "node", "name", "nodeType", "metadata"}`` and ``{"type":
    "edge", "from", "to", "edgeType", "weight"}``; nodeType becomes entityType, metadata
    the observations, edgeType the relation type.
``full``
    kg-neo4j's own lossless format, written by ``kg-neo4j export --format full``::

        {"type":"header","format":"kg-neo4j-full","version":1,"namespace":...,"exported_at":...}
        {"type":"node","name":...,"labels":["Entity"],"properties":{...},
         "observations":[{"labels":[],"properties":{"text":...,"seq":0,"created_at":...}}]}
        {"type":"relationship","from":...,"to":...,"relationType":...,"properties":{...}}

    Nodes (name order) come before relationships.  Labels are those beyond KgNode /
    Observation; properties leave out the namespace and derived values (name_lower,
    type_lower, text_lower, recomputed on import) and the embedding vectors.  Temporal,
    spatial and byte values are tagged: ``{"$datetime": "...+00:00"}`` (plus ``"zone"``
    for a named zone), ``$localdatetime``, ``$date``, ``$time``, ``$localtime``,
    ``$duration``, ``$point``, ``$bytes``.  Imported as stored: into an empty namespace
    it reproduces the exported one; an existing name, or a relationship equal to an
    existing one, is skipped.  A kept entity's ``aliases`` / ``alias_at`` properties (names
    merged into it) travel with it, and import makes the nodes reads resolve them by
    (``transfer_full_import_aliases``); merged nodes and merge records do not travel.

Detection reads the first non-empty line: a JSON object whose ``type`` is ``header``
(with ``format: kg-neo4j-full``), ``entity``/``relation`` or ``node``/``edge`` names the
format; an object without ``type`` holding ``entities``/``relations`` is Simple Memory,
as is a file whose first line is not JSON but whose text starts ``{ "entities": ...``
(pretty-printed).  If the first line says nothing, the next lines are tried.

JSONL files are streamed in batches of ``batch_size`` lines: every line of a batch is
validated (``EntityIn`` / ``RelationIn``) before anything is written, and a batch is one
transaction.  A malformed line is reported with its line number and nothing of its
batch is written; the other batches land.  Within a batch entities are written before
relations; relations to names not (yet) known create placeholders that a later entity
of that name turns into the entity (the store's create semantics).

The report counts, per group, lines ``added``, ``skipped`` (the name, or the relation,
already exists: the reference's create semantics) and ``rejected`` (malformed, or in a
batch with a malformed line); ``rejected`` is every line not imported, and
``rejected_lines`` the first 20 malformed lines with their errors.  For ``full``,
"entities" counts node lines (entities and placeholders) and "relations" relationship
lines.

Modules: ``detect`` (the format of a file), ``readers`` and ``full`` (each format as a stream
of items), ``importer`` (batches, writes, the report), ``export`` (the four export formats); the
command that opens Neo4j for them is :mod:`kg_neo4j.commands.transfer`.  Progress bars go to stderr.
"""

from kg_neo4j.transfer.detect import detect_format

__all__ = ["detect_format"]
