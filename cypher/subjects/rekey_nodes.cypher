// mode: write
// params: subject_type, subject_id, old_scope, scope, new_id, new_project, token
// values: label:name
// Move the nodes of one label from a stored spelling of a subject to its normal one: scope
// key, subject and project ids, and the scope's Lucene token where the node carries one.
MATCH (n:{{label}}) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id AND n.scope = $old_scope
SET n.scope = $scope, n.subject_id = $new_id, n.project_id = $new_project,
    n.scope_token = CASE WHEN n.scope_token IS NULL THEN null ELSE $token END
RETURN count(n) AS moved
