// mode: write
// params: model, dimension, at
// A rebuild starts building the entries' vectors aside with another model; until it switches,
// the live generation serves search and writes wait.
MATCH (s:Setting {key: 'embedding'})
SET s.next_model = $model, s.next_dimension = $dimension, s.updated_at = $at
