// mode: read
// The embedding model and dimension the derived index was built with.
MATCH (s:Setting {key: 'embedding'}) RETURN s.model AS model, s.dimension AS dimension
