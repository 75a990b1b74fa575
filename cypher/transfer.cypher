// Import and export (`kg-neo4j import` / `kg-neo4j export`).  Every statement is one
// batch: `UNWIND $rows` for writes, one page of start nodes (`name > $after`, name order)
// for reads.  Reference-format imports reuse create_entities / create_relations.

// name: transfer_count_entities
// How many entities the namespace holds (progress bar total of the entity pass).
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name IS NOT NULL
RETURN count(e) AS n

// name: transfer_count_nodes
// How many named nodes (entities and placeholders) the namespace holds (progress bar total).
MATCH (n:KgNode)
WHERE n.namespace = $ns AND n.name IS NOT NULL
RETURN count(n) AS n

// name: transfer_entity_page
// One page of entities after $after in name order, with their observation texts in insertion order.
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name > $after
WITH e ORDER BY e.name
LIMIT $limit
CALL (e) {
  OPTIONAL MATCH (e)-[:HAS_OBSERVATION]->(o:Observation)
  WITH o ORDER BY o.seq
  RETURN collect(o.text) AS observations
}
RETURN e.name AS name, e.entityType AS entityType, observations

// name: transfer_relation_page
// One page of start nodes after $after in name order, each with its outgoing relations holding now.
MATCH (a:KgNode)
WHERE a.namespace = $ns AND a.name > $after
WITH a ORDER BY a.name
LIMIT $limit
CALL (a) {
  OPTIONAL MATCH (a)-[r]->(b:KgNode)
  WHERE (r.valid_until IS NULL OR r.valid_until > $now) AND (r.valid_from IS NULL OR r.valid_from <= $now)
  WITH r, b ORDER BY r.created_at, b.name, type(r)
  RETURN collect(CASE WHEN r IS NULL THEN null ELSE {to: b.name, relationType: type(r), weight: r.weight} END) AS relations
}
RETURN a.name AS name, relations

