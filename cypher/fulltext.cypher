// The fulltext index's analyzer (docs/recall.md#languages): a setting, checked at start against what this
// Neo4j offers and against the analyzer the index was built with; `kg-neo4j rebuild-fulltext` rebuilds it
// (kg_neo4j/store/fulltext.py).  The index itself is created by schema_fulltext (schema.cypher).

// name: fulltext_analyzers
// The analyzers this Neo4j offers for fulltext indexes.
CALL db.index.fulltext.listAvailableAnalyzers() YIELD analyzer
RETURN analyzer ORDER BY analyzer

// name: fulltext_index_state
// The analyzer, state and population of the fulltext index $name (no row when it does not exist).
SHOW FULLTEXT INDEXES YIELD name, state, populationPercent, options
WHERE name = $name
RETURN options.indexConfig.`fulltext.analyzer` AS analyzer, state, populationPercent

// name: fulltext_drop
// Drop the fulltext index $name (rebuild-fulltext creates kg_fulltext_ns again with another analyzer; the
// start-up drops an earlier version's kg_fulltext once kg_fulltext_ns is made).
DROP INDEX $name IF EXISTS
