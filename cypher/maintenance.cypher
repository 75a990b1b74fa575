// Maintenance of the knowledge layer (docs/knowledge-model.md#maintenance, maintain_graph):
// the decay sweep, maintain_graph's prune / merge / validate / orphans, and the hooks' reads.
// Layout: docs/knowledge-model.md.  Decay constants arrive as parameters from
// kg_neo4j.knowledge.decay.cypher_params(); R and the level are computed exactly as
// knowledge_record_access computes them (t and age in days from duration.inSeconds).
//
// Writes that touch many nodes run as CALL { ... } IN TRANSACTIONS OF $batch ROWS in an
// auto-commit session (kg_neo4j/store/maintenance.py): each batch commits on its own, a node
// is written only when its state changes, so a second run writes nothing and an interrupted
// run is finished by the next one.  $apply = false runs the same statement as a dry run: the
// same rows are counted and named, nothing enters the writing subquery.
// Expiry (decay, merge) does what knowledge_forget does: :KgNode:Entity:Knowledge become
// :ExpiredKnowledge, expired_at / expired_reason are set, open relationships to other nodes
// are closed at $now (never before they started), observations lose their vectors.

// name: decay_chunk_bounds
// The next chunk of the namespace's entities in name order after $after: how many, and the last name.
MATCH (k:Entity)
USING INDEX k:Entity(namespace, name)
WHERE k.namespace = $ns AND k.name > $after
WITH k
ORDER BY k.namespace, k.name
LIMIT $chunk
RETURN count(k) AS entities, max(k.name) AS upto

// name: decay_count
// How many knowledge nodes the namespace holds (the total of the sweep's progress bar).
MATCH (k:Knowledge)
WHERE k.namespace = $ns
RETURN count(k) AS knowledge

// name: decay_scan_chunk
// Read one chunk (names in ($after, $upto]): R and the level earned by $now of each knowledge node; the nodes to change, counts, samples.
MATCH (k:Entity)
USING INDEX k:Entity(namespace, name)
WHERE k.namespace = $ns AND k.name > $after AND k.name <= $upto AND k:Knowledge
WITH k, duration.inSeconds(coalesce(k.last_access, k.created_at), $now) AS d,
     duration.inSeconds(k.created_at, $now) AS a
WITH k, CASE WHEN d.seconds < 0 THEN 0.0 ELSE (d.seconds + d.nanosecondsOfSecond / 1e9) / 86400.0 END AS t,
     CASE WHEN a.seconds < 0 THEN 0.0 ELSE (a.seconds + a.nanosecondsOfSecond / 1e9) / 86400.0 END AS age,
     coalesce(k.access_count, 0) AS accesses
WITH k, CASE WHEN k.category = 'fundamental' THEN 1.0
             ELSE $w_fast * exp(-t * log(2) / k.stability) + $w_slow * exp(-t * log(2) / ($slow_factor * k.stability))
        END AS r,
     CASE WHEN k.category = 'fundamental' OR accesses >= $core_access THEN 4
          WHEN age >= $consolidated_age AND accesses >= $consolidated_access THEN 3
          WHEN size(coalesce(k.sessions, [])) >= $verifying_sessions THEN 2
          ELSE 1 END AS earned
WITH k, r, earned, coalesce(k.memory_level, 0) AS level,
     r < $expire_below_retention AND earned < $expire_below_level AS expire
WITH k, r, earned, level, expire, r < $fading_below_retention AND NOT expire AS fading
// rows arrive in name order (the index's), so the ids are collected in name order: the order the writes lock in
WITH count(*) AS scanned,
     collect(CASE WHEN expire OR earned <> level THEN elementId(k) END) AS ids,
     count(CASE WHEN expire THEN 1 END) AS expire,
     collect(CASE WHEN expire THEN k.name END)[..$sample] AS expire_names,
     collect(CASE WHEN NOT expire AND earned <> level THEN {name: k.name, from: level, to: earned} END)[..$sample]
       AS level_names,
     count(CASE WHEN NOT expire AND earned > level THEN 1 END) AS promote,
     count(CASE WHEN NOT expire AND earned < level THEN 1 END) AS demote,
     count(CASE WHEN fading THEN 1 END) AS fading,
     collect(CASE WHEN fading THEN {name: k.name, retention: r} END) AS faded
CALL (faded) {
  UNWIND faded AS f
  WITH f ORDER BY f.retention, f.name LIMIT $sample
  RETURN collect(f) AS fading_names
}
RETURN scanned, ids, expire, expire_names, level_names, promote, demote, fading, fading_names

