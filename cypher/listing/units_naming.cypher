// mode: read
// params: scope, entity_id
// include: listing/unit_page
// A page of the scope's units about or naming one entity, newest first
// (graphmem.ports.UnitStore.page_units).
MATCH (:Entity {id: $entity_id})<-[:ABOUT|MENTIONS]-(u:Unit)
WHERE u.scope = $scope
WITH DISTINCT u
