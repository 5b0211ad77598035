// mode: write
// params: rows, stored_at, undecided
// Append episodes, each under its (scope, id): an existing one is left untouched and its
// fingerprint returned to compare. Rows come back in order (position: the row's index). A new
// one is Undecided, with its place in this write, when the write decides it later (its commit
// removes both: store/decided_episodes). Times arrive as ISO 8601 text.
UNWIND range(0, size($rows) - 1) AS position
WITH position, $rows[position] AS row, datetime($stored_at) AS stored_at
MERGE (e:Episode {scope: row.props.scope, id: row.id})
ON CREATE SET e += row.props, e.occurred_at = datetime(row.occurred_at), e.stored_at = stored_at
WITH position, e, e.stored_at = stored_at AS created
FOREACH (_ IN CASE WHEN created AND $undecided THEN [1] ELSE [] END | SET e:Undecided, e.place = position)
RETURN position, e.fingerprint AS fingerprint, created
