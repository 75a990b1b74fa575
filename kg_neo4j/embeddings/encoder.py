"""The encoder, loaded in the background so the server answers its first call fast.

Two runtimes compute the same vectors (cosine >= 0.9999; benchmarks/README.md,
"bench_first_write.py"):

* ``numpy``: BERT-family sentence-transformers models whose files it can read exactly
  (:mod:`kg_neo4j.embeddings.numpy_encoder`); loads in well under a second because it never
  imports torch.
* ``sentence-transformers``: every model sentence-transformers loads; importing torch and
  sentence-transformers takes several seconds.

``auto`` (the default) takes ``numpy`` when the model's files allow it, else
``sentence-transformers``; torch is imported only by the latter, which is not installed by default
(``pip install 'kg-neo4j[sentence-transformers]'``): a model that needs it without it is an error at start.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kg_neo4j.embeddings.model_files import ModelInfo, resolve_model
from kg_neo4j.embeddings.numpy_support import ModelPlan, Unsupported, check_model
from kg_neo4j.errors import ConfigError

if TYPE_CHECKING:
    from kg_neo4j.embeddings.numpy_encoder import NumpyEncoder

log = logging.getLogger(__name__)

#: Values of the embedding-runtime setting.
RUNTIMES = ("auto", "numpy", "sentence-transformers")


class Embedder(Protocol):
    name: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> list[list[float]]: ...


def _plan_numpy(info: ModelInfo, runtime: str, device: str) -> ModelPlan | None:
    """The numpy runtime's plan for this model, or None when sentence-transformers must run it
    (reads the model's files only: numpy and torch are imported by the loading thread)."""
    if runtime == "sentence-transformers":
        _require_sentence_transformers(info, "the embedding runtime 'sentence-transformers' was chosen")
        return None
    try:
        if device != "cpu":
            raise Unsupported(f"device {device!r} (the numpy runtime computes on the CPU)")
        return check_model(info.path)
    except Unsupported as exc:
        if runtime == "numpy":
            raise ConfigError(
                f"embedding runtime 'numpy' cannot run the model {info.name!r} at {info.path}: {exc}; "
                "use embedding runtime 'auto' or 'sentence-transformers'"
            ) from exc
        _require_sentence_transformers(info, f"the numpy runtime cannot run it: {exc}")
        log.info(
            "embedding model %s runs on sentence-transformers: the numpy runtime cannot run it (%s)",
            info.name,
            exc,
        )
        return None


def _require_sentence_transformers(info: ModelInfo, why: str) -> None:
    """A clear error at start, not at the first write, when the sentence-transformers runtime is needed
    and its optional dependency (torch with it) is not installed."""
    if importlib.util.find_spec("sentence_transformers") is None:
        raise ConfigError(
            f"embedding model {info.name!r} needs sentence-transformers ({why}), which is not installed: "
            "pip install 'kg-neo4j[sentence-transformers]', or choose another model or 'none'"
        )


class SentenceEmbedder:
    """A sentence-transformers model from a local directory, L2-normalised output."""

    def __init__(
        self, info: ModelInfo, *, batch_size: int = 64, device: str = "cpu", runtime: str = "auto"
    ) -> None:
        if runtime not in RUNTIMES:
            raise ConfigError(f"embedding runtime must be one of {', '.join(RUNTIMES)}; got {runtime!r}")
        self.info = info
        self.name = info.name
        self.dimension = info.dimension
        self.batch_size = batch_size
        self.device = device
        self._plan = _plan_numpy(info, runtime, device)
        #: the runtime that computes the vectors: "numpy" or "sentence-transformers"
        self.runtime = "numpy" if self._plan is not None else "sentence-transformers"
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
        started = time.perf_counter()
        try:
            plan = self._plan
            self._model = self._load_numpy(plan) if plan is not None else self._load_sentence_transformers()
            log.info(
                "embedding model %s loaded with the %s runtime in %.2f s (%d dimensions)",
                self.name,
                self.runtime,
                time.perf_counter() - started,
                self.dimension,
            )
        except BaseException as exc:  # noqa: BLE001 - reported to callers
            self._error = exc
            log.error("embedding model %s failed to load: %s", self.name, exc)
        finally:
            self._ready.set()

    def _load_numpy(self, plan: ModelPlan) -> NumpyEncoder:
        from kg_neo4j.embeddings.numpy_encoder import NumpyEncoder

        model = NumpyEncoder(plan)
        if model.dimension != self.dimension:
            raise ConfigError(
                f"model at {self.info.path} produces {model.dimension} dimensions, "
                f"its files say {self.dimension}"
            )
        return model

    def _load_sentence_transformers(self) -> Any:
        # Never reach for a hub: the model is on disk.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(self.info.path), device=self.device, local_files_only=True)
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        got = getter()
        if got != self.dimension:
            raise ConfigError(
                f"model at {self.info.path} produces {got} dimensions, its files say {self.dimension}"
            )
        return model

    def model(self) -> Any:
        self.start_loading()
        self._ready.wait()
        if self._error is not None:
            raise ConfigError(f"embedding model {self.name!r} could not be loaded: {self._error}")
        return self._model

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self.model()
        if self._plan is not None:
            vectors = model.encode(list(texts))
        else:
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        result: list[list[float]] = vectors.tolist()  # one call: much faster than a tolist() per vector
        return result


def load_embedder(spec: str, *, background: bool = True, runtime: str = "auto") -> SentenceEmbedder | None:
    info = resolve_model(spec)
    if info is None:
        return None
    embedder = SentenceEmbedder(info, runtime=runtime)
    if background:
        embedder.start_loading()
    return embedder
