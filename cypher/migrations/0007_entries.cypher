// mode: schema
// Search entries (graphmem.entries): derived nodes carrying what search filters on, so units
// hold nothing mutable. Fulltext over searchable entries and over entity names; the vector
// index of each embedding generation is created by the index for its model's dimension. The
// unit-level search indexes of the previous layout go (the index rebuilds entries from units).
CREATE INDEX entry_unit IF NOT EXISTS FOR (n:Entry) ON (n.unit_id);
CREATE INDEX entry_subject IF NOT EXISTS FOR (n:Entry) ON (n.subject_type, n.subject_id);
CREATE INDEX entry_scope IF NOT EXISTS FOR (n:SearchEntry) ON (n.scope, n.t_from);
CREATE FULLTEXT INDEX entry_text IF NOT EXISTS FOR (n:SearchEntry) ON EACH [n.text, n.scope_token] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE FULLTEXT INDEX entity_names IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.scope_token] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
DROP INDEX unit_text IF EXISTS;
DROP INDEX entity_text IF EXISTS;
DROP INDEX unit_embedding IF EXISTS;
DROP INDEX entity_embedding IF EXISTS;
DROP INDEX search_unit_scope IF EXISTS;
