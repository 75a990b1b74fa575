// Exact history (docs/history.md): retiring observations, the decay state of knowledge at a
// past moment, and the timeline of an entity or a relation.
// What history is kept where:
// - a retired observation hangs off its entity by HAD_OBSERVATION (no longer HAS_OBSERVATION) and carries
//   valid_until; reads of now follow HAS_OBSERVATION only, asOf reads both;
// - an entity whose type changed keeps the earlier types in type_was with the moments they ended in
//   type_until (ascending; the type at $at is type_was[number of type_until <= $at], else entityType);
// - a relation changed by update_relations keeps the replaced weight, reasoning and source in v_weight,
//   v_reasoning, v_source ('' for unset) with the moments they ended in v_until;
// - knowledge keeps its replaced decay state and trust in ds_stability, ds_level, ds_since, ds_category,
//   ds_trust with the moments they ended in ds_until (one entry per access or change);
// - forgotten or expired knowledge is (:ExpiredKnowledge) with expired_at (docs/knowledge-model.md);
// - who (docs/team.md#attribution): created_by on what was created, changed_by (the last change),
//   retired_by on retired observations, closed_by beside closed_at, expired_by beside expired_at, and
//   type_by / v_by / ds_by beside type_until / v_until / ds_until ('' for a change made before attribution).

// name: invalidate_observations
// Retire current observations at $rows[].valid_until (kept, HAD_OBSERVATION); all or nothing: an unknown
// entity or text, a moment before an observation was added, or a knowledge node's content writes nothing.
UNWIND $rows AS row
OPTIONAL MATCH (e:KgNode {namespace: $ns, name: row.entityName})
CALL (e) {
  // lock before reading the current observations (concurrent adds and retirements of the same entity)
  WITH e
  WHERE e IS NOT NULL
  SET e.kg_lock = true
  REMOVE e.kg_lock
}
WITH row, CASE WHEN e:Entity THEN e END AS e, coalesce(e:Knowledge AND e.content IN row.observations, false) AS content
CALL (e, row) {
  OPTIONAL MATCH (e)-[:HAS_OBSERVATION]->(o:Observation)
  WHERE o.text IN row.observations
  RETURN collect(o) AS current
}
WITH collect({row: row, e: e, current: current}) AS items, collect(CASE WHEN content THEN row.entityName END) AS content
WITH items, content,
     [i IN items WHERE i.e IS NULL | i.row.entityName] AS missing_entities,
     [i IN items WHERE i.e IS NOT NULL AND size(i.current) < size(i.row.observations)
        | {entityName: i.row.entityName,
           observations: [t IN i.row.observations WHERE NOT t IN [o IN i.current | o.text]]}] AS missing_observations,
     [i IN items WHERE any(o IN i.current WHERE o.created_at > i.row.valid_until)
        | {entityName: i.row.entityName,
           observations: [o IN i.current WHERE o.created_at > i.row.valid_until | o.text]}] AS too_early
CALL (items, content, missing_entities, missing_observations, too_early) {
  UNWIND CASE WHEN size(content) + size(missing_entities) + size(missing_observations) + size(too_early) = 0
              THEN items ELSE [] END AS i
  WITH i.e AS e, i.row AS row, i.current AS current
  UNWIND current AS o
  MATCH (e)-[h:HAS_OBSERVATION]->(o)
  CREATE (e)-[:HAD_OBSERVATION]->(o)
  SET o.valid_until = row.valid_until, o.retired_by = $actor
  DELETE h
  WITH e, o ORDER BY e.name, o.seq
  RETURN collect({entityName: e.name, observation: o.text, createdAt: o.created_at, validUntil: o.valid_until})
         AS retired
}
RETURN content, missing_entities, missing_observations, too_early, retired

