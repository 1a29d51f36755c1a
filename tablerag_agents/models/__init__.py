"""Chat and embedding model factories (embedded offline defaults).

Model calls with token accounting are in :mod:`.calls`, sampling in :mod:`.sampling`,
offline token counting in :mod:`.tokens`.
"""

from langchain_core.callbacks import UsageMetadataCallbackHandler, get_usage_metadata_callback

from tablerag_agents.models.chat import get_chat_model, llm_cache
from tablerag_agents.models.embeddings import (
    SentenceTransformerEmbeddings,
    embeddings_name,
    get_embeddings,
    local_minilm_path,
)
from tablerag_agents.models.server import shutdown_servers

__all__ = [
    "SentenceTransformerEmbeddings",
    "UsageMetadataCallbackHandler",
    "embeddings_name",
    "get_chat_model",
    "get_embeddings",
    "get_usage_metadata_callback",
    "llm_cache",
    "local_minilm_path",
    "shutdown_servers",
]
