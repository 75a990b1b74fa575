// The text index's catch-up (kg_neo4j/store/text_catch_up.py).  create_entities and add_observations label
// what they write :KgPending instead of :KgText: a commit that touches a Lucene index pays a refresh of its
// own (benchmarks/README.md, "bench_write_floor.py"), so the text index is brought up to date afterwards,
// many writes in one transaction.  search_nodes reads pending nodes by their label meanwhile (read.cypher).

// name: text_catch_up
// Up to $batch pending entities and observations join the text index, in one transaction: :KgText now,
// :KgPending only once this has committed (text_catch_up_done, given the ids returned here), so a search
// never finds a node in neither (read.cypher, search_nodes).  An entity typed "KgPending" before the label
// was kg-neo4j's own carries it as its type label: it is left alone.
MATCH (n:KgPending)
WHERE (n:Entity OR n:Observation) AND NOT n:KgText AND NOT 'KgPending' IN coalesce(n.type_labels, [])
WITH n LIMIT $batch
SET n:KgText
RETURN collect(elementId(n)) AS moved

// name: text_catch_up_done
// The nodes of a committed text_catch_up ($ids) lose :KgPending, and so does any pending node that is no
// longer an entity or an observation (merged away or forgotten while pending: it leaves search).  It touches
// no Lucene index.
CALL () {
  UNWIND $ids AS id
  MATCH (n:KgPending) WHERE elementId(n) = id
  REMOVE n:KgPending
  RETURN count(n) AS done
}
CALL () {
  MATCH (n:KgPending)
  WHERE NOT (n:Entity OR n:Observation) AND NOT 'KgPending' IN coalesce(n.type_labels, [])
  REMOVE n:KgPending
  RETURN count(n) AS dropped
}
RETURN done, dropped

// name: text_pending_count
// How many nodes of the database wait for the text index (one scan of the :KgPending label).
MATCH (n:KgPending)
WHERE NOT 'KgPending' IN coalesce(n.type_labels, [])
RETURN count(n) AS pending
