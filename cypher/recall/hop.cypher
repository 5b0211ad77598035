// mode: read
// params: frontier, through, seen
// One hop of a walk (recall/walk_step) from the $frontier units (each reached through the
// entity named in $through, or null) to units not in $seen, best first, as seen at system time s.
WITH [i IN range(0, size($frontier) - 1) | {id: $frontier[i], via: $through[i]}] AS seeds, $seen AS seen
CALL (seeds, seen) {
  {{include recall/walk_step}}
}
UNWIND reached AS r
MATCH (u:Unit {id: r.id})
MATCH (e:Entry {unit_id: u.id}) WHERE {{include recall/entry_live}}
OPTIONAL MATCH (st:Usage {unit_id: u.id})
RETURN r.source AS source, r.via AS via, r.score AS score, r.similarity AS similarity,
       {{include recall/unit_fields}}
ORDER BY score DESC, u.id
