// Reads of the reference tools.  Each returns one row: `entities` (name order,
// observations in insertion order) and `relations` (creation order) as they were at
// $at (now, or the asOf of the request): what was created after $at is hidden, and a
// relation shows only while valid_from <= $at < valid_until.
// Placeholders are never listed as entities; relations to them are.
// Exact history (docs/history.md): an entity shows the type it had at $at (type_was /
// type_until keep the earlier types), observations retired since $at (HAD_OBSERVATION, valid_until)
// still show, and knowledge forgotten or expired since $at (:ExpiredKnowledge, expired_at) is an entity.

// name: read_graph
// The whole namespace (at most $max_entities entities and $max_relations relations; one more signals overflow).
CALL () {
  CALL () {
    MATCH (e:Entity)
    WHERE e.namespace = $ns AND e.name IS NOT NULL AND e.created_at <= $at
    // ordered like the (namespace, name) index, so the planner reads only one page of it
    WITH e ORDER BY e.namespace, e.name
    LIMIT $max_entities
    RETURN e
    UNION ALL
    // knowledge forgotten or expired since $at was an entity then (docs/knowledge-model.md)
    MATCH (e:ExpiredKnowledge)
    WHERE e.namespace = $ns AND e.created_at <= $at AND e.expired_at > $at
    RETURN e
  }
  WITH e ORDER BY e.name
  LIMIT $max_entities
  CALL (e) {
    OPTIONAL MATCH (e)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
    WHERE o.created_at <= $at AND coalesce(o.valid_until > $at, true)
    WITH o ORDER BY o.seq
    RETURN collect(o.text) AS observations
  }
  RETURN collect({name: e.name, entityType: coalesce(e.type_was[size([u IN coalesce(e.type_until, []) WHERE u <= $at])], e.entityType), observations: observations}) AS entities
}
CALL () {
  CALL () {
    MATCH (a:KgNode)-[r]->(b:KgNode)
    WHERE a.namespace = $ns AND a.name IS NOT NULL
      AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
    RETURN a, r, b
    UNION ALL
    // relations of knowledge forgotten or expired since $at (its node lost :KgNode)
    MATCH (k:ExpiredKnowledge)-[r]-(x)
    WHERE k.namespace = $ns AND k.expired_at > $at AND (x:KgNode OR x:ExpiredKnowledge)
      AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
    // between two such nodes a relation is met from both ends
    WITH DISTINCT r
    RETURN startNode(r) AS a, r, endNode(r) AS b
  }
  WITH a, r, b ORDER BY r.created_at, a.name, b.name, type(r)
  LIMIT $max_relations
  RETURN collect({from: a.name, to: b.name, relationType: type(r), weight: r.weight,
                  validFrom: r.valid_from, validUntil: r.valid_until, createdAt: r.created_at}) AS relations
}
RETURN entities, relations

// name: read_graph_entities
// read_graph's unpaged entities as flat lists [name, entityType, observations] (name order; at most $max_entities).
// read_graph_entities and read_graph_relations are read_graph without the relation properties the reference
// answer does not show, as lists (maps and temporal values cost the driver far more to decode); the two run
// concurrently (bench_peers:
// docs/performance.md#bench_peerspy-kg-neo4j-and-its-peers-through-the-same-mcp-client).
CALL () {
  MATCH (e:Entity)
  WHERE e.namespace = $ns AND e.name IS NOT NULL AND e.created_at <= $at
  WITH e ORDER BY e.namespace, e.name
  LIMIT $max_entities
  RETURN e
  UNION ALL
  // knowledge forgotten or expired since $at was an entity then (docs/knowledge-model.md)
  MATCH (e:ExpiredKnowledge)
  WHERE e.namespace = $ns AND e.created_at <= $at AND e.expired_at > $at
  RETURN e
}
WITH e ORDER BY e.name
LIMIT $max_entities
CALL (e) {
  OPTIONAL MATCH (e)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
  WHERE o.created_at <= $at AND coalesce(o.valid_until > $at, true)
  WITH o ORDER BY o.seq
  RETURN collect(o.text) AS observations
}
RETURN collect([e.name, coalesce(e.type_was[size([u IN coalesce(e.type_until, []) WHERE u <= $at])], e.entityType), observations]) AS entities

