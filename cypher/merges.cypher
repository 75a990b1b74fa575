// merge_entities and unmerge_entities (docs/entities.md#merging-and-undoing), run by kg_neo4j/store/merges.py:
// one merge is merge_begin, then merge_one for each merged name in the order given, in ONE transaction.
// What a merge leaves in the graph, so that reads of a moment before it stay exact and unmerge restores it:
// - each merged node keeps its name and everything it had, and becomes a retired node: its labels are kept in
//   m_labels and replaced by :ExpiredKnowledge:KgMerged with expired_at = $now, expired_reason 'merged',
//   merged_into and alias_of (the kept name; alias_of follows the kept entity when it is merged in turn, with
//   the names it had in alias_of_was).  Every read treats :ExpiredKnowledge with expired_at > $at as the
//   entity it was at $at (cypher/read.cypher), so reads of before the merge show it as it was;
// - its current observations are retired on it (HAD_OBSERVATION, valid_until = $now, merge_id) and copied to
//   the kept entity after the kept one's own (seq), in their order, those whose text the kept entity already
//   has left out; copies carry merged_from and merge_copy (a knowledge node's content becomes role 'merged');
// - its open relations are closed at $now the way invalidate_relations closes (until_before, closed_at; what
//   they were before in m_until, m_until_before, m_closed_at, m_closed_by) and marked merge_id and merge_outcome:
//   'moved' (a copy with every property, created_at = $now, merged_from, merge_copy, starts or ends at the kept entity),
//   'collided' (the kept entity already has that relation open: the kept one stays as it is, this one stays
//   closed with merged_into), 'self_loop' (it linked two of the merged entities: dropped) or 'dropped' (a
//   causal edge out of knowledge the merge keeps as an inference, which holds none);
// - the kept entity gains the merged names (and theirs) in aliases, with the moment of each in alias_at;
// - a (:KgMergeRecord) holds who merged what and when, and what unmerge puts back.
// `name IS NOT NULL` (or `id IS NOT NULL`) beside `namespace = $ns`: Neo4j seeks the (namespace, name or id)
// index instead of reading every namespace's merged entities or records.

// name: merge_lock
// Take the write locks of the named nodes (in name order: two merges never wait on each other in a circle)
// before merge_check reads them, so a merge that committed meanwhile is seen as it left them.
UNWIND $names AS name
WITH name ORDER BY name
MATCH (n:KgNode {namespace: $ns, name: name})
SET n.kg_lock = true
REMOVE n.kg_lock
RETURN count(n) AS locked

// name: merge_check
// The entity of each name (kind, type, trust), and for a name that is no entity whether it is an alias.
UNWIND $names AS name
OPTIONAL MATCH (e:KgNode {namespace: $ns, name: name})
WITH name, CASE WHEN e:Entity THEN e END AS e
CALL (name, e) {
  OPTIONAL MATCH (m:KgMerged {namespace: $ns, name: name})
  WHERE e IS NULL
  WITH m ORDER BY m.expired_at DESC
  RETURN head(collect(m.alias_of)) AS alias_of
}
RETURN name, e IS NOT NULL AS found, e.entityType AS type,
       CASE WHEN e:Knowledge THEN 'knowledge' WHEN e:Experience THEN 'experience' ELSE 'entity' END AS kind,
       e.trust AS trust, alias_of

// name: merge_begin
// Lock the kept entity and record the merge ($id) with what unmerge needs of the kept entity's state before it.
MATCH (keep:KgNode {namespace: $ns, name: $into})
SET keep.kg_lock = true
REMOVE keep.kg_lock
CREATE (m:KgMergeRecord {
  namespace: $ns, id: $id, into: $into, names: $names, at: $now, by: $actor, reason: $reason,
  obs_next_before: coalesce(keep.obs_next, 0), aliases_before: coalesce(keep.aliases, []),
  alias_at_before: coalesce(keep.alias_at, []), trust_before: keep.trust, ds_by_before: keep.ds_by
})
RETURN m.id AS id

