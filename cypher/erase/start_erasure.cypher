// mode: write
// params: subject_type, subject_hash, project_hash, at, id, actor
// The erasure record: which kind of subject (its id only as a hash), when, how much, and who
// asked for it. It holds no personal content. An unfinished record for the same subject is
// resumed, not duplicated.
MERGE (r:Erasure {subject_hash: $subject_hash, project_hash: $project_hash, status: 'running'})
ON CREATE SET r.id = $id, r.subject_type = $subject_type, r.started_at = $at, r.actor = $actor
RETURN r.id AS id, properties(r) AS record
