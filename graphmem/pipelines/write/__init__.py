"""The write pipeline: episodes in; decisions, units and invalidation edges out, one atomic
commit per batch (docs/concepts.md, "The write path"). Its stages, after the seed's:

1. persist the episodes, each undecided until the commit that decides it (``pipeline``);
2. extract candidates (``pipeline``);
3. the gate, the timeline's free dedupe of restatements, endings and retractions, and the
   policy's reconciliation of a new value (``stages``);
4. draw each touched timeline group (``draw``), then commit store and index together.

``pipelining`` plans the next batch while the one before commits; ``collector`` makes full
collections rare meanwhile; ``mentions`` draws the mention links of what is written.
"""

from graphmem.pipelines.write.collector import FULL_COLLECTION_EVERY
from graphmem.pipelines.write.mentions import mention_links
from graphmem.pipelines.write.pipeline import WritePipeline, WriteStore
from graphmem.pipelines.write.report import ExtractionFailure, Rejection, WriteReport
from graphmem.pipelines.write.timelines import DrawnUnit, EdgeEnd, drawn, group_of

__all__ = [
    "FULL_COLLECTION_EVERY",
    "DrawnUnit",
    "EdgeEnd",
    "ExtractionFailure",
    "Rejection",
    "WritePipeline",
    "WriteReport",
    "WriteStore",
    "drawn",
    "group_of",
    "mention_links",
]
