// Schema bootstrap: every statement is idempotent (IF NOT EXISTS) and runs at startup.

// name: schema_node_key
// Every named node (entity or placeholder) is unique per (namespace, name); MERGE and lookups use this index.
CREATE CONSTRAINT kg_node_key IF NOT EXISTS FOR (n:KgNode) REQUIRE (n.namespace, n.name) IS UNIQUE

// name: schema_entity_ns_name
// Range index that lists and pages the entities of one namespace in name order.
CREATE INDEX kg_entity_ns_name IF NOT EXISTS FOR (n:Entity) ON (n.namespace, n.name)

// name: schema_entity_ns_name_lower
// Range index that finds the entities named in a search_memory question (exact lower-cased names).
CREATE INDEX kg_entity_ns_name_lower IF NOT EXISTS FOR (n:Entity) ON (n.namespace, n.name_lower)

// name: schema_entity_ns_dup_last
// Range index of create_entities' duplicate hint: the entities whose name's last normalised word is one of a new name's.
CREATE INDEX kg_entity_ns_dup_last IF NOT EXISTS FOR (n:Entity) ON (n.namespace, n.dup_last)

// name: schema_entity_ns_dup_start
// Range index of create_entities' duplicate hint: a name's words before the last with the last's first two letters.
CREATE INDEX kg_entity_ns_dup_start IF NOT EXISTS FOR (n:Entity) ON (n.namespace, n.dup_start)

// name: schema_entity_ns_dup_end
// Range index of create_entities' duplicate hint: a name's words before the last with the last's last two letters.
CREATE INDEX kg_entity_ns_dup_end IF NOT EXISTS FOR (n:Entity) ON (n.namespace, n.dup_end)

// name: schema_entity_ns_dup_sound
// Range index of create_entities' duplicate hint: the sorted Metaphone codes of a name's words.
CREATE INDEX kg_entity_ns_dup_sound IF NOT EXISTS FOR (n:Entity) ON (n.namespace, n.dup_sound)

// name: schema_text_lower
// The one text index behind search_nodes' case-insensitive substring match: every
// entity and observation carries :KgText and its lowered text in text_lower (an observation's text; an
// entity's name and type joined by a newline).  One Lucene index a write touches instead of three: each
// costs its commit (docs/graph-model.md;
// docs/performance.md#bench_write_floorpy-what-in-the-data-model-sets-create_entities-floor).
CREATE TEXT INDEX kg_text_lower IF NOT EXISTS FOR (n:KgText) ON (n.text_lower)

// name: schema_observation_ns_turn
// Range index over each observation's place in its namespace's write order (search_memory_context finds the
// turn written just before a candidate: docs/recall.md#recall-search_memory, the turn-context re-rank).
CREATE INDEX kg_observation_ns_turn IF NOT EXISTS FOR (o:Observation) ON (o.namespace, o.turn)

// name: schema_knowledge_ns
// Range index that lists the knowledge nodes of one namespace (list_knowledge, decay sweeps, stats).
CREATE INDEX kg_knowledge_ns IF NOT EXISTS FOR (k:Knowledge) ON (k.namespace)

// name: schema_expired_knowledge_ns
// Range index over forgotten or expired knowledge of one namespace (history, list_knowledge includeExpired).
CREATE INDEX kg_expired_knowledge_ns IF NOT EXISTS FOR (k:ExpiredKnowledge) ON (k.namespace)

// name: schema_merged_ns_name
// Range index over the entities merged into others (their names are aliases: open_nodes, resolving writes).
CREATE INDEX kg_merged_ns_name IF NOT EXISTS FOR (m:KgMerged) ON (m.namespace, m.name)

// name: schema_merge_record_ns_into
// Range index over the merges into an entity (unmerge_entities finds the last one).
CREATE INDEX kg_merge_record_ns_into IF NOT EXISTS FOR (m:KgMergeRecord) ON (m.namespace, m.into)

// name: schema_merge_record_ns_id
// Range index over a namespace's merge records by id (unmerge, the merge's counts, namespace delete): they are
// read without scanning every namespace's records.
CREATE INDEX kg_merge_record_ns_id IF NOT EXISTS FOR (m:KgMergeRecord) ON (m.namespace, m.id)

// name: schema_experience_ns
// Range index that lists the recorded experiences of one namespace.
CREATE INDEX kg_experience_ns IF NOT EXISTS FOR (x:Experience) ON (x.namespace)

// name: schema_meta_key
// One metadata node per key (schema version, later the embedding model).
CREATE CONSTRAINT kg_meta_key IF NOT EXISTS FOR (m:KgMeta) REQUIRE m.key IS UNIQUE

// name: schema_await_indexes
// Block until every index is ONLINE, so the first query after startup uses them.
CALL db.awaitIndexes(300)

// name: meta_read_schema
// Read the recorded graph schema version (null on a fresh database).
OPTIONAL MATCH (m:KgMeta {key: 'schema'})
RETURN m.version AS version

// name: meta_write_schema
// Record the graph schema version this package writes (2: with filtered vector indexes, where the server has them).
MERGE (m:KgMeta {key: 'schema'})
ON CREATE SET m.created_at = $now
SET m.previous_version = CASE WHEN m.version <> $version THEN m.version ELSE m.previous_version END,
    m.version = $version, m.updated_at = $now, m.package_version = $package_version

