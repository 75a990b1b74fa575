// The knowledge layer (docs/knowledge-model.md): knowledge nodes, semantic edges, access, experiences.
// Layout: docs/knowledge-model.md.  Knowledge is (:KgNode:Entity:Knowledge), found by the
// (namespace, name) key; forgotten knowledge becomes (:ExpiredKnowledge) and keeps its history.
// Decay constants arrive as parameters from kg_neo4j.knowledge.decay.cypher_params():
// R = $w_fast e^(-t ln2 / S) + $w_slow e^(-t ln2 / ($slow_factor S)), t in days since the last
// access (or creation); fundamentals have R = 1.

// name: knowledge_store
// Store new knowledge nodes (content as their first observation); with $existing = 'error' a taken name writes nothing.
UNWIND $rows AS row
OPTIONAL MATCH (e:KgNode {namespace: $ns, name: row.name})
WITH row, coalesce(e:Entity, false) AS taken
WITH collect({row: row, taken: taken}) AS pairs
WITH pairs, [p IN pairs WHERE p.taken | p.row.name] AS taken
CALL (pairs, taken) {
  UNWIND CASE WHEN $existing = 'skip' OR size(taken) = 0 THEN pairs ELSE [] END AS p
  WITH p.row AS row
  WHERE NOT p.taken
  MERGE (n:KgNode {namespace: $ns, name: row.name})
  // lock before looking at the labels: a concurrent call may be creating the same name
  SET n.kg_lock = true
  REMOVE n.kg_lock
  WITH n, row
  WHERE NOT n:Entity
  REMOVE n:Placeholder
  SET n:Entity:Knowledge:KgText,
      n.entityType = row.type, n.name_lower = row.name_lower, n.type_lower = row.type,
      n.text_lower = row.name_lower + '\n' + row.type,  // search_nodes' text index (schema_text_lower)
      n.created_at = $now, n.created_by = $actor, n.updated_at = $now, n.obs_next = 1,
      n.embedding = row.entity_vector,
      n.embedding_model = CASE WHEN row.entity_vector IS NULL THEN null ELSE $model END,
      n.content = row.content, n.trust = row.trust, n.category = row.category, n.quote = row.quote,
      n.source = row.source, n.stability = row.stability, n.memory_level = row.memory_level,
      n.access_count = 0, n.sessions = row.sessions
  // type and trust as labels (kg_neo4j/store/type_labels.py)
  SET n:$(row.type_labels), n.type_labels = row.type_labels
  CREATE (n)-[:HAS_OBSERVATION]->(:Observation:KgText {
    namespace: $ns, text: row.content, text_lower: row.content_lower, seq: 0, created_at: $now,
    created_by: $actor, role: 'content',
    embedding: row.vector, embedding_model: CASE WHEN row.vector IS NULL THEN null ELSE $model END
  })
  WITH n, row
  // similar knowledge: exact cosine over the namespace's knowledge when it holds at most $similar_scan
  // nodes, else the vector index over-fetched ($similar_k) and filtered by namespace
  CALL (n, row) {
    WITH row.vector AS v
    WHERE v IS NOT NULL
    CALL (v) {
      MATCH (k:Knowledge)
      WHERE k.namespace = $ns
      WITH k LIMIT $similar_scan + 1
      WITH collect(k) AS ks
      RETURN size(ks) <= $similar_scan AS small, ks
    }
    CALL (v, small, ks) {
      UNWIND CASE WHEN small THEN ks ELSE [] END AS k
      MATCH (k)-[:HAS_OBSERVATION]->(o:Observation {role: 'content'})
      WHERE o.embedding IS NOT NULL
      RETURN k, vector.similarity.cosine(o.embedding, v) AS score
      UNION ALL
      WITH v, small
      WHERE NOT small
      CALL db.index.vector.queryNodes('kg_observation_embedding', $similar_k, v) YIELD node, score
      WITH node, score
      WHERE node.namespace = $ns
      MATCH (k:Knowledge)-[:HAS_OBSERVATION]->(node)
      RETURN k, score
    }
    WITH k, score
    WHERE k <> n AND score >= $similar_min_score
    WITH k, max(score) AS score ORDER BY score DESC, k.name LIMIT $similar_limit
    RETURN collect({name: k.name, score: score}) AS by_vector
  }
  CALL (n, row) {
    WITH row.fulltext AS q
    WHERE row.vector IS NULL AND q <> ''
    // eventually consistent index: first the writes committed before (schema_fulltext)
    CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
    CALL db.index.fulltext.queryNodes('kg_fulltext_ns', q, {limit: $similar_text_k}) YIELD node, score
    WITH node, score
    WHERE node.namespace = $ns
    MATCH (k:Knowledge)-[:HAS_OBSERVATION]->(node)
    WHERE k <> n
    WITH k, max(score) AS score ORDER BY score DESC, k.name LIMIT $similar_limit
    RETURN collect({name: k.name, score: score}) AS by_text
  }
  RETURN collect({name: row.name, similar: coalesce(by_vector, []) + coalesce(by_text, [])}) AS created
}
RETURN taken, created

