"""The `graphmem` admin CLI (see docs: CLI.md)."""
