// mode: write
// params: ids, scope, searchable
// Archive takes a unit's entries out of search (the SearchEntry label, which every search
// index is on) and restore puts them back; the entries and their vectors stay.
UNWIND $ids AS id
MATCH (e:Entry {unit_id: id}) WHERE e.scope = $scope
FOREACH (_ IN CASE WHEN $searchable THEN [1] ELSE [] END | SET e:SearchEntry)
FOREACH (_ IN CASE WHEN $searchable THEN [] ELSE [1] END | REMOVE e:SearchEntry)
RETURN count(*) AS changed
