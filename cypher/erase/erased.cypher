// mode: read
// params: subject_key, project_keys, kinds
// Whether an erasure of the subject erased anything, or is still running: of all its projects
// (project key ""), or of one of $project_keys. An erasure of a subject that held nothing
// leaves a record, but nothing an import could bring back.
MATCH (r:Erasure) WHERE r.subject_hash = $subject_key AND r.project_hash IN $project_keys
  AND (r.status <> 'done' OR any(kind IN $kinds WHERE coalesce(r[kind], 0) > 0))
RETURN count(r) > 0 AS erased
