// mode: write
// params: guards, scope_props
// Lock the guard keys (in the given, sorted order, so writers never deadlock) and bump each
// version; returns how many had a version other than the one the caller read (guards: key,
// version).
UNWIND $guards AS guard
MERGE (l:Lock {key: guard.key}) ON CREATE SET l += $scope_props, l.version = 0
SET l.version = l.version + 1
RETURN sum(CASE WHEN l.version - 1 = guard.version THEN 0 ELSE 1 END) AS stale
