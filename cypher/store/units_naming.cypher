// mode: read
// params: scope, entity_id
// Every unit about one entity (any system time), with all its invalidation edges: history.
MATCH (:Entity {id: $entity_id})<-[:ABOUT]-(u:Unit) WHERE u.scope = $scope
WITH DISTINCT u
OPTIONAL MATCH (s:Usage {unit_id: u.id})
RETURN u {.id, .kind, .content, .summary, .content_hash, .episode_id, .channel, .extractor_version,
          .assertion_id, .occurred_at, .group, .created_at, .valid_at, .invalid_at, .confidence, .labels, .subject,
          .predicate, .object, .single_valued, .subject_type, .subject_id, .project_id,
          last_recalled_at: s.last_recalled_at, recall_count: s.recall_count} AS unit,
       s.archived_at IS NOT NULL AS archived,
       [(d:Decision)-[e:INVALIDATES]->(u) | {expired_at: e.expired_at, invalid_at: e.invalid_at,
        decision_id: d.id, episode_id: d.episode_id}] AS edges
