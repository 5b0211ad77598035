// mode: read
// State of graphmem's search indexes.
SHOW INDEXES YIELD name, type, state, populationPercent
WHERE name IN ['unit_embedding', 'entity_embedding', 'unit_text', 'entity_text']
RETURN name, type, state, populationPercent ORDER BY name
