// find_duplicates and kg-neo4j dedupe (kg_neo4j/store/duplicates.py, docs/entities.md#finding-duplicates):
// the namespace's entities are streamed by name (blocking is done in Python), the entity vector index is
// asked for each entity's nearest, and only the candidate pairs' entities are read in full.

// name: duplicates_count
// How many entities the namespace has (the progress bar's total).  `name IS NOT NULL`: the (namespace, name)
// index is read, not every namespace's entities.
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name IS NOT NULL AND e.created_at <= $at
RETURN count(e) AS entities

// name: duplicates_entities
// One page of the namespace's entities after the name $after, in name order: [name, type, has a vector of this model].
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name > $after AND e.created_at <= $at
// ordered like the (namespace, name) index, so the planner reads only one page of it
WITH e ORDER BY e.namespace, e.name
LIMIT $limit
RETURN collect([e.name, e.entityType, e.embedding_model IS NOT NULL AND e.embedding_model = $model]) AS rows

// name: duplicates_vectors
// One page of the namespace's entity vectors of model $model after the name $after, in name order: [name, vector].
// A namespace of at most EXACT_ENTITIES of them is compared exactly in the store (never the database-wide index).
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name > $after AND e.created_at <= $at
  AND e.embedding IS NOT NULL AND e.embedding_model = $model
WITH e ORDER BY e.namespace, e.name
LIMIT $limit
RETURN collect([e.name, e.embedding]) AS rows

// name: duplicates_nearest
// For the entities $names of a namespace above EXACT_ENTITIES: the $k nearest entity vectors in the whole index, kept when in this namespace and at least
// $min_score (Neo4j's cosine score, (1 + cos) / 2).  Neo4j 5.26's vector index cannot filter by namespace
// inside the index, so other namespaces' near copies can take places among the $k: `crowded` says they did
// (all $k scored $min_score, the entity itself included, and fewer than $want are this namespace's), and
// the store asks again for that entity with a larger $k.
UNWIND $names AS name
MATCH (e:KgNode {namespace: $ns, name: name})
WHERE e:Entity AND e.embedding IS NOT NULL AND e.embedding_model = $model
CALL (e) {
  CALL db.index.vector.queryNodes('kg_entity_embedding', $k, e.embedding) YIELD node, score
  WITH node, score WHERE score >= $min_score
  WITH collect([node, score]) AS hits
  WITH hits, [h IN hits WHERE h[0].namespace = $ns AND h[0] <> e AND h[0].created_at <= $at | [h[0].name, h[1]]] AS near
  RETURN near, size(hits) >= $k AND size(near) < $want AS crowded
}
WITH e, near, crowded WHERE size(near) > 0 OR crowded
RETURN collect([e.name, near[0..$want], crowded]) AS rows

// name: duplicates_nearest_filtered
// As duplicates_nearest on a server whose filtered entity index is ONLINE (2026.x): the $k nearest of this namespace, found inside the index (never crowded).
CYPHER 25
UNWIND $names AS name
MATCH (e:KgNode {namespace: $ns, name: name})
WHERE e:Entity AND e.embedding IS NOT NULL AND e.embedding_model = $model
CALL (e) {
  MATCH (x:Entity)
  SEARCH x IN (VECTOR INDEX kg_entity_embedding_filtered FOR e.embedding
               WHERE x.namespace = $ns AND x.created_at <= $at LIMIT $k) SCORE AS score
  WITH x, score WHERE score >= $min_score AND x <> e
  RETURN collect([x.name, score]) AS near
}
WITH e, near WHERE size(near) > 0
RETURN collect([e.name, near[0..$want], false]) AS rows

// name: duplicates_context
// For the candidate entities $names: type, neighbours (current relations either way), relation and observation counts, the first $max_obs current observations, and the vector when $vectors.
UNWIND $names AS name
MATCH (e:KgNode {namespace: $ns, name: name})
WHERE e:Entity
CALL (e) {
  OPTIONAL MATCH (e)-[r]-(x:KgNode)
  WHERE r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
  RETURN collect(DISTINCT x.name) AS neighbours, count(r) AS relations
}
CALL (e) {
  OPTIONAL MATCH (e)-[:HAS_OBSERVATION]->(o:Observation)
  WHERE o.created_at <= $at AND coalesce(o.valid_until > $at, true)
  WITH o ORDER BY o.seq
  RETURN collect(o.text) AS observations
}
RETURN collect({name: e.name, type: e.entityType, neighbours: neighbours, relations: relations,
                observation_count: size(observations), observations: observations[0..$max_obs],
                embedding: CASE WHEN $vectors AND e.embedding_model = $model THEN e.embedding END}) AS rows

// name: dup_keys_pending_namespaces
// The namespaces (just $ns when given) holding kg-neo4j entities without the hint's keys (written before
// them), and how many each.
MATCH (e:Entity)
WHERE e:KgNode AND ($ns IS NULL OR e.namespace = $ns) AND e.dup_sound IS NULL
RETURN e.namespace AS ns, count(e) AS n
ORDER BY ns

// name: dup_keys_chunk
// The next $batch entities of $ns in name order after $after (the index's order), and whether each lacks the keys.
MATCH (e:Entity)
USING INDEX e:Entity(namespace, name)
WHERE e.namespace = $ns AND e.name > $after
WITH e
ORDER BY e.namespace, e.name
LIMIT $batch
RETURN e.name AS name, e.dup_sound IS NULL AS pending

// name: dup_keys_apply
// Give each entity its name's hint keys ($rows: {name, dup_last, dup_start, dup_end, dup_sound}).
UNWIND $rows AS row
MATCH (n:KgNode {namespace: $ns, name: row.name})
WHERE n:Entity
SET n.dup_last = row.dup_last, n.dup_start = row.dup_start, n.dup_end = row.dup_end, n.dup_sound = row.dup_sound
