// mode: write
// params: key, scope_props, made, last
// Hold the scope's names lock until the transaction ends (the first SET takes the node's lock;
// the guards' keys, all before this one in the order locks are taken, never wait on it), then
// read its version and last digest as they stand under the lock (read before it, they could be
// stale) and, when the commit makes names known ($made), count it with the digest of its names
// ($last). All in one statement: writing the node again in a later one deadlocks with other
// writers of the node (its relationship-group lock is taken again after the node lock).
MERGE (l:Lock {key: $key}) ON CREATE SET l += $scope_props, l.version = 0
SET l.held = coalesce(l.held, 0) + 1
WITH l, l.version AS version, l.last AS last
SET l.version = version + CASE WHEN $made THEN 1 ELSE 0 END,
    l.last = CASE WHEN $made THEN $last ELSE last END
RETURN version, last
