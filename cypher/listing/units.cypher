// mode: read
// params: scope, known
// include: listing/unit_page
// A page of the scope's units, newest first (graphmem.ports.UnitStore.page_units), read from the
// (scope, created_at) index.
MATCH (u:Unit)
WHERE u.scope = $scope AND u.created_at <= $known
