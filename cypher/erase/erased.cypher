// mode: read
// params: subject_hash, project_hashes
// Whether an erasure record, running or done, covers a subject (of every project, or of one).
MATCH (r:Erasure) WHERE r.subject_hash = $subject_hash AND r.project_hash IN $project_hashes
RETURN count(r) > 0 AS erased
