// mode: schema
// Dropped only by a rebuild that changes the embedding dimension.
DROP INDEX unit_embedding IF EXISTS
