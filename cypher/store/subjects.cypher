// mode: read
// Every scope holding episodes, units or decisions, with how many of each.
CALL {
  MATCH (n:Episode)
  RETURN n.subject_type AS subject_type, n.subject_id AS subject_id, n.project_id AS project_id,
         count(n) AS episodes, 0 AS units, 0 AS decisions
  UNION ALL
  MATCH (n:Unit)
  RETURN n.subject_type AS subject_type, n.subject_id AS subject_id, n.project_id AS project_id,
         0 AS episodes, count(n) AS units, 0 AS decisions
  UNION ALL
  MATCH (n:Decision)
  RETURN n.subject_type AS subject_type, n.subject_id AS subject_id, n.project_id AS project_id,
         0 AS episodes, 0 AS units, count(n) AS decisions
}
RETURN subject_type, subject_id, project_id, sum(episodes) AS episodes, sum(units) AS units,
       sum(decisions) AS decisions
ORDER BY subject_type, subject_id, project_id
