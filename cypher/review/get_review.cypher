// mode: read
// params: id
// One review item.
MATCH (r:Review {id: $id}) RETURN r {.*} AS review