// name: read_graph_relations
// read_graph's unpaged relations as flat lists [from, to, relationType] (creation order; at most $max_relations).
CALL () {
  MATCH (a:KgNode)-[r]->(b:KgNode)
  WHERE a.namespace = $ns AND a.name IS NOT NULL
    AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
  RETURN a, r, b
  UNION ALL
  // relations of knowledge forgotten or expired since $at (its node lost :KgNode)
  MATCH (k:ExpiredKnowledge)-[r]-(x)
  WHERE k.namespace = $ns AND k.expired_at > $at AND (x:KgNode OR x:ExpiredKnowledge)
    AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
  // between two such nodes a relation is met from both ends
  WITH DISTINCT r
  RETURN startNode(r) AS a, r, endNode(r) AS b
}
WITH a, r, b ORDER BY r.created_at, a.name, b.name, type(r)
LIMIT $max_relations
RETURN collect([a.name, b.name, type(r)]) AS relations

// name: read_graph_horizon
// The first moment after $at at which read_graph's answer changes without a write: an entity, observation or
// relation created, opened or closed later than $at (null: none).  It bounds how long a kept answer stays exact
// (kg_neo4j/store/answer_cache.py).  Every part starts from the namespace's nodes through their indexes
// (`name IS NOT NULL` lets the (namespace, name) key seek), so its cost is the namespace's size, not the
// database's: a scan of every :Observation made it the slowest of read_graph's reads (docs/performance.md).
CALL () {
  // knowledge forgotten later than $at still shows at $at; a type changed later shows its earlier type
  CALL () {
    MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL RETURN n
    UNION ALL
    MATCH (n:ExpiredKnowledge) WHERE n.namespace = $ns RETURN n
  }
  WITH n WHERE n.created_at > $at OR n.expired_at > $at OR any(u IN coalesce(n.type_until, []) WHERE u > $at)
  UNWIND [n.created_at, n.expired_at] + coalesce(n.type_until, []) AS t
  WITH t WHERE t > $at
  RETURN min(t) AS nodes
}
CALL () {
  // only observations of the namespace's nodes can show in the answer
  CALL () {
    MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL RETURN n
    UNION ALL
    MATCH (n:ExpiredKnowledge) WHERE n.namespace = $ns RETURN n
  }
  MATCH (n)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
  WHERE o.created_at > $at OR o.valid_until > $at
  UNWIND [o.created_at, o.valid_until] AS t
  WITH t WHERE t > $at
  RETURN min(t) AS observations
}
CALL () {
  MATCH (a:KgNode)-[r]->(:KgNode)
  WHERE a.namespace = $ns AND a.name IS NOT NULL
    AND (r.created_at > $at OR r.valid_from > $at OR r.valid_until > $at)
  UNWIND [r.created_at, r.valid_from, r.valid_until] AS t
  WITH t WHERE t > $at
  RETURN min(t) AS relations
}
UNWIND [nodes, observations, relations] AS t
RETURN min(t) AS horizon

// name: read_graph_page
// One page of entities after the name $after (name order), with the relations that start or end in the page.
CALL () {
  CALL () {
    MATCH (e:Entity)
    WHERE e.namespace = $ns AND e.name > $after AND e.created_at <= $at
    // ordered like the (namespace, name) index, so the planner reads only one page of it
    WITH e ORDER BY e.namespace, e.name
    LIMIT $limit
    RETURN e
    UNION ALL
    // knowledge forgotten or expired since $at was an entity then (docs/knowledge-model.md)
    MATCH (e:ExpiredKnowledge)
    WHERE e.namespace = $ns AND e.created_at <= $at AND e.expired_at > $at AND e.name > $after
    RETURN e
  }
  WITH e ORDER BY e.name
  LIMIT $limit
  CALL (e) {
    OPTIONAL MATCH (e)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
    WHERE o.created_at <= $at AND coalesce(o.valid_until > $at, true)
    WITH o ORDER BY o.seq
    RETURN collect(o.text) AS observations
  }
  RETURN collect(e) AS nodes,
         collect({name: e.name, entityType: coalesce(e.type_was[size([u IN coalesce(e.type_until, []) WHERE u <= $at])], e.entityType), observations: observations}) AS entities
}
CALL (nodes) {
  UNWIND nodes AS e
  MATCH (e)-[r]-(x)
  WHERE (x:KgNode OR x:ExpiredKnowledge) AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
    // each relation is listed once: in the page of its start node, or of its end when the start was
    // not an entity at $at (a placeholder then)
    AND (startNode(r) = e OR NOT ((startNode(r):Entity OR coalesce(startNode(r).expired_at > $at, false))
                                  AND startNode(r).created_at <= $at))
  WITH DISTINCT r
  WITH r, startNode(r) AS a, endNode(r) AS b ORDER BY r.created_at, a.name, b.name, type(r)
  RETURN collect({from: a.name, to: b.name, relationType: type(r), weight: r.weight,
                  validFrom: r.valid_from, validUntil: r.valid_until, createdAt: r.created_at}) AS relations
}
// The last page (fewer entities than $limit) also carries relations between two placeholders
// (names that were not entities at $at), which belong to no entity's page.
CALL (entities) {
  // a row only on the last page (a WHERE here would be applied after the MATCH below)
  UNWIND CASE WHEN size(entities) < $limit THEN [true] ELSE [] END AS last_page
  MATCH (a:KgNode)-[r]->(b:KgNode)
  WHERE a.namespace = $ns AND a.name IS NOT NULL
    AND NOT (a:Entity AND a.created_at <= $at) AND NOT (b:Entity AND b.created_at <= $at)
    AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
  WITH r, a, b ORDER BY r.created_at, a.name, b.name, type(r)
  RETURN collect({from: a.name, to: b.name, relationType: type(r), weight: r.weight,
                  validFrom: r.valid_from, validUntil: r.valid_until, createdAt: r.created_at}) AS loose
}
RETURN entities, relations + loose AS relations

