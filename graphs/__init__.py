"""LangGraph graphs of tablerag-agents."""
