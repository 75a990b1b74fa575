// search_memory: the store gathers candidates per channel, fuses them in Python (kg_neo4j/fusion.py),
// then reads the graph around the few entities the answer needs.  Neo4j 5.26's vector and fulltext
// indexes cannot filter by namespace inside the index, so each channel over-fetches its own $k and
// filters here; the store runs the channels as concurrent reads (fulltext already while the question
// is embedded) and re-runs only a starved channel with a larger k (GraphStore.search_memory).  Each hit
// carries the knowledge layer's memory state (null for entities that are not :Knowledge), from which
// the store computes the fusion prior.

// name: search_memory_vector
// Candidate hits of the observation vectors: $k nearest in the whole index, then this namespace's own.
CALL () {
  CALL db.index.vector.queryNodes('kg_observation_embedding', $k, $vector) YIELD node, score
  RETURN collect({node: node, score: score}) AS raw
}
CALL (raw) {
  UNWIND raw AS h
  WITH h.node AS o, h.score AS score
  WHERE o.namespace = $ns AND o.created_at <= $at
  MATCH (e:Entity)-[:HAS_OBSERVATION]->(o)
  WHERE e.created_at <= $at AND ($types IS NULL OR e.entityType IN $types)
  RETURN collect({name: e.name, entityType: e.entityType, observation: o.text, seq: o.seq, oid: elementId(o), score: score,
                  memory: CASE WHEN e:Knowledge THEN {category: e.category, stability: e.stability,
                                                      level: e.memory_level,
                                                      since: coalesce(e.last_access, e.created_at)} END}) AS hits
}
RETURN size(raw) AS raw_count, hits

// name: search_memory_entities
// Candidate hits of the entity vectors (name and type embedded): $k nearest, then this namespace's own.
CALL () {
  CALL db.index.vector.queryNodes('kg_entity_embedding', $k, $vector) YIELD node, score
  RETURN collect({node: node, score: score}) AS raw
}
CALL (raw) {
  UNWIND raw AS h
  WITH h.node AS e, h.score AS score
  WHERE e.namespace = $ns AND e.created_at <= $at AND ($types IS NULL OR e.entityType IN $types)
  RETURN collect({name: e.name, entityType: e.entityType, observation: null, seq: null, score: score,
                  memory: CASE WHEN e:Knowledge THEN {category: e.category, stability: e.stability,
                                                      level: e.memory_level,
                                                      since: coalesce(e.last_access, e.created_at)} END}) AS hits
}
RETURN size(raw) AS raw_count, hits

// name: search_memory_fulltext
// Candidate hits of the fulltext index (BM25 over names, types and observations): the $k best of this namespace
// ($fulltext holds the namespace as a required clause: kg_neo4j/text.py fulltext_query), kept by namespace.
CALL () {
  // the index is eventually consistent: first the writes committed before this read (schema_fulltext)
  CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
  CALL db.index.fulltext.queryNodes('kg_fulltext_ns', $fulltext, {limit: $k}) YIELD node, score
  RETURN collect({node: node, score: score}) AS raw
}
CALL (raw) {
  UNWIND raw AS h
  WITH h.node AS n, h.score AS score
  WHERE n.namespace = $ns AND n.created_at <= $at
  OPTIONAL MATCH (owner:Entity)-[:HAS_OBSERVATION]->(n:Observation)
  WITH coalesce(owner, n) AS e, CASE WHEN owner IS NULL THEN null ELSE n END AS o, score
  WHERE e:Entity AND e.created_at <= $at AND ($types IS NULL OR e.entityType IN $types)
  RETURN collect({name: e.name, entityType: e.entityType, observation: o.text, seq: o.seq, oid: elementId(o), score: score,
                  memory: CASE WHEN e:Knowledge THEN {category: e.category, stability: e.stability,
                                                      level: e.memory_level,
                                                      since: coalesce(e.last_access, e.created_at)} END}) AS hits
}
RETURN size(raw) AS raw_count, hits

