// mode: write
// params: id, scope
// Delete one episode, the units it produced and the decisions it made. The decisions'
// INVALIDATES edges go with them, so what they had invalidated is current again; those units
// are returned as restored.
MATCH (e:Episode {id: $id}) WHERE e.scope = $scope
OPTIONAL MATCH (e)-[:DERIVED]->(u:Unit)
WITH e, collect(DISTINCT u) AS units
OPTIONAL MATCH (e)-[:DECIDED]->(d:Decision)
WITH e, units, collect(DISTINCT d) AS decisions
CALL {
  WITH decisions, units
  UNWIND decisions AS d
  MATCH (d)-[:INVALIDATES]->(old:Unit)
  WHERE NOT old IN units AND NOT EXISTS {
    MATCH (other:Decision)-[:INVALIDATES]->(old) WHERE NOT other IN decisions
  }
  RETURN collect(DISTINCT old.id) AS restored
}
WITH e, units, decisions, restored, size(units) AS n_units, size(decisions) AS n_decisions
FOREACH (n IN units | DETACH DELETE n)
FOREACH (n IN decisions | DETACH DELETE n)
DETACH DELETE e
RETURN n_units AS units, n_decisions AS decisions, restored
