// mode: write
// params: subject_type, subject_id, project_id, batch
// One bounded batch of an erasure: up to $batch nodes of each kind that belong to the subject
// (one project, or all when $project_id is null), deleted with their edges. Every label has a
// (subject_type, subject_id) index, so each branch is an index seek. Run until all counts are 0.
CALL {
  MATCH (n:Unit) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch
  // by its key, whose lock a usage write takes before it reads the unit (store/note_usage)
  OPTIONAL MATCH (x:Usage {unit_id: n.id})
  DETACH DELETE x, n RETURN count(*) AS units, count(x) AS units_usage
}
CALL {
  MATCH (n:Episode) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS episodes
}
CALL {
  MATCH (n:Entity) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS entities
}
CALL {
  MATCH (n:Decision) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS decisions
}
CALL {
  MATCH (n:Trace) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS traces
}
CALL {
  MATCH (n:Block) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS blocks
}
CALL {
  MATCH (n:Review) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS reviews
}
CALL {
  MATCH (n:Lock) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS locks
}
CALL {
  MATCH (n:Commit) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS commits
}
CALL {
  MATCH (n:Usage) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS usage
}
CALL {
  MATCH (n:Deletion) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS deletions
}
CALL {
  MATCH (n:Entry) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS entries
}
CALL {
  MATCH (n:Job) WHERE n.subject_type = $subject_type AND n.subject_id = $subject_id
    AND ($project_id IS NULL OR n.project_id = $project_id)
  WITH n LIMIT $batch DELETE n RETURN count(*) AS jobs
}
RETURN units, episodes, entities, decisions, traces, blocks, reviews, locks, commits, usage + units_usage AS usage,
       deletions, entries, jobs
