// mode: read
// Numbers of the migrations already recorded in the database.
MATCH (m:Migration) RETURN m.id AS id ORDER BY id
