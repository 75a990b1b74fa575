"""Values the code keeps in two places, each copy where a light module needs it without loading a
heavy one (the command line parses without the store or the peers), are held equal here: a change
to one copy fails until the other follows.  The layer list and docs/development.md's are held equal
by tests/test_layers.py; the settings the flags set are read from the parser itself
(``cli_parsers.setting_flags``), so they are kept nowhere else."""

from __future__ import annotations

import pytest

from kg_neo4j import cli_parsers, commands, peers
from kg_neo4j.cli import FLAGS
from kg_neo4j.cypher import queries
from kg_neo4j.settings import Settings
from kg_neo4j.store import maintenance
from kg_neo4j.store.connection import _SCHEMA_STATEMENTS

pytestmark = pytest.mark.unit


def test_maintain_actions_are_the_store_s() -> None:
    """``maintain --actions`` parses the actions ``maintain_graph`` runs, in its order."""
    assert commands.ACTIONS == maintenance.ACTIONS


def test_import_from_offers_the_peers_there_are() -> None:
    assert cli_parsers.PEER_SYSTEMS == tuple(peers.PEERS)


def test_the_bootstrap_creates_every_fixed_index_of_schema_cypher() -> None:
    """The bootstrap's fixed statements are exactly schema.cypher's ``CREATE ... IF NOT EXISTS`` that
    take no parameter (the vector and fulltext ones take the model's dimension or the analyzer and
    are made on their own)."""
    q = queries()
    cypher = {
        n: "\n".join(x for x in q[n].splitlines() if not x.lstrip().startswith("//")) for n in q.names()
    }
    fixed = {
        name
        for name, text in cypher.items()
        if q.statement(name).file.endswith("schema.cypher")
        and text.lstrip().startswith("CREATE ")
        and "IF NOT EXISTS" in text
        and "$" not in text
    }
    assert sorted(_SCHEMA_STATEMENTS) == sorted(fixed)
    assert len(_SCHEMA_STATEMENTS) == len(set(_SCHEMA_STATEMENTS))


def test_every_flag_named_for_a_setting_sets_it() -> None:
    """Read from the parser: the serve flags a team service uses are among them, each setting has one
    flag, and every one is a Settings field."""
    assert set(FLAGS) <= set(Settings.model_fields)
    assert FLAGS["grants_file"] == "--grants" and FLAGS["allowed_origins"] == "--allowed-origin"
    assert FLAGS["schemas_dir"] == "--schemas" and FLAGS["embedding_model"] == "--embedding-model"