// name: merge_one
// Merge the entity $dup into $into (the record $id; $names: every name merged by it).
MATCH (keep:KgNode {namespace: $ns, name: $into})
MATCH (dup:KgNode {namespace: $ns, name: $dup})
SET dup.kg_lock = true
REMOVE dup.kg_lock
WITH keep, dup
// observations: the current ones in order, copied after the kept entity's; texts it has already are left out
CALL (keep, dup) {
  OPTIONAL MATCH (keep)-[:HAS_OBSERVATION]->(k:Observation)
  RETURN collect(k.text) AS have
}
CALL (keep, dup, have) {
  OPTIONAL MATCH (dup)-[:HAS_OBSERVATION]->(o:Observation)
  WITH o ORDER BY o.seq
  WITH collect(o) AS obs
  WITH obs, reduce(acc = {seen: have, out: []}, o IN obs |
         CASE WHEN o.text IN acc.seen THEN acc ELSE {seen: acc.seen + o.text, out: acc.out + o} END).out AS fresh
  WITH obs, fresh, coalesce(keep.obs_next, 0) AS base
  SET keep.obs_next = base + size(fresh)
  WITH obs, fresh, base
  CALL (keep, dup, fresh, base) {
    UNWIND range(0, size(fresh) - 1) AS i
    WITH fresh[i] AS o, base + i AS seq
    CREATE (keep)-[:HAS_OBSERVATION]->(c:Observation)
    SET c = properties(o), c:KgText, c.seq = seq, c.created_at = $now, c.merged_from = dup.name,
        c.merge_copy = $id, c.role = CASE WHEN o.role = 'content' THEN 'merged' ELSE o.role END,
        c.created_by = $actor
  }
  // the originals retire on the entity they were on: reads of before the merge show them there
  CALL (dup, obs) {
    UNWIND obs AS o
    MATCH (dup)-[h:HAS_OBSERVATION]->(o)
    CREATE (dup)-[:HAD_OBSERVATION]->(o)
    SET o.valid_until = $now, o.merge_id = $id, o.retired_by = $actor
    DELETE h
  }
  RETURN size(obs) AS observations, size(fresh) AS copied
}
// relations open now: re-pointed to the kept entity, or closed as a collision or a self-loop
CALL (keep, dup) {
  MATCH (dup)-[r]-(x:KgNode)
  WHERE r.valid_until IS NULL OR r.valid_until > $now
  WITH DISTINCT r, startNode(r) = dup AS out, CASE WHEN startNode(r) = dup THEN endNode(r) ELSE startNode(r) END AS x
  WITH r, out, x,
       CASE
         WHEN x = keep OR x.name IN $names THEN 'self_loop'
         // knowledge kept as an inference holds no causal edge (docs/knowledge-model.md): not moved
         WHEN out AND $trust = 'inference' AND type(r) IN $causal THEN 'dropped'
         WHEN out AND EXISTS { MATCH (keep)-[y]->(x) WHERE type(y) = type(r) AND (y.valid_until IS NULL OR y.valid_until > $now) }
           THEN 'collided'
         WHEN NOT out AND EXISTS { MATCH (x)-[y]->(keep) WHERE type(y) = type(r) AND (y.valid_until IS NULL OR y.valid_until > $now) }
           THEN 'collided'
         ELSE 'moved'
       END AS outcome
  CALL (keep, dup, r, out, x, outcome) {
    WITH keep, dup, r, out, x, outcome
    WHERE outcome = 'moved'
    CALL (keep, r, out, x) {
      WITH r, x WHERE out
      CREATE (keep)-[c:$(type(r))]->(x)
      RETURN c
      UNION
      WITH r, x WHERE NOT out
      CREATE (x)-[c:$(type(r))]->(keep)
      RETURN c
    }
    // a new relationship: created now, by this merge's actor (the copied history lists are the original's)
    SET c = properties(r), c.created_at = $now, c.created_by = $actor, c.merged_from = dup.name, c.merge_copy = $id
  }
  // closed as invalidate_relations closes (asOf reads show what it was); unmerge puts back m_*
  SET r.m_until = r.valid_until, r.m_until_before = r.until_before, r.m_closed_at = r.closed_at,
      r.m_closed_by = r.closed_by
  SET r.until_before = r.valid_until, r.closed_at = $now, r.closed_by = $actor,
      r.valid_until = CASE WHEN r.valid_from > $now THEN r.valid_from ELSE $now END,
      r.merge_id = $id, r.merge_outcome = outcome, r.merged_into = keep.name
  RETURN count(CASE WHEN outcome = 'moved' THEN 1 END) AS moved,
         count(CASE WHEN outcome = 'collided' THEN 1 END) AS collided,
         count(CASE WHEN outcome = 'self_loop' THEN 1 END) AS self_loops,
         count(CASE WHEN outcome = 'dropped' THEN 1 END) AS dropped
}
// aliases: the merged name and the names merged into it before
CALL (keep, dup) {
  OPTIONAL MATCH (a:KgMerged)
  WHERE a.namespace = $ns AND a.name IS NOT NULL AND a.alias_of = dup.name
  WITH collect(a) AS earlier
  CALL (keep, earlier) {
    UNWIND earlier AS a
    SET a.alias_of_was = coalesce(a.alias_of_was, []) + [a.alias_of], a.alias_moves = coalesce(a.alias_moves, []) + [$id],
        a.alias_of = keep.name
  }
  WITH [dup.name] + [n IN coalesce(dup.aliases, []) WHERE NOT n IN coalesce(keep.aliases, [])] AS added
  SET keep.aliases = coalesce(keep.aliases, []) + added,
      keep.alias_at = coalesce(keep.alias_at, []) + [n IN added | $now]
  RETURN added
}
// the merged node: retired, found again by its name as an alias
SET dup.m_labels = labels(dup)
REMOVE dup:$(labels(dup))
SET dup:ExpiredKnowledge:KgMerged, dup.expired_at = $now, dup.expired_by = $actor, dup.expired_reason = 'merged',
    dup.merged_into = keep.name,
    dup.alias_of = keep.name, dup.merge_id = $id
