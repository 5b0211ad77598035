// mode: write
// params: rows, stored_at
// Append episodes, each under its (scope, id): an existing one is left untouched and its
// fingerprint returned to compare. Rows come back in order (position: the row's index). Times
// arrive as ISO 8601 text.
UNWIND range(0, size($rows) - 1) AS position
WITH position, $rows[position] AS row, datetime($stored_at) AS stored_at
MERGE (e:Episode {scope: row.props.scope, id: row.id})
ON CREATE SET e += row.props, e.occurred_at = datetime(row.occurred_at), e.stored_at = stored_at
RETURN position, e.fingerprint AS fingerprint, e.stored_at = stored_at AS created
