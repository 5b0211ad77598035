// mode: read
// params: key
// The scope's names version (commits that made names known in it) and the digest of the last
// one's names, from its names lock (none yet: version 0).
OPTIONAL MATCH (l:Lock {key: $key})
RETURN coalesce(l.version, 0) AS version, l.last AS last
