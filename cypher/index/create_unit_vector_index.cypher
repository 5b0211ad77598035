// mode: schema
// values: dimensions:int
// Native HNSW vector index over searchable unit embeddings (cosine).
CREATE VECTOR INDEX unit_embedding IF NOT EXISTS FOR (n:SearchUnit) ON (n.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: {{dimensions}}, `vector.similarity_function`: 'cosine'}}
