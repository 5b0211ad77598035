// mode: write
// params: before
// Delete the jobs created before $before (an index seek on created_at); how many.
MATCH (j:Job) WHERE j.created_at < $before
DELETE j
RETURN count(j) AS dropped
