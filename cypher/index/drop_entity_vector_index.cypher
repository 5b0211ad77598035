// mode: schema
// Dropped only by a rebuild that changes the embedding dimension.
DROP INDEX entity_embedding IF EXISTS
