// mode: write
// params: ids
// Every search entry of these units (their entries are recomputed, or the units are gone).
UNWIND $ids AS id
MATCH (e:Entry {unit_id: id})
DELETE e
RETURN count(*) AS deleted
