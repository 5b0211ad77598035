// mode: write
// params: subject, at
// An erased subject leaves every key holding it; a non-admin key left with no subject is
// revoked and loses its name (an operator's words, which may name the subject). Keys are few,
// so a label scan is fine.
MATCH (k:Key) WHERE $subject IN k.subjects
SET k.subjects = [s IN k.subjects WHERE s <> $subject]
WITH k, size(k.subjects) = 0 AND NOT k.admin AS emptied
SET k.revoked_at = CASE WHEN emptied THEN coalesce(k.revoked_at, $at) ELSE k.revoked_at END,
    k.name = CASE WHEN emptied THEN null ELSE k.name END
RETURN k {.*} AS key ORDER BY k.created_at, k.id