// name: schema_fulltext
// Fulltext (BM25) over entity names and types and observation text, behind search_memory; $analyzer: the fulltext-analyzer setting.
// Eventually consistent: a write's commit does not wait for Lucene, and every read of it first waits for the
// writes committed before (db.index.fulltext.awaitEventuallyConsistentIndexRefresh()), so reads still see
// them (docs/graph-model.md).  The namespace is indexed too, so that a query asks for one namespace's best
// (kg_neo4j/text.py fulltext_query) rather than the database's, which other namespaces may fill (earlier
// versions' kg_fulltext did not: kg_neo4j/store/fulltext.py replaces it).
CREATE FULLTEXT INDEX kg_fulltext_ns IF NOT EXISTS
FOR (n:Entity|Observation) ON EACH [n.name, n.entityType, n.text, n.namespace]
OPTIONS {indexConfig: {`fulltext.analyzer`: $analyzer, `fulltext.eventually_consistent`: true}}

// name: schema_observation_vector
// Native vector index (cosine) over observation embeddings; dimension from the embedding model.
CREATE VECTOR INDEX kg_observation_embedding IF NOT EXISTS
FOR (o:Observation) ON (o.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine',
                       `vector.quantization.enabled`: false}}

// name: schema_entity_vector
// Native vector index (cosine) over entity name/type embeddings.  On :KgNode (kg-neo4j's entities are the
// :KgNode nodes with an embedding), not :Entity: Memento indexes (:Entity).embedding itself, and Neo4j makes
// only one of two vector indexes on the same label and property (IF NOT EXISTS then creates nothing).
// Indexes created on :Entity by earlier versions keep working (statements use the index by name).
CREATE VECTOR INDEX kg_entity_embedding IF NOT EXISTS
FOR (e:KgNode) ON (e.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine',
                       `vector.quantization.enabled`: false}}

// name: schema_vector_dimensions
// The dimensions the existing vector indexes were created with (empty when none exist).
SHOW VECTOR INDEXES YIELD name, options
WHERE name IN ['kg_observation_embedding', 'kg_entity_embedding',
               'kg_observation_embedding_filtered', 'kg_entity_embedding_filtered']
RETURN name, options.indexConfig.`vector.dimensions` AS dimension

// --- Neo4j 2026.x and later: vector indexes with filter properties (docs/cluster.md,
// docs/neo4j-versions.md#neo4j-versions).
// Cypher 25's SEARCH clause filters them by these properties inside the index, so one query returns the
// top k of one namespace as of a moment.  They sit beside the unfiltered indexes above, which the other
// vector reads (knowledge, maintenance) and search_memory's 5.26 path keep using.

// name: schema_observation_vector_filtered
// Observation vectors filtered in the index by namespace and creation time (search_memory_vector_filtered).
CYPHER 25
CREATE VECTOR INDEX kg_observation_embedding_filtered IF NOT EXISTS
FOR (o:Observation) ON o.embedding WITH [o.namespace, o.created_at]
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine',
                       `vector.quantization.enabled`: false}}

// name: schema_entity_vector_filtered
// Entity vectors filtered in the index by namespace, entity type and creation time (search_memory_entities_filtered*).
CYPHER 25
CREATE VECTOR INDEX kg_entity_embedding_filtered IF NOT EXISTS
FOR (e:Entity) ON e.embedding WITH [e.namespace, e.entityType, e.created_at]
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine',
                       `vector.quantization.enabled`: false}}

// name: schema_filtered_vector_state
// State and population of the filtered vector indexes (empty on servers without them).
SHOW VECTOR INDEXES YIELD name, state, populationPercent
WHERE name IN ['kg_observation_embedding_filtered', 'kg_entity_embedding_filtered']
RETURN name, state, populationPercent

// name: schema_pending_indexes
// Indexes not ONLINE yet, apart from the given ones (bootstrap waits for these only).
SHOW INDEXES YIELD name, state
WHERE state <> 'ONLINE' AND NOT name IN $skip
RETURN name, state

// name: schema_await_index
// Block until one index is ONLINE (at most $seconds).
CALL db.awaitIndex($name, $seconds)

// name: schema_drop_observation_vector_filtered
// Drop the filtered observation vector index (reembed with a model of another dimension recreates it).
DROP INDEX kg_observation_embedding_filtered IF EXISTS

// name: schema_drop_entity_vector_filtered
// Drop the filtered entity vector index (reembed with a model of another dimension recreates it).
DROP INDEX kg_entity_embedding_filtered IF EXISTS

// name: meta_write_server
// Record the Neo4j server this graph was last bootstrapped on, with what it supports.
MERGE (m:KgMeta {key: 'server'})
ON CREATE SET m.created_at = $now
SET m.version = $version, m.edition = $edition, m.cypher_versions = $cypher_versions,
    m.vector_search_filters = $vector_search_filters, m.fulltext_search = $fulltext_search,
    m.vector_filters = $vector_filters, m.updated_at = $now

// name: schema_drop_observation_vector
// Drop the observation vector index (reembed with a model of another dimension recreates it).
DROP INDEX kg_observation_embedding IF EXISTS

// name: schema_drop_entity_vector
// Drop the entity vector index (reembed with a model of another dimension recreates it).
DROP INDEX kg_entity_embedding IF EXISTS

// name: meta_read_embedding
// The embedding model and dimension the graph's vectors were made with (null before any).
OPTIONAL MATCH (m:KgMeta {key: 'embedding'})
RETURN m.model AS model, m.dimension AS dimension, m.reembed_target AS reembed_target

// name: meta_write_embedding
// Record the embedding model and dimension of the graph's vectors.
MERGE (m:KgMeta {key: 'embedding'})
ON CREATE SET m.created_at = $now
SET m.model = $model, m.dimension = $dimension, m.updated_at = $now, m.reembed_target = null

// name: meta_start_reembed
// Mark a re-embedding as under way (so an interrupted one is visible and resumable).
MERGE (m:KgMeta {key: 'embedding'})
ON CREATE SET m.created_at = $now
SET m.reembed_target = $model, m.reembed_dimension = $dimension, m.updated_at = $now
