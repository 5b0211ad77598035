// mode: read
// params: id
// One API key by id.
MATCH (k:Key {id: $id})
RETURN k {.*} AS key
