// mode: fragment
// params: names, variants
// What the lists read (graphmem.domain.models.SearchRequest.asked): of the names the question writes
// ($names: {norm, ids: the entity's id in each scope}), those that speak in a text of the
// scopes (a MENTIONS link of kind speaker among 1,000 of the entity's links: the read is
// bounded, so a name a scope writes thousands of times may miss its rare speaker links; a
// speaker's own lines are most of its links), and the entry of $variants
// for them: {vector, lucene} of the question without those names (key: their norms, sorted,
// joined by a newline), or of the whole question (key '').
CALL () {
  UNWIND $names AS name
  UNWIND name.ids AS id
  MATCH (x:Entity {id: id})
  WITH name.norm AS norm, x
  WHERE 'speaker' IN COLLECT { MATCH (x)<-[r:MENTIONS]-() RETURN r.kind AS kind LIMIT 1000 }
  WITH DISTINCT norm ORDER BY norm
  WITH collect(norm) AS speaking
  RETURN $variants[reduce(key = '', n IN speaking | key + CASE WHEN key = '' THEN '' ELSE '\n' END + n)] AS asked
}
