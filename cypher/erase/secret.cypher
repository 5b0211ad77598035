// mode: write
// params: candidate
// The database's erasure secret (hex), created once: the first caller's candidate is kept.
MERGE (s:Setting {key: 'erasure_secret'})
ON CREATE SET s.value = $candidate
RETURN s.value AS value
