// mode: write
// params: ids, scope, recalled_at, increment
// Recall statistics, the one mutable part of a unit.
UNWIND $ids AS id
MATCH (u:Unit {id: id}) WHERE u.scope = $scope
SET u.recall_count = coalesce(u.recall_count, 0) + $increment,
    u.last_recalled_at = CASE WHEN u.last_recalled_at IS NULL OR u.last_recalled_at < $recalled_at
                              THEN $recalled_at ELSE u.last_recalled_at END
RETURN count(u) AS updated
