// mode: read
// params: unit_ids
// Entities linked to these units that are not searchable yet.
UNWIND $unit_ids AS id
MATCH (:Unit {id: id})-[:ABOUT]->(e:Entity)
WHERE NOT e:SearchEntity
RETURN DISTINCT e.id AS id, e.name AS name
