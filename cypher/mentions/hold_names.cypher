// mode: write
// params: key, scope_props, made, last, texts, texts_key
// Hold the scope's names lock until the transaction ends (the first SET takes the node's lock;
// a commit takes it before any other lock of the scope, and its guards are read under it), then
// read its versions as they stand under the lock (read before it, they could be stale): how
// many commits made names known, with the digest of the last one's names, and how many changed
// which texts a search finds, with the key of the last one. When the commit makes names known
// ($made), count it with the digest of its names ($last); when it changes the texts ($texts),
// count it with its key ($texts_key, null when no later plan can know it). All in one
// statement: writing the node again in a later one deadlocks with other writers of the node
// (its relationship-group lock is taken again after the node lock).
MERGE (l:Lock {key: $key}) ON CREATE SET l += $scope_props, l.version = 0
SET l.held = coalesce(l.held, 0) + 1
WITH l, l.version AS version, l.last AS last, coalesce(l.texts, 0) AS texts, l.texts_last AS texts_last
SET l.version = version + CASE WHEN $made THEN 1 ELSE 0 END,
    l.last = CASE WHEN $made THEN $last ELSE last END,
    l.texts = texts + CASE WHEN $texts THEN 1 ELSE 0 END,
    l.texts_last = CASE WHEN $texts THEN $texts_key ELSE texts_last END
RETURN version, last, texts, texts_last