// name: search_memory_exact
// Exact cosine ranking in a small namespace for starved vector channels (scan: $cap + 1 to ask, 0 to skip).
// The size is counted first and the rows ranked in a second pass: a collected list of the rows, unwound, is
// charged to the transaction's memory once per row (quadratic: 380 MB at 3,000 observations on 5.26).
CALL () {
  CALL () {
    MATCH (e:Entity)-[:HAS_OBSERVATION]->(o:Observation)
    WHERE e.namespace = $ns AND e.name IS NOT NULL AND o.embedding IS NOT NULL
    WITH o LIMIT $obs_scan
    RETURN count(o) <= $cap AND $obs_scan > 0 AS small
  }
  CALL (small) {
    MATCH (e:Entity)-[:HAS_OBSERVATION]->(o:Observation)
    WHERE small AND e.namespace = $ns AND e.name IS NOT NULL AND o.embedding IS NOT NULL
      AND o.created_at <= $at AND e.created_at <= $at AND ($types IS NULL OR e.entityType IN $types)
    WITH e, o, vector.similarity.cosine(o.embedding, $vector) AS score
    ORDER BY score DESC
    LIMIT $k_vector
    RETURN collect({name: e.name, entityType: e.entityType, observation: o.text, seq: o.seq, oid: elementId(o), score: score,
                    memory: CASE WHEN e:Knowledge THEN {category: e.category, stability: e.stability,
                                                        level: e.memory_level,
                                                        since: coalesce(e.last_access, e.created_at)} END}) AS vhits
  }
  RETURN small AS obs_small, vhits
}
CALL () {
  CALL () {
    MATCH (e:Entity)
    WHERE e.namespace = $ns AND e.name IS NOT NULL AND e.embedding IS NOT NULL
    WITH e LIMIT $entity_scan
    RETURN count(e) <= $cap AND $entity_scan > 0 AS small
  }
  CALL (small) {
    MATCH (e:Entity)
    WHERE small AND e.namespace = $ns AND e.name IS NOT NULL AND e.embedding IS NOT NULL
      AND e.created_at <= $at AND ($types IS NULL OR e.entityType IN $types)
    WITH e, vector.similarity.cosine(e.embedding, $vector) AS score
    ORDER BY score DESC
    LIMIT $k_entities
    RETURN collect({name: e.name, entityType: e.entityType, observation: null, seq: null, score: score,
                    memory: CASE WHEN e:Knowledge THEN {category: e.category, stability: e.stability,
                                                        level: e.memory_level,
                                                        since: coalesce(e.last_access, e.created_at)} END}) AS ventities
  }
  RETURN small AS entities_small, ventities
}
RETURN obs_small, vhits, entities_small, ventities

// name: search_memory_context
// For the best fused observation candidates ($ids): the question's cosine with each and with the turn written just before it in this namespace, and theirs.
// A turn is an observation's place in the namespace's write order (cypher/entities.cypher); the previous
// one, whoever wrote it, is turn - 1, found by an equality seek of the (namespace, turn) index (a range
// "largest below" read every earlier turn of the namespace: the planner sorts instead of reading the
// index backwards).  A gap (a text skipped as already known, a deleted turn) means no previous turn.
// Cosines as Neo4j gives them, in [0, 1].
UNWIND $ids AS id
MATCH (o:Observation)
WHERE elementId(o) = id AND o.namespace = $ns AND o.embedding IS NOT NULL
OPTIONAL MATCH (before:Observation {namespace: $ns, turn: o.turn - 1})
WHERE before.created_at <= $at AND before.embedding IS NOT NULL
WITH id, o, before AS p
RETURN id, vector.similarity.cosine(o.embedding, $vector) AS own,
       CASE WHEN p IS NULL THEN null ELSE vector.similarity.cosine(p.embedding, $vector) END AS prev,
       CASE WHEN p IS NULL THEN null ELSE vector.similarity.cosine(o.embedding, p.embedding) END AS pair

// name: search_memory_around
// For the named entities only: type, observation count, strongest current relations, and for knowledge its trust, level, quote and decay state.
UNWIND $names AS name
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
// the decay state and trust a knowledge node had at $at (cypher/history.cypher: ds_* end at ds_until)
WITH e, rels, size([u IN coalesce(e.ds_until, []) WHERE u <= $at]) AS i, size(coalesce(e.ds_until, [])) AS n
RETURN e.name AS name, e.entityType AS entityType,
       COUNT { (e)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
               WHERE o.created_at <= $at AND coalesce(o.valid_until > $at, true) } AS observationCount,
       rels,
       CASE WHEN e:Knowledge THEN {
         trust: CASE WHEN i < n THEN e.ds_trust[i] ELSE e.trust END,
         level: CASE WHEN i < n THEN e.ds_level[i] ELSE e.memory_level END,
         quote: e.quote,
         category: CASE WHEN i < n THEN e.ds_category[i] ELSE e.category END,
         stability: CASE WHEN i < n THEN e.ds_stability[i] ELSE e.stability END,
         since: CASE WHEN i < n THEN e.ds_since[i] ELSE coalesce(e.last_access, e.created_at) END
       } END AS knowledge

// name: search_mentions
// Entities of the namespace whose lower-cased name, or one of whose aliases (names merged into it by $at:
// cypher/merges.cypher), is one of the question's word n-grams.
CALL () {
  MATCH (e:Entity)
  WHERE e.namespace = $ns AND e.name_lower IN $grams AND e.created_at <= $at
  RETURN e.name AS name, e.name_lower AS name_lower, false AS alias
  UNION
  MATCH (m:KgMerged)
  WHERE m.namespace = $ns AND m.name IS NOT NULL AND toLower(m.name) IN $grams AND m.expired_at <= $at
  MATCH (e:KgNode {namespace: $ns, name: m.alias_of})
  WHERE e:Entity AND e.created_at <= $at
  RETURN e.name AS name, toLower(m.name) AS name_lower, true AS alias
}
RETURN name, name_lower, alias

