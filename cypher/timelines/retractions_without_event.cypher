// mode: read
// params: after, limit
// A page of DELETE decisions (by id) written before timelines, each with the timeline event of
// the assertion whose unit it ended.
MATCH (d:Decision {op: 'DELETE'})-[:TARGET]->(u:Unit)
WHERE d.ev_kind IS NULL AND u.assertion_id IS NOT NULL AND d.id > $after
WITH d, u ORDER BY d.id LIMIT $limit
MATCH (a:Decision {id: u.assertion_id})
RETURN d {.id, .decided_at} AS decision, a.ev_group AS group, a.ev_single AS single, a.ev_value AS value
