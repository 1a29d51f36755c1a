"""Retrieval: BM25, dense (any LangChain VectorStore, FAISS by default), MaxSim, fusion, corpus.

Every retriever implements :class:`Retriever` (``add``/``search``/``score``) and
can be wrapped for LangChain chains with ``as_langchain_retriever()``.
"""

from tablerag_agents.retrieval.adapters import LangChainRetriever
from tablerag_agents.retrieval.base import Doc, Hit, Reranker, Retriever
from tablerag_agents.retrieval.bm25 import BM25Retriever
from tablerag_agents.retrieval.colbert import (
    ColBERTRetriever,
    MaxSimReranker,
    maxsim,
    sentence_transformer_token_encoder,
)
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_config import CorpusConfig, HybridWeights, TableHit
from tablerag_agents.retrieval.corpus_fields import LinkedPassages, table_fields
from tablerag_agents.retrieval.dense import DenseRetriever
from tablerag_agents.retrieval.grouped import MaxGroupRetriever
from tablerag_agents.retrieval.hybrid import (
    HybridRetriever,
    reciprocal_rank_fusion,
    weighted_score_fusion,
)
from tablerag_agents.retrieval.rerank_llm import LLMReranker, rerank_with_llm
from tablerag_agents.retrieval.tokenize import Tokenizer
from tablerag_agents.retrieval.vectorstore import FaissVectorStore

__all__ = [
    "BM25Retriever",
    "ColBERTRetriever",
    "CorpusConfig",
    "CorpusIndex",
    "DenseRetriever",
    "Doc",
    "FaissVectorStore",
    "Hit",
    "HybridRetriever",
    "HybridWeights",
    "LLMReranker",
    "LangChainRetriever",
    "LinkedPassages",
    "MaxGroupRetriever",
    "MaxSimReranker",
    "Reranker",
    "Retriever",
    "TableHit",
    "Tokenizer",
    "reciprocal_rank_fusion",
    "rerank_with_llm",
    "maxsim",
    "sentence_transformer_token_encoder",
    "table_fields",
    "weighted_score_fusion",
]
