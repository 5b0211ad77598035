// mode: schema
// What no query reads goes (issue 43, store size): the search entries' `occurred` time and its
// index (the time list filters inside the vector index: recall/entry_near), and the units'
// scope token (the fulltext indexes read it on entries, entities and episodes, never on units).
DROP INDEX entry_occurred IF EXISTS;
MATCH (e:Entry) WHERE e.occurred IS NOT NULL
CALL (e) { REMOVE e.occurred } IN TRANSACTIONS OF 10000 ROWS;
MATCH (u:Unit) WHERE u.scope_token IS NOT NULL
CALL (u) { REMOVE u.scope_token } IN TRANSACTIONS OF 10000 ROWS;