// name: knowledge_get
// The current state of knowledge nodes by name (missing or non-knowledge names are absent).
UNWIND $names AS name
MATCH (k:KgNode {namespace: $ns, name: name})
WHERE k:Knowledge
RETURN k.name AS name, k.entityType AS type, k.content AS content, k.trust AS trust, k.category AS category,
       k.quote AS quote, k.source AS source, k.stability AS stability, k.memory_level AS memory_level,
       k.access_count AS access_count, k.last_access AS last_access, k.sessions AS sessions,
       k.created_at AS created_at, k.updated_at AS updated_at

// name: knowledge_lock
// Take the write lock of one knowledge node and read its state (update_knowledge's first statement).
MATCH (k:KgNode {namespace: $ns, name: $knowledge})
SET k.kg_lock = true
REMOVE k.kg_lock
WITH k
WHERE k:Knowledge
RETURN k.name AS name, k.entityType AS type, k.content AS content, k.trust AS trust, k.category AS category,
       k.quote AS quote, k.source AS source, k.stability AS stability, k.memory_level AS memory_level,
       k.access_count AS access_count, k.last_access AS last_access, k.sessions AS sessions,
       k.created_at AS created_at, k.updated_at AS updated_at

// name: knowledge_update
// Change one knowledge node in place (identity and edges kept); new content replaces the content observation.
MATCH (k:KgNode {namespace: $ns, name: $knowledge})
WHERE k:Knowledge
// the state replaced is kept with the moment it ended (ds_*: decay state and trust; type_was/type_until),
// so asOf reads and the asOf memory prior see it (docs/history.md)
// who made each change, beside ds_until ('' for one made before attribution: lists cannot hold null)
SET k.ds_by = [i IN range(1, size(coalesce(k.ds_until, [])) - size(coalesce(k.ds_by, []))) | ''] + coalesce(k.ds_by, [])
              + $actor
SET k.ds_until = coalesce(k.ds_until, []) + $now,
    k.ds_stability = coalesce(k.ds_stability, []) + k.stability,
    k.ds_level = coalesce(k.ds_level, []) + k.memory_level,
    k.ds_since = coalesce(k.ds_since, []) + coalesce(k.last_access, k.created_at),
    k.ds_category = coalesce(k.ds_category, []) + k.category,
    k.ds_trust = coalesce(k.ds_trust, []) + k.trust
// who changed the type, beside type_until (as ds_by)
SET k.type_by = CASE WHEN $type <> k.entityType
                     THEN [i IN range(1, size(coalesce(k.type_until, [])) - size(coalesce(k.type_by, []))) | '']
                          + coalesce(k.type_by, []) + $actor
                     ELSE k.type_by END
SET k.type_was = CASE WHEN $type <> k.entityType THEN coalesce(k.type_was, []) + k.entityType ELSE k.type_was END,
    k.type_until = CASE WHEN $type <> k.entityType THEN coalesce(k.type_until, []) + $now ELSE k.type_until END
