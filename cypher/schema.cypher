// Schema bootstrap: every statement is idempotent (IF NOT EXISTS) and runs at startup.

// name: schema_node_key
// Every named node (entity or placeholder) is unique per (namespace, name); MERGE and lookups use this index.
CREATE CONSTRAINT kg_node_key IF NOT EXISTS FOR (n:KgNode) REQUIRE (n.namespace, n.name) IS UNIQUE

// name: schema_entity_ns_name
// Range index that lists and pages the entities of one namespace in name order.
CREATE INDEX kg_entity_ns_name IF NOT EXISTS FOR (n:Entity) ON (n.namespace, n.name)

// name: schema_entity_name_lower
// Text index behind search_nodes' case-insensitive substring match on names.
CREATE TEXT INDEX kg_entity_name_lower IF NOT EXISTS FOR (n:Entity) ON (n.name_lower)

// name: schema_entity_type_lower
// Text index behind search_nodes' case-insensitive substring match on entity types.
CREATE TEXT INDEX kg_entity_type_lower IF NOT EXISTS FOR (n:Entity) ON (n.type_lower)

// name: schema_observation_text_lower
// Text index behind search_nodes' case-insensitive substring match on observations.
CREATE TEXT INDEX kg_observation_text_lower IF NOT EXISTS FOR (o:Observation) ON (o.text_lower)

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
// Record the graph schema version this package writes.
MERGE (m:KgMeta {key: 'schema'})
ON CREATE SET m.created_at = $now
SET m.version = $version, m.updated_at = $now, m.package_version = $package_version
