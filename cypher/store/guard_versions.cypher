// mode: read
// params: keys
// Version of each guard key written so far (a key never written has none: version 0).
UNWIND $keys AS key
MATCH (l:Lock {key: key})
RETURN key, l.version AS version
