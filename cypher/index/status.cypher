// mode: read
// params: open
// Counts behind `graphmem index status`: units, the open entries that make units searchable
// now, all entries, entities.
CALL () { MATCH (u:Unit) RETURN count(u) AS units }
CALL () { MATCH (e:SearchEntry) WHERE e.s_to = $open RETURN count(e) AS searchable_units }
CALL () { MATCH (e:Entry) RETURN count(e) AS entries }
CALL () { MATCH (e:Entity) RETURN count(e) AS entities }
RETURN units, searchable_units, entries, entities