// name: transfer_full_node_page
// One page of named nodes after $after: labels, stored properties (minus $skip) and observations in seq order.
MATCH (n:KgNode)
WHERE n.namespace = $ns AND n.name > $after
WITH n ORDER BY n.name
LIMIT $limit
CALL (n) {
  // retired observations too (HAD_OBSERVATION: history, docs/history.md)
  OPTIONAL MATCH (n)-[h:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
  WITH h, o ORDER BY o.seq, o.created_at, elementId(o)
  RETURN collect(CASE WHEN o IS NULL THEN null ELSE {
    labels: [l IN labels(o) WHERE NOT l IN ['Observation', 'KgText']],
    props: [k IN keys(o) WHERE NOT k IN $skip_obs |
            [k, o[k], CASE WHEN valueType(o[k]) STARTS WITH 'ZONED DATETIME' THEN toString(o[k]) ENDS WITH ']' ELSE false END]],
    link: [k IN keys(h) | [k, h[k], CASE WHEN valueType(h[k]) STARTS WITH 'ZONED DATETIME' THEN toString(h[k]) ENDS WITH ']' ELSE false END]],
    embedding: o.embedding IS NOT NULL,
    retired: type(h) = 'HAD_OBSERVATION'
  } END) AS observations
}
RETURN n.name AS name,
       [l IN labels(n) WHERE NOT l IN ['KgNode', 'KgText'] AND NOT l IN coalesce(n.type_labels, [])] AS labels,
       [k IN keys(n) WHERE NOT k IN $skip_node |
        [k, n[k], CASE WHEN valueType(n[k]) STARTS WITH 'ZONED DATETIME' THEN toString(n[k]) ENDS WITH ']' ELSE false END]] AS props,
       n.embedding IS NOT NULL AS embedding,
       observations

// name: transfer_full_relationship_page
// One page of start nodes after $after, each with every outgoing relationship to a named node (expired ones too).
MATCH (a:KgNode)
WHERE a.namespace = $ns AND a.name > $after
WITH a ORDER BY a.name
LIMIT $limit
CALL (a) {
  OPTIONAL MATCH (a)-[r]->(b:KgNode)
  WITH r, b ORDER BY r.created_at, b.name, type(r), elementId(r)
  RETURN collect(CASE WHEN r IS NULL THEN null ELSE {
    to: b.name, relationType: type(r),
    props: [k IN keys(r) | [k, r[k], CASE WHEN valueType(r[k]) STARTS WITH 'ZONED DATETIME' THEN toString(r[k]) ENDS WITH ']' ELSE false END]]
  } END) AS relationships
}
RETURN a.name AS name, relationships

// name: transfer_full_import_nodes
// Create the nodes of one full-export batch as stored (labels, properties, observations); existing names are skipped.
UNWIND $rows AS row
MERGE (n:KgNode {namespace: $ns, name: row.name})
  ON CREATE SET n.kg_import_new = true
WITH n, row
WHERE n.kg_import_new = true
REMOVE n.kg_import_new
SET n:$(row.labels)
SET n += row.props
// attribution as the file says; a file without it: the importing actor created what it brought
// (placeholders record nobody, docs/team.md#attribution)
SET n.created_by = CASE WHEN n:Entity THEN coalesce(n.created_by, $actor) END
SET n.name_lower = row.name_lower, n.type_lower = row.type_lower,
    n.text_lower = row.name_lower + '\n' + row.type_lower  // search_nodes' text index (schema_text_lower)
SET n:$(CASE WHEN n:Entity THEN ['KgText'] ELSE [] END)
// type labels are derived, not exported: made here from the type (kg_neo4j/store/type_labels.py)
SET n:$(row.type_labels), n.type_labels = CASE WHEN n:Entity THEN row.type_labels END
WITH n, row
CALL (n, row) {
  UNWIND row.observations AS o
  CREATE (n)-[h:$(CASE WHEN o.retired THEN 'HAD_OBSERVATION' ELSE 'HAS_OBSERVATION' END)]->(ob:Observation)
  SET ob:$(o.labels), ob:KgText
  SET ob += o.props, ob.namespace = $ns, ob.text_lower = o.text_lower
  SET ob.created_by = coalesce(ob.created_by, $actor)
  SET h += o.link
}
RETURN row.name AS name

// name: transfer_full_import_aliases
// The aliases of the nodes a full-export batch created ($names): the file carries each kept entity's `aliases` and
// `alias_at`, not the merged nodes (a merge's record and what it moved stay behind: no merge to undo).  Each alias
// gets the node every read resolves an alias by (cypher/merges.cypher, alias_entities in cypher/read.cypher): a
// :KgMerged named by it, alias_of the entity, retired the moment it became an alias (created then too, so no read
// of any moment shows it as an entity of its own) and by nobody (the import made no merge: the file does not
// say who merged; docs/graph-model.md).
UNWIND $names AS name
MATCH (k:KgNode {namespace: $ns, name: name})
WHERE k:Entity AND size(coalesce(k.aliases, [])) > 0
UNWIND range(0, size(k.aliases) - 1) AS i
WITH k, k.aliases[i] AS alias, coalesce(k.alias_at[i], $now) AS at
WHERE NOT EXISTS { MATCH (m:KgMerged {namespace: $ns, name: alias}) WHERE m.alias_of = k.name }
CREATE (:ExpiredKnowledge:KgMerged {namespace: $ns, name: alias, alias_of: k.name, merged_into: k.name,
        created_at: at, expired_at: at, expired_reason: 'merged'})
RETURN count(*) AS aliases

// name: transfer_full_import_turns
// Imported observations keep their place in the write order (turn): the namespace's counter moves past them ($next).
MERGE (m:KgMeta {key: 'turns:' + $ns})
SET m.turn_next = CASE WHEN coalesce(m.turn_next, 0) > $next THEN m.turn_next ELSE $next END

// name: transfer_full_import_relationships
// Create the relationships of one full-export batch as stored; one with the same ends, type and properties is skipped
// (a file without created_by: the same properties but the created_by an earlier import gave it).
UNWIND $rows AS row
MERGE (a:KgNode {namespace: $ns, name: row.from})
  ON CREATE SET a:Placeholder, a.created_at = $now
MERGE (b:KgNode {namespace: $ns, name: row.to})
  ON CREATE SET b:Placeholder, b.created_at = $now
// Take both nodes' write locks before the existence check, so concurrent writers serialise.
SET a.kg_lock = true, b.kg_lock = true
REMOVE a.kg_lock, b.kg_lock
WITH a, b, row
CALL (a, b, row) {
  WITH a, b, row, row.props AS props
  OPTIONAL MATCH (a)-[x:$(row.relationType)]->(b)
  WHERE properties(x) = CASE WHEN props.created_by IS NULL AND x.created_by IS NOT NULL
                             THEN props{.*, created_by: x.created_by} ELSE props END
  WITH a, b, row, count(x) AS existing
  WHERE existing = 0
  CREATE (a)-[r:$(row.relationType)]->(b)
  SET r += row.props
  SET r.created_by = coalesce(r.created_by, $actor)
  RETURN r
}
RETURN row.i AS i
