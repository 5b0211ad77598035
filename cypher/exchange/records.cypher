// mode: read
// params: scope, subject_type, subject_id, ids, own, after, limit
// values: label:name, key:name
// Nodes of one label for an export or an import: a page of the scope's, in key order after
// $after (ids null), or those with the given keys in any scope (ids given; `mine` is false for
// another scope's node and nothing of it is returned), or in the scope only ($own: keys that
// belong to their subject, as episode ids do). Each with its properties, the
// invalidation edges it hangs (a decision) and its recall scores by rank (a trace). The page
// seeks the subject index every label has: ordered by key, a planner left alone walks the
// whole key index for one small scope.
CALL {
  UNWIND CASE WHEN $own THEN [] ELSE coalesce($ids, []) END AS id
  MATCH (n:{{label}}) WHERE n.{{key}} = id RETURN n
  UNION
  UNWIND CASE WHEN $own THEN coalesce($ids, []) ELSE [] END AS id
  MATCH (n:{{label}}) WHERE n.scope = $scope AND n.{{key}} = id RETURN n
  UNION
  UNWIND CASE WHEN $ids IS NULL THEN [$scope] ELSE [] END AS s
  MATCH (n:{{label}}) USING INDEX n:{{label}}(subject_type, subject_id)
  WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id AND n.scope = s AND n.{{key}} > $after
  RETURN n
}
WITH n ORDER BY n.{{key}} LIMIT $limit
WITH n, n.scope = $scope AS mine
RETURN n.{{key}} AS key, mine,
       CASE WHEN mine THEN properties(n) END AS record,
       CASE WHEN mine THEN [(n)-[e:INVALIDATES]->(u:Unit) | {unit_id: u.id, expired_at: e.expired_at,
                                                             invalid_at: e.invalid_at, reason: e.reason}] END AS edges,
       CASE WHEN mine THEN [(n)-[r:RECALLED]->(:Unit) | [r.rank, r.score]] END AS scores
