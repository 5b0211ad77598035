// mode: read
// params: keys
// Current version of each guard key, 0 when never written.
UNWIND $keys AS key
OPTIONAL MATCH (l:Lock {key: key})
RETURN key, coalesce(l.version, 0) AS version
