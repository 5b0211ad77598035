// mode: write
// params: props
// The content-free record of an episode deletion (ids, counts, when).
CREATE (d:Deletion)
SET d = $props
