// mode: write
// params: id, name, applied_at, notes
// Record that a migration ran (idempotent), with what it told the operator, if anything.
MERGE (m:Migration {id: $id})
ON CREATE SET m.name = $name, m.applied_at = $applied_at, m.notes = CASE WHEN size($notes) = 0 THEN null ELSE $notes END
