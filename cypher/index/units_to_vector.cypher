// mode: read
// params: prop, after, limit
// Units whose entries lack a vector in the given property (a rebuild building aside resumes
// where it stopped), in id order after `after`.
MATCH (u:Unit) WHERE u.id > $after
  AND EXISTS { MATCH (e:Entry {unit_id: u.id}) WHERE e[$prop] IS NULL }
RETURN u.id AS id, u.content AS content, u.subject_type AS subject_type, u.subject_id AS subject_id,
       u.channel AS channel
ORDER BY id LIMIT $limit
