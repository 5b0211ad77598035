// mode: write
// params: model, dimension, at
// Record the embedding model and dimension of the derived index.
MERGE (s:Setting {key: 'embedding'}) SET s.model = $model, s.dimension = $dimension, s.updated_at = $at
