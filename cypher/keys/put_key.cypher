// mode: write
// params: props
// Store a new API key (its id is unique: a second key with the same id is a constraint error).
CREATE (k:Key)
SET k = $props
