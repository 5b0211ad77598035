// mode: write
// params: rows, scope
// Create decisions and link them to their episode or deletion record (DECIDED), the unit they
// targeted (TARGET) and the unit they produced (PRODUCED). Returns how many unit links missed
// (missing) and how many of the episodes they name the scope no longer holds (gone).
// Times arrive as ISO 8601 text.
UNWIND $rows AS row
CREATE (d:Decision)
SET d = row.props, d.decided_at = datetime(row.props.decided_at), d.ev_order_at = datetime(row.props.ev_order_at),
    d.ev_valid_at = datetime(row.props.ev_valid_at), d.ev_end = datetime(row.props.ev_end),
    d.ev_occurred_at = datetime(row.props.ev_occurred_at), d.invalid_at = datetime(row.props.invalid_at)
WITH d, row
OPTIONAL MATCH (ep:Episode {scope: $scope, id: row.episode_id})
OPTIONAL MATCH (del:Deletion {id: row.deletion_id}) WHERE del.scope = $scope
OPTIONAL MATCH (t:Unit {id: row.target_id}) WHERE t.scope = $scope
OPTIONAL MATCH (p:Unit {id: row.produced_id}) WHERE p.scope = $scope
FOREACH (_ IN CASE WHEN ep IS NULL THEN [] ELSE [1] END | CREATE (ep)-[:DECIDED]->(d))
FOREACH (_ IN CASE WHEN del IS NULL THEN [] ELSE [1] END | CREATE (del)-[:DECIDED]->(d))
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | CREATE (d)-[:TARGET]->(t))
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END | CREATE (d)-[:PRODUCED]->(p))
RETURN sum(CASE WHEN (row.target_id IS NULL OR t IS NOT NULL) AND (row.produced_id IS NULL OR p IS NOT NULL) THEN 0 ELSE 1 END) AS missing,
       count(DISTINCT CASE WHEN row.episode_id IS NOT NULL AND ep IS NULL THEN row.episode_id END) AS gone
