// mode: read
// params: subject_type, subject_id, scope
// What of one stored scope holds keys derived from it in Python: timeline groups (decisions
// and units), slots, entity ids, episode fingerprints, candidates' own scope, lock keys, and
// block labels (which must stay unique when two spellings of a subject become one).
CALL {
  MATCH (d:Decision) WHERE d.subject_type = $subject_type AND d.subject_id = $subject_id AND d.scope = $scope
    AND d.ev_group IS NOT NULL
  RETURN collect(d {.id, .ev_group, .ev_single, .ev_candidate}) AS decisions
}
CALL {
  MATCH (u:Unit) WHERE u.subject_type = $subject_type AND u.subject_id = $subject_id AND u.scope = $scope
  RETURN collect(u {.id, .subject, .predicate, .group}) AS units
}
CALL {
  MATCH (e:Entity) WHERE e.subject_type = $subject_type AND e.subject_id = $subject_id AND e.scope = $scope
  RETURN collect(e {.id, .name}) AS entities
}
CALL {
  MATCH (e:Episode) WHERE e.subject_type = $subject_type AND e.subject_id = $subject_id AND e.scope = $scope
  RETURN collect(e {.id, .occurred_at, .raw, .channel, .facts}) AS episodes
}
CALL {
  MATCH (r:Review) WHERE r.subject_type = $subject_type AND r.subject_id = $subject_id AND r.scope = $scope
  RETURN collect(r {.id, .candidate}) AS reviews
}
CALL {
  MATCH (l:Lock) WHERE l.subject_type = $subject_type AND l.subject_id = $subject_id AND l.scope = $scope
  RETURN collect(l.key) AS locks
}
CALL {
  MATCH (b:Block) WHERE b.subject_type = $subject_type AND b.subject_id = $subject_id AND b.scope = $scope
  RETURN collect(b {.id, .label}) AS blocks
}
RETURN decisions, units, entities, episodes, reviews, locks, blocks
