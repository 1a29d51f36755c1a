"""bm25s integration details."""

from __future__ import annotations

import logging


def test_bm25s_logger_follows_the_application_config() -> None:
    import tablerag_agents.retrieval.bm25  # noqa: F401  (bm25s forces DEBUG on import)

    assert logging.getLogger("bm25s").level == logging.NOTSET
