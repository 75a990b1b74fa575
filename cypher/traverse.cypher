// Traversal: APOC-free breadth-first walks, one query per call.

// name: traverse_graph
// Breadth-first walk from the start entities: one hop block per level (max 4), each node's fan-out capped inside its hop.
UNWIND $start AS name
CALL (name) {
  MATCH (s:KgNode {namespace: $ns, name: name})
  WHERE s:Entity AND s.created_at <= $at
  RETURN s
  UNION
  // knowledge forgotten or expired since $at was an entity then (cypher/read.cypher)
  MATCH (s:ExpiredKnowledge)
  WHERE s.namespace = $ns AND s.name = name AND s.created_at <= $at AND s.expired_at > $at
  RETURN s
}
WITH collect(DISTINCT s) AS frontier0
WITH frontier0, frontier0 AS visited0

// hop 1: expand every frontier node (its fan-out capped inside the hop, strongest first)
CALL (frontier0) {
  UNWIND CASE WHEN $max_depth >= 1 THEN frontier0 ELSE [] END AS n
  CALL (n) {
    MATCH (n)-[r]-(m)
    WHERE (m:Entity OR coalesce(m.expired_at > $at, false)) AND m.created_at <= $at
      AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
      AND ($direction = 'both' OR ($direction = 'out' AND startNode(r) = n) OR ($direction = 'in' AND endNode(r) = n))
      AND ($types IS NULL OR type(r) IN $types)
    // weight, reasoning and source as they were at $at (update_relations keeps earlier values in v_*)
    WITH r, m, size([u IN coalesce(r.v_until, []) WHERE u <= $at]) AS v
    WITH r, m, v, coalesce(r.v_weight[v], r.weight, 1.0) AS w
    WHERE w >= $min_weight
    WITH r, m, v, w ORDER BY w DESC, m.name, type(r), r.created_at
    LIMIT $fanout_probe
    RETURN collect({r: r, m: m, w: w,
                    reasoning: CASE WHEN v < size(coalesce(r.v_until, [])) THEN CASE WHEN r.v_reasoning[v] <> '' THEN r.v_reasoning[v] END ELSE r.reasoning END,
                    source: CASE WHEN v < size(coalesce(r.v_until, [])) THEN CASE WHEN r.v_source[v] <> '' THEN r.v_source[v] END ELSE r.source END})
           AS found
  }
  WITH n, found[0..$fanout] AS kept, size(found) > $fanout AS capped
  UNWIND kept AS e
  RETURN collect(DISTINCT CASE WHEN capped THEN n.name END) AS capped1,
         collect({r: e.r, m: e.m, w: e.w, reasoning: e.reasoning, source: e.source, via: n, hop: 1}) AS edges1,
         collect(DISTINCT e.m) AS reached1
}
// the next frontier: nodes not seen before, in discovery order (list operations, no row explosion)
WITH *, [m IN reached1 WHERE NOT m IN visited0][0..$frontier_cap] AS frontier1
WITH *, visited0 + frontier1 AS visited1

// hop 2: expand every frontier node (its fan-out capped inside the hop, strongest first)
CALL (frontier1) {
  UNWIND CASE WHEN $max_depth >= 2 THEN frontier1 ELSE [] END AS n
  CALL (n) {
    MATCH (n)-[r]-(m)
    WHERE (m:Entity OR coalesce(m.expired_at > $at, false)) AND m.created_at <= $at
      AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
      AND ($direction = 'both' OR ($direction = 'out' AND startNode(r) = n) OR ($direction = 'in' AND endNode(r) = n))
      AND ($types IS NULL OR type(r) IN $types)
    // weight, reasoning and source as they were at $at (update_relations keeps earlier values in v_*)
    WITH r, m, size([u IN coalesce(r.v_until, []) WHERE u <= $at]) AS v
    WITH r, m, v, coalesce(r.v_weight[v], r.weight, 1.0) AS w
    WHERE w >= $min_weight
    WITH r, m, v, w ORDER BY w DESC, m.name, type(r), r.created_at
    LIMIT $fanout_probe
    RETURN collect({r: r, m: m, w: w,
                    reasoning: CASE WHEN v < size(coalesce(r.v_until, [])) THEN CASE WHEN r.v_reasoning[v] <> '' THEN r.v_reasoning[v] END ELSE r.reasoning END,
                    source: CASE WHEN v < size(coalesce(r.v_until, [])) THEN CASE WHEN r.v_source[v] <> '' THEN r.v_source[v] END ELSE r.source END})
           AS found
  }
  WITH n, found[0..$fanout] AS kept, size(found) > $fanout AS capped
  UNWIND kept AS e
  RETURN collect(DISTINCT CASE WHEN capped THEN n.name END) AS capped2,
         collect({r: e.r, m: e.m, w: e.w, reasoning: e.reasoning, source: e.source, via: n, hop: 2}) AS edges2,
         collect(DISTINCT e.m) AS reached2
}
// the next frontier: nodes not seen before, in discovery order (list operations, no row explosion)
WITH *, [m IN reached2 WHERE NOT m IN visited1][0..$frontier_cap] AS frontier2
WITH *, visited1 + frontier2 AS visited2

