// mode: schema
// Block until every index is online (new indexes populate in the background).
CALL db.awaitIndexes(300)
