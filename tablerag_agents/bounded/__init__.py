"""Bounded work on untrusted input: warm worker processes with memory and time limits.

Table files (:func:`~tablerag_agents.tables.load_table`) and model-written SQL
(:class:`~tablerag_agents.solve.sql_engine.SafeDuckDB`) run here, never in the
host process. This is a resource bound, not a security sandbox: the worker runs
this package's own code on hostile data; model-written Python runs in
:mod:`tablerag_agents.sandbox`. The memory limit needs Linux (``/proc`` and an
enforced ``RLIMIT_AS``); elsewhere only CPU time and the wall clock hold.
"""

from tablerag_agents.bounded.limits import WorkerLimits
from tablerag_agents.bounded.pool import WorkerPool, default_pool
from tablerag_agents.bounded.process import BoundedWorker

__all__ = ["BoundedWorker", "WorkerLimits", "WorkerPool", "default_pool"]
