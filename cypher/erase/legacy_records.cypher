// mode: read
// Erasure records keyed by a plain SHA-256 of the subject (written before records had keys).
MATCH (r:Erasure) WHERE r.key IS NULL
RETURN r.id AS id, r.subject_hash AS subject_hash, r.project_hash AS project_hash
