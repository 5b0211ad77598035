// mode: read
// params:
// The scopes of episodes stored without their scope token (before migration 0018).
MATCH (e:Episode) WHERE e.scope_token IS NULL
RETURN DISTINCT e.subject_type AS subject_type, e.subject_id AS subject_id, e.project_id AS project_id
