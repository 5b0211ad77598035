// mode: schema
// Erasure records, the human review queue, and the archive sweep.
CREATE CONSTRAINT erasure_id IF NOT EXISTS FOR (n:Erasure) REQUIRE n.id IS UNIQUE;
CREATE INDEX erasure_subject IF NOT EXISTS FOR (n:Erasure) ON (n.subject_hash, n.status);
CREATE INDEX review_status IF NOT EXISTS FOR (n:Review) ON (n.scope, n.status);
CREATE INDEX unit_archived IF NOT EXISTS FOR (n:Unit) ON (n.archived_at);
