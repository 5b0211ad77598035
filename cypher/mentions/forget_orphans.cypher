// mode: write
// params: ids
// After texts are deleted, for the entities they named: links that only a fact made (a name
// found case-folded) go when no fact is about the entity any more, links that only a name
// seen elsewhere made go when no text names it so any more, and an entity nothing links to goes.
UNWIND $ids AS id
MATCH (e:Entity {id: id})
CALL (e) {
  WITH e WHERE NOT EXISTS { MATCH (e)<-[:ABOUT]-() }
  MATCH (e)<-[r:MENTIONS {kind: 'fact'}]-() DELETE r
}
CALL (e) {
  WITH e WHERE NOT EXISTS { MATCH (e)<-[r:MENTIONS]-() WHERE r.kind IN ['proper', 'speaker'] }
  MATCH (e)<-[r:MENTIONS {kind: 'known'}]-() DELETE r
}
WITH e WHERE NOT EXISTS { MATCH (e)--() }
DELETE e
RETURN count(*) AS removed
