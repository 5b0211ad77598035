// mode: write
// params: rows
// Units join their timeline groups: the group, the assertion each shows and its episode's time,
// also on its search entries when known; rows of {id, group, assertion_id, occurred_at, occurred}.
UNWIND $rows AS row
MATCH (u:Unit {id: row.id})
SET u.group = row.group, u.assertion_id = row.assertion_id, u.occurred_at = datetime(row.occurred_at)
WITH u, row WHERE row.occurred IS NOT NULL
MATCH (e:Entry {unit_id: u.id})
SET e.occurred = row.occurred