RETURN observations, copied, moved, collided, self_loops, dropped, added

// name: merge_finish
// The merge's counts on its record; a knowledge entity kept keeps the lowest trust of those merged ($trust).
MATCH (m:KgMergeRecord {namespace: $ns, id: $id})
MATCH (keep:KgNode {namespace: $ns, name: $into})
SET m.observations = $observations, m.copied = $copied, m.moved = $moved, m.collided = $collided,
    m.self_loops = $self_loops, m.dropped = $dropped
WITH keep
WHERE $trust IS NOT NULL AND keep:Knowledge AND keep.trust <> $trust
// who made each change, beside ds_until (cypher/knowledge.cypher knowledge_update)
SET keep.ds_by = [i IN range(1, size(coalesce(keep.ds_until, [])) - size(coalesce(keep.ds_by, []))) | ''] + coalesce(keep.ds_by, [])
                 + $actor
SET keep.ds_trust = coalesce(keep.ds_trust, []) + [keep.trust], keep.ds_until = coalesce(keep.ds_until, []) + [$now],
    keep.ds_stability = coalesce(keep.ds_stability, []) + [keep.stability],
    keep.ds_level = coalesce(keep.ds_level, []) + [keep.memory_level],
    keep.ds_category = coalesce(keep.ds_category, []) + [keep.category],
    keep.ds_since = coalesce(keep.ds_since, []) + [coalesce(keep.last_access, keep.created_at)]
REMOVE keep:TrustPrinciple:TrustPattern:TrustInference
SET keep.trust = $trust,
    keep:$(CASE $trust WHEN 'principle' THEN 'TrustPrinciple' WHEN 'pattern' THEN 'TrustPattern' ELSE 'TrustInference' END)

// name: merge_records
// The merges into $into, latest first (undone ones too), or the one $id.
MATCH (m:KgMergeRecord)
WHERE m.namespace = $ns AND m.id IS NOT NULL AND ($id IS NULL OR m.id = $id) AND ($into IS NULL OR m.into = $into)
RETURN m.id AS id, m.into AS into, m.names AS names, m.at AS at, m.by AS by, m.undone_at AS undone_at
ORDER BY m.at DESC, m.id DESC

// name: unmerge_check
// What stands in the way of undoing the merge $id: its names taken by entities made since, the kept entity gone.
MATCH (m:KgMergeRecord {namespace: $ns, id: $id})
OPTIONAL MATCH (keep:KgNode {namespace: $ns, name: m.into})
CALL (m) {
  UNWIND m.names AS name
  MATCH (t:KgNode {namespace: $ns, name: name})
  RETURN collect(name) AS taken
}
RETURN keep IS NOT NULL AND keep:Entity AS kept, taken

