"""The knowledge layer's pure rules (docs/knowledge-model.md): no database, no clock, no I/O.

- ``vocabulary``: knowledge types, trust, category, semantic edge types, access grades,
  memory levels, and parsing of user-given labels into them;
- ``decay``: two-component retention, stability by trust and category, growth on
  access, memory levels, expiry, and the memory score used for ranking;
- ``trust``: the anti-fabrication rules, each a function that raises
  ``kg_neo4j.errors.ValidationError`` saying what to fix.

The store applies these in Cypher; its tests compare what Cypher wrote with these
functions.
"""
