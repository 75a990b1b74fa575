// Type labels (kg_neo4j/store/type_labels.py, docs/graph-model.md#types-are-labels): an entity's entityType,
// and a knowledge node's trust, also as labels, so Neo4j Browser can style them.  The labels are computed in
// Python and arrive ready-made; the node keeps them in `type_labels` so a change removes exactly those.  Here
// only the backfill of databases written before type labels existed.

// name: type_labels_meta
// Whether the whole-database backfill has finished (null on a database that never ran it).
OPTIONAL MATCH (m:KgMeta {key: $key})
RETURN m.done AS done

// name: type_labels_meta_done
// Record that every entity of the database has its type labels.
MERGE (m:KgMeta {key: $key})
SET m.done = true

// name: type_labels_pending_namespaces
// The namespaces (just $ns when given) holding entities without type labels, and how many each (kg-neo4j's own
// entities only: a peer's :Entity nodes in the same database are not ours to label).
MATCH (e:Entity)
WHERE e:KgNode AND ($ns IS NULL OR e.namespace = $ns) AND e.type_labels IS NULL
RETURN e.namespace AS ns, count(e) AS n
ORDER BY ns

// name: type_labels_chunk
// The next $batch entities of $ns in name order after $after (the index's order), with what decides their labels.
MATCH (e:Entity)
USING INDEX e:Entity(namespace, name)
WHERE e.namespace = $ns AND e.name > $after
WITH e
ORDER BY e.namespace, e.name
LIMIT $batch
RETURN e.namespace AS ns, e.name AS name, e.entityType AS entityType, e:Knowledge AS knowledge, e.trust AS trust,
       e.type_labels IS NULL AS pending

// name: type_labels_apply
// Give each entity its labels ($rows: {ns, name, labels}); one written meanwhile already has them.
UNWIND $rows AS row
MATCH (n:KgNode {namespace: row.ns, name: row.name})
// lock, then re-check: a concurrent write of the type set its labels itself
SET n.kg_lock = true
REMOVE n.kg_lock
WITH n, row
WHERE n:Entity AND n.type_labels IS NULL
SET n:$(row.labels), n.type_labels = row.labels
