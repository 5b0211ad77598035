// mode: read
// values: label:name
// Every subject (type, id, project) the nodes of one label are stored under.
MATCH (n:{{label}}) WHERE n.subject_type IS NOT NULL
RETURN DISTINCT n.subject_type AS subject_type, n.subject_id AS subject_id, n.project_id AS project_id
