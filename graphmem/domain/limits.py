"""The limits every face enforces alike, each with one home: the facade's argument types, the
HTTP and MCP schemas and the CLI's help all read them from here."""

from typing import Annotated

from pydantic import Field

#: Graph hops a recall may walk from its best hits.
MAX_HOPS = 3
#: Hits one recall may return, and rows one page may list.
MAX_K = 1000
#: Tokens one resident block may hold (its ``token_budget``).
MAX_BLOCK_TOKENS = 100_000
#: Records one listing may return (a ``Page``'s limit, the decision log's ``limit``).
MAX_ROWS = 10_000

Hops = Annotated[
    int, Field(ge=0, le=MAX_HOPS, strict=True, description=f"Graph hops from the top hits (0..{MAX_HOPS}).")
]
K = Annotated[int, Field(ge=1, le=MAX_K, strict=True, description=f"How many hits (1..{MAX_K}).")]
TokenBudget = Annotated[
    int,
    Field(gt=0, le=MAX_BLOCK_TOKENS, strict=True, description=f"Tokens the block may hold (1..{MAX_BLOCK_TOKENS})."),
]
