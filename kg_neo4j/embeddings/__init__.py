"""Sentence embeddings: which model, its dimension (read from its files, no torch), and
a lazily loaded encoder on one of two runtimes (numpy, or sentence-transformers on torch).
``none`` turns semantic search off."""

from kg_neo4j.embeddings.encoder import RUNTIMES, Embedder, SentenceEmbedder, load_embedder
from kg_neo4j.embeddings.model_files import DEFAULT_MODEL, ModelInfo, resolve_model

__all__ = [
    "DEFAULT_MODEL",
    "RUNTIMES",
    "Embedder",
    "ModelInfo",
    "SentenceEmbedder",
    "load_embedder",
    "resolve_model",
]
