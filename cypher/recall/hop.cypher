// mode: read
// params: frontier, through, seen
// One hop of a walk (recall/walk_step) from the $frontier units (each reached through the
// entity named in $through, or null) to units not in $seen, best first, as seen at system time s.
WITH [i IN range(0, size($frontier) - 1) | {id: $frontier[i], via: $through[i]}] AS seeds, $seen AS seen
CALL (seeds, seen) {
  {{include recall/walk_step}}
}
UNWIND reached AS r
MATCH (n:Unit {id: r.id})
MATCH (e:Entry {unit_id: n.id}) WHERE e.s_from <= $s AND e.s_to > $s
OPTIONAL MATCH (st:Usage {unit_id: n.id})
RETURN r.source AS source, r.via AS via, r.score AS score, r.similarity AS similarity,
       n {.id, .kind, .content, .summary, .content_hash, .episode_id, .channel, .extractor_version,
          .assertion_id, .occurred_at, .group, .created_at, .valid_at, .confidence, .labels, .subject,
          .predicate, .object, .single_valued, .subject_type, .subject_id, .project_id,
          last_recalled_at: st.last_recalled_at, recall_count: st.recall_count} AS unit,
       e.t_to AS t_to, e.expired_at AS expired_at
ORDER BY score DESC, n.id
