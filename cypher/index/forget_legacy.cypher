// mode: write
// params: ids
// Units no longer carry search state (their entries do): the vector and label of the layout
// before search entries go once their entries are written.
UNWIND $ids AS id
MATCH (u:Unit {id: id})
REMOVE u:SearchUnit, u.embedding
