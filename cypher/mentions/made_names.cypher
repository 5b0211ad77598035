// mode: write
// params: key, last
// Count a commit that makes names known, under the names lock this transaction holds
// (mentions/hold_names), with the digest of its names.
MATCH (l:Lock {key: $key})
SET l.version = l.version + 1, l.last = $last
RETURN l.version AS version
