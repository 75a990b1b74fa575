// `kg-neo4j import --from mcp-neo4j-memory|graphiti|memento` (kg_neo4j/peers/, docs/moving-over.md).
// The reads run on the SOURCE database, read-only; they never match kg-neo4j's own nodes (:KgNode), so the
// source may be kg-neo4j's own database.  Pages go in element-id order after $after.  The writes run on
// kg-neo4j's namespace ($ns), in the batch's transaction, beside GraphStore's create_entities/add_observations.

// name: peers_shape_nodes
// The shape check: how many of the first $sample foreign nodes labelled $label lack each of $props.
MATCH (n:$($label))
WHERE NOT n:KgNode
WITH n LIMIT $sample
WITH collect(n) AS ns
RETURN size(ns) AS n, [p IN $props | [p, size([x IN ns WHERE x[p] IS NULL])]] AS missing

// name: peers_shape_relationships
// The shape check: how many of the first $sample $type relationships between the peer's $label nodes (those
// carrying every property of $signature) lack each of $props.
MATCH (a:$($label))-[r:$($type)]->(b:$($label))
WHERE NOT a:KgNode AND NOT b:KgNode AND all(p IN $signature WHERE a[p] IS NOT NULL AND b[p] IS NOT NULL)
WITH r LIMIT $sample
WITH collect(r) AS rs
RETURN size(rs) AS n, [p IN $props | [p, size([x IN rs WHERE x[p] IS NULL])]] AS missing

// name: peers_count_nodes
// How many foreign $label nodes carry every property of $props (progress bar totals, the report).
MATCH (n:$($label))
WHERE NOT n:KgNode AND all(p IN $props WHERE n[p] IS NOT NULL)
RETURN count(n) AS n

// name: peers_memory_nodes
// mcp-neo4j-memory: one page of :Memory nodes {name, type, observations}.
MATCH (m:Memory)
WHERE NOT m:KgNode AND m.name IS NOT NULL AND elementId(m) > $after
WITH m ORDER BY elementId(m)
LIMIT $limit
RETURN elementId(m) AS id, m.name AS name, m.type AS type, m.observations AS observations

// name: peers_memory_relationships
// mcp-neo4j-memory: one page of the relationships between :Memory nodes (typed by the relation).
MATCH (a:Memory)-[r]->(b:Memory)
WHERE NOT a:KgNode AND NOT b:KgNode AND a.name IS NOT NULL AND b.name IS NOT NULL AND elementId(r) > $after
WITH a, r, b ORDER BY elementId(r)
LIMIT $limit
RETURN elementId(r) AS id, a.name AS from, b.name AS to, type(r) AS type

// name: peers_graphiti_nodes
// Graphiti: one page of :Entity nodes (uuid and group_id tell them from Memento's and kg-neo4j's), every property
// but the embeddings, and the labels beyond Entity.
MATCH (n:Entity)
WHERE NOT n:KgNode AND n.uuid IS NOT NULL AND n.group_id IS NOT NULL AND n.name IS NOT NULL AND elementId(n) > $after
WITH n ORDER BY elementId(n)
LIMIT $limit
RETURN elementId(n) AS id, n.name AS name, [l IN labels(n) WHERE l <> 'Entity'] AS labels,
       n.summary AS summary, n.created_at AS created_at,
       [k IN keys(n) WHERE NOT k IN $known | [k, n[k]]] AS attributes

// name: peers_graphiti_relationships
// Graphiti: one page of RELATES_TO facts between Graphiti entities.
MATCH (a:Entity)-[r:RELATES_TO]->(b:Entity)
WHERE NOT a:KgNode AND NOT b:KgNode AND a.uuid IS NOT NULL AND b.uuid IS NOT NULL
  AND a.group_id IS NOT NULL AND b.group_id IS NOT NULL AND elementId(r) > $after
WITH a, r, b ORDER BY elementId(r)
LIMIT $limit
RETURN elementId(r) AS id, a.name AS from, b.name AS to, r.name AS name, r.fact AS fact,
       r.valid_at AS valid_at, r.invalid_at AS invalid_at, r.expired_at AS expired_at, r.created_at AS created_at

// name: peers_graphiti_episodes
// Graphiti: how many :Episodic nodes (not carried: docs/moving-over.md) and MENTIONS edges.
OPTIONAL MATCH (e:Episodic)
WHERE NOT e:KgNode
WITH count(e) AS episodes
OPTIONAL MATCH (:Episodic)-[m:MENTIONS]->(:Entity)
RETURN episodes, count(m) AS mentions

// name: peers_memento_nodes
// Memento: one page of the current versions (validTo unset) of :Entity nodes {name, entityType, observations}.
MATCH (n:Entity)
WHERE NOT n:KgNode AND n.entityType IS NOT NULL AND n.name IS NOT NULL AND n.validTo IS NULL
  AND elementId(n) > $after
WITH n ORDER BY elementId(n)
LIMIT $limit
RETURN elementId(n) AS id, n.name AS name, n.entityType AS type, n.observations AS observations,
       n.createdAt AS created_at, n.validFrom AS valid_from, n.version AS version

// name: peers_memento_older_versions
// Memento: the older versions (validTo set) of the entities named $names: when each began and what it held
// (an observation of the current version dates from the oldest version of the run that holds it).
MATCH (n:Entity)
WHERE NOT n:KgNode AND n.entityType IS NOT NULL AND n.validTo IS NOT NULL AND n.name IN $names
RETURN n.name AS name, n.version AS version, n.validFrom AS valid_from, n.observations AS observations

