// The namespaces of a database, for an operator (`kg-neo4j namespace list` / `namespace delete`,
// kg_neo4j/store/namespaces.py; docs/team.md#namespaces-of-a-team-service).
//
// What one namespace holds (docs/graph-model.md): its named nodes (:KgNode, each with `namespace`:
// entities, knowledge, experiences, placeholders), the nodes merged or forgotten out of them
// (:ExpiredKnowledge, with :KgMerged for aliases), their observations (:Observation, current through
// HAS_OBSERVATION and retired through HAD_OBSERVATION, each with `namespace`) and the relations between
// them; the records of its merges (:KgMergeRecord); its metadata nodes (:KgMeta 'turns:<ns>' and
// 'decay_sweep:<ns>').  Embeddings are properties of those nodes: erased with them.  History is on them
// too (v_*, type_*, ds_* lists, retired observations, closed relations).

// name: namespace_names
// Every namespace that holds something: named nodes, merged or forgotten ones, merge records.
CALL () {
  MATCH (n:KgNode) RETURN DISTINCT n.namespace AS ns
  UNION
  MATCH (n:ExpiredKnowledge) RETURN DISTINCT n.namespace AS ns
  UNION
  MATCH (m:KgMergeRecord) RETURN DISTINCT m.namespace AS ns
}
WITH ns
WHERE ns IS NOT NULL
RETURN ns ORDER BY ns

// name: namespace_counts
// What each namespace of $namespaces holds, one row each: entities, placeholders, observations (current and
// retired), relations, aliases and merge records, and its last write (the latest moment anything in it was
// created, retired or closed).  One statement for many namespaces: a list of thousands is one read, not one
// round trip each.
UNWIND $namespaces AS ns
CALL (ns) {
  OPTIONAL MATCH (m:KgMergeRecord)
  WHERE m.namespace = ns
  RETURN count(m) AS merges, [x IN [max(m.at), max(m.undone_at)] WHERE x IS NOT NULL] AS merged_at
}
CALL (ns) {
  CALL (ns) {
    MATCH (n:KgNode) WHERE n.namespace = ns AND n.name IS NOT NULL
    RETURN n
    UNION
    MATCH (n:ExpiredKnowledge) WHERE n.namespace = ns
    RETURN n
  }
  CALL (n) {
    OPTIONAL MATCH (n)-[h:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
    RETURN count(CASE WHEN type(h) = 'HAS_OBSERVATION' THEN 1 END) AS current,
           count(CASE WHEN type(h) = 'HAD_OBSERVATION' THEN 1 END) AS retired,
           max(o.created_at) AS obs_created, max(h.valid_until) AS obs_retired
  }
  CALL (n) {
    OPTIONAL MATCH (n)-[r]->(m)
    WHERE NOT m:Observation
    RETURN count(r) AS relations, max(r.created_at) AS rel_created, max(r.closed_at) AS rel_closed
  }
  RETURN count(CASE WHEN n:Entity THEN 1 END) AS entities,
         count(CASE WHEN n:Placeholder THEN 1 END) AS placeholders,
         count(CASE WHEN n:KgMerged THEN 1 END) AS aliases,
         count(CASE WHEN n:ExpiredKnowledge AND NOT n:KgMerged THEN 1 END) AS expired,
         count(n) AS nodes, sum(current) AS current, sum(retired) AS retired, sum(relations) AS relations,
         [x IN [max(n.created_at), max(n.expired_at), max(obs_created), max(obs_retired), max(rel_created),
                max(rel_closed)] WHERE x IS NOT NULL] AS moments
}
CALL (moments, merged_at) {
  UNWIND moments + merged_at AS moment
  RETURN max(moment) AS last_write
}
RETURN ns, entities, placeholders, aliases, expired, nodes, current, retired, relations, merges, last_write

// name: namespace_delete_page
// Up to $page of the nodes of $ns still to erase (named nodes first, then merged or forgotten ones), each with
// its element id and how many relationships it has (its observations' links among them): the caller groups
// them into bounded transactions.  Erased nodes are gone, so the first page is always what is left.
CALL () {
  MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL
  RETURN n LIMIT $page
  UNION
  MATCH (n:ExpiredKnowledge) WHERE n.namespace = $ns
  RETURN n LIMIT $page
}
WITH n LIMIT $page
RETURN elementId(n) AS id, COUNT { (n)--() } AS degree

// name: namespace_delete_nodes
// Erase the nodes $ids of $ns with their observations and every relationship they have (one transaction;
// the caller bounds its size by the nodes' degrees).  A node no longer there, or of another namespace, is skipped.
UNWIND $ids AS id
MATCH (n)
WHERE elementId(n) = id AND n.namespace = $ns
CALL (n) {
  OPTIONAL MATCH (n)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
  WHERE o.namespace = $ns
  DETACH DELETE o
  RETURN count(o) AS observations
}
DETACH DELETE n
RETURN count(n) AS nodes, sum(observations) AS observations

// name: namespace_delete_trim
// Erase up to $batch of one node's observations or, once it has none left, of its other relationships: a node
// with more of them than one transaction may hold is trimmed by several before it is erased itself.
MATCH (n)
WHERE elementId(n) = $id AND n.namespace = $ns
CALL (n) {
  OPTIONAL MATCH (n)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
  WHERE o.namespace = $ns
  WITH o LIMIT $batch
  DETACH DELETE o
  RETURN count(o) AS observations
}
CALL (n, observations) {
  WITH n WHERE observations = 0
  MATCH (n)-[r]-()
  WITH r LIMIT $batch
  DELETE r
  RETURN count(r) AS relationships
}
RETURN observations, relationships

// name: namespace_delete_records
// Erase up to $batch of the namespace's merge records and, once none is left, its metadata nodes
// (its write-order counter and decay sweep progress).  `id IS NOT NULL`: the (namespace, id) index is read.
OPTIONAL MATCH (m:KgMergeRecord)
WHERE m.namespace = $ns AND m.id IS NOT NULL
WITH m LIMIT $batch
DETACH DELETE m
WITH count(m) AS records
CALL (records) {
  WITH records WHERE records < $batch
  OPTIONAL MATCH (k:KgMeta)
  WHERE k.key IN ['turns:' + $ns, 'decay_sweep:' + $ns]
  DETACH DELETE k
  RETURN count(k) AS meta
}
RETURN records, meta
