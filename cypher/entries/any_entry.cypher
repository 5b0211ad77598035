// mode: read
// Whether the database holds any search entry (a bulk load into one with none builds its
// vector index after the data: Neo4jIndex.loading); read on the entry_unit index.
OPTIONAL MATCH (e:Entry) WHERE e.unit_id IS NOT NULL
WITH e LIMIT 1
RETURN e IS NOT NULL AS any