// name: decay_apply
// Write what the scan found, re-checked on each node's current state: the level it has earned, expiry (R < 0.02 below level 3).
UNWIND $ids AS id
CALL (id) {
  MATCH (k)
  WHERE elementId(k) = id AND k.namespace = $ns
  // lock first (removing an absent property writes nothing), then read: an access or a forget
  // that committed since the scan is seen
  REMOVE k.kg_lock
  WITH k
  WHERE k:Knowledge
  WITH k, duration.inSeconds(coalesce(k.last_access, k.created_at), $now) AS d,
       duration.inSeconds(k.created_at, $now) AS a
  WITH k, CASE WHEN d.seconds < 0 THEN 0.0 ELSE (d.seconds + d.nanosecondsOfSecond / 1e9) / 86400.0 END AS t,
       CASE WHEN a.seconds < 0 THEN 0.0 ELSE (a.seconds + a.nanosecondsOfSecond / 1e9) / 86400.0 END AS age,
       coalesce(k.access_count, 0) AS accesses
  WITH k, CASE WHEN k.category = 'fundamental' THEN 1.0
               ELSE $w_fast * exp(-t * log(2) / k.stability) + $w_slow * exp(-t * log(2) / ($slow_factor * k.stability))
          END AS r,
       CASE WHEN k.category = 'fundamental' OR accesses >= $core_access THEN 4
            WHEN age >= $consolidated_age AND accesses >= $consolidated_access THEN 3
            WHEN size(coalesce(k.sessions, [])) >= $verifying_sessions THEN 2
            ELSE 1 END AS earned
  WITH k, earned, coalesce(k.memory_level, 0) AS level,
       r < $expire_below_retention AND earned < $expire_below_level AS expire
  WHERE expire OR earned <> level
  // the level replaced is kept with the moment it ended (ds_*, as knowledge_record_access does)
  // who made each change, beside ds_until ('' for one made before attribution: lists cannot hold null)
  SET k.ds_by = [i IN range(1, size(coalesce(k.ds_until, [])) - size(coalesce(k.ds_by, []))) | '']
                + coalesce(k.ds_by, []) + $actor
  SET k.ds_until = coalesce(k.ds_until, []) + $now,
      k.ds_stability = coalesce(k.ds_stability, []) + k.stability,
      k.ds_level = coalesce(k.ds_level, []) + k.memory_level,
      k.ds_since = coalesce(k.ds_since, []) + coalesce(k.last_access, k.created_at),
      k.ds_category = coalesce(k.ds_category, []) + k.category,
      k.ds_trust = coalesce(k.ds_trust, []) + k.trust
  SET k.memory_level = earned
  WITH k, earned, level, expire
  CALL (k, expire) {
    WITH k
    WHERE expire
    CALL (k) {
      MATCH (k)-[r]-(:KgNode)
      WHERE r.valid_until IS NULL OR r.valid_until > $now
      // until_before / closed_at: what validUntil was before this close, and when (asOf reads show it)
      SET r.until_before = r.valid_until, r.closed_at = $now, r.closed_by = $actor,
          r.valid_until = CASE WHEN r.valid_from > $now THEN r.valid_from ELSE $now END
    }
    CALL (k) {
      MATCH (k)-[:HAS_OBSERVATION]->(o:Observation)
      WHERE o.embedding IS NOT NULL OR o.embedding_model IS NOT NULL
      REMOVE o.embedding, o.embedding_model
    }
    REMOVE k:KgNode:Entity:Knowledge:KgText, k:$(coalesce(k.type_labels, []))  // type labels too
    REMOVE k.type_labels
    SET k:ExpiredKnowledge, k.expired_at = $now, k.expired_by = $actor, k.expired_reason = 'decay'
  }
  RETURN count(*) AS written, count(CASE WHEN expire THEN 1 END) AS expired,
         count(CASE WHEN NOT expire AND earned > level THEN 1 END) AS promoted,
         count(CASE WHEN NOT expire AND earned < level THEN 1 END) AS demoted
} IN TRANSACTIONS OF $batch ROWS
RETURN sum(written) AS written, sum(expired) AS expired, sum(promoted) AS promoted, sum(demoted) AS demoted

// name: decay_progress_read
// Where the namespace's last stopped decay sweep ended, and the figures of its last run.
OPTIONAL MATCH (m:KgMeta {key: $key})
RETURN m.cursor AS cursor, m.last_run_at AS last_run_at, m.scanned AS scanned, m.expired AS expired,
       m.promoted AS promoted, m.demoted AS demoted, m.written AS written, m.complete AS complete,
       m.seconds AS seconds

