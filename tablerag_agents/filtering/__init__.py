"""Table filters (Wu, TableRAG; Lee et al., PieTa): keep the rows and columns a question needs.

* :func:`semantic_filter`: rows and columns ranked by embedding similarity
  (dense cosine or ColBERT-style MaxSim).
* :func:`llm_filter`: sampled pandas filter programs, run in the sandbox,
  majority vote on the resulting sub-table (self-consistency).
* :func:`pieta_filter`: PieTa divide-and-conquer cell selection over windows.

Each returns a :class:`SubTable` (row positions, column names, cost); none
raises on bad model output: it falls back to the whole table with a reason.
"""

from tablerag_agents.filtering.base import SubTable
from tablerag_agents.filtering.llm_filter import llm_filter
from tablerag_agents.filtering.pieta import pieta_filter
from tablerag_agents.filtering.semantic import semantic_filter

__all__ = ["SubTable", "llm_filter", "pieta_filter", "semantic_filter"]
