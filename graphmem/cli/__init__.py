"""The `graphmem` admin CLI: one typer sub-app per noun over the ``GraphMem`` facade."""
