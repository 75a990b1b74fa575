// The text index's catch-up (kg_neo4j/store/text_catch_up.py).  create_entities and add_observations label
// what they write :KgPending instead of :KgText: a commit that touches a Lucene index pays a refresh of its
// own (benchmarks/README.md, "bench_write_floor.py"), so the text index is brought up to date afterwards,
// many writes in one transaction.  search_nodes reads pending nodes by their label meanwhile (read.cypher).

// name: text_catch_up
// Up to $batch pending entities and observations join the text index, in one transaction.  They keep
// :KgPending a while (text_catch_up_done; kg_neo4j/store/text_catch_up.py says why).  An entity typed
// "KgPending" before the label was kg-neo4j's own carries it as its type label: it is left alone.
MATCH (n:KgPending)
WHERE (n:Entity OR n:Observation) AND NOT n:KgText AND NOT 'KgPending' IN coalesce(n.type_labels, [])
WITH n LIMIT $batch
SET n:KgText
RETURN collect(elementId(n)) AS moved

// name: text_catch_up_moved
// The nodes already in the text index that still carry :KgPending (moved by this process or another).
MATCH (n:KgPending:KgText)
WHERE NOT 'KgPending' IN coalesce(n.type_labels, [])
RETURN collect(elementId(n)) AS moved

// name: text_catch_up_done
// Moved nodes held long enough ($ids) lose :KgPending, and so does any pending node that is no longer an
// entity or an observation (merged away or forgotten while pending: search does not show it).  It touches
// no Lucene index.
CALL () {
  UNWIND $ids AS id
  MATCH (n:KgPending:KgText) WHERE elementId(n) = id AND NOT 'KgPending' IN coalesce(n.type_labels, [])
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
WHERE NOT n:KgText AND NOT 'KgPending' IN coalesce(n.type_labels, [])
RETURN count(n) AS pending
