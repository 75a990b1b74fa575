// Entities and observations: create, add, delete.
// Nodes are always found through the (namespace, name) constraint on :KgNode;
// real entities carry :Entity, names only referenced by relations carry :Placeholder.

// name: create_entities
// Create the entities of one batch (turning placeholders into entities); returns the names created and, for
// create_entities' duplicate hint (kg_neo4j/store/duplicate_hints.py), each one's candidates: the entities of
// the namespace holding one of the values its row.seek lists (resolution.hint_seeks; none without the hint),
// a range index each, at most $limit a key; of one surname, only those find_duplicates compares with it.
// Read in this statement, before its writes (Cypher reads no later clause's writes), not in one of its own:
// a statement costs more than its seeks (docs/performance.md#the-duplicate-hint).
UNWIND $rows AS row
CALL (row) {
  CALL (row) {
    WITH row.seek AS k WHERE k IS NOT NULL
    MATCH (e:Entity) WHERE e.namespace = $ns AND e.dup_last IN k.dup_last
    // the entity's first word: dup_start is its words before the last, '|', two letters
    WITH k, e, split(split(e.dup_start, '|')[0], ' ')[0] AS first
    WHERE k.first = '' OR e.dup_start = '' OR e.dup_last <> k.last  // one word; a word swapped or reordered
       OR left(first, 1) = left(k.first, 1) OR right(first, 2) = right(k.first, 2) OR first IN k.forms
       OR e.dup_sound IN k.dup_sound
    RETURN e LIMIT $limit
    UNION
    WITH row.seek AS k WHERE k IS NOT NULL
    MATCH (e:Entity) WHERE e.namespace = $ns AND e.dup_start IN k.dup_start
    RETURN e LIMIT $limit
    UNION
    WITH row.seek AS k WHERE k IS NOT NULL
    MATCH (e:Entity) WHERE e.namespace = $ns AND e.dup_end IN k.dup_end
    RETURN e LIMIT $limit
    UNION
    WITH row.seek AS k WHERE k IS NOT NULL
    MATCH (e:Entity) WHERE e.namespace = $ns AND e.dup_sound IN k.dup_sound
    RETURN e LIMIT $limit
  }
  RETURN collect(e.name) AS candidates
}
WITH row, candidates
MERGE (n:KgNode {namespace: $ns, name: row.name})
// Take the node's write lock before looking at its labels: a concurrent call may be turning
// the same placeholder into an entity, and only one of them may do it.  REMOVE of a property
// the node never has takes the lock and writes nothing.
REMOVE n.kg_lock
WITH n, row, candidates
WHERE NOT n:Entity
REMOVE n:Placeholder
SET n:Entity:KgText,
    n.entityType = row.entityType,
    n.name_lower = row.name_lower,
    n.type_lower = row.type_lower,
    // create_entities' duplicate hint (schema_entity_ns_dup_*): resolution.hint_keys
    n.dup_last = row.dup_last, n.dup_start = row.dup_start, n.dup_end = row.dup_end, n.dup_sound = row.dup_sound,
    // search_nodes' text index (schema_text_lower): name and type on two lines
    n.text_lower = row.name_lower + '\n' + row.type_lower,
    n.created_at = $now, n.created_by = $actor,  // who (docs/team.md#attribution)
    n.obs_next = size(row.observations),
    n.embedding = row.entity_vector,
    n.embedding_model = CASE WHEN row.entity_vector IS NULL THEN null ELSE $model END
// the type as a label too (kg_neo4j/store/type_labels.py); row.type_labels is [] or one label
SET n:$(row.type_labels), n.type_labels = row.type_labels
WITH n, row, candidates
CALL (n, row) {
  UNWIND range(0, size(row.observations) - 1) AS i
  CREATE (n)-[:HAS_OBSERVATION]->(:Observation:KgText {
    namespace: $ns, text: row.observations[i], text_lower: row.observations_lower[i],
    seq: i, created_at: $now, created_by: $actor, embedding: row.vectors[i],
    embedding_model: CASE WHEN row.vectors IS NULL THEN null ELSE $model END
  })
}
// one row back, not one per entity: streaming rows is the costliest part of a large batch
RETURN collect(row.name) AS created,
       [c IN collect({name: row.name, candidates: candidates}) WHERE c.candidates <> []] AS candidates

