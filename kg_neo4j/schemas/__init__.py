"""Schema files (docs/memorymesh.md#schema-files): ``*.schema.json`` describing one node type each.

A file looks like::

    {"name": "add_npc", "description": "...",
     "properties": {"name": {"type": "string", "description": "...", "required": true},
                    "role": {"type": "string", "description": "...", "enum": ["Wizard", ...]},
                    "currentLocation": {"type": "string", "description": "...",
                                        "relationship": {"edgeType": "located_in", "nodeType": "location",
                                                         "description": "..."}}},
     "additionalProperties": true}

Each schema generates three tools (``add_npc``, ``update_npc``, ``delete_npc``; the server
module builds them).  This package only reads and checks files (``loading``), holds what they
describe (``model``) and turns tool arguments into metadata and edges (``args``); it never touches
Neo4j.  A bad file raises :class:`SchemaFileError`
naming the file and the field at fault.
"""

from __future__ import annotations

from kg_neo4j.schemas.args import Processed as Processed
from kg_neo4j.schemas.args import format_entry as format_entry
from kg_neo4j.schemas.args import parse_entry as parse_entry
from kg_neo4j.schemas.args import process_args as process_args
from kg_neo4j.schemas.args import replace_entries as replace_entries
from kg_neo4j.schemas.loading import default_schemas_dir as default_schemas_dir
from kg_neo4j.schemas.loading import load_schema as load_schema
from kg_neo4j.schemas.loading import load_schemas as load_schemas
from kg_neo4j.schemas.model import NodeSchema as NodeSchema
from kg_neo4j.schemas.model import Property as Property
from kg_neo4j.schemas.model import Relationship as Relationship
from kg_neo4j.schemas.model import SchemaFileError as SchemaFileError
from kg_neo4j.schemas.model import display_name as display_name
