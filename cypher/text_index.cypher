// The one text index of search_nodes (schema_text_lower): a graph written before it is moved over once at
// bootstrap (kg_neo4j/store/text_index.py), in batches, resumable; then the three text indexes it replaces
// are dropped.

// name: text_index_meta
// Whether the move to the one text index has finished (null on a database that never ran it).
OPTIONAL MATCH (m:KgMeta {key: 'text_index'})
RETURN m.done AS done

// name: text_index_meta_done
// Record that every entity and observation of the database carries :KgText.
MERGE (m:KgMeta {key: 'text_index'})
SET m.done = true

// name: text_index_pending
// How many entities and observations lack :KgText (one label scan each).  Only kg-neo4j's own: Graphiti and
// Memento label their nodes :Entity too, and a database they share is never changed (docs/moving-over.md).
CALL () { MATCH (n:Entity) WHERE NOT n:KgText AND n:KgNode RETURN count(n) AS entities }
CALL () { MATCH (o:Observation) WHERE NOT o:KgText RETURN count(o) AS observations }
RETURN entities, observations

// name: text_index_move_entities
// Every entity without :KgText gets it and its text_lower (name and type on two lines), $batch per transaction
// in one label scan (auto-commit: committed batches stay when it is interrupted); kg-neo4j's own only (:KgNode).
MATCH (n:Entity) WHERE NOT n:KgText AND n:KgNode
CALL (n) {
  SET n:KgText, n.text_lower = coalesce(n.name_lower, toLower(n.name)) + '\n' + coalesce(n.type_lower, toLower(n.entityType), '')
} IN TRANSACTIONS OF $batch ROWS

// name: text_index_move_observations
// Every observation without :KgText gets it, $batch per transaction in one label scan (auto-commit).
MATCH (o:Observation) WHERE NOT o:KgText
CALL (o) {
  SET o:KgText, o.text_lower = coalesce(o.text_lower, toLower(o.text))
} IN TRANSACTIONS OF $batch ROWS

// name: text_index_drop_entity_name
// Drop the text index over entity names that kg_text_lower replaces.
DROP INDEX kg_entity_name_lower IF EXISTS

// name: text_index_drop_entity_type
// Drop the text index over entity types that kg_text_lower replaces.
DROP INDEX kg_entity_type_lower IF EXISTS

// name: text_index_drop_observation_text
// Drop the text index over observation texts that kg_text_lower replaces.
DROP INDEX kg_observation_text_lower IF EXISTS

// name: text_index_legacy_count
// How many nodes carry 0.1.x's :KgPending (its deferred text index, removed in 0.2.0), entities typed
// "KgPending" (their type label) left out.
MATCH (n:KgPending)
WHERE NOT 'KgPending' IN coalesce(n.type_labels, [])
RETURN count(n) AS pending

// name: text_index_legacy_move
// 0.1.x wrote entities and observations as :KgPending and moved them into the text index (:KgText) a moment
// later; a process stopped in between left some behind.  Each joins the index now (an entity or observation)
// or just loses the label (merged away or forgotten since), $batch per transaction in one label scan
// (auto-commit: an interrupted run is finished by the next start).
MATCH (n:KgPending)
WHERE NOT 'KgPending' IN coalesce(n.type_labels, [])
CALL (n) {
  FOREACH (_ IN CASE WHEN n:Entity OR n:Observation THEN [1] ELSE [] END | SET n:KgText)
  REMOVE n:KgPending
} IN TRANSACTIONS OF $batch ROWS
