// mode: read
// params: ids
// Of the entities with these ids (those a text's word runs would be, graphmem.domain.mentions.name_spans),
// the names the scope knows: entities a fact is about (fact: true) and entities a text names
// as a proper name or a speaker.
UNWIND $ids AS id
MATCH (node:Entity {id: id})
WITH node, EXISTS { MATCH (node)<-[:ABOUT]-() } AS fact
WHERE fact OR EXISTS { MATCH (node)<-[r:MENTIONS]-() WHERE r.kind IN ['proper', 'speaker'] }
RETURN node.name AS name, fact
