// mode: read
// params: id
// One job of a late write by id.
MATCH (j:Job {id: $id})
RETURN j {.*} AS job
