// mode: write
// params: rows, scope_props
// Recall statistics and archive state, kept on a Usage node beside each unit (never on the
// unit). A row: id, n (recalls to add), at (the latest of them, or null), archive (whether to
// set archived_at), archived_at (null restores). Rows of units not stored in the scope change
// nothing. The MERGE locks the Usage key before the unit is read; a deletion reads that key
// with the same lock before it deletes the unit (store/delete_episode, store/drop_units). So
// when a deletion commits first, the unit is gone here and the node just made is removed.
UNWIND $rows AS row
MERGE (s:Usage {unit_id: row.id})
WITH s, row
OPTIONAL MATCH (u:Unit {id: row.id})
WITH s, row, u IS NOT NULL AND u.scope = $scope_props.scope AS ours
CALL (s, row, ours) {
  WITH s, row WHERE ours
  SET s += $scope_props,
      s.recall_count = coalesce(s.recall_count, 0) + row.n,
      s.last_recalled_at = CASE WHEN row.at IS NULL OR s.last_recalled_at >= row.at
                                THEN s.last_recalled_at ELSE row.at END,
      s.archived_at = CASE WHEN row.archive THEN row.archived_at ELSE s.archived_at END
}
CALL (s, ours) {
  WITH s WHERE NOT ours AND (s.scope IS NULL OR s.scope = $scope_props.scope)
  DELETE s
}
RETURN count(CASE WHEN ours THEN 1 END) AS updated
