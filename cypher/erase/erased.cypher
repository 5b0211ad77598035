// mode: read
// params: subject_key, project_keys
// Whether an erasure of the subject was ever started: of all its projects (project key ""),
// or of one of $project_keys.
MATCH (r:Erasure) WHERE r.subject_hash = $subject_key AND r.project_hash IN $project_keys
RETURN count(r) > 0 AS erased