SET k.entityType = $type, k.type_lower = $type, k.text_lower = k.name_lower + '\n' + $type,  // schema_text_lower
    k.trust = $trust, k.category = $category, k.quote = $quote,
    k.source = $source, k.stability = $stability, k.memory_level = $memory_level, k.updated_at = $now,
    k.changed_by = $actor,
    k.content = $content, k.last_access = CASE WHEN $restart_decay THEN $now ELSE k.last_access END,
    k.embedding = CASE WHEN $entity_vector IS NULL THEN k.embedding ELSE $entity_vector END,
    k.embedding_model = CASE WHEN $entity_vector IS NULL THEN k.embedding_model ELSE $model END
// type and trust labels follow the new values (kg_neo4j/store/type_labels.py)
REMOVE k:$(coalesce(k.type_labels, []))
SET k:$($type_labels), k.type_labels = $type_labels
WITH k
CALL (k) {
  WITH k
  WHERE $content_changed
  // the old content is retired, not erased: asOf reads of a moment before still show it
  OPTIONAL MATCH (k)-[h:HAS_OBSERVATION]->(old:Observation {role: 'content'})
  CALL (k, h, old) {
    WITH k, h, old
    WHERE old IS NOT NULL
    CREATE (k)-[:HAD_OBSERVATION]->(old)
    SET old.valid_until = $now, old.retired_by = $actor
    DELETE h
  }
  WITH DISTINCT k
  WITH k, coalesce(k.obs_next, 0) AS seq
  SET k.obs_next = seq + 1
  CREATE (k)-[:HAS_OBSERVATION]->(:Observation:KgText {
    namespace: $ns, text: $content, text_lower: $content_lower, seq: seq, created_at: $now, created_by: $actor,
    role: 'content',
    embedding: $vector, embedding_model: CASE WHEN $vector IS NULL THEN null ELSE $model END
  })
}
RETURN k.name AS name

// name: knowledge_connect
// Create semantic edges from knowledge to entities; writes nothing if an end is missing or a rule blocks an edge.
UNWIND $rows AS row
OPTIONAL MATCH (a:KgNode {namespace: $ns, name: row.from})
OPTIONAL MATCH (b:KgNode {namespace: $ns, name: row.to})
WITH collect({row: row, a: a, b: b}) AS pairs
// lock every end once, in name order (no deadlock between calls), before any label or trust is read
CALL (pairs) {
  UNWIND pairs AS p
  UNWIND [p.a, p.b] AS n
  WITH DISTINCT n
  WHERE n IS NOT NULL
  WITH n ORDER BY n.name
  SET n.kg_lock = true
  REMOVE n.kg_lock
  RETURN count(n) AS locked
}
WITH pairs,
     [p IN pairs WHERE NOT coalesce(p.a:Knowledge, false) | p.row.from] AS missing_from,
     [p IN pairs WHERE NOT coalesce(p.b:Entity, false) | p.row.to] AS missing_to,
     [p IN pairs WHERE coalesce(p.a:Knowledge, false) AND p.a.trust = 'inference' AND p.row.relationType IN $causal
        | {from: p.row.from, relationType: p.row.relationType, trust: p.a.trust}] AS blocked
CALL (pairs, missing_from, missing_to, blocked) {
  UNWIND CASE WHEN size(missing_from) + size(missing_to) + size(blocked) = 0 THEN pairs ELSE [] END AS p
  WITH p.a AS a, p.b AS b, p.row AS row
  CALL (a, b, row) {
    OPTIONAL MATCH (a)-[x:$(row.relationType)]->(b)
    WHERE x.valid_until IS NULL OR x.valid_until > $now
    WITH a, b, row, count(x) AS existing
    WHERE existing = 0
    CREATE (a)-[r:$(row.relationType)]->(b)
    SET r.weight = row.weight, r.valid_from = $now, r.created_at = $now, r.created_by = $actor,
        r.reasoning = row.reasoning, r.source = row.source
    RETURN r
  }
  RETURN collect({from: a.name, to: b.name, relationType: type(r), weight: r.weight, reasoning: r.reasoning,
                  source: r.source, validFrom: r.valid_from, createdAt: r.created_at}) AS created
}
RETURN missing_from, missing_to, blocked, created

