// mode: read
// Counts behind `graphmem index status`.
CALL { MATCH (u:Unit) RETURN count(u) AS units }
CALL { MATCH (u:SearchUnit) RETURN count(u) AS searchable_units }
CALL { MATCH (e:Entity) RETURN count(e) AS entities }
CALL { MATCH (e:SearchEntity) RETURN count(e) AS searchable_entities }
RETURN units, searchable_units, entities, searchable_entities
