"""Find a sentence-transformers model on disk and read its name and dimension from its
own config files, without importing torch (so startup checks stay fast)."""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

from kg_neo4j.errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"

#: The default model ships inside this package (sentence-transformers/all-MiniLM-L6-v2, Apache-2.0: its
#: README.md beside it), byte for byte as published.  The PyPI packages that carry it all require
#: sentence-transformers, and so torch with its CUDA libraries, which the numpy runtime never imports.
PACKAGED_MODEL_DIR = Path(__file__).resolve().parent / "all-MiniLM-L6-v2"
_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


@dataclass(frozen=True)
class ModelInfo:
    name: str  # what the user configured (recorded in the graph's metadata)
    path: Path  # local directory holding the model
    dimension: int


def _packaged_path(spec: str) -> Path | None:
    return PACKAGED_MODEL_DIR if spec.lower() in _PACKAGED else None


#: A name that may be an installed Python package (distribution names' ``-`` read as ``_``).
_PACKAGE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _is_model_dir(path: Path) -> bool:
    return (path / "modules.json").is_file() or (path / "config.json").is_file()


def _installed_package_path(spec: str) -> Path | None:
    """A model carried by an installed Python package: the package's directory, or its ``model/``
    folder, holding a sentence-transformers model (``modules.json`` or ``config.json``).  None when no
    such package is installed; an error when the package exists but carries no model."""
    if not _PACKAGE_NAME.fullmatch(spec):
        return None
    module = spec.replace("-", "_")
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    root = Path(next(iter(found.submodule_search_locations)))
    for candidate in (root, root / "model"):
        if _is_model_dir(candidate):
            return candidate
    raise ConfigError(
        f"embedding model {spec!r}: the installed package {module!r} ({root}) carries no "
        "sentence-transformers model (no modules.json or config.json in it or in its model/ folder)"
    )


def _hf_cache_path(spec: str, cache_root: Path) -> Path | None:
    """A model already in the local Hugging Face cache (never downloaded here)."""
    repo = spec if "/" in spec else f"sentence-transformers/{spec}"
    snapshots = cache_root / f"models--{repo.replace('/', '--')}" / "snapshots"
    if snapshots.is_dir():
        candidates = sorted(snapshots.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
        for c in candidates:
            if (c / "config.json").exists() or (c / "modules.json").exists():
                return c
    return None


def read_dimension(path: Path) -> int:
    """The output dimension: a final Dense layer's out_features, else the pooling dimension."""
    modules_file = path / "modules.json"
    dim: int | None = None
    if modules_file.exists():
        modules = json.loads(modules_file.read_text())
        for module in modules:
            cfg = path / module.get("path", "") / "config.json"
            mtype = module.get("type", "")
            conf = json.loads(cfg.read_text()) if cfg.exists() else {}
            if mtype.endswith("Pooling"):
                # sentence-transformers < 5 writes word_embedding_dimension; later versions embedding_dimension
                found = conf.get("word_embedding_dimension") or conf.get("embedding_dimension")
                dim = int(found) if found else dim
            elif mtype.endswith("Dense") and "out_features" in conf:
                dim = int(conf["out_features"])
    if dim is None and (path / "config.json").exists():
        cfg = json.loads((path / "config.json").read_text())
        dim = cfg.get("hidden_size") or cfg.get("d_model") or cfg.get("dim")
    if not dim:
        raise ConfigError(
            f"cannot tell the embedding dimension of the model at {path} (no modules.json/config.json)"
        )
    return int(dim)


def resolve_model(spec: str, *, hf_cache: Path | None = None) -> ModelInfo | None:
    """``none`` -> None; a packaged name, a local directory, an installed Python package carrying a model,
    or a model in the HF cache -> ModelInfo."""
    if spec.strip().lower() in ("", "none", "off"):
        return None
    path = _packaged_path(spec)
    if path is None:
        local = Path(spec).expanduser()
        if local.is_dir():
            path = local.resolve()
    if path is None:
        path = _installed_package_path(spec)
    if path is None:
        cache = hf_cache or Path.home() / ".cache" / "huggingface" / "hub"
        path = _hf_cache_path(spec, cache)
    if path is None:
        raise ConfigError(
            f"embedding model {spec!r} is not available offline: give a local directory, an installed Python package "
            f"that carries a model, a model already in the Hugging Face cache, {DEFAULT_MODEL!r} (packaged), or "
            "'none'. Nothing is downloaded at run time."
        )
    return ModelInfo(name=spec, path=path, dimension=read_dimension(path))