// name: decay_progress_write
// Record the sweep's cursor (null once it reached the end) and, at the end of a run, its figures.
MERGE (m:KgMeta {key: $key})
ON CREATE SET m.created_at = $now, m.namespace = $ns
SET m.cursor = $cursor, m.updated_at = $now
WITH m
CALL (m) {
  WITH m
  WHERE $report IS NOT NULL
  SET m += $report, m.last_run_at = $now
}
RETURN m.key AS key

// name: weak_edges_find
// Open semantic edges between knowledge nodes weaker than $min_weight (prune closes them): count, the first $page ids, a sample.
MATCH (a:Knowledge)-[r]->(b:Knowledge)
WHERE a.namespace = $ns AND b.namespace = $ns AND type(r) IN $types AND r.weight < $min_weight
  AND (r.valid_until IS NULL OR r.valid_until > $now)
WITH r
ORDER BY startNode(r).name, type(r), endNode(r).name
WITH collect(r) AS found
RETURN size(found) AS total, [r IN found[..$page] | elementId(r)] AS ids,
       [r IN found[..$sample] | {from: startNode(r).name, to: endNode(r).name, relationType: type(r),
                                  weight: r.weight}] AS sample

// name: causal_edges_find
// Open must_precede / reason_for edges whose source is an inference (validate closes them): count, ids, a sample.
MATCH (a:Knowledge)-[r]->(:KgNode)
WHERE a.namespace = $ns AND a.trust = 'inference' AND type(r) IN $causal
  AND (r.valid_until IS NULL OR r.valid_until > $now)
WITH r
ORDER BY startNode(r).name, type(r), endNode(r).name
WITH collect(r) AS found
RETURN size(found) AS total, [r IN found[..$page] | elementId(r)] AS ids,
       [r IN found[..$sample] | {from: startNode(r).name, to: endNode(r).name, relationType: type(r),
                                  weight: r.weight}] AS sample

// name: dangling_edges_find
// Open relationships of expired knowledge (validate and session-start close them): count, ids, a sample.
MATCH (x:ExpiredKnowledge)-[r]-(y)
WHERE x.namespace = $ns AND (y:KgNode OR y:ExpiredKnowledge) AND (r.valid_until IS NULL OR r.valid_until > $now)
WITH DISTINCT r
WITH r
ORDER BY startNode(r).name, type(r), endNode(r).name
WITH collect(r) AS found
RETURN size(found) AS total, [r IN found[..$page] | elementId(r)] AS ids,
       [r IN found[..$sample] | {from: startNode(r).name, to: endNode(r).name, relationType: type(r),
                                  weight: r.weight}] AS sample

// name: expire_edges_apply
// Close the found relationships at $now (never before they started) if they are still open; committed per batch.
UNWIND $ids AS id
CALL (id) {
  MATCH ()-[r]->()
  WHERE elementId(r) = id AND (r.valid_until IS NULL OR r.valid_until > $now)
  // until_before / closed_at: what validUntil was before this close, and when (asOf reads show it)
  SET r.until_before = r.valid_until, r.closed_at = $now, r.closed_by = $actor,
      r.valid_until = CASE WHEN r.valid_from > $now THEN r.valid_from ELSE $now END
  RETURN count(r) AS closed
} IN TRANSACTIONS OF $batch ROWS
RETURN sum(closed) AS closed

// name: knowledge_findings
// Report-only findings: principles without the expert's quote, and knowledge with no open relationship (orphans).
CALL () {
  MATCH (k:Knowledge)
  WHERE k.namespace = $ns AND k.trust = 'principle' AND (k.quote IS NULL OR trim(k.quote) = '')
  WITH k.name AS name ORDER BY name
  RETURN count(name) AS unquoted, collect(name)[..$sample] AS unquoted_names
}
CALL () {
  MATCH (k:Knowledge)
  WHERE k.namespace = $ns AND $orphans
    AND NOT EXISTS { MATCH (k)-[r]-(:KgNode) WHERE r.valid_until IS NULL OR r.valid_until > $now }
  WITH k.name AS name ORDER BY name
  RETURN count(name) AS orphans, collect(name)[..$sample] AS orphan_names
}
RETURN unquoted, unquoted_names, orphans, orphan_names

