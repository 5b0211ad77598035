// mode: write
// params: id, status, decided_at, note
// Close a pending review item; returns nothing when it was not pending (already decided).
MATCH (r:Review {id: $id}) WHERE r.status = 'pending'
SET r.status = $status, r.decided_at = $decided_at, r.note = $note
RETURN r.id AS id
