// mode: schema
// values: dimensions:int
// Native HNSW vector index over searchable entity name embeddings (cosine).
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:SearchEntity) ON (n.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: {{dimensions}}, `vector.similarity_function`: 'cosine'}}
