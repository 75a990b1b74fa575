// What a read shows about the knowledge it returns (README "Knowledge layer", "Trust at recall"):
// traverse_graph adds, for each knowledge entity of its answer, its trust, level, quote and decay state
// (search_memory reads the same in search_memory_around); retention and "fading" are computed from that
// state at the read's moment (kg_neo4j/knowledge/recall.py, with kg_neo4j/knowledge/decay.py).

// name: knowledge_facts
// Trust, level, quote and decay state of the knowledge among the named entities as of $at (expired knowledge only before it expired).
UNWIND $names AS name
CALL (name) {
  MATCH (k:KgNode {namespace: $ns, name: name})
  WHERE k:Knowledge
  RETURN k, 0 AS rank
  UNION
  MATCH (k:ExpiredKnowledge)
  WHERE k.namespace = $ns AND k.name = name AND k.expired_at > $at
  RETURN k, 1 AS rank
}
WITH name, k, rank
WHERE k.created_at <= $at
ORDER BY rank
WITH name, head(collect(k)) AS k
RETURN name, k.trust AS trust, k.memory_level AS level, k.quote AS quote, k.category AS category,
       k.stability AS stability, coalesce(k.last_access, k.created_at) AS since