// name: knowledge_forget
// Expire knowledge nodes (labels, closed edges, vectors dropped; history kept); all or nothing.
UNWIND $names AS name
OPTIONAL MATCH (k:KgNode {namespace: $ns, name: name})
// lock before looking at the label ($names come sorted: no deadlock between calls)
CALL (k) {
  WITH k
  WHERE k IS NOT NULL
  SET k.kg_lock = true
  REMOVE k.kg_lock
}
WITH name, CASE WHEN k:Knowledge THEN k END AS k
WITH collect({name: name, k: k}) AS pairs
WITH pairs, [p IN pairs WHERE p.k IS NULL | p.name] AS missing
CALL (pairs, missing) {
  UNWIND CASE WHEN size(missing) = 0 THEN pairs ELSE [] END AS p
  WITH p.k AS k
  CALL (k) {
    OPTIONAL MATCH (k)-[r]-(:KgNode)
    WHERE r.valid_until IS NULL OR r.valid_until > $now
    // until_before / closed_at: what validUntil was before this close, and when (asOf reads show it)
    SET r.until_before = r.valid_until, r.closed_at = $now, r.closed_by = $actor,
        r.valid_until = CASE WHEN r.valid_from > $now THEN r.valid_from ELSE $now END
    RETURN count(r) AS closed
  }
  CALL (k) {
    OPTIONAL MATCH (k)-[:HAS_OBSERVATION]->(o:Observation)
    REMOVE o.embedding, o.embedding_model
    RETURN count(o) AS observations
  }
  REMOVE k:KgNode:Entity:Knowledge:KgText, k:$(coalesce(k.type_labels, []))  // type labels too
  REMOVE k.type_labels
  SET k:ExpiredKnowledge, k.expired_at = $now, k.expired_by = $actor, k.expired_reason = 'forgotten',
      k.expired_note = $note
  RETURN collect({name: k.name, closedRelations: closed}) AS forgotten
}
RETURN missing, forgotten

// name: knowledge_record_access
// Record one access of each named knowledge node: S grows by e^(1-R) x m(grade), count, sessions, level.
UNWIND $names AS name
MATCH (k:KgNode {namespace: $ns, name: name})
// lock first ($names come sorted: no deadlock), so concurrent accesses apply one after the other,
// and only then look at the label (a concurrent forget may just have expired the node)
SET k.kg_lock = true
REMOVE k.kg_lock
WITH k
WHERE k:Knowledge
// the decay state replaced is kept with the moment it ended (the asOf memory prior reads it)
// who made each change, beside ds_until ('' for one made before attribution: lists cannot hold null)
SET k.ds_by = [i IN range(1, size(coalesce(k.ds_until, [])) - size(coalesce(k.ds_by, []))) | ''] + coalesce(k.ds_by, [])
              + $actor
SET k.ds_until = coalesce(k.ds_until, []) + $now,
    k.ds_stability = coalesce(k.ds_stability, []) + k.stability,
    k.ds_level = coalesce(k.ds_level, []) + k.memory_level,
    k.ds_since = coalesce(k.ds_since, []) + coalesce(k.last_access, k.created_at),
    k.ds_category = coalesce(k.ds_category, []) + k.category,
    k.ds_trust = coalesce(k.ds_trust, []) + k.trust
WITH k, duration.inSeconds(coalesce(k.last_access, k.created_at), $now) AS d,
     duration.inSeconds(k.created_at, $now) AS a
WITH k, CASE WHEN d.seconds < 0 THEN 0.0 ELSE (d.seconds + d.nanosecondsOfSecond / 1e9) / 86400.0 END AS t,
     CASE WHEN a.seconds < 0 THEN 0.0 ELSE (a.seconds + a.nanosecondsOfSecond / 1e9) / 86400.0 END AS age
