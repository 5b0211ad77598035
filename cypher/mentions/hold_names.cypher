// mode: write
// params: key, scope_props
// Hold the scope's names lock until the transaction ends (a write takes the node's lock; the
// guards' keys, all before this one in the order locks are taken, never wait on it), and
// return its version and last digest as this writer now sees them.
MERGE (l:Lock {key: $key}) ON CREATE SET l += $scope_props, l.version = 0
SET l.held = coalesce(l.held, 0) + 1
RETURN l.version AS version, l.last AS last
