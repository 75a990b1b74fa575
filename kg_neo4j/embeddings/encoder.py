"""The encoder: sentence-transformers, loaded in the background so the server answers
its first call fast; torch is imported only here."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from kg_neo4j.embeddings.model_files import ModelInfo, resolve_model
from kg_neo4j.errors import ConfigError

log = logging.getLogger(__name__)


class Embedder(Protocol):
    name: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> list[list[float]]: ...


class SentenceEmbedder:
    """A sentence-transformers model from a local directory, L2-normalised output."""

    def __init__(self, info: ModelInfo, *, batch_size: int = 64, device: str = "cpu") -> None:
        self.info = info
        self.name = info.name
        self.dimension = info.dimension
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start_loading(self) -> None:
        """Load in a background thread (idempotent)."""
        with self._lock:
            if self._thread is None and not self._ready.is_set():
                self._thread = threading.Thread(target=self._load, name="kg-neo4j-embedder", daemon=True)
                self._thread.start()

    def _load(self) -> None:
        try:
            # Never reach for a hub: the model is on disk.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(self.info.path), device=self.device, local_files_only=True)
            getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            got = getter()
            if got != self.dimension:
                raise ConfigError(f"model at {self.info.path} produces {got} dimensions, its files say {self.dimension}")
            self._model = model
            log.info("embedding model %s loaded (%d dimensions)", self.name, self.dimension)
        except BaseException as exc:  # noqa: BLE001 - reported to callers
            self._error = exc
            log.error("embedding model %s failed to load: %s", self.name, exc)
        finally:
            self._ready.set()

    def model(self) -> Any:
        self.start_loading()
        self._ready.wait()
        if self._error is not None:
            raise ConfigError(f"embedding model {self.name!r} could not be loaded: {self._error}")
        return self._model

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self.model().encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.tolist()  # one call: much faster than a tolist() per vector


def load_embedder(spec: str, *, background: bool = True) -> SentenceEmbedder | None:
    info = resolve_model(spec)
    if info is None:
        return None
    embedder = SentenceEmbedder(info)
    if background:
        embedder.start_loading()
    return embedder
