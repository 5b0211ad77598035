// mode: write
// params: rows
// Units join their timeline groups: the group, the assertion each shows and its episode's time;
// rows of {id, group, assertion_id, occurred_at}.
UNWIND $rows AS row
MATCH (u:Unit {id: row.id})
SET u.group = row.group, u.assertion_id = row.assertion_id, u.occurred_at = datetime(row.occurred_at)
