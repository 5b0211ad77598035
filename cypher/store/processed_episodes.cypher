// mode: read
// params: ids, scope
// Episodes of the scope whose candidates were already decided (re-ingest skips them; an
// episode stored before a crash but never decided is processed again).
UNWIND $ids AS id
MATCH (e:Episode {scope: $scope, id: id})-[:DECIDED]->(:Decision)
RETURN DISTINCT e.id AS id
