// The fulltext index's analyzer (docs/recall.md#languages): a setting, checked at start against what this
// Neo4j offers and against the analyzer the index was built with; `kg-neo4j rebuild-fulltext` rebuilds it
// (kg_neo4j/store/fulltext.py).  The index itself is created by schema_fulltext (schema.cypher).

// name: fulltext_analyzers
// The analyzers this Neo4j offers for fulltext indexes.
CALL db.index.fulltext.listAvailableAnalyzers() YIELD analyzer
RETURN analyzer ORDER BY analyzer

// name: fulltext_index_state
// The analyzer, state, population and properties of the kg_fulltext index (no row when it does not exist).
SHOW FULLTEXT INDEXES YIELD name, state, populationPercent, options, properties
WHERE name = 'kg_fulltext'
RETURN options.indexConfig.`fulltext.analyzer` AS analyzer, state, populationPercent,
       coalesce(options.indexConfig.`fulltext.eventually_consistent`, false) AS eventually_consistent,
       'namespace' IN properties AS by_namespace

// name: fulltext_drop
// Drop the kg_fulltext index (rebuild-fulltext creates it again with another analyzer).
DROP INDEX kg_fulltext IF EXISTS
