// mode: write
// params: id, props
// A stored job's ending; nothing when the job is gone (its subject erased while the write ran).
MATCH (j:Job {id: $id})
SET j = $props
RETURN j.id AS id