// name: search_nodes
// Case-insensitive substring search over names, types and observations (one text index), with touching relations.
CALL () {
  // One text index (schema_text_lower) over entities (name and type on two lines) and observations.  The
  // hint keeps the query on it: planned for a short $q, the planner would otherwise scan the label.
  MATCH (t:KgText) USING TEXT INDEX t:KgText(text_lower)
  WHERE t.text_lower CONTAINS $q AND t.namespace = $ns
  CALL (t) {
    // an entity: its name or its type holds $q (a $q across the two lines is neither)
    WITH t
    WHERE t:Entity AND (t.name_lower CONTAINS $q OR (t.type_lower CONTAINS $q
      // an entity whose type changed matches on the type it had at $at
      AND (t.type_was IS NULL OR toLower(coalesce(t.type_was[size([u IN coalesce(t.type_until, []) WHERE u <= $at])], t.entityType)) CONTAINS $q)))
    RETURN t AS e
    UNION
    WITH t
    WHERE t:Observation AND t.created_at <= $at
    MATCH (e:Entity)-[:HAS_OBSERVATION]->(t)
    RETURN e
  }
  RETURN e
  UNION
  // an alias holding $q (a name merged into the entity by $at: cypher/merges.cypher) finds the entity
  MATCH (m:KgMerged)
  WHERE m.namespace = $ns AND m.name IS NOT NULL AND m.expired_at <= $at AND toLower(m.name) CONTAINS $q
  UNWIND [m.alias_of] + coalesce(m.alias_of_was, []) AS target
  CALL (target) {
    MATCH (e:KgNode {namespace: $ns, name: target}) WHERE e:Entity RETURN e
    UNION
    MATCH (e:ExpiredKnowledge {namespace: $ns, name: target}) WHERE e.expired_at > $at RETURN e
  }
  WITH e
  WHERE any(i IN range(0, size(coalesce(e.aliases, [])) - 1) WHERE e.alias_at[i] <= $at AND toLower(e.aliases[i]) CONTAINS $q)
  RETURN e
  UNION
  // Only for a past $at: what reads of now cannot match through the indexes above (a type the entity had
  // then, an observation retired since, knowledge forgotten since), by a scan of the namespace.
  UNWIND CASE WHEN $at < $now THEN [true] ELSE [] END AS past
  CALL () {
    // (the name predicate lets the planner use the (namespace, name) index)
    MATCH (e:Entity) WHERE e.namespace = $ns AND e.name IS NOT NULL RETURN e
    UNION
    MATCH (e:ExpiredKnowledge) WHERE e.namespace = $ns AND e.expired_at > $at RETURN e
  }
  WITH e
  WHERE e.name_lower CONTAINS $q OR toLower(coalesce(e.type_was[size([u IN coalesce(e.type_until, []) WHERE u <= $at])], e.entityType)) CONTAINS $q
     OR EXISTS { (e)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
                 WHERE o.created_at <= $at AND coalesce(o.valid_until > $at, true) AND o.text_lower CONTAINS $q }
  RETURN e
}
WITH e WHERE e.created_at <= $at
WITH e ORDER BY e.name
LIMIT $max_entities
WITH collect(e) AS nodes
CALL (nodes) {
  UNWIND nodes AS e
  CALL (e) {
    OPTIONAL MATCH (e)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
    WHERE o.created_at <= $at AND coalesce(o.valid_until > $at, true)
    WITH o ORDER BY o.seq
    RETURN collect(o.text) AS observations
  }
  RETURN collect({name: e.name, entityType: coalesce(e.type_was[size([u IN coalesce(e.type_until, []) WHERE u <= $at])], e.entityType), observations: observations}) AS entities
}
CALL (nodes) {
  UNWIND nodes AS e
  MATCH (e)-[r]-(x)
  WHERE (x:KgNode OR x:ExpiredKnowledge) AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
  WITH DISTINCT r
  WITH r, startNode(r) AS a, endNode(r) AS b ORDER BY r.created_at, a.name, b.name, type(r)
  RETURN collect({from: a.name, to: b.name, relationType: type(r), weight: r.weight,
                  validFrom: r.valid_from, validUntil: r.valid_until, createdAt: r.created_at}) AS relations
}
RETURN entities, relations

