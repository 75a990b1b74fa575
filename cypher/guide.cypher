// The Neo4j Browser guide's queries (kg_neo4j/browser/, docs/neo4j-versions.md#the-guides-queries): the
// questions a person asks of an agent's memory.  The guide (`:play http://127.0.0.1:7478/guide.html` on the
// local server) runs each on click; this file is the same queries as plain Cypher, for a Neo4j whose query
// tool runs no custom guides (Aura).  Set the parameters first, e.g. in Browser or Aura:
//
//   :param ns => 'default'                               // the namespace (kg-neo4j serve --namespace)
//   :param name => 'Alice'                               // an entity
//   :param since => datetime() - duration('P1D')         // "what changed since"
//   :param at => datetime() - duration('P7D')            // "the graph as of"
//
// "Now" is the server's datetime(); relations are current while valid_from <= now < valid_until.
// A path depth cannot be a parameter, so the neighbourhood comes in three queries.  Each guide
// query is tested on a known graph in tests/test_browser_guide.py.  `name IS NOT NULL` beside
// `namespace = $ns` lets Neo4j seek the (namespace, name) index instead of reading every namespace's
// entities.

// name: guide_whole_memory
// The whole memory of a namespace: its 150 best-connected entities and their current relations.
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name IS NOT NULL
WITH e, COUNT { (e)-[r]-(:KgNode) WHERE r.valid_until IS NULL OR r.valid_until > datetime() } AS degree
ORDER BY degree DESC, e.name
LIMIT 150
OPTIONAL MATCH (e)-[r]->(x:KgNode)
WHERE r.valid_from <= datetime() AND (r.valid_until IS NULL OR r.valid_until > datetime())
RETURN e, r, x;

// name: guide_around_1
// The graph around an entity, depth 1: its observations and its current relations.
MATCH (e:KgNode {namespace: $ns, name: $name})
OPTIONAL MATCH p = (e)-[r]-(x)
WHERE x:Observation OR (x:KgNode AND r.valid_from <= datetime() AND (r.valid_until IS NULL OR r.valid_until > datetime()))
RETURN e, p;

// name: guide_around_2
// The graph around an entity, depth 2 (current relations only, observations left out).
MATCH (e:KgNode {namespace: $ns, name: $name})
OPTIONAL MATCH p = (e)-[*1..2]-(x:KgNode)
WHERE all(r IN relationships(p) WHERE r.valid_from <= datetime() AND (r.valid_until IS NULL OR r.valid_until > datetime()))
RETURN e, p
LIMIT 500;

// name: guide_around_3
// The graph around an entity, depth 3 (current relations only, observations left out).
MATCH (e:KgNode {namespace: $ns, name: $name})
OPTIONAL MATCH p = (e)-[*1..3]-(x:KgNode)
WHERE all(r IN relationships(p) WHERE r.valid_from <= datetime() AND (r.valid_until IS NULL OR r.valid_until > datetime()))
RETURN e, p
LIMIT 500;

// name: guide_changed_since
// What changed since $since: entities, observations and relations created, relations closed.
CALL {
  MATCH (e:Entity)
  WHERE e.namespace = $ns AND e.name IS NOT NULL AND e.created_at >= $since
  RETURN e.created_at AS at, 'entity created' AS change, e.name AS name, e.entityType AS detail
  UNION ALL
  MATCH (e:Entity)-[:HAS_OBSERVATION]->(o:Observation)
  WHERE e.namespace = $ns AND e.name IS NOT NULL AND o.created_at >= $since AND e.created_at < $since
  RETURN o.created_at AS at, 'observation added' AS change, e.name AS name, o.text AS detail
  UNION ALL
  MATCH (a:KgNode)-[r]->(b:KgNode)
  WHERE a.namespace = $ns AND a.name IS NOT NULL AND r.created_at >= $since
  RETURN r.created_at AS at, 'relation created' AS change, a.name AS name, type(r) + ' -> ' + b.name AS detail
  UNION ALL
  MATCH (a:KgNode)-[r]->(b:KgNode)
  WHERE a.namespace = $ns AND a.name IS NOT NULL AND r.valid_until >= $since AND r.valid_until <= datetime()
  RETURN r.valid_until AS at, 'relation closed' AS change, a.name AS name, type(r) + ' -> ' + b.name AS detail
}
RETURN at, change, name, detail
ORDER BY at, change, name, detail;

