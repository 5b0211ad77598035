// mode: read
// params: scope, limit
// Undecided episodes (of one scope, or of all when scope is null), by the write that stored
// them (one stored_at per write), in the order they were stored and given. An episode marked
// by migration 0020 has no place: episode time, then id, orders it.
MATCH (e:Undecided) WHERE e.scope IS NOT NULL AND ($scope IS NULL OR e.scope = $scope)
WITH e ORDER BY e.stored_at, e.place, e.occurred_at, e.id
WITH e.scope AS scope, e.stored_at AS stored_at,
     collect(e {.id, .occurred_at, .raw, .channel, .facts, .subject_type, .subject_id, .project_id}) AS episodes
RETURN episodes ORDER BY stored_at, scope LIMIT $limit
