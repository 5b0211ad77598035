// mode: write
// params: id, counts, at
// Add what one batch deleted to its erasure record, in the batch's own transaction, so the
// record counts what was removed however the erasure is interrupted; a batch that deleted
// nothing ends it.
MATCH (r:Erasure {id: $id})
SET r.units = coalesce(r.units, 0) + $counts.units,
    r.episodes = coalesce(r.episodes, 0) + $counts.episodes,
    r.entities = coalesce(r.entities, 0) + $counts.entities,
    r.decisions = coalesce(r.decisions, 0) + $counts.decisions,
    r.traces = coalesce(r.traces, 0) + $counts.traces,
    r.blocks = coalesce(r.blocks, 0) + $counts.blocks,
    r.reviews = coalesce(r.reviews, 0) + $counts.reviews,
    r.locks = coalesce(r.locks, 0) + $counts.locks,
    r.commits = coalesce(r.commits, 0) + $counts.commits,
    r.usage = coalesce(r.usage, 0) + $counts.usage,
    r.deletions = coalesce(r.deletions, 0) + $counts.deletions,
    r.entries = coalesce(r.entries, 0) + $counts.entries,
    r.jobs = coalesce(r.jobs, 0) + $counts.jobs,
    r.updated_at = $at
SET r.status = CASE WHEN reduce(n = 0, k IN keys($counts) | n + $counts[k]) = 0 THEN 'done' ELSE 'running' END
RETURN properties(r) AS record
