// mode: read
// params: name
// The dimension of an existing vector index (none when it does not exist).
SHOW INDEXES YIELD name, type, options WHERE name = $name AND type = 'VECTOR'
RETURN options.indexConfig['vector.dimensions'] AS dimension
