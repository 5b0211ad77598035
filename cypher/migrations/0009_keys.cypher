// mode: schema
// API keys (graphmem.keys): one Key node per key id, holding only the digest of its secret.
CREATE CONSTRAINT key_id IF NOT EXISTS FOR (n:Key) REQUIRE n.id IS UNIQUE;