// name: alias_entities
// Of $names, each that was no entity at $at but an alias then, with the entities it was an alias of then
// (by name), and the one of them it was merged into last (where a write that resolves goes).
// The one rule every read by name, and every write that resolves, finds an alias with
// (kg_neo4j/store/aliases.py): a name merged into another entity by $at (cypher/merges.cypher) names the
// entity holding it in aliases since alias_at <= $at.  Before the merge the name is still its own entity
// (an :ExpiredKnowledge with expired_at > $at), so it is left out and reads of then answer the merged
// entity as it was.
UNWIND $names AS name
MATCH (m:KgMerged {namespace: $ns, name: name})
WHERE m.expired_at <= $at
  AND NOT EXISTS { MATCH (x:KgNode {namespace: $ns, name: name}) WHERE x:Entity AND x.created_at <= $at }
  AND NOT EXISTS { MATCH (x:ExpiredKnowledge {namespace: $ns, name: name}) WHERE x.created_at <= $at AND x.expired_at > $at }
UNWIND [m.alias_of] + coalesce(m.alias_of_was, []) AS target
CALL (target) {
  MATCH (e:KgNode {namespace: $ns, name: target}) WHERE e:Entity RETURN e
  UNION
  MATCH (e:ExpiredKnowledge {namespace: $ns, name: target}) WHERE e.expired_at > $at RETURN e
}
WITH name, e, m
WHERE e.created_at <= $at AND any(i IN range(0, size(coalesce(e.aliases, [])) - 1) WHERE e.aliases[i] = name AND e.alias_at[i] <= $at)
WITH name, e, max(m.expired_at) AS merged_at ORDER BY e.name
WITH name, collect(e.name) AS entities, collect(merged_at) AS merged_at
RETURN name, entities, entities[reduce(i = 0, j IN range(0, size(entities) - 1) | CASE WHEN merged_at[j] > merged_at[i] THEN j ELSE i END)] AS latest

// name: open_nodes
// Entities by exact (case-sensitive) name, with every relation that starts or ends at one of them.
// (Aliases are resolved before, by alias_entities: kg_neo4j/store/reading.py.)
CALL () {
  UNWIND $names AS name
  MATCH (e:KgNode {namespace: $ns, name: name})
  WHERE e:Entity AND e.created_at <= $at
  RETURN e
  UNION
  // knowledge forgotten or expired since $at was an entity then
  MATCH (e:ExpiredKnowledge)
  WHERE e.namespace = $ns AND e.name IN $names AND e.created_at <= $at AND e.expired_at > $at
  RETURN e
}
WITH DISTINCT e ORDER BY e.name
WITH collect(e) AS nodes
CALL (nodes) {
  UNWIND nodes AS e
  CALL (e) {
    OPTIONAL MATCH (e)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(o:Observation)
    WHERE o.created_at <= $at AND coalesce(o.valid_until > $at, true)
    WITH o ORDER BY o.seq
    RETURN collect(o.text) AS observations
  }
  RETURN collect({name: e.name, entityType: coalesce(e.type_was[size([u IN coalesce(e.type_until, []) WHERE u <= $at])], e.entityType), observations: observations}) AS entities,
         // the aliases each had at $at (shown outside the reference profile)
         collect({name: e.name, aliases: [i IN range(0, size(coalesce(e.aliases, [])) - 1) WHERE e.alias_at[i] <= $at | e.aliases[i]]}) AS aliases
}
CALL (nodes) {
  UNWIND nodes AS e
  MATCH (e)-[r]-(x)
  WHERE (x:KgNode OR x:ExpiredKnowledge) AND r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
  WITH DISTINCT r
  WITH r, startNode(r) AS a, endNode(r) AS b ORDER BY r.created_at, a.name, b.name, type(r)
  RETURN collect({from: a.name, to: b.name, relationType: type(r), weight: r.weight,
                  validFrom: r.valid_from, validUntil: r.valid_until, createdAt: r.created_at}) AS relations
}
RETURN entities, relations, aliases
