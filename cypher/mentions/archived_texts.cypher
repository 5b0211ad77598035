// mode: read
// params: scope
// The texts of the scope's archived units: they left the text index (entries/set_searchable),
// so mentions/texts_naming cannot find them, yet a name a write makes known links them too, as
// it links every other text of the scope (the links must not depend on what was archived when).
MATCH (s:Usage) WHERE s.scope = $scope AND s.archived_at IS NOT NULL
MATCH (e:Entry {unit_id: s.unit_id})
RETURN DISTINCT e.unit_id AS id, e.text AS text
