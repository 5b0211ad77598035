// mode: read
// params: queries
// Names the scope knows that share a word with some texts (one Lucene query a text, restricted
// to the scope by its token): entities a fact is about (fact: true) and entities a text names
// as a proper name or a speaker.
UNWIND $queries AS q
CALL db.index.fulltext.queryNodes('entity_names', q, {limit: 200}) YIELD node
WITH DISTINCT node
WITH node, EXISTS { MATCH (node)<-[:ABOUT]-() } AS fact
WHERE fact OR EXISTS { MATCH (node)<-[r:MENTIONS]-() WHERE r.kind IN ['proper', 'speaker'] }
RETURN node.name AS name, fact