// name: merge_candidates
// Near-duplicate pairs: content vectors of a page of knowledge ($page names after $after, or the given $names) against the vector index.
CALL () {
  MATCH (k:Entity)
  USING INDEX k:Entity(namespace, name)
  WHERE $names IS NULL AND k.namespace = $ns AND k.name > $after AND k:Knowledge
  WITH k ORDER BY k.namespace, k.name LIMIT $page
  RETURN k
  UNION
  UNWIND coalesce($names, []) AS name
  MATCH (k:KgNode {namespace: $ns, name: name})
  WHERE k:Knowledge
  RETURN k
}
WITH k ORDER BY k.name
WITH collect(k) AS page
CALL (page) {
  UNWIND page AS k
  MATCH (k)-[:HAS_OBSERVATION]->(o:Observation {role: 'content'})
  WHERE o.embedding IS NOT NULL
  CALL db.index.vector.queryNodes('kg_observation_embedding', $neighbours, o.embedding) YIELD node, score
  WITH k, o, node, score
  WHERE score >= $min_score AND node <> o AND node.namespace = $ns AND node.role = 'content'
  MATCH (d:Knowledge)-[:HAS_OBSERVATION]->(node)
  WHERE d <> k
  WITH k, d, max(score) AS score
  RETURN collect({a: k.name, b: d.name, score: score}) AS pairs
}
CALL (page) {
  UNWIND page AS k
  RETURN collect({name: k.name, trust: k.trust, level: k.memory_level, accesses: k.access_count,
                  stability: k.stability, created_at: k.created_at}) AS nodes
}
RETURN size(page) AS scanned, page[-1].name AS last, pairs, nodes

// name: knowledge_strength
// The fields that decide which of two duplicates is kept (trust, level, accesses, stability, age).
UNWIND $names AS name
MATCH (k:KgNode {namespace: $ns, name: name})
WHERE k:Knowledge
RETURN k.name AS name, k.trust AS trust, k.memory_level AS level, k.access_count AS accesses,
       k.stability AS stability, k.created_at AS created_at

// name: knowledge_recent
// The names of the namespace's most recently stored knowledge (session-start checks them for duplicates).
MATCH (k:Knowledge)
WHERE k.namespace = $ns
WITH k ORDER BY k.created_at DESC, k.name LIMIT $limit
RETURN collect(k.name) AS names

// name: hook_recall
// The hook's recall: fulltext (BM25) hits of the namespace grouped by entity, knowledge boosted, best first, with
// what to print.  $fulltext asks the database-wide index for this namespace's $k best (kg_neo4j/text.py
// fulltext_query) and they are kept by namespace; raw_count tells the hook when another namespace, whose name
// holds this one's words, took the whole page (kg_neo4j/hooks/recall.py asks again with a larger $k).
CALL () {
  // the index is eventually consistent: first the writes committed before this read (schema_fulltext)
  CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
  CALL db.index.fulltext.queryNodes('kg_fulltext_ns', $fulltext, {limit: $k}) YIELD node, score
  RETURN count(*) AS raw_count, collect(CASE WHEN node.namespace = $ns THEN {node: node, score: score} END) AS own
}
CALL (own) {
  UNWIND own AS h
  WITH h.node AS node, h.score AS score
  OPTIONAL MATCH (owner:Entity)-[:HAS_OBSERVATION]->(node:Observation)
  WITH coalesce(owner, node) AS e, CASE WHEN owner IS NULL THEN null ELSE node.text END AS hit, score
  WHERE e:Entity
  // hits arrive best first, so the matching observations are collected best first
  WITH e, max(score) AS score, collect(hit) AS hits
  WITH e, hits, score * CASE WHEN e:Knowledge THEN $knowledge_boost ELSE 1.0 END AS rank
  ORDER BY rank DESC, e.name
  LIMIT $limit
  CALL (e, hits) {
    OPTIONAL MATCH (e)-[:HAS_OBSERVATION]->(o:Observation)
    WHERE NOT e:Knowledge AND NOT o.text IN hits
    WITH o ORDER BY o.seq
    RETURN collect(o.text) AS others
  }
  WITH e, rank, CASE WHEN e:Knowledge THEN [] ELSE (hits + others)[..$observations] END AS observations
  ORDER BY rank DESC, e.name
  RETURN collect({name: e.name, type: e.entityType, knowledge: e:Knowledge, content: e.content, trust: e.trust,
                  category: e.category, level: e.memory_level, quote: e.quote, rank: rank,
                  observations: observations}) AS lines
}
RETURN raw_count, lines

// name: hook_core
// Core knowledge to re-inject after a compaction: type 'core', fundamentals and level 4, the most important first.
MATCH (k:Knowledge)
WHERE k.namespace = $ns AND (k.entityType = 'core' OR k.category = 'fundamental' OR k.memory_level >= 4)
WITH k
ORDER BY CASE WHEN k.entityType = 'core' THEN 0 ELSE 1 END,
         CASE k.trust WHEN 'principle' THEN 0 WHEN 'pattern' THEN 1 ELSE 2 END,
         coalesce(k.access_count, 0) DESC, k.name
LIMIT $limit
RETURN k.name AS name, k.entityType AS type, true AS knowledge, k.content AS content, k.trust AS trust,
       k.category AS category, k.memory_level AS level, k.quote AS quote, [] AS observations
