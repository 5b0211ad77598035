// mode: read
// params: scope, ids, kinds, valid, known
// Which of the given units are visible at (valid = T, known = S): list_units' rule, returning
// ids only, so recall can test thousands of candidates without materialising them.
UNWIND $ids AS key
MATCH (u:Unit {id: key})
WHERE u.scope = $scope
  AND (size($kinds) = 0 OR u.kind IN $kinds)
  AND u.created_at <= $known
  AND (u.valid_at IS NULL OR u.valid_at <= $valid)
  AND (u.invalid_at IS NULL OR $valid < u.invalid_at)
  AND NOT EXISTS {
    MATCH (:Decision)-[e:INVALIDATES]->(u)
    WHERE e.expired_at <= $known AND (e.invalid_at IS NULL OR e.invalid_at <= $valid)
  }
RETURN u.id AS id
