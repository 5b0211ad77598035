// mode: write
// params: keys, scope_props
// Lock the guard keys (in the given, sorted order, so writers never deadlock) and bump each
// version; returns the version before the bump for the caller to compare with what it read.
UNWIND $keys AS key
MERGE (l:Lock {key: key}) ON CREATE SET l += $scope_props, l.version = 0
SET l.version = l.version + 1
RETURN key, l.version - 1 AS before