// name: search_called
// For each capitalised question word naming no entity ($words: {word, query}, the query the word's in this
// namespace, kg_neo4j/text.py fulltext_query): the current observations of the namespace that use it (the
// fulltext index's $scan best), who wrote each, who wrote the turn after it, and its text; the store reads
// from them whether the others call an entity by that word.
// The index is eventually consistent: first the writes committed before this read (as search_memory_fulltext;
// without it a question right after the chat was written found none of its uses).
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
UNWIND $words AS asked
CALL (asked) {
  CALL db.index.fulltext.queryNodes('kg_fulltext_ns', asked.query, {limit: $scan}) YIELD node
  WITH node AS o
  WHERE o:Observation AND o.namespace = $ns AND o.created_at <= $at AND o.turn IS NOT NULL
  MATCH (w:Entity)-[:HAS_OBSERVATION]->(o)
  OPTIONAL MATCH (r:Entity)-[:HAS_OBSERVATION]->(:Observation {namespace: $ns, turn: o.turn + 1})
  RETURN collect({writer: w.name, replier: r.name, text: o.text}) AS uses
}
RETURN asked.word AS word, uses

// --- Neo4j 2026.x and later: the vector channels filtered inside the index (Cypher 25 SEARCH clause).
// Same parameters and answer as search_memory_vector / search_memory_entities above; the namespace and
// the moment ($at) are filters of the index (schema_*_vector_filtered), so the $k hits are the $k
// nearest of this namespace and raw_count counts only them.  The store uses these once
// kg_neo4j/store/capabilities.py reports the filtered indexes ONLINE, and the statements above before.

// name: search_memory_vector_filtered
// Candidate hits of the observation vectors: the $k nearest of this namespace as of $at, found inside the index.
CYPHER 25
CALL () {
  MATCH (o:Observation)
  SEARCH o IN (VECTOR INDEX kg_observation_embedding_filtered FOR $vector
               WHERE o.namespace = $ns AND o.created_at <= $at LIMIT $k) SCORE AS score
  RETURN collect({node: o, score: score}) AS raw
}
CALL (raw) {
  UNWIND raw AS h
  WITH h.node AS o, h.score AS score
  MATCH (e:Entity)-[:HAS_OBSERVATION]->(o)
  WHERE e.created_at <= $at AND ($types IS NULL OR e.entityType IN $types)
  RETURN collect({name: e.name, entityType: e.entityType, observation: o.text, seq: o.seq, oid: elementId(o), score: score,
                  memory: CASE WHEN e:Knowledge THEN {category: e.category, stability: e.stability,
                                                      level: e.memory_level,
                                                      since: coalesce(e.last_access, e.created_at)} END}) AS hits
}
RETURN size(raw) AS raw_count, hits

// name: search_memory_entities_filtered
// Candidate hits of the entity vectors: the $k nearest entities of this namespace as of $at, found inside the index.
CYPHER 25
CALL () {
  MATCH (e:Entity)
  SEARCH e IN (VECTOR INDEX kg_entity_embedding_filtered FOR $vector
               WHERE e.namespace = $ns AND e.created_at <= $at LIMIT $k) SCORE AS score
  RETURN collect({node: e, score: score}) AS raw
}
CALL (raw) {
  UNWIND raw AS h
  WITH h.node AS e, h.score AS score
  RETURN collect({name: e.name, entityType: e.entityType, observation: null, seq: null, score: score,
                  memory: CASE WHEN e:Knowledge THEN {category: e.category, stability: e.stability,
                                                      level: e.memory_level,
                                                      since: coalesce(e.last_access, e.created_at)} END}) AS hits
}
RETURN size(raw) AS raw_count, hits

// name: search_memory_entities_filtered_types
// As search_memory_entities_filtered, for entityTypes: the type ($types, a list) is one more filter inside the index.
CYPHER 25
CALL () {
  MATCH (e:Entity)
  SEARCH e IN (VECTOR INDEX kg_entity_embedding_filtered FOR $vector
               WHERE e.namespace = $ns AND e.created_at <= $at AND e.entityType IN $types LIMIT $k) SCORE AS score
  RETURN collect({node: e, score: score}) AS raw
}
CALL (raw) {
  UNWIND raw AS h
  WITH h.node AS e, h.score AS score
  RETURN collect({name: e.name, entityType: e.entityType, observation: null, seq: null, score: score,
                  memory: CASE WHEN e:Knowledge THEN {category: e.category, stability: e.stability,
                                                      level: e.memory_level,
                                                      since: coalesce(e.last_access, e.created_at)} END}) AS hits
}
RETURN size(raw) AS raw_count, hits
