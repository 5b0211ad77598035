// mode: read
// Whether the database holds any search entry (a bulk load into one with none builds its
// vector index after the data: Neo4jIndex.loading).
OPTIONAL MATCH (e:Entry)
WITH e LIMIT 1
RETURN e IS NOT NULL AS any
