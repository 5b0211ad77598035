"""Settings from the environment and .env, and the trust rule for files graphmem reads from its home."""
