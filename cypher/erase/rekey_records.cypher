// mode: write
// params: rows
// Key erasure records by HMAC instead of a plain hash (rows of {id, subject_key, project_key}).
UNWIND $rows AS row
MATCH (r:Erasure {id: row.id}) WHERE r.key IS NULL
SET r.subject_hash = row.subject_key, r.project_hash = row.project_key, r.key = 'hmac-sha256'