WITH k, age,
     CASE WHEN k.category = 'fundamental' THEN 1.0
          ELSE $w_fast * exp(-t * log(2) / k.stability) + $w_slow * exp(-t * log(2) / ($slow_factor * k.stability))
     END AS r
WITH k, age, r, k.stability * exp(1.0 - r) * $grade_multiplier AS grown,
     k.access_count + 1 AS accesses,
     CASE WHEN $session IS NULL OR $session IN k.sessions THEN k.sessions
          ELSE (k.sessions + $session)[-$max_sessions..] END AS sessions
SET k.stability = CASE WHEN grown > $max_stability THEN $max_stability
                       WHEN grown < $min_stability THEN $min_stability ELSE grown END,
    k.access_count = accesses,
    k.sessions = sessions,
    k.last_access = $now,
    k.memory_level = CASE
      WHEN k.category = 'fundamental' OR accesses >= $core_access THEN 4
      WHEN age >= $consolidated_age AND accesses >= $consolidated_access THEN 3
      WHEN size(sessions) >= $verifying_sessions THEN 2
      ELSE 1 END
RETURN k.name AS name, r AS retention, k.stability AS stability, k.memory_level AS memory_level,
       k.access_count AS access_count

// name: knowledge_list
// Knowledge of the namespace by name/trust/type/category/source/skill element, sorted by time, access or strength (R at $now).
CALL () {
  MATCH (k:Knowledge)
  WHERE k.namespace = $ns
  RETURN k, false AS expired
  UNION ALL
  MATCH (k:ExpiredKnowledge)
  // (entities merged into others are :ExpiredKnowledge too, knowledge only when they were: cypher/merges.cypher)
  WHERE $include_expired AND k.namespace = $ns AND (k.content IS NOT NULL OR NOT k:KgMerged)
  RETURN k, true AS expired
}
WITH k, expired
WHERE ($trust IS NULL OR k.trust = $trust) AND ($type IS NULL OR k.entityType = $type)
  AND ($category IS NULL OR k.category = $category) AND ($source IS NULL OR k.source = $source)
  AND ($names IS NULL OR k.name IN $names) AND ($element IS NULL OR k.source CONTAINS $element)
WITH k, expired, duration.inSeconds(coalesce(k.last_access, k.created_at), $now) AS d
WITH k, expired, CASE WHEN d.seconds < 0 THEN 0.0 ELSE (d.seconds + d.nanosecondsOfSecond / 1e9) / 86400.0 END AS t
WITH k, expired,
     CASE WHEN expired THEN 0.0
          WHEN k.category = 'fundamental' THEN 1.0
          ELSE $w_fast * exp(-t * log(2) / k.stability) + $w_slow * exp(-t * log(2) / ($slow_factor * k.stability))
     END AS r
ORDER BY CASE WHEN $sort = 'time' THEN k.created_at END DESC,
         CASE WHEN $sort = 'access' THEN k.access_count END DESC,
         CASE WHEN $sort = 'access' THEN k.last_access END DESC,
         CASE WHEN $sort = 'strength' THEN r END DESC,
         CASE WHEN $sort = 'strength' THEN k.memory_level END DESC,
         k.name
LIMIT $limit
RETURN k.name AS name, k.entityType AS type, k.content AS content, k.trust AS trust, k.category AS category,
       k.quote AS quote, k.source AS source, k.stability AS stability, k.memory_level AS memory_level,
       k.access_count AS access_count, k.last_access AS last_access, size(coalesce(k.sessions, [])) AS sessions,
       k.created_at AS created_at, k.updated_at AS updated_at, r AS retention, expired,
       k.expired_at AS expired_at, k.expired_reason AS expired_reason

