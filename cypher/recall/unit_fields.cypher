// mode: fragment
// params:
// The columns a recall returns for a unit u, with st its recall statistics (or null) and e its
// entry live at the search's system time: the unit's properties, its end (t_to) and first
// invalidation (expired_at) as that entry shows them. Times travel as epoch microseconds: the
// driver turns each temporal value into a Python datetime in Python, which cost more than the
// rest of the row (graphmem.adapters.neo4j.rows.to_datetime reads both). From epochMillis,
// which floors: epochSeconds truncates toward zero before 1970.
u {.id, .kind, .content, .summary, .content_hash, .episode_id, .channel, .extractor_version, .assertion_id,
   .group, .confidence, .labels, .subject, .predicate, .object, .single_valued, .subject_type, .subject_id,
   .project_id, recall_count: st.recall_count,
   occurred_at: u.occurred_at.epochMillis * 1000 + u.occurred_at.microsecond % 1000,
   created_at: u.created_at.epochMillis * 1000 + u.created_at.microsecond % 1000,
   valid_at: u.valid_at.epochMillis * 1000 + u.valid_at.microsecond % 1000,
   last_recalled_at: st.last_recalled_at.epochMillis * 1000 + st.last_recalled_at.microsecond % 1000} AS unit,
e.t_to AS t_to, e.expired_at.epochMillis * 1000 + e.expired_at.microsecond % 1000 AS expired_at
