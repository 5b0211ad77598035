// mode: write
// params: rows
// The words of each entity's name, so a question names an entity when it holds every word.
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.words = row.words
REMOVE e:SearchEntity, e.embedding
