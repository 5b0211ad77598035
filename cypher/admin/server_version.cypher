// mode: read
// The server's version and edition.
CALL dbms.components() YIELD versions, edition RETURN versions[0] AS version, edition
