// mode: read
// Every scope that holds units (for sweeps over all subjects, such as the archive).
MATCH (u:Unit)
RETURN DISTINCT u.subject_type AS subject_type, u.subject_id AS subject_id, u.project_id AS project_id
