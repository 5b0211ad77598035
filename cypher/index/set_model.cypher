// mode: write
// params: model, dimension, generation, at
// Record the live embedding model, dimension and generation of the search entries, ending any
// build aside.
MERGE (s:Setting {key: 'embedding'})
SET s.model = $model, s.dimension = $dimension, s.generation = $generation, s.updated_at = $at,
    s.next_model = null, s.next_dimension = null