// name: history_events
// The dated changes of the entity $entity (every node that held the name: the current one and knowledge
// forgotten under it) or, when $entity is null, of the relation copies ($rel_from)-[:$rel_type]->($rel_to); in
// order of time, one page ($skip, at most $limit rows).
CALL () {
  MATCH (e:KgNode {namespace: $ns, name: $entity})
  RETURN e
  UNION
  MATCH (e:ExpiredKnowledge)
  WHERE e.namespace = $ns AND e.name = $entity
  RETURN e
}
WITH collect(e) AS nodes
CALL (nodes) {
  CALL (nodes) {
    UNWIND nodes AS e
    MATCH (e)-[r]-(x)
    WHERE x:KgNode OR x:ExpiredKnowledge
    RETURN r
    UNION
    WITH nodes
    WHERE $entity IS NULL
    CALL () {
      MATCH (a:KgNode {namespace: $ns, name: $rel_from})
      RETURN a
      UNION
      MATCH (a:ExpiredKnowledge)
      WHERE a.namespace = $ns AND a.name = $rel_from
      RETURN a
    }
    CALL () {
      MATCH (b:KgNode {namespace: $ns, name: $rel_to})
      RETURN b
      UNION
      MATCH (b:ExpiredKnowledge)
      WHERE b.namespace = $ns AND b.name = $rel_to
      RETURN b
    }
    MATCH (a)-[r:$($rel_type)]->(b)
    RETURN r
  }
  // aggregated inside: no relation still gives one row
  RETURN collect(DISTINCT r) AS rels
}
CALL (nodes, rels) {
  UNWIND nodes AS e
  WITH e
  WHERE e:Entity OR e:ExpiredKnowledge
  RETURN e.created_at AS at, 0 AS ord, 'created' AS event, e.name AS key,
         {name: e.name, entityType: coalesce(e.type_was[0], e.entityType)} AS detail, e.created_by AS by
  UNION ALL
  UNWIND nodes AS e
  UNWIND range(0, size(coalesce(e.type_was, [])) - 1) AS i
  RETURN e.type_until[i] AS at, 1 AS ord, 'type_changed' AS event, e.name AS key,
         {name: e.name, from: e.type_was[i], to: coalesce(e.type_was[i + 1], e.entityType)} AS detail,
         CASE WHEN e.type_by[i] <> '' THEN e.type_by[i] END AS by
  UNION ALL
  UNWIND nodes AS e
  MATCH (e)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
  RETURN o.created_at AS at, 2 AS ord, 'observation_added' AS event, o.text AS key,
         {name: e.name, observation: o.text} AS detail, o.created_by AS by
  UNION ALL
  UNWIND nodes AS e
  MATCH (e)-[:HAD_OBSERVATION]->(o:Observation)
  RETURN o.valid_until AS at, 3 AS ord, 'observation_retired' AS event, o.text AS key,
         {name: e.name, observation: o.text} AS detail, o.retired_by AS by
  UNION ALL
  UNWIND nodes AS e
  UNWIND range(0, size(coalesce(e.ds_until, [])) - 1) AS i
  WITH e, i, [{event: 'trust_changed', from: e.ds_trust[i], to: coalesce(e.ds_trust[i + 1], e.trust)},
              {event: 'level_changed', from: e.ds_level[i], to: coalesce(e.ds_level[i + 1], e.memory_level)}] AS changes
  UNWIND [c IN changes WHERE c.from <> c.to] AS c
  RETURN e.ds_until[i] AS at, 4 AS ord, c.event AS event, e.name AS key,
         {name: e.name, from: c.from, to: c.to} AS detail, CASE WHEN e.ds_by[i] <> '' THEN e.ds_by[i] END AS by
  UNION ALL
  UNWIND nodes AS e
  WITH e
  WHERE e:ExpiredKnowledge
  RETURN e.expired_at AS at, 9 AS ord,
         CASE WHEN e.expired_reason = 'forgotten' THEN 'forgotten' WHEN e:KgMerged THEN 'merged_into' ELSE 'expired' END
         AS event, e.name AS key,
         {name: e.name, reason: e.expired_reason, note: e.expired_note, mergedInto: e.merged_into} AS detail,
         e.expired_by AS by
  UNION ALL
  // merges into the entity (merge_entities) and their undoing (cypher/merges.cypher)
  MATCH (m:KgMergeRecord)
  WHERE $entity IS NOT NULL AND m.namespace = $ns AND m.into = $entity
  UNWIND [{at: m.at, event: 'merged', by: m.by}]
         + CASE WHEN m.undone_at IS NULL THEN [] ELSE [{at: m.undone_at, event: 'unmerged', by: m.undone_by}] END AS ev
  RETURN ev.at AS at, 8 AS ord, ev.event AS event, m.id AS key,
         {name: m.into, merge: m.id, names: m.names, by: ev.by, reason: m.reason} AS detail, ev.by AS by
  UNION ALL
  UNWIND rels AS r
  WITH r, startNode(r).name + ' -[' + type(r) + ']-> ' + endNode(r).name AS key,
       size(coalesce(r.v_until, [])) AS n
  RETURN r.created_at AS at, 5 AS ord, 'relation_opened' AS event, key,
         {from: startNode(r).name, to: endNode(r).name, relationType: type(r),
          weight: coalesce(r.v_weight[0], r.weight), validFrom: r.valid_from, validUntil: r.valid_until,
          reasoning: CASE WHEN n > 0 THEN CASE WHEN r.v_reasoning[0] <> '' THEN r.v_reasoning[0] END
                          ELSE r.reasoning END,
          source: CASE WHEN n > 0 THEN CASE WHEN r.v_source[0] <> '' THEN r.v_source[0] END ELSE r.source END}
         AS detail, r.created_by AS by
  UNION ALL
  UNWIND rels AS r
  WITH r, startNode(r).name + ' -[' + type(r) + ']-> ' + endNode(r).name AS key,
       size(coalesce(r.v_until, [])) AS n
  UNWIND range(0, n - 1) AS i
  RETURN r.v_until[i] AS at, 6 AS ord, 'relation_updated' AS event, key,
         {from: startNode(r).name, to: endNode(r).name, relationType: type(r),
          weightBefore: r.v_weight[i], weight: coalesce(r.v_weight[i + 1], r.weight),
          reasoning: CASE WHEN i + 1 < n THEN CASE WHEN r.v_reasoning[i + 1] <> '' THEN r.v_reasoning[i + 1] END
                          ELSE r.reasoning END,
          source: CASE WHEN i + 1 < n THEN CASE WHEN r.v_source[i + 1] <> '' THEN r.v_source[i + 1] END
                       ELSE r.source END} AS detail,
         CASE WHEN r.v_by[i] <> '' THEN r.v_by[i] END AS by
  UNION ALL
  UNWIND rels AS r
  WITH r
  WHERE r.valid_until IS NOT NULL
  RETURN r.valid_until AS at, 7 AS ord, 'relation_closed' AS event,
         startNode(r).name + ' -[' + type(r) + ']-> ' + endNode(r).name AS key,
         {from: startNode(r).name, to: endNode(r).name, relationType: type(r), weight: r.weight,
          reasoning: r.reasoning, source: r.source} AS detail,
         // closed by invalidate_relations or an expiry: who closed it; else its end was given when it was
         // created or updated: who did that last
         CASE WHEN r.closed_at IS NOT NULL THEN r.closed_by ELSE coalesce(r.changed_by, r.created_by) END AS by
}
WITH at, ord, event, key, detail, by
ORDER BY at, ord, key
SKIP $skip
LIMIT $limit
RETURN at, event, detail, by
