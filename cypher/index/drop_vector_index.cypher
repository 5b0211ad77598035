// mode: schema
// values: index:name
// The vector index of a generation no longer live (after a rebuild switched models).
DROP INDEX {{index}} IF EXISTS
