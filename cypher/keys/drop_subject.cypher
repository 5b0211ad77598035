// mode: write
// params: subject, at
// An erased subject leaves every key holding it; a non-admin key left with no subject is
// revoked. Keys are few, so a label scan is fine.
MATCH (k:Key) WHERE $subject IN k.subjects
SET k.subjects = [s IN k.subjects WHERE s <> $subject]
SET k.revoked_at = CASE WHEN size(k.subjects) = 0 AND NOT k.admin THEN coalesce(k.revoked_at, $at)
                        ELSE k.revoked_at END
RETURN k {.*} AS key ORDER BY k.created_at, k.id
