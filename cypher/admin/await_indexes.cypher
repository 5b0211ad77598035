// mode: schema
// values: seconds:int
// Block until every index is online (new indexes populate in the background), at most so long.
CALL db.awaitIndexes({{seconds}})
