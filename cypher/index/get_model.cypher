// mode: read
// The embedding model, dimension and generation the live search entries were built with, and
// the model a rebuild is building aside (null when none).
MATCH (s:Setting {key: 'embedding'})
RETURN s.model AS model, s.dimension AS dimension, coalesce(s.generation, 0) AS generation,
       s.next_model AS next_model, s.next_dimension AS next_dimension
