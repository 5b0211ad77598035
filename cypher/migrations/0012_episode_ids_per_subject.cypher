// mode: schema
// Episode ids belong to their subject: another subject may use the same id. The constraint on
// (scope, id) comes first (ids were unique until now, so it holds), and its index serves every
// lookup of an episode by id; then the database-wide one goes.
CREATE CONSTRAINT episode_scope_id IF NOT EXISTS FOR (n:Episode) REQUIRE (n.scope, n.id) IS UNIQUE;
DROP CONSTRAINT episode_id IF EXISTS;