// name: peers_memento_versions
// Memento: how many older versions (validTo set) of entities and of relations the source holds (not carried).
OPTIONAL MATCH (n:Entity)
WHERE NOT n:KgNode AND n.entityType IS NOT NULL AND n.validTo IS NOT NULL
WITH count(n) AS entity_versions
OPTIONAL MATCH (a:Entity)-[r:RELATES_TO]->(:Entity)
WHERE NOT a:KgNode AND a.entityType IS NOT NULL AND r.validTo IS NOT NULL
RETURN entity_versions, count(DISTINCT coalesce(r.id, elementId(r))) AS relation_versions

// name: peers_memento_relationships
// Memento: one page of the current versions (validTo unset) of RELATES_TO; one version can hang on several
// versions of its ends (the caller keeps the first of each id).
MATCH (a:Entity)-[r:RELATES_TO]->(b:Entity)
WHERE NOT a:KgNode AND NOT b:KgNode AND a.entityType IS NOT NULL AND r.validTo IS NULL
  AND elementId(r) > $after
WITH a, r, b ORDER BY elementId(r)
LIMIT $limit
RETURN elementId(r) AS id, r.id AS version_id, a.name AS from, b.name AS to, r.relationType AS type,
       r.strength AS strength, r.confidence AS confidence, r.metadata AS metadata, r.createdAt AS created_at,
       r.validFrom AS valid_from

// name: peers_mark_sources
// Provenance and the peer's dates of one batch's entities: `source` and `created_at` on the entities this batch
// created and on the observations it added ($rows: {name, source, created, created_at, observations: [{text,
// source, created_at}]}; a created_at of null: the peer records none, the import's moment stays); anything
// already there is left, and an observation added to an entity that was already there is not dated before it.
UNWIND $rows AS row
MATCH (e:KgNode {namespace: $ns, name: row.name})
SET e.source = CASE WHEN row.created AND e.source IS NULL THEN row.source ELSE e.source END,
    e.created_at = CASE WHEN row.created AND row.created_at IS NOT NULL THEN row.created_at ELSE e.created_at END
WITH e, row
CALL (e, row) {
  UNWIND row.observations AS obs
  MATCH (e)-[:HAS_OBSERVATION]->(o:Observation {text: obs.text})
  WHERE o.source IS NULL
  SET o.source = obs.source,
      o.created_at = CASE WHEN obs.created_at IS NULL THEN o.created_at
                          WHEN obs.created_at < e.created_at THEN e.created_at ELSE obs.created_at END
}
RETURN count(*) AS marked

// name: peers_import_relations
// One batch of a peer's relations as stored ($rows: {i, from, to, type, props}); unknown ends become
// placeholders.  Skipped: a relation of that type between the two already carrying the same `source` (a second
// run), and for a relation that holds now, any copy of (from, to, type) that holds now (create_relations' rule).
UNWIND $rows AS row
MERGE (a:KgNode {namespace: $ns, name: row.from})
  ON CREATE SET a:Placeholder, a.created_at = $now
MERGE (b:KgNode {namespace: $ns, name: row.to})
  ON CREATE SET b:Placeholder, b.created_at = $now
// the start node's write lock before the existence check (create_relations)
REMOVE a.kg_lock
WITH a, b, row
CALL (a, b, row) {
  OPTIONAL MATCH (a)-[x:$(row.type)]->(b)
  WHERE x.source = row.props.source
     OR ((row.props.valid_until IS NULL OR row.props.valid_until > $now)
         AND (x.valid_until IS NULL OR x.valid_until > $now))
  WITH a, b, row, count(x) AS existing
  WHERE existing = 0
  CREATE (a)-[r:$(row.type)]->(b)
  SET r += row.props, r.created_by = $actor  // who imported it (docs/team.md#attribution)
  RETURN r
}
RETURN collect(row.i) AS created

// name: peers_count_nodes_missing
// The shape check: of the foreign $label nodes carrying every property of $signature, how many lack each of $props.
MATCH (n:$($label))
WHERE NOT n:KgNode AND all(p IN $signature WHERE n[p] IS NOT NULL)
WITH collect(n) AS ns
RETURN [p IN $props | [p, size([x IN ns WHERE x[p] IS NULL])]] AS missing

// name: peers_memory_relationship_count
// mcp-neo4j-memory: how many relationships between :Memory nodes (the progress bar's total).
MATCH (a:Memory)-[r]->(b:Memory)
WHERE NOT a:KgNode AND NOT b:KgNode AND a.name IS NOT NULL AND b.name IS NOT NULL
RETURN count(r) AS n

// name: peers_graphiti_relationship_count
// Graphiti: how many RELATES_TO facts between Graphiti entities (the progress bar's total).
MATCH (a:Entity)-[r:RELATES_TO]->(b:Entity)
WHERE NOT a:KgNode AND NOT b:KgNode AND a.uuid IS NOT NULL AND b.uuid IS NOT NULL
  AND a.group_id IS NOT NULL AND b.group_id IS NOT NULL
RETURN count(r) AS n

// name: peers_memento_relationship_count
// Memento: how many current relation versions (the progress bar's total; one version counted once).
MATCH (a:Entity)-[r:RELATES_TO]->(b:Entity)
WHERE NOT a:KgNode AND NOT b:KgNode AND a.entityType IS NOT NULL AND r.validTo IS NULL
RETURN count(DISTINCT coalesce(r.id, elementId(r))) AS n
