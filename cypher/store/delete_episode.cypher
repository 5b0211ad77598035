// mode: write
// params: id, scope
// Delete one episode, the units it produced (with their usage and search entries) and the
// decisions it made, with their edges. What this changes in other units' timelines is
// re-derived by the caller in the same transaction (store/drop_units, store/drop_edges, then
// the usual create queries). Returns the entities the deleted units and episode named, for
// mentions/forget_orphans.
MATCH (e:Episode {scope: $scope, id: $id})
OPTIONAL MATCH (e)-[:DERIVED]->(u:Unit)
WITH e, collect(DISTINCT u) AS units
OPTIONAL MATCH (e)-[:DECIDED]->(d:Decision)
WITH e, units, collect(DISTINCT d) AS decisions
CALL (units) { UNWIND units AS u MATCH (x:Entry {unit_id: u.id}) DELETE x }
CALL (units) { UNWIND units AS u MATCH (x:Usage {unit_id: u.id}) DELETE x }
CALL (e, units) {
  UNWIND [e] + units AS owner
  MATCH (owner)-[:ABOUT|MENTIONS]->(x:Entity)
  RETURN collect(DISTINCT x.id) AS entities
}
WITH e, units, decisions, entities, size(units) AS n_units, size(decisions) AS n_decisions
FOREACH (n IN units | DETACH DELETE n)
FOREACH (n IN decisions | DETACH DELETE n)
DETACH DELETE e
RETURN n_units AS units, n_decisions AS decisions, entities
