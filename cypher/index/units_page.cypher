// mode: read
// params: scope, after, limit
// Units to (re)derive entries for, in id order, one page after `after`, each with all its
// invalidation edges, whether it is archived, and (from the layout before search entries) the
// vector it carried.
MATCH (u:Unit)
WHERE ($scope IS NULL OR u.scope = $scope) AND u.id > $after
WITH u ORDER BY u.id LIMIT $limit
OPTIONAL MATCH (s:Usage {unit_id: u.id})
RETURN u.id AS id, u.content AS content, u.summary AS summary, u.kind AS kind, u.scope AS scope,
       u.subject_type AS subject_type, u.subject_id AS subject_id, u.project_id AS project_id,
       u.created_at AS created_at, u.valid_at AS valid_at, u.invalid_at AS invalid_at,
       s.archived_at IS NOT NULL AS archived, u.embedding AS legacy_vector,
       [(d:Decision)-[e:INVALIDATES]->(u) | [e.expired_at, e.invalid_at]] AS edges
