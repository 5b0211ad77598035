// mode: schema
// values: index:name, prop:name, dimensions:int
// The HNSW vector index of one embedding generation over searchable entries, with scope, kind
// and both time intervals declared as filter properties: search filters inside the index
// (Cypher 25 SEARCH, Neo4j 2026.01+). Unquantized: scores are exact cosines, so equal vectors
// rank equal in every segment of the index.
CYPHER 25 CREATE VECTOR INDEX {{index}} IF NOT EXISTS FOR (n:SearchEntry) ON n.{{prop}}
WITH [n.scope, n.kind, n.s_from, n.s_to, n.t_from, n.t_to]
OPTIONS {indexConfig: {`vector.dimensions`: {{dimensions}}, `vector.similarity_function`: 'cosine',
                      `vector.quantization.enabled`: false}}
