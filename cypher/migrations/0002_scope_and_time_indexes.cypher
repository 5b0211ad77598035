// mode: schema
// Range indexes for the scoped read paths: scope scans, dedupe by hash, single-valued slots,
// erasure by subject, and the archive sweep by time.
CREATE INDEX unit_scope IF NOT EXISTS FOR (n:Unit) ON (n.scope, n.created_at);
CREATE INDEX unit_hash IF NOT EXISTS FOR (n:Unit) ON (n.content_hash);
CREATE INDEX unit_slot IF NOT EXISTS FOR (n:Unit) ON (n.slot);
CREATE INDEX unit_subject IF NOT EXISTS FOR (n:Unit) ON (n.subject_type, n.subject_id);
CREATE INDEX unit_recalled IF NOT EXISTS FOR (n:Unit) ON (n.last_recalled_at);
CREATE INDEX episode_scope IF NOT EXISTS FOR (n:Episode) ON (n.scope, n.occurred_at);
CREATE INDEX episode_subject IF NOT EXISTS FOR (n:Episode) ON (n.subject_type, n.subject_id);
CREATE INDEX entity_scope IF NOT EXISTS FOR (n:Entity) ON (n.scope, n.norm);
CREATE INDEX entity_subject IF NOT EXISTS FOR (n:Entity) ON (n.subject_type, n.subject_id);
CREATE INDEX decision_scope IF NOT EXISTS FOR (n:Decision) ON (n.scope, n.decided_at);
CREATE INDEX decision_subject IF NOT EXISTS FOR (n:Decision) ON (n.subject_type, n.subject_id);
CREATE INDEX block_subject IF NOT EXISTS FOR (n:Block) ON (n.subject_type, n.subject_id);
CREATE INDEX trace_subject IF NOT EXISTS FOR (n:Trace) ON (n.subject_type, n.subject_id);
CREATE INDEX review_subject IF NOT EXISTS FOR (n:Review) ON (n.subject_type, n.subject_id);
CREATE INDEX lock_subject IF NOT EXISTS FOR (n:Lock) ON (n.subject_type, n.subject_id);
CREATE INDEX commit_subject IF NOT EXISTS FOR (n:Commit) ON (n.subject_type, n.subject_id);
