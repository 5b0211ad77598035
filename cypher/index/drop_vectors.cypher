// mode: write
// params: prop, limit
// A batch of entries still carrying a retired generation's vector property: removed.
MATCH (e:Entry) WHERE e[$prop] IS NOT NULL
WITH e LIMIT $limit
REMOVE e[$prop]
RETURN count(*) AS removed
