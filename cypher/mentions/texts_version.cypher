// mode: read
// params: key
// The scope's texts version (commits that changed which texts a search finds) and the key of
// the last one, from its names lock (none yet: version 0): read before a plan's search of the
// texts naming what it makes known (graphmem.domain.models.TextsRead).
OPTIONAL MATCH (l:Lock {key: $key})
RETURN coalesce(l.texts, 0) AS version, l.texts_last AS last
