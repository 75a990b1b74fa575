"""The numpy runtime: a sentence-transformers BERT model (tokenizer, encoder, mean pooling,
L2 normalisation) computed with numpy and the ``tokenizers`` package, no torch.  Which models
it runs: :mod:`kg_neo4j.embeddings.numpy_support`.

Parallelism is coarse: numpy's BLAS is made single-threaded and whole forward passes run on a
few worker threads (numpy releases the GIL in its matrix products and array loops).  A BLAS that
splits every small product over threads waits for a second core on every product; on a busy
machine (Neo4j shares it) that made one short text many times slower than on one thread
(the figures: docs/performance.md#bench_first_writepy-the-first-write-and-the-numpy-embedding-runtime).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from kg_neo4j.embeddings import safetensors_file
from kg_neo4j.embeddings.bert_numpy import F32, NumpyBert
from kg_neo4j.embeddings.numpy_support import ModelPlan, weight_names

log = logging.getLogger(__name__)

#: At most this many texts, and this many tokens (texts x padded length), per forward pass:
#: intermediates of a few MB stay in cache (measured by bench_first_write; docs/performance.md).
MAX_BATCH = 64
MAX_TOKENS = 1024
#: Worker threads for passes (never more than the CPUs this process may use).
MAX_WORKERS = 8


def _single_threaded_blas() -> bool:
    """Make numpy's OpenBLAS single-threaded (process-wide); False when it cannot be controlled."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return False
    libs = [lib for lib in ThreadpoolController().lib_controllers if lib.internal_api == "openblas"]
    for lib in libs:
        lib.set_num_threads(1)
    return bool(libs)


def _usable_cpus() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


class NumpyEncoder:
    """Encode texts as sentence-transformers' ``encode(normalize_embeddings=True)`` does."""

    def __init__(self, plan: ModelPlan, *, workers: int | None = None) -> None:
        from tokenizers import Tokenizer

        self.plan = plan
        self.dimension = plan.config.hidden
        tensors = safetensors_file.load(plan.weights, [plan.prefix + n for n in weight_names(plan.config)])
        self.model = NumpyBert(plan.config, {n[len(plan.prefix) :]: t for n, t in tensors.items()})
        self.tokenizer = Tokenizer.from_file(str(plan.transformer_dir / "tokenizer.json"))
        # tokenizer.json may carry its own fixed padding/truncation; sentence-transformers pads to the
        # longest text of a batch and truncates at max_seq_length.  We pad ourselves, per pass.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(
            max_length=plan.max_seq_length, strategy="longest_first", direction="right", stride=0
        )
        wanted = workers if workers is not None else min(MAX_WORKERS, _usable_cpus())
        # With a BLAS we cannot make single-threaded, let it thread alone (no oversubscription).
        self.workers = max(1, wanted) if _single_threaded_blas() else 1
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        log.debug("numpy runtime: %d worker thread(s)", self.workers)

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="kg-neo4j-encode")
            return self._pool

    def encode(self, texts: Sequence[str]) -> F32:
        """(len(texts), dim) float32, unit length, in the order given."""
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=True)
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(texts)), key=lengths.__getitem__)  # similar lengths share a pass
        passes: list[list[int]] = []
        start = 0
        while start < len(order):
            stop = start + 1
            while (
                stop < len(order)
                and stop - start < MAX_BATCH
                and (stop - start + 1) * lengths[order[stop]] <= MAX_TOKENS
            ):
                stop += 1
            passes.append(order[start:stop])
            start = stop

        def run(picked: list[int]) -> None:
            length = lengths[picked[-1]]
            ids = np.zeros((len(picked), length), dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros_like(ids)
            for row, i in enumerate(picked):
                enc = encodings[i]
                ids[row, : lengths[i]] = enc.ids
                types[row, : lengths[i]] = enc.type_ids
                mask[row, : lengths[i]] = 1
            pooled = self.model.mean_pooled(ids, types, mask)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[picked] = pooled / np.maximum(norms, np.float32(1e-12))

        if self.workers == 1 or len(passes) == 1:
            for picked in passes:
                run(picked)
        else:
            # longest passes first, so that no worker is left with a long one at the end
            for _ in self._executor().map(run, passes[::-1]):
                pass
        return out
