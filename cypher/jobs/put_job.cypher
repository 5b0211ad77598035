// mode: write
// params: id, props
// Store a job of a late write, or replace the one with its id (put when it goes late and when it ends).
MERGE (j:Job {id: $id})
SET j = $props
