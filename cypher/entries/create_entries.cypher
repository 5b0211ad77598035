// mode: write
// params: rows, prop
// Search entries (graphmem.domain.entries), each with its unit's vector in the live property when
// given. A searchable entry carries the SearchEntry label; an archived unit's entries do not.
UNWIND $rows AS row
CREATE (e:Entry)
SET e = row.props
FOREACH (_ IN CASE WHEN row.archived THEN [] ELSE [1] END | SET e:SearchEntry)
WITH e, row WHERE row.vector IS NOT NULL
CALL db.create.setNodeVectorProperty(e, $prop, row.vector)
RETURN count(*) AS vectors
