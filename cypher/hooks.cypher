// Statements of the agent hooks (kg_neo4j/hooks/) that no tool shares.

// name: hook_lines_by_name
// What recall prints for entities named by a search by meaning: knowledge details, or the entity's first observations.
UNWIND range(0, size($names) - 1) AS i
MATCH (e:Entity {namespace: $ns, name: $names[i]})
CALL (e) {
  OPTIONAL MATCH (e)-[:HAS_OBSERVATION]->(o:Observation)
  WHERE NOT e:Knowledge
  WITH o ORDER BY o.seq
  RETURN collect(o.text)[..$observations] AS observations
}
RETURN e.name AS name, e.entityType AS type, e:Knowledge AS knowledge, e.content AS content, e.trust AS trust,
       e.category AS category, e.memory_level AS level, e.quote AS quote, observations, i
ORDER BY i

// name: hook_recent_edges
// Open edges from knowledge created since $since (session-start's review): count and the newest $sample.
MATCH (a:Knowledge)-[r]->(b:KgNode)
WHERE a.namespace = $ns AND type(r) IN $types AND r.created_at >= $since
  AND (r.valid_until IS NULL OR r.valid_until > $now)
WITH a, r, b ORDER BY r.created_at DESC, a.name, type(r), b.name
WITH collect({from: a.name, to: b.name, relationType: type(r), weight: r.weight, trust: a.trust,
              reasoning: r.reasoning}) AS found
RETURN size(found) AS total, found[..$sample] AS sample

// name: hook_expired_vectors_clean
// Drop the vectors that observations of expired knowledge still hold (left by older versions), so the vector index stops returning them.
MATCH (k:ExpiredKnowledge)-[:HAS_OBSERVATION]->(o:Observation)
WHERE k.namespace = $ns AND (o.embedding IS NOT NULL OR o.embedding_model IS NOT NULL)
REMOVE o.embedding, o.embedding_model
RETURN count(o) AS cleaned