// name: add_observations
// Add observations to existing entities; writes nothing and returns the missing names if any entity is unknown.
UNWIND $rows AS row
OPTIONAL MATCH (e:KgNode {namespace: $ns, name: row.entityName})
WITH row, CASE WHEN e:Entity THEN e ELSE null END AS e
WITH collect({row: row, e: e}) AS pairs
WITH pairs, [p IN pairs WHERE p.e IS NULL | p.row.entityName] AS missing
CALL (pairs, missing) {
  // The namespace's write order (docs/recall.md#recall-search_memory, turn context): the call's $turns texts
  // take the next numbers of its counter, each the base plus its place in the call as given (row.turns), so a
  // dialogue written in one call keeps its order though the rows group it by speaker.  Taken only when the
  // call writes, and before any entity's lock (the statements that take it cannot deadlock on it).
  CALL (missing) {
    UNWIND CASE WHEN size(missing) = 0 AND $turns > 0 THEN [1] ELSE [] END AS _
    MERGE (m:KgMeta {key: 'turns:' + $ns})
    SET m.turn_next = coalesce(m.turn_next, 0) + $turns
    RETURN collect(m.turn_next - $turns) AS bases
  }
  UNWIND CASE WHEN size(missing) = 0 THEN pairs ELSE [] END AS p
  WITH p.e AS e, p.row AS row, coalesce(bases[0], 0) AS turn_base
  // Lock the entity before checking which texts it already has (concurrent adds of the same text).
  SET e.kg_lock = true
  REMOVE e.kg_lock
  WITH e, row, turn_base, [i IN range(0, size(row.contents) - 1)
                WHERE NOT EXISTS { (e)-[:HAS_OBSERVATION]->(:Observation {text: row.contents[i]}) }] AS fresh
  WITH e, row, fresh, coalesce(e.obs_next, 0) AS base, turn_base
  SET e.obs_next = base + size(fresh)
  WITH e, row, fresh, base, turn_base
  CALL (e, row, fresh, base, turn_base) {
    UNWIND range(0, size(fresh) - 1) AS k
    CREATE (e)-[:HAS_OBSERVATION]->(:Observation:KgText {
      namespace: $ns, text: row.contents[fresh[k]], text_lower: row.contents_lower[fresh[k]],
      seq: base + k, turn: turn_base + row.turns[fresh[k]], created_at: $now, created_by: $actor,
      embedding: row.vectors[fresh[k]],
      embedding_model: CASE WHEN row.vectors IS NULL THEN null ELSE $model END
    })
  }
  RETURN collect({entityName: row.entityName, added: [i IN fresh | row.contents[i]]}) AS added
}
RETURN missing, added

// name: delete_entities
// Delete entities (or placeholders) by name with their observations and relations; drop placeholders left unconnected.
UNWIND $names AS name
MATCH (n:KgNode {namespace: $ns, name: name})
OPTIONAL MATCH (n)--(p:Placeholder)
WHERE NOT p.name IN $names
WITH collect(DISTINCT n) AS doomed, collect(DISTINCT p) AS neighbours
CALL (doomed) {
  UNWIND doomed AS n
  OPTIONAL MATCH (n)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
  DETACH DELETE o
}
CALL (doomed) {
  UNWIND doomed AS n
  DETACH DELETE n
}
CALL (neighbours) {
  UNWIND neighbours AS p
  WITH p
  WHERE NOT EXISTS { (p)--() }
  DELETE p
}
RETURN size(doomed) AS deleted

// name: delete_observations
// Delete the given observation texts from entities; unknown entities and texts are ignored.  A knowledge
// node's content (its `content`, the observation with role 'content') is never deleted here: `blocked`
// names the entities whose content was asked for, and then nothing is deleted.
UNWIND $rows AS row
OPTIONAL MATCH (e:KgNode {namespace: $ns, name: row.entityName})
WITH row, CASE WHEN e:Entity THEN e END AS e, coalesce(e:Knowledge AND e.content IN row.observations, false) AS blocked
WITH collect({row: row, e: e}) AS pairs, collect(CASE WHEN blocked THEN row.entityName END) AS blocked
CALL (pairs, blocked) {
  UNWIND CASE WHEN size(blocked) = 0 THEN pairs ELSE [] END AS p
  WITH p.e AS e, p.row AS row
  WHERE e IS NOT NULL
  MATCH (e)-[:HAS_OBSERVATION]->(o:Observation)
  WHERE o.text IN row.observations
  DETACH DELETE o
  RETURN count(*) AS deleted
}
RETURN blocked, deleted
