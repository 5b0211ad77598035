// mode: read
// State of graphmem's search indexes: the entry vector indexes of every generation, and the
// fulltext indexes of entries and entity names.
SHOW INDEXES YIELD name, type, state, populationPercent
WHERE name STARTS WITH 'entry_embedding_' OR name IN ['entry_text', 'entity_names']
RETURN name, type, state, populationPercent ORDER BY name
