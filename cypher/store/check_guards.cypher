// mode: read
// params: scope, guards
// How many guarded timeline groups have a log (decisions with an event) of another length than
// their writer read (guards: group, version). Run holding the scope's names lock, which every
// commit with guards takes first: no other writer changes the logs until the commit ends.
UNWIND $guards AS guard
OPTIONAL MATCH (d:Decision {ev_group: guard.group}) WHERE d.scope = $scope
WITH guard, count(d) AS version
RETURN sum(CASE WHEN version = guard.version THEN 0 ELSE 1 END) AS stale
