// What a read shows about the knowledge it returns (docs/knowledge.md#trust-at-recall):
// traverse_graph adds, for each knowledge entity of its answer, its trust, level, quote and decay state
// (search_memory reads the same in search_memory_around); retention and "fading" are computed from that
// state at the read's moment (kg_neo4j/knowledge/recall.py, with kg_neo4j/knowledge/decay.py).  The same
// statement gives search_memory asOf its memory prior (kg_neo4j/store/history.py memory_prior_at).

// name: knowledge_facts
// Trust, level, quote and decay state of the knowledge among the named entities as they were at $at (knowledge then, even if forgotten since); one row per name.
UNWIND $names AS name
CALL (name) {
  MATCH (k:KgNode {namespace: $ns, name: name})
  WHERE k:Knowledge
  RETURN k, 0 AS rank
  UNION
  MATCH (k:ExpiredKnowledge)
  WHERE k.namespace = $ns AND k.name = name AND k.expired_at > $at AND (k.content IS NOT NULL OR NOT k:KgMerged)
  RETURN k, 1 AS rank
}
WITH name, k, rank
WHERE k.created_at <= $at
ORDER BY rank
WITH name, head(collect(k)) AS k
// the decay state and trust it had at $at (cypher/history.cypher: ds_* end at ds_until)
WITH name, k, size([u IN coalesce(k.ds_until, []) WHERE u <= $at]) AS i, size(coalesce(k.ds_until, [])) AS n
RETURN name, k.quote AS quote,
       CASE WHEN i < n THEN k.ds_trust[i] ELSE k.trust END AS trust,
       CASE WHEN i < n THEN k.ds_level[i] ELSE k.memory_level END AS level,
       CASE WHEN i < n THEN k.ds_category[i] ELSE k.category END AS category,
       CASE WHEN i < n THEN k.ds_stability[i] ELSE k.stability END AS stability,
       CASE WHEN i < n THEN k.ds_since[i] ELSE coalesce(k.last_access, k.created_at) END AS since
