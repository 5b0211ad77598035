"""graphmem inside other frameworks: each module adapts the facade to one framework's interface
and needs that framework's extra (``langgraph``: ``pip install 'graphmem[langgraph]'``)."""
