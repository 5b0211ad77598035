// mode: schema
// values: index:name, prop:name, dimensions:int
// The HNSW vector index of one embedding generation over searchable entries (Neo4j 5.26:
// no filter properties; search filters after the index). Unquantized: scores are exact.
CREATE VECTOR INDEX {{index}} IF NOT EXISTS FOR (n:SearchEntry) ON (n.{{prop}})
OPTIONS {indexConfig: {`vector.dimensions`: {{dimensions}}, `vector.similarity_function`: 'cosine',
                      `vector.quantization.enabled`: false}}