// name: guide_relation_history
// A relation's history: every relation of $name, current and closed, with valid_from / valid_until.
MATCH (e:KgNode {namespace: $ns, name: $name})-[r]-(x:KgNode)
RETURN type(r) AS relation, startNode(r).name AS from, endNode(r).name AS to, r.weight AS weight,
       r.valid_from AS valid_from, r.valid_until AS valid_until,
       CASE WHEN r.valid_until IS NOT NULL AND r.valid_until <= datetime() THEN 'closed'
            WHEN r.valid_from > datetime() THEN 'not yet'
            ELSE 'current' END AS status,
       r.reasoning AS reasoning
ORDER BY relation, from, to, valid_from;

// name: guide_as_of
// The graph as of $at: the entities that existed then and the relations valid then.
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name IS NOT NULL AND e.created_at <= $at
OPTIONAL MATCH (e)-[r]->(x:KgNode)
WHERE r.created_at <= $at AND r.valid_from <= $at AND (r.valid_until IS NULL OR r.valid_until > $at)
  AND (x:Placeholder OR x.created_at <= $at)
RETURN e, r, x
LIMIT 1000;

// name: guide_fading
// Fading knowledge (retention below 0.3) and what will expire (below 0.02 at level 1 or 2), weakest first.
// R = 0.7 e^(-t ln2 / S) + 0.3 e^(-t ln2 / (10 S)), t in days since the last access
// (docs/knowledge.md#decay-and-growth).
MATCH (k:Knowledge)
WHERE k.namespace = $ns AND k.category <> 'fundamental'
WITH k, duration.inSeconds(coalesce(k.last_access, k.created_at), datetime()).seconds / 86400.0 AS t
WITH k, t, 0.7 * exp(-t * log(2) / k.stability) + 0.3 * exp(-t * log(2) / (10 * k.stability)) AS retention
WHERE retention < 0.3
RETURN k.name AS name, k.trust AS trust, k.memory_level AS level, round(retention, 3) AS retention,
       round(t, 1) AS days_unused, retention < 0.02 AND coalesce(k.memory_level, 1) < 3 AS will_expire
ORDER BY retention, name;

// name: guide_contradictions
// Contradictions: knowledge that contradicts other knowledge (current edges).
MATCH p = (a:Entity)-[r:contradicts]->(b:Entity)
WHERE a.namespace = $ns AND a.name IS NOT NULL AND (r.valid_until IS NULL OR r.valid_until > datetime())
RETURN p;

// name: guide_must_precede
// must_precede chains: every maximal chain of current must_precede edges, longest first.
MATCH p = (a:Entity)-[:must_precede*1..10]->(b:Entity)
WHERE a.namespace = $ns AND a.name IS NOT NULL
  AND all(r IN relationships(p) WHERE r.valid_until IS NULL OR r.valid_until > datetime())
  AND NOT EXISTS { (:Entity)-[r0:must_precede]->(a) WHERE r0.valid_until IS NULL OR r0.valid_until > datetime() }
  AND NOT EXISTS { (b)-[r1:must_precede]->(:Entity) WHERE r1.valid_until IS NULL OR r1.valid_until > datetime() }
RETURN p, length(p) AS steps
ORDER BY steps DESC;

// name: guide_hubs
// The largest hubs: the entities with the most current relations.
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name IS NOT NULL
WITH e, COUNT { (e)-[r]-(:KgNode) WHERE r.valid_until IS NULL OR r.valid_until > datetime() } AS relations
WHERE relations > 0
RETURN e.name AS name, e.entityType AS type, relations
ORDER BY relations DESC, name
LIMIT 20;

// name: guide_orphans
// Orphans: entities with no current relation to another node.
MATCH (e:Entity)
WHERE e.namespace = $ns AND e.name IS NOT NULL
  AND NOT EXISTS { (e)-[r]-(:KgNode) WHERE r.valid_until IS NULL OR r.valid_until > datetime() }
RETURN e.name AS name, e.entityType AS type, e.created_at AS created_at
ORDER BY name;
