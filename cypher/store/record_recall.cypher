// mode: write
// params: rows, scope_props
// Recall statistics, kept on a Usage node beside each unit (never on the unit): one batched
// write per flush of recalls, not one per read. Rows of units no longer stored are skipped.
UNWIND $rows AS row
MATCH (u:Unit {id: row.id}) WHERE u.scope = $scope_props.scope
MERGE (s:Usage {unit_id: row.id})
ON CREATE SET s += $scope_props, s.recall_count = 0
SET s.recall_count = s.recall_count + row.n,
    s.last_recalled_at = CASE WHEN s.last_recalled_at IS NULL OR s.last_recalled_at < row.at
                              THEN row.at ELSE s.last_recalled_at END
RETURN count(u) AS updated
