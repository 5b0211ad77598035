// mode: read
// params: scope, groups
// Every event decision and every unit of the given timeline groups, each unit with all its
// invalidation edges (any system time): what the write pipeline needs to extend a timeline.
CALL {
  UNWIND $groups AS g
  MATCH (d:Decision {ev_group: g}) WHERE d.scope = $scope
  RETURN collect(d {.*}) AS events
}
CALL {
  UNWIND $groups AS g
  MATCH (u:Unit {group: g}) WHERE u.scope = $scope
  OPTIONAL MATCH (s:Usage {unit_id: u.id})
  RETURN collect({unit: u {.id, .kind, .content, .summary, .content_hash, .episode_id, .channel, .extractor_version,
          .assertion_id, .occurred_at, .group, .created_at, .valid_at, .invalid_at, .confidence, .labels, .subject,
          .predicate, .object, .single_valued, .subject_type, .subject_id, .project_id,
          last_recalled_at: s.last_recalled_at, recall_count: s.recall_count},
                  archived: s.archived_at IS NOT NULL,
                  edges: [(d:Decision)-[e:INVALIDATES]->(u) | {expired_at: e.expired_at,
                          invalid_at: e.invalid_at, decision_id: d.id, episode_id: d.episode_id}]}) AS units
}
RETURN events, units
