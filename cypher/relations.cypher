// Relations: real Neo4j relationship types between :KgNode nodes, created and
// matched with the dynamic $(...) form between nodes already bound by their key.

// name: create_relations
// Create relations, skipping (from, to, type) with a copy not yet closed (valid_until unset or later); unknown ends become placeholders.
// A placeholder records no created_by: nobody wrote it on purpose (the relation that made it records who did).
UNWIND $rows AS row
MERGE (a:KgNode {namespace: $ns, name: row.from})
  ON CREATE SET a:Placeholder, a.created_at = $now
MERGE (b:KgNode {namespace: $ns, name: row.to})
  ON CREATE SET b:Placeholder, b.created_at = $now
// Take the start node's write lock before the existence check, so concurrent writers of the same
// (from, to, type) serialise (the start node is enough: every such writer locks it).  REMOVE of a
// property the node never has takes the lock and writes nothing (tests/test_concurrency.py).
REMOVE a.kg_lock
WITH a, b, row
CALL (a, b, row) {
  OPTIONAL MATCH (a)-[x:$(row.relationType)]->(b)
  WHERE x.valid_until IS NULL OR x.valid_until > $now
  WITH a, b, row, count(x) AS existing
  WHERE existing = 0
  CREATE (a)-[r:$(row.relationType)]->(b)
  SET r.weight = row.weight, r.valid_from = coalesce(row.valid_from, $now), r.valid_until = row.valid_until,
      r.created_at = $now, r.created_by = $actor, r.reasoning = row.reasoning, r.source = row.source
  RETURN r
}
// one row back, not one per relation
RETURN collect([row.from, row.to, row.relationType]) AS created

// name: delete_relations
// Delete every copy of the given (from, to, type) relations; drop placeholders left unconnected.
UNWIND $rows AS row
MATCH (a:KgNode {namespace: $ns, name: row.from})
MATCH (b:KgNode {namespace: $ns, name: row.to})
MATCH (a)-[r:$(row.relationType)]->(b)
DELETE r
WITH collect(DISTINCT a) + collect(DISTINCT b) AS ends
CALL (ends) {
  UNWIND ends AS p
  WITH DISTINCT p
  WHERE p:Placeholder AND NOT EXISTS { (p)--() }
  DELETE p
}
RETURN size(ends) AS touched

// name: invalidate_relations
// Close the open copy of each (from, to, type) at validUntil (default now); history stays; all or nothing.
UNWIND $rows AS row
OPTIONAL MATCH (a:KgNode {namespace: $ns, name: row.from})
OPTIONAL MATCH (b:KgNode {namespace: $ns, name: row.to})
CALL (a, b, row) {
  OPTIONAL MATCH (a)-[x:$(row.relationType)]->(b)
  WHERE x.valid_until IS NULL OR x.valid_until > $now
  RETURN collect(x) AS current
}
WITH collect({row: row, current: current}) AS pairs
WITH pairs, [p IN pairs WHERE size(p.current) = 0 | p.row] AS missing,
     [p IN pairs WHERE any(x IN p.current WHERE coalesce(p.row.valid_until, $now) < x.valid_from) | p.row] AS invalid
CALL (pairs, missing, invalid) {
  UNWIND CASE WHEN size(missing) = 0 AND size(invalid) = 0 THEN pairs ELSE [] END AS p
  UNWIND p.current AS x
  WITH x, coalesce(p.row.valid_until, $now) AS until
  // closing never extends: an earlier end already set stays.  until_before / closed_at: what validUntil was
  // before this close, and when (asOf reads of a moment before show the relation as it was then)
  SET x.until_before = x.valid_until, x.closed_at = $now, x.closed_by = $actor
  SET x.valid_until = CASE WHEN x.valid_until IS NOT NULL AND x.valid_until < until THEN x.valid_until ELSE until END
  RETURN collect({from: startNode(x).name, to: endNode(x).name, relationType: type(x), weight: x.weight,
                  validFrom: x.valid_from, validUntil: x.valid_until, createdAt: x.created_at,
                  reasoning: x.reasoning, source: x.source}) AS changed
}
RETURN missing, invalid, changed

// name: update_relations
// Update the open copy of each relation: weight averaged with the new evidence, reasoning, validity; all or nothing.
UNWIND $rows AS row
OPTIONAL MATCH (a:KgNode {namespace: $ns, name: row.from})
OPTIONAL MATCH (b:KgNode {namespace: $ns, name: row.to})
CALL (a, b, row) {
  OPTIONAL MATCH (a)-[x:$(row.relationType)]->(b)
  WHERE x.valid_until IS NULL OR x.valid_until > $now
  RETURN collect(x) AS current
}
WITH collect({row: row, current: current}) AS pairs
WITH pairs, [p IN pairs WHERE size(p.current) = 0 | p.row] AS missing,
     [p IN pairs WHERE any(x IN p.current WHERE
        (CASE WHEN p.row.clear_valid_until THEN null ELSE coalesce(p.row.valid_until, x.valid_until) END)
          < coalesce(p.row.valid_from, x.valid_from)) | p.row] AS invalid
CALL (pairs, missing, invalid) {
  UNWIND CASE WHEN size(missing) = 0 AND size(invalid) = 0 THEN pairs ELSE [] END AS p
  UNWIND p.current AS x
  WITH x, p.row AS row
  // who made each change, beside v_until (a change made before attribution is '': lists cannot hold null)
  SET x.v_by = [i IN range(1, size(coalesce(x.v_until, [])) - size(coalesce(x.v_by, []))) | ''] + coalesce(x.v_by, [])
               + $actor
  // the values replaced are kept with the moment they ended, so asOf reads show them (docs/history.md;
  // lists cannot hold null: an unset reasoning or source is kept as '')
  SET x.v_until = coalesce(x.v_until, []) + $now,
      x.v_weight = coalesce(x.v_weight, []) + coalesce(x.weight, 1.0),
      x.v_reasoning = coalesce(x.v_reasoning, []) + coalesce(x.reasoning, ''),
      x.v_source = coalesce(x.v_source, []) + coalesce(x.source, '')
  SET x.weight = CASE WHEN row.weight IS NULL THEN x.weight ELSE (coalesce(x.weight, 1.0) + row.weight) / 2.0 END,
      x.reasoning = coalesce(row.reasoning, x.reasoning),
      x.source = coalesce(row.source, x.source),
      x.valid_from = coalesce(row.valid_from, x.valid_from),
      x.valid_until = CASE WHEN row.clear_valid_until THEN null ELSE coalesce(row.valid_until, x.valid_until) END,
      x.updated_at = $now, x.changed_by = $actor
  RETURN collect({from: startNode(x).name, to: endNode(x).name, relationType: type(x), weight: x.weight,
                  validFrom: x.valid_from, validUntil: x.valid_until, createdAt: x.created_at,
                  reasoning: x.reasoning, source: x.source}) AS changed
}
RETURN missing, invalid, changed
