"""The chatbot backend: ``tablerag serve`` (FastAPI) over the TableRAG graph.

Example:
    >>> from tablerag_agents.resources import Resources
    >>> from tablerag_agents.server import create_app
    >>> app = create_app(Resources(), db_path="threads.sqlite", token="secret")
    >>> # uvicorn.run(app, host="127.0.0.1", port=8000)
"""

from tablerag_agents.server.app import DEFAULT_MAX_UPLOAD_BYTES, create_app
from tablerag_agents.server.main import serve

__all__ = ["DEFAULT_MAX_UPLOAD_BYTES", "create_app", "serve"]
