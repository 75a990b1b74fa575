// search_memory: one statement gathers every candidate; Python fuses them (kg_neo4j/fusion.py).
// Neo4j 5.26's vector and fulltext indexes cannot filter by namespace inside the index, so
// they are over-fetched ($k per channel) and filtered here; the store raises $k when a
// namespace filter leaves too few (see GraphStore.search_memory).

// name: search_memory
// Vector hits (observations, entities), fulltext hits, and the relations around the candidates' entities.
CALL () {
  WITH $vector AS v
  WHERE v IS NOT NULL
  CALL db.index.vector.queryNodes('kg_observation_embedding', $k, v) YIELD node, score
  RETURN collect({node: node, score: score}) AS vraw
}
CALL (vraw) {
  UNWIND vraw AS h
  WITH h.node AS o, h.score AS score
  WHERE o.namespace = $ns AND o.created_at <= $at
  MATCH (e:Entity)-[:HAS_OBSERVATION]->(o)
  WHERE e.created_at <= $at AND ($types IS NULL OR e.entityType IN $types)
  RETURN collect({name: e.name, entityType: e.entityType, observation: o.text, seq: o.seq, score: score}) AS vhits
}
CALL () {
  WITH $vector AS v
  WHERE v IS NOT NULL
  CALL db.index.vector.queryNodes('kg_entity_embedding', $k_entities, v) YIELD node, score
  RETURN collect({node: node, score: score}) AS eraw
}
CALL (eraw) {
  UNWIND eraw AS h
  WITH h.node AS e, h.score AS score
  WHERE e.namespace = $ns AND e.created_at <= $at AND ($types IS NULL OR e.entityType IN $types)
  RETURN collect({name: e.name, entityType: e.entityType, observation: null, seq: null, score: score}) AS ventities
}
CALL () {
  WITH $fulltext AS q
  WHERE q <> ''
  CALL db.index.fulltext.queryNodes('kg_fulltext', q, {limit: $k}) YIELD node, score
  RETURN collect({node: node, score: score}) AS fraw
}
CALL (fraw) {
  UNWIND fraw AS h
  WITH h.node AS n, h.score AS score
  WHERE n.namespace = $ns AND n.created_at <= $at
  OPTIONAL MATCH (owner:Entity)-[:HAS_OBSERVATION]->(n:Observation)
  WITH coalesce(owner, n) AS e, CASE WHEN owner IS NULL THEN null ELSE n END AS o, score
  WHERE e:Entity AND e.created_at <= $at AND ($types IS NULL OR e.entityType IN $types)
  RETURN collect({name: e.name, entityType: e.entityType, observation: o.text, seq: o.seq, score: score}) AS fhits
}
CALL (vhits, ventities, fhits) {
  UNWIND vhits + ventities + fhits + [m IN $mentions | {name: m}] AS h
  WITH DISTINCT h.name AS name
  MATCH (e:KgNode {namespace: $ns, name: name})
  CALL (e) {
    MATCH (e)-[r]-(x:Entity)
    WHERE x.created_at <= $at
      AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
    WITH r, x ORDER BY coalesce(r.weight, 1.0) DESC, x.name, type(r), r.created_at
    LIMIT $neighbour_cap
    RETURN collect({from: startNode(r).name, to: endNode(r).name, relationType: type(r),
                    weight: coalesce(r.weight, 1.0), other: x.name, otherType: x.entityType}) AS rels
  }
  RETURN collect({name: e.name, entityType: e.entityType,
                  observationCount: COUNT { (e)-[:HAS_OBSERVATION]->(o:Observation) WHERE o.created_at <= $at },
                  rels: rels}) AS around
}
RETURN size(vraw) AS vraw_count, size(eraw) AS eraw_count, size(fraw) AS fraw_count, vhits, ventities, fhits, around

// name: search_mentions
// Entities of the namespace whose lower-cased name is one of the question's word n-grams.
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name_lower IN $grams AND e.created_at <= $at
RETURN e.name AS name, e.name_lower AS name_lower
