"""Helpers the tests import (``from support.servers import stdio_session``); the fixtures stay in
tests/conftest.py.

- ``servers``: the test Neo4j's connection and real MCP sessions (stdio, HTTP) against ``kg-neo4j serve``;
- ``kg``: the reference tools' calls, answers and checks over a session;
- ``stores``: a store searched with other fusion weights, and a dialogue written as a chat is;
- ``hooks``: running ``kg-neo4j hook`` as Claude Code does;
- ``sweep_cases``: the strict-input sweep's cases and fingerprints of a namespace;
- ``namespaces``: namespaces seeded with everything kg-neo4j writes, and ``kg-neo4j namespace`` run by a user;
- ``shared_session``, ``many_servers``, ``replica_load``, ``neo4j_lines``: one session shared by a
  module, servers started side by side, replicas under load, private servers of other Neo4j lines.
"""