// name: unmerge_apply
// Undo the merge $id: copies deleted, originals back on the merged entities as they were, the kept entity's
// aliases, observation counter and trust as before; the record marked undone (by $actor at $now).
MATCH (m:KgMergeRecord {namespace: $ns, id: $id})
MATCH (keep:KgNode {namespace: $ns, name: m.into})
SET keep.kg_lock = true
REMOVE keep.kg_lock
WITH m, keep
CALL (keep, m) {
  MATCH (keep)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(c:Observation {merge_copy: m.id})
  DETACH DELETE c
}
CALL (keep, m) {
  MATCH (keep)-[c]-(:KgNode)
  WHERE c.merge_copy = m.id
  DELETE c
}
CALL (m) {
  MATCH (a:KgMerged)
  WHERE a.namespace = $ns AND a.name IS NOT NULL AND last(a.alias_moves) = m.id
  SET a.alias_of = last(a.alias_of_was), a.alias_of_was = a.alias_of_was[..-1], a.alias_moves = a.alias_moves[..-1]
  WITH a
  WHERE size(a.alias_moves) = 0
  REMOVE a.alias_of_was, a.alias_moves
}
CALL (m) {
  UNWIND m.names AS name
  MATCH (dup:KgMerged {namespace: $ns, name: name, merge_id: m.id})
  CALL (dup, m) {
    MATCH (dup)-[h:HAD_OBSERVATION]->(o:Observation {merge_id: m.id})
    CREATE (dup)-[:HAS_OBSERVATION]->(o)
    REMOVE o.valid_until, o.merge_id, o.retired_by
    DELETE h
  }
  CALL (dup, m) {
    MATCH (dup)-[r]-()
    WHERE r.merge_id = m.id
    WITH DISTINCT r
    SET r.valid_until = r.m_until, r.until_before = r.m_until_before, r.closed_at = r.m_closed_at,
        r.closed_by = r.m_closed_by
    REMOVE r.m_until, r.m_until_before, r.m_closed_at, r.m_closed_by, r.merge_id, r.merge_outcome, r.merged_into
  }
  REMOVE dup:ExpiredKnowledge:KgMerged
  SET dup:$(dup.m_labels)
  REMOVE dup.m_labels, dup.expired_at, dup.expired_by, dup.expired_reason, dup.merged_into, dup.alias_of,
         dup.merge_id
}
SET keep.obs_next = m.obs_next_before
SET keep.aliases = CASE WHEN size(m.aliases_before) = 0 THEN null ELSE m.aliases_before END,
    keep.alias_at = CASE WHEN size(m.alias_at_before) = 0 THEN null ELSE m.alias_at_before END
WITH m, keep
CALL (m, keep) {
  WITH m, keep
  WHERE keep:Knowledge AND m.trust_before IS NOT NULL AND keep.trust <> m.trust_before
  // the trust the merge lowered: its ds_* entry is the last one
  WITH m, keep, size(keep.ds_until) = 1 AS only
  SET keep.trust = m.trust_before,
      keep.ds_trust = CASE WHEN only THEN null ELSE keep.ds_trust[..-1] END,
      keep.ds_until = CASE WHEN only THEN null ELSE keep.ds_until[..-1] END,
      keep.ds_stability = CASE WHEN only THEN null ELSE keep.ds_stability[..-1] END,
      keep.ds_level = CASE WHEN only THEN null ELSE keep.ds_level[..-1] END,
      keep.ds_category = CASE WHEN only THEN null ELSE keep.ds_category[..-1] END,
      keep.ds_since = CASE WHEN only THEN null ELSE keep.ds_since[..-1] END,
      keep.ds_by = m.ds_by_before
  REMOVE keep:TrustPrinciple:TrustPattern:TrustInference
  SET keep:$(CASE m.trust_before WHEN 'principle' THEN 'TrustPrinciple' WHEN 'pattern' THEN 'TrustPattern' ELSE 'TrustInference' END)
}
SET m.undone_at = $now, m.undone_by = $actor
RETURN m.names AS names

// name: merge_aliases
// The aliases of the entity $name now.
MATCH (e:KgNode {namespace: $ns, name: $name})
RETURN coalesce(e.aliases, []) AS aliases
