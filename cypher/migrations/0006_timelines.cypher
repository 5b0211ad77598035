// mode: schema
// Timelines: event decisions by group, units by group and by the assertion they show, usage
// (recall statistics and archive state) beside units instead of on them, deletion records.
CREATE INDEX decision_group IF NOT EXISTS FOR (n:Decision) ON (n.ev_group);
CREATE INDEX unit_group IF NOT EXISTS FOR (n:Unit) ON (n.group);
CREATE CONSTRAINT usage_unit IF NOT EXISTS FOR (n:Usage) REQUIRE n.unit_id IS UNIQUE;
CREATE INDEX usage_scope IF NOT EXISTS FOR (n:Usage) ON (n.scope, n.archived_at);
CREATE INDEX usage_subject IF NOT EXISTS FOR (n:Usage) ON (n.subject_type, n.subject_id);
DROP INDEX unit_recalled IF EXISTS;
DROP INDEX unit_archived IF EXISTS;
CREATE CONSTRAINT deletion_id IF NOT EXISTS FOR (n:Deletion) REQUIRE n.id IS UNIQUE;
CREATE INDEX deletion_subject IF NOT EXISTS FOR (n:Deletion) ON (n.subject_type, n.subject_id);
MATCH (u:Unit) WHERE u.recall_count IS NOT NULL OR u.last_recalled_at IS NOT NULL OR u.archived_at IS NOT NULL
CALL (u) {
  MERGE (s:Usage {unit_id: u.id})
  ON CREATE SET s.scope = u.scope, s.subject_type = u.subject_type, s.subject_id = u.subject_id,
                s.project_id = u.project_id
  SET s.recall_count = coalesce(u.recall_count, 0), s.last_recalled_at = u.last_recalled_at,
      s.archived_at = u.archived_at
  REMOVE u.recall_count, u.last_recalled_at, u.archived_at
} IN TRANSACTIONS OF 5000 ROWS;