// hop 3: expand every frontier node (its fan-out capped inside the hop, strongest first)
CALL (frontier2) {
  UNWIND CASE WHEN $max_depth >= 3 THEN frontier2 ELSE [] END AS n
  CALL (n) {
    MATCH (n)-[r]-(m)
    WHERE (m:Entity OR coalesce(m.expired_at > $at, false)) AND m.created_at <= $at
      AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
      AND ($direction = 'both' OR ($direction = 'out' AND startNode(r) = n) OR ($direction = 'in' AND endNode(r) = n))
      AND ($types IS NULL OR type(r) IN $types)
    // weight, reasoning and source as they were at $at (update_relations keeps earlier values in v_*)
    WITH r, m, size([u IN coalesce(r.v_until, []) WHERE u <= $at]) AS v
    WITH r, m, v, coalesce(r.v_weight[v], r.weight, 1.0) AS w
    WHERE w >= $min_weight
    WITH r, m, v, w ORDER BY w DESC, m.name, type(r), r.created_at
    LIMIT $fanout_probe
    RETURN collect({r: r, m: m, w: w,
                    reasoning: CASE WHEN v < size(coalesce(r.v_until, [])) THEN CASE WHEN r.v_reasoning[v] <> '' THEN r.v_reasoning[v] END ELSE r.reasoning END,
                    source: CASE WHEN v < size(coalesce(r.v_until, [])) THEN CASE WHEN r.v_source[v] <> '' THEN r.v_source[v] END ELSE r.source END})
           AS found
  }
  WITH n, found[0..$fanout] AS kept, size(found) > $fanout AS capped
  UNWIND kept AS e
  RETURN collect(DISTINCT CASE WHEN capped THEN n.name END) AS capped3,
         collect({r: e.r, m: e.m, w: e.w, reasoning: e.reasoning, source: e.source, via: n, hop: 3}) AS edges3,
         collect(DISTINCT e.m) AS reached3
}
// the next frontier: nodes not seen before, in discovery order (list operations, no row explosion)
WITH *, [m IN reached3 WHERE NOT m IN visited2][0..$frontier_cap] AS frontier3
WITH *, visited2 + frontier3 AS visited3

// hop 4: expand every frontier node (its fan-out capped inside the hop, strongest first)
CALL (frontier3) {
  UNWIND CASE WHEN $max_depth >= 4 THEN frontier3 ELSE [] END AS n
  CALL (n) {
    MATCH (n)-[r]-(m)
    WHERE (m:Entity OR coalesce(m.expired_at > $at, false)) AND m.created_at <= $at
      AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
      AND ($direction = 'both' OR ($direction = 'out' AND startNode(r) = n) OR ($direction = 'in' AND endNode(r) = n))
      AND ($types IS NULL OR type(r) IN $types)
    // weight, reasoning and source as they were at $at (update_relations keeps earlier values in v_*)
    WITH r, m, size([u IN coalesce(r.v_until, []) WHERE u <= $at]) AS v
    WITH r, m, v, coalesce(r.v_weight[v], r.weight, 1.0) AS w
    WHERE w >= $min_weight
    WITH r, m, v, w ORDER BY w DESC, m.name, type(r), r.created_at
    LIMIT $fanout_probe
    RETURN collect({r: r, m: m, w: w,
                    reasoning: CASE WHEN v < size(coalesce(r.v_until, [])) THEN CASE WHEN r.v_reasoning[v] <> '' THEN r.v_reasoning[v] END ELSE r.reasoning END,
                    source: CASE WHEN v < size(coalesce(r.v_until, [])) THEN CASE WHEN r.v_source[v] <> '' THEN r.v_source[v] END ELSE r.source END})
           AS found
  }
  WITH n, found[0..$fanout] AS kept, size(found) > $fanout AS capped
  UNWIND kept AS e
  RETURN collect(DISTINCT CASE WHEN capped THEN n.name END) AS capped4,
         collect({r: e.r, m: e.m, w: e.w, reasoning: e.reasoning, source: e.source, via: n, hop: 4}) AS edges4,
         collect(DISTINCT e.m) AS reached4
}
// the next frontier: nodes not seen before, in discovery order (list operations, no row explosion)
WITH *, [m IN reached4 WHERE NOT m IN visited3][0..$frontier_cap] AS frontier4
WITH *, visited3 + frontier4 AS visited4

WITH frontier0, frontier1, frontier2, frontier3, frontier4, visited4,
     capped1 + capped2 + capped3 + capped4 AS capped,
     [x IN edges1 + edges2 + edges3 + edges4 WHERE x.m IN visited4] AS edges
CALL (visited4) {
  UNWIND visited4 AS e
  CALL (e) {
    OPTIONAL MATCH (e)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
    WHERE o.created_at <= $at AND coalesce(o.valid_until > $at, true)
    WITH o ORDER BY o.seq
    RETURN collect(o.text) AS observations
  }
  RETURN collect({name: e.name, entityType: coalesce(e.type_was[size([u IN coalesce(e.type_until, []) WHERE u <= $at])], e.entityType),
                   observations: observations}) AS entities
}
RETURN [s IN frontier0 | s.name] AS start,
       [[m IN frontier1 | m.name], [m IN frontier2 | m.name], [m IN frontier3 | m.name], [m IN frontier4 | m.name]]
         AS levels,
       entities,
       capped,
       [x IN edges | {via: x.via.name, reached: x.m.name, hop: x.hop,
                      from: startNode(x.r).name, to: endNode(x.r).name, relationType: type(x.r),
                      weight: x.w, validFrom: x.r.valid_from,
                      validUntil: CASE WHEN x.r.closed_at > $at THEN x.r.until_before ELSE x.r.valid_until END,
                      createdAt: x.r.created_at, reasoning: x.reasoning, source: x.source}] AS edges
