"""The Model Context Protocol server: graphmem as the memory of an agent host."""