// name: knowledge_stats
// The namespace's knowledge grouped by trust, type, category and level (with fading counts), expired, edges, experiences.
CALL () {
  MATCH (k:Knowledge)
  WHERE k.namespace = $ns
  WITH k, duration.inSeconds(coalesce(k.last_access, k.created_at), $now) AS d
  WITH k, CASE WHEN d.seconds < 0 THEN 0.0 ELSE (d.seconds + d.nanosecondsOfSecond / 1e9) / 86400.0 END AS t
  WITH k, CASE WHEN k.category = 'fundamental' THEN 1.0
               ELSE $w_fast * exp(-t * log(2) / k.stability) + $w_slow * exp(-t * log(2) / ($slow_factor * k.stability))
          END AS r
  WITH k.trust AS trust, k.entityType AS type, k.category AS category, k.memory_level AS level,
       count(*) AS n, count(CASE WHEN r < $fading_below_retention THEN 1 END) AS fading,
       sum(k.stability) AS stability, sum(k.access_count) AS accesses
  RETURN collect({trust: trust, type: type, category: category, level: level, n: n, fading: fading,
                  stability: stability, accesses: accesses}) AS groups
}
CALL () {
  MATCH (k:ExpiredKnowledge)
  WHERE k.namespace = $ns AND (k.content IS NOT NULL OR NOT k:KgMerged)
  WITH k.expired_reason AS reason, count(*) AS n
  RETURN collect({reason: reason, n: n}) AS expired
}
CALL () {
  MATCH (a:Knowledge)-[r]->(:KgNode)
  WHERE a.namespace = $ns AND type(r) IN $edge_types AND (r.valid_until IS NULL OR r.valid_until > $now)
  WITH type(r) AS type, count(*) AS n
  RETURN collect({type: type, n: n}) AS edges
}
CALL () {
  MATCH (x:Experience)
  WHERE x.namespace = $ns
  RETURN count(x) AS experiences
}
RETURN groups, expired, edges, experiences

// name: experience_record
// Store one experience (context, steps, decisions, outcome) as an :Experience entity with embedded observations.
UNWIND $rows AS row
OPTIONAL MATCH (e:KgNode {namespace: $ns, name: row.name})
WITH row, coalesce(e:Entity, false) AS taken
WITH collect({row: row, taken: taken}) AS pairs
WITH pairs, [p IN pairs WHERE p.taken | p.row.name] AS taken
CALL (pairs, taken) {
  UNWIND CASE WHEN size(taken) = 0 THEN pairs ELSE [] END AS p
  WITH p.row AS row
  MERGE (n:KgNode {namespace: $ns, name: row.name})
  SET n.kg_lock = true
  REMOVE n.kg_lock
  WITH n, row
  WHERE NOT n:Entity
  REMOVE n:Placeholder
  SET n:Entity:Experience:KgText,
      n.entityType = row.entityType, n.name_lower = row.name_lower, n.type_lower = row.type_lower,
      n.text_lower = row.name_lower + '\n' + row.type_lower,  // search_nodes' text index (schema_text_lower)
      n.created_at = $now, n.created_by = $actor, n.obs_next = size(row.observations),
      n.embedding = row.entity_vector,
      n.embedding_model = CASE WHEN row.entity_vector IS NULL THEN null ELSE $model END,
      n.context = row.context, n.steps = row.steps, n.decisions = row.decisions, n.outcome = row.outcome,
      n.success = row.success, n.session = row.session
  SET n:$(row.type_labels), n.type_labels = row.type_labels
  WITH n, row
  CALL (n, row) {
    UNWIND range(0, size(row.observations) - 1) AS i
    CREATE (n)-[:HAS_OBSERVATION]->(:Observation:KgText {
      namespace: $ns, text: row.observations[i], text_lower: row.observations_lower[i],
      seq: i, created_at: $now, created_by: $actor, embedding: row.vectors[i],
      embedding_model: CASE WHEN row.vectors IS NULL THEN null ELSE $model END
    })
  }
  RETURN collect(row.name) AS created
}
RETURN taken, created

// name: experience_get
// Recorded experiences by name (in the order given; unknown names are absent).
UNWIND range(0, size($names) - 1) AS i
MATCH (x:KgNode {namespace: $ns, name: $names[i]})
WHERE x:Experience AND x.created_at <= $at
RETURN x.name AS name, x.context AS context, x.steps AS steps, x.decisions AS decisions, x.outcome AS outcome,
       x.success AS success, x.session AS session, x.created_at AS created_at
ORDER BY i
