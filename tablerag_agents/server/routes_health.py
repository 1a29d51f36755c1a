"""``GET /health``: is this replica ready to serve, and how busy is it (for load balancers)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from fastapi import APIRouter

from tablerag_agents.server.errors import ApiError
from tablerag_agents.server.state import StateDep

logger = logging.getLogger(__name__)

PING_TIMEOUT_S = 5.0


def health_router() -> APIRouter:
    """The ``/health`` route (open without a token: it shows no client data)."""
    router = APIRouter(tags=["health"])

    @router.get("/health")
    async def health(state: StateDep) -> dict[str, Any]:
        """200 when the service has started and its database answers, else 503.

        The body gives the database kind and the runs going against ``max_runs``
        (at ``max_runs`` new messages get a 503 until a run ends).
        """
        _, db = state.thread_graph()
        try:
            await asyncio.wait_for(db.threads.ping(), PING_TIMEOUT_S)
        except Exception as exc:
            logger.warning("health: the database does not answer: %s", exc)
            raise ApiError(
                503,
                f"the {db.kind} database does not answer ({type(exc).__name__})",
                "database_unavailable",
                headers={"Retry-After": "5"},
            ) from None
        return {
            "status": "ok",
            "database": db.kind,
            "runs": state.runs.active,
            "max_runs": state.runs.max_runs,
        }

    return router
