// mode: write
// params: rows
// Give optimistic lock keys their timeline group under the normal scope (rows of {old, new});
// where the key exists already, one lock remains with a version neither writer has read, so
// a write planned before the migration plans again.
UNWIND $rows AS row
MATCH (l:Lock {key: row.old})
OPTIONAL MATCH (keep:Lock {key: row.new})
FOREACH (_ IN CASE WHEN keep IS NULL THEN [1] ELSE [] END | SET l.key = row.new)
FOREACH (_ IN CASE WHEN keep IS NULL THEN [] ELSE [1] END | SET keep.version = keep.version + l.version + 1 DELETE l)
