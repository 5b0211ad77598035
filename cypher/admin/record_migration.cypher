// mode: write
// params: id, name, applied_at
// Record that a migration ran (idempotent).
MERGE (m:Migration {id: $id}) ON CREATE SET m.name = $name, m.applied_at = $applied_at
