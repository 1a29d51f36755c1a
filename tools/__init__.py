"""LangChain tools over the tablerag-agents engine."""
