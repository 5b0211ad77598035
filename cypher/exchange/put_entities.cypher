// mode: write
// params: rows
// Imported entities, by id, as first named (units written after them link to them, see
// store/create_units). Times arrive as ISO 8601 text.
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
ON CREATE SET e += row.props, e.created_at = datetime(row.props.created_at)
RETURN count(e) AS written
