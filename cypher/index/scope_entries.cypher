// mode: read
// params: scopes
// Searchable entries of some scopes, and of the whole database (from the count store): on
// Neo4j 5.26 they choose between an exact scan and an over-fetch from the vector index.
UNWIND $scopes AS sc
MATCH (e:SearchEntry) WHERE e.scope = sc AND e.t_from IS NOT NULL  // seeks the (scope, t_from) index
WITH count(e) AS in_scopes
CALL () { MATCH (n:SearchEntry) RETURN count(n) AS total }
RETURN in_scopes, total
