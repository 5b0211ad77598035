// mode: read
// The dimension of the existing unit vector index, if there is one (it may predate the
// recorded model, e.g. after the data was wiped by hand).
SHOW INDEXES YIELD name, options WHERE name = 'unit_embedding'
RETURN options.indexConfig['vector.dimensions'] AS dimension
