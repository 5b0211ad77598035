// mode: read
// params: name
// The dimension of an existing vector index (none when it does not exist), and whether it has
// filter properties besides its vector property.
SHOW INDEXES YIELD name, type, options, properties WHERE name = $name AND type = 'VECTOR'
RETURN options.indexConfig['vector.dimensions'] AS dimension, size(properties) > 1 AS filters
