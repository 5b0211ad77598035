// mode: read
// params: subject_key, project_keys
// When an erasure of the subject (project key "") or of one of $project_keys last began or
// removed a batch: null when none ever did. (Status is always set: naming it lets the
// (subject_hash, status) index find the records; every write of several batches asks.)
MATCH (r:Erasure) WHERE r.subject_hash = $subject_key AND r.status IS NOT NULL AND r.project_hash IN $project_keys
RETURN max(coalesce(r.updated_at, r.started_at)) AS at
