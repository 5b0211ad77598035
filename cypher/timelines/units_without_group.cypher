// mode: read
// params: after, limit
// A page of units (by id) that belong to no timeline group, as written before timelines, each
// with the decision that produced it and the episode it came from.
MATCH (u:Unit) WHERE u.group IS NULL AND u.id > $after
WITH u ORDER BY u.id LIMIT $limit
RETURN u {.id, .kind, .content, .valid_at, .invalid_at, .labels, .confidence, .subject, .predicate, .object,
          .single_valued, .subject_type, .subject_id, .project_id, .extractor_version, .channel} AS unit,
       head([(d:Decision)-[:PRODUCED]->(u) WHERE d.ev_kind IS NULL | d {.id, .decided_at}]) AS decision,
       head([(ep:Episode)-[:DERIVED]->(u) | ep {.occurred_at, .facts}]) AS episode
