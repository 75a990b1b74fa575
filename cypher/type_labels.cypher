// Type labels (kg_neo4j/store/type_labels.py, README "Neo4j Browser"): an entity's entityType, and a
// knowledge node's trust, also as labels, so Neo4j Browser can style them.  The labels are computed in
// Python and arrive ready-made; the node keeps them in `type_labels` so a change removes exactly those.
// Here only the backfill of databases written before type labels existed.

// name: type_labels_meta
// Whether the whole-database backfill has finished (null on a database that never ran it).
OPTIONAL MATCH (m:KgMeta {key: $key})
RETURN m.done AS done

// name: type_labels_meta_done
// Record that every entity of the database has its type labels.
MERGE (m:KgMeta {key: $key})
SET m.done = true

// name: type_labels_pending_count
// How many entities (of $ns, or of every namespace when $ns is null) have no type labels yet.
MATCH (e:Entity)
WHERE ($ns IS NULL OR e.namespace = $ns) AND e.type_labels IS NULL
RETURN count(e) AS n

// name: type_labels_pending
// The next $batch entities without type labels, with what decides them (type, trust).
MATCH (e:Entity)
WHERE ($ns IS NULL OR e.namespace = $ns) AND e.type_labels IS NULL
RETURN e.namespace AS ns, e.name AS name, e.entityType AS entityType, e:Knowledge AS knowledge, e.trust AS trust
LIMIT $batch

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
