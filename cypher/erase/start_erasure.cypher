// mode: write
// params: subject_type, subject_key, project_key, at, id, actor
// The erasure record: which kind of subject, keyed by HMACs (graphmem.domain.models.erasure_key),
// when, how much, and who asked for it. It holds no personal content. An unfinished record
// for the same subject is resumed, not duplicated.
MERGE (r:Erasure {subject_hash: $subject_key, project_hash: $project_key, status: 'running'})
ON CREATE SET r.id = $id, r.subject_type = $subject_type, r.started_at = $at, r.actor = $actor,
              r.key = 'hmac-sha256'
RETURN properties(r) AS record
