// MemoryMesh dialect (docs/memorymesh.md) over the same graph: a node is an entity (nodeType =
// entityType, metadata = its observations in order), an edge is a relation.  Most MemoryMesh
// operations reuse the reference statements; these are the few it needs of its own.

// name: mesh_nodes
// Nodes by name: whether each exists, is an entity (not a placeholder) or knowledge, its type and metadata (observations in order).
UNWIND $names AS name
OPTIONAL MATCH (n:KgNode {namespace: $ns, name: name})
CALL (n) {
  OPTIONAL MATCH (n)-[:HAS_OBSERVATION]->(o:Observation)
  WITH o ORDER BY o.seq
  RETURN collect(o.text) AS metadata
}
RETURN name, n IS NOT NULL AS exists, coalesce(n:Entity, false) AS entity, n.entityType AS nodeType, metadata,
       coalesce(n:Knowledge, false) AS knowledge

// name: mesh_out_edges
// Current (valid_until unset or later than now) outgoing edges of the given types from one node.
MATCH (a:KgNode {namespace: $ns, name: $node})
MATCH (a)-[x]->(b:KgNode)
WHERE type(x) IN $types AND (x.valid_until IS NULL OR x.valid_until > $now)
WITH x, b ORDER BY x.created_at, b.name
RETURN type(x) AS edgeType, b.name AS to, x.weight AS weight

// name: mesh_replace_metadata
// Replace entities' metadata with the given texts in order (unchanged texts keep their node) and, when given, their type.
UNWIND $rows AS row
MATCH (e:KgNode {namespace: $ns, name: row.name})
WHERE e:Entity
SET e.kg_lock = true
REMOVE e.kg_lock
WITH e, row
CALL (e, row) {
  WITH e, row
  WHERE row.nodeType IS NOT NULL
  // a type replaced is kept with the moment it ended (asOf reads show the type of that moment), and who
  // changed it beside (type_by: '' for a change made before attribution)
  SET e.type_by = CASE WHEN row.nodeType <> e.entityType
                       THEN [i IN range(1, size(coalesce(e.type_until, [])) - size(coalesce(e.type_by, []))) | '']
                            + coalesce(e.type_by, []) + $actor
                       ELSE e.type_by END,
      e.changed_by = CASE WHEN row.nodeType <> e.entityType THEN $actor ELSE e.changed_by END
  SET e.type_was = CASE WHEN row.nodeType <> e.entityType THEN coalesce(e.type_was, []) + e.entityType
                        ELSE e.type_was END,
      e.type_until = CASE WHEN row.nodeType <> e.entityType THEN coalesce(e.type_until, []) + $now
                          ELSE e.type_until END
  SET e.entityType = row.nodeType,
      e.type_lower = row.type_lower,
      e.text_lower = e.name_lower + '\n' + row.type_lower,  // search_nodes' text index (schema_text_lower)
      e.embedding = row.entity_vector,
      e.embedding_model = CASE WHEN row.entity_vector IS NULL THEN null ELSE $model END
  // the old type label goes, the new one comes (kg_neo4j/store/type_labels.py; knowledge is refused here)
  REMOVE e:$(coalesce(e.type_labels, []))
  SET e:$(row.type_labels), e.type_labels = row.type_labels
}
CALL (e, row) {
  WITH e, row
  WHERE row.metadata IS NOT NULL
  // metadata replaced is retired, not erased: asOf reads of a moment before still show it
  MATCH (e)-[h:HAS_OBSERVATION]->(o:Observation)
  WHERE NOT o.text IN row.metadata
  CREATE (e)-[:HAD_OBSERVATION]->(o)
  SET o.valid_until = $now, o.retired_by = $actor
  DELETE h
}
CALL (e, row) {
  WITH e, row
  WHERE row.metadata IS NOT NULL AND size(row.metadata) > 0
  WITH e, row, coalesce(e.obs_next, 0) AS base
  SET e.obs_next = base + size(row.metadata)
  WITH e, row, base
  // Kept texts keep their position numbers when the new list keeps their order and puts every new text
  // after them, so an asOf read of a moment before still lists what was retired in its place; otherwise
  // (a reorder) every kept text is renumbered in the new order.
  CALL (e, row) {
    OPTIONAL MATCH (e)-[:HAS_OBSERVATION]->(o:Observation)
    WHERE o.text IN row.metadata
    RETURN collect([o.text, o.seq]) AS kept
  }
  WITH e, row, base, [t IN row.metadata | head([k IN kept WHERE k[0] = t | k[1]])] AS seqs
  WITH e, row, base, seqs, [x IN seqs WHERE x IS NOT NULL] AS ks
  WITH e, row, base,
       all(j IN range(0, size(ks) - 2) WHERE ks[j] < ks[j + 1])
         AND all(i IN range(0, size(seqs) - 1) WHERE seqs[i] IS NOT NULL
                                                 OR all(j IN range(i, size(seqs) - 1) WHERE seqs[j] IS NULL))
         AS in_order
  UNWIND range(0, size(row.metadata) - 1) AS i
  OPTIONAL MATCH (e)-[:HAS_OBSERVATION]->(old:Observation {text: row.metadata[i]})
  FOREACH (_ IN CASE WHEN old IS NULL THEN [1] ELSE [] END |
    CREATE (e)-[:HAS_OBSERVATION]->(:Observation:KgText {
      namespace: $ns, text: row.metadata[i], text_lower: row.metadata_lower[i],
      seq: base + i, created_at: $now, created_by: $actor, embedding: row.vectors[i],
      embedding_model: CASE WHEN row.vectors[i] IS NULL THEN null ELSE $model END
    }))
  FOREACH (_ IN CASE WHEN old IS NULL OR in_order THEN [] ELSE [1] END | SET old.seq = base + i)
}
RETURN row.name AS name
