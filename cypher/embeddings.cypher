// Re-embedding: committed batches, resumable (a node is done once embedding_model = $model).

// name: reembed_count
// How many observations and entities (of namespace $ns, or all when null) still lack a vector from $model.
CALL () {
  MATCH (o:Observation)
  WHERE (o.embedding_model IS NULL OR o.embedding_model <> $model) AND ($ns IS NULL OR o.namespace = $ns)
    AND NOT EXISTS { (:ExpiredKnowledge)-[:HAS_OBSERVATION]->(o) }
  RETURN count(o) AS observations
}
CALL () {
  MATCH (e:Entity)
  WHERE e:KgNode AND (e.embedding_model IS NULL OR e.embedding_model <> $model) AND ($ns IS NULL OR e.namespace = $ns)
  RETURN count(e) AS entities
}
RETURN observations, entities

// name: reembed_next_observations
// The next batch of observations (of namespace $ns, or all when null) whose vector is not from $model.
MATCH (o:Observation)
WHERE (o.embedding_model IS NULL OR o.embedding_model <> $model) AND ($ns IS NULL OR o.namespace = $ns)
  // forgotten or expired knowledge keeps its text but no vector (docs/knowledge-model.md)
  AND NOT EXISTS { (:ExpiredKnowledge)-[:HAS_OBSERVATION]->(o) }
RETURN elementId(o) AS id, o.text AS text
LIMIT $batch

// name: reembed_next_entities
// The next batch of entities (of namespace $ns, or all when null) whose vector is not from $model.
// kg-neo4j's own entities only (:KgNode): Memento's :Entity nodes carry an `embedding` of their own
MATCH (e:Entity)
WHERE e:KgNode AND (e.embedding_model IS NULL OR e.embedding_model <> $model) AND ($ns IS NULL OR e.namespace = $ns)
RETURN elementId(e) AS id, e.name AS name, e.entityType AS entityType
LIMIT $batch

// name: reembed_write
// Store one batch of vectors (nodes addressed by the element ids the batch query returned).
UNWIND $rows AS row
MATCH (n)
WHERE elementId(n) = row.id
SET n.embedding = row.vector, n.embedding_model = $model
RETURN count(n) AS written
