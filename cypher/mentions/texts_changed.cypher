// mode: write
// params: rows
// Count a change to which texts a search finds, made outside a commit (an episode's deletion,
// an archive change, an import, an index rebuild), on each scope's names lock (rows: key,
// scope_props; sorted by key, so two such writers never deadlock), held until the transaction
// ends: a plan's search of the texts read before it no longer stands (graphmem.domain.models.TextsRead).
UNWIND $rows AS row
MERGE (l:Lock {key: row.key}) ON CREATE SET l += row.scope_props, l.version = 0
SET l.texts = coalesce(l.texts, 0) + 1, l.texts_last = null
RETURN count(l) AS counted
