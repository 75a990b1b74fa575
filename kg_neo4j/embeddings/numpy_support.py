"""Which models the numpy runtime can run, read from their files alone (no numpy, no torch).

:func:`check_model` is strict: it accepts only a sentence-transformers directory whose every
file it knows how to honour (Transformer + mean Pooling [+ Normalize]; a plain post-LN BERT with
absolute positions and exact GELU; a WordPiece ``tokenizer.json``; float32 or float16
``model.safetensors``, computed in float32) and raises :class:`Unsupported` naming the first thing it does not, so that the caller falls
back to sentence-transformers.  Why the numpy runtime exists: kg_neo4j/embeddings/bert_numpy.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_neo4j.embeddings import safetensors_file


class Unsupported(Exception):
    """This model is not one the numpy runtime computes exactly; the message says why."""


@dataclass(frozen=True)
class BertConfig:
    hidden: int
    heads: int
    layers: int
    intermediate: int
    eps: float
    max_positions: int
    type_vocab: int
    vocab: int


def read_config(model_dir: Path) -> BertConfig:
    """The encoder's shape from ``config.json``; :class:`Unsupported` for anything but plain BERT."""
    path = model_dir / "config.json"
    if not path.is_file():
        raise Unsupported(f"no config.json in {model_dir}")
    cfg: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    checks = {
        "model_type": (cfg.get("model_type"), ("bert",)),
        "architectures": (tuple(cfg.get("architectures") or ("BertModel",)), (("BertModel",),)),
        "hidden_act": (cfg.get("hidden_act", "gelu"), ("gelu",)),
        "position_embedding_type": (cfg.get("position_embedding_type", "absolute"), ("absolute",)),
        "is_decoder": (cfg.get("is_decoder", False), (False,)),
        "add_cross_attention": (cfg.get("add_cross_attention", False), (False,)),
        "chunk_size_feed_forward": (cfg.get("chunk_size_feed_forward", 0), (0,)),
        "torch_dtype": (cfg.get("torch_dtype", cfg.get("dtype", "float32")), ("float32", None)),
    }
    for key, (got, allowed) in checks.items():
        if got not in allowed:
            raise Unsupported(f"config.json {key} is {got!r}; the numpy runtime computes only {allowed!r}")
    try:
        shape = BertConfig(
            hidden=int(cfg["hidden_size"]),
            heads=int(cfg["num_attention_heads"]),
            layers=int(cfg["num_hidden_layers"]),
            intermediate=int(cfg["intermediate_size"]),
            eps=float(cfg.get("layer_norm_eps", 1e-12)),
            max_positions=int(cfg["max_position_embeddings"]),
            type_vocab=int(cfg.get("type_vocab_size", 2)),
            vocab=int(cfg["vocab_size"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise Unsupported(f"config.json lacks a usable {exc}") from exc
    if shape.hidden % shape.heads:
        raise Unsupported(f"config.json hidden_size {shape.hidden} is not a multiple of num_attention_heads")
    return shape


def weight_names(cfg: BertConfig) -> list[str]:
    """Every tensor the forward pass reads (without the optional ``bert.`` prefix)."""
    names = [
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
    ]
    for i in range(cfg.layers):
        p = f"encoder.layer.{i}."
        for part in (
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
            "intermediate.dense",
            "output.dense",
        ):
            names += [f"{p}{part}.weight", f"{p}{part}.bias"]
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            names += [f"{p}{norm}.weight", f"{p}{norm}.bias"]
    return names


_ST_MODULE = "sentence_transformers."
#: sentence_bert_config.json keys this runtime honours (do_lower_case only when false).
_TRANSFORMER_KEYS = {"max_seq_length", "do_lower_case"}
_POOLING_OFF = (
    "pooling_mode_cls_token",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)
_POOLING_KEYS = {
    "word_embedding_dimension",
    "embedding_dimension",
    "pooling_mode",
    "pooling_mode_mean_tokens",
    "include_prompt",
    *_POOLING_OFF,
}
#: config_sentence_transformers.json keys that do not change what encode() computes without a prompt.
_ST_CONFIG_KEYS = {"__version__", "prompts", "default_prompt_name", "similarity_fn_name", "model_type"}


@dataclass(frozen=True)
class ModelPlan:
    """What :func:`check_model` found: where the files are and how to run them."""

    transformer_dir: Path
    config: BertConfig
    max_seq_length: int
    weights: Path
    prefix: str  # "" or "bert." in front of every tensor name


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Unsupported(f"cannot read {path.name}: {exc}") from exc


def _module_kind(entry: Any) -> str:
    mtype = entry.get("type", "") if isinstance(entry, dict) else ""
    if not isinstance(mtype, str) or not mtype.startswith(_ST_MODULE):
        raise Unsupported(f"modules.json lists a module of type {mtype!r}")
    return mtype.rsplit(".", 1)[-1]


def _check_pooling(conf: dict[str, Any], hidden: int) -> None:
    unknown = set(conf) - _POOLING_KEYS
    if unknown:
        raise Unsupported(f"pooling config has key(s) {sorted(unknown)} the numpy runtime does not honour")
    mode = conf.get("pooling_mode")
    mean = mode in ("mean", ["mean"]) if mode is not None else conf.get("pooling_mode_mean_tokens") is True
    if not mean or any(conf.get(k) for k in _POOLING_OFF):
        raise Unsupported("pooling is not plain mean pooling")
    dim = conf.get("word_embedding_dimension") or conf.get("embedding_dimension")
    if dim is not None and int(dim) != hidden:
        raise Unsupported(f"pooling dimension {dim} differs from the encoder's hidden size {hidden}")


def _check_tokenizer(tdir: Path) -> None:
    tok = _json(tdir / "tokenizer.json") if (tdir / "tokenizer.json").is_file() else None
    if tok is None:
        raise Unsupported("no tokenizer.json (the fast tokenizer)")
    kinds = {
        "model": ("WordPiece",),
        "normalizer": ("BertNormalizer",),
        "pre_tokenizer": ("BertPreTokenizer",),
        "post_processor": ("TemplateProcessing", "BertProcessing"),
    }
    for part, allowed in kinds.items():
        got = (tok.get(part) or {}).get("type")
        if got not in allowed:
            raise Unsupported(f"tokenizer.json {part} is {got!r}, not {' or '.join(allowed)}")
    tconf = _json(tdir / "tokenizer_config.json") if (tdir / "tokenizer_config.json").is_file() else {}
    if tconf.get("tokenizer_class", "BertTokenizer") not in ("BertTokenizer", "BertTokenizerFast"):
        raise Unsupported(f"tokenizer_config.json tokenizer_class is {tconf.get('tokenizer_class')!r}")
    lower = tok["normalizer"].get("lowercase", True)
    if "do_lower_case" in tconf and bool(tconf["do_lower_case"]) != bool(lower):
        raise Unsupported("tokenizer_config.json do_lower_case disagrees with tokenizer.json")


def check_model(model_dir: Path) -> ModelPlan:
    """How to run ``model_dir`` with numpy, or :class:`Unsupported` naming what stops it."""
    if not (model_dir / "modules.json").is_file():
        raise Unsupported("no modules.json (not a sentence-transformers directory)")
    modules = _json(model_dir / "modules.json")
    if not isinstance(modules, list):
        raise Unsupported("modules.json is not a list")
    kinds = [_module_kind(m) for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise Unsupported(f"modules are {kinds}; the numpy runtime runs Transformer, Pooling[, Normalize]")
    tdir = (model_dir / modules[0].get("path", "")).resolve()
    config = read_config(tdir)
    st_conf = (
        _json(tdir / "sentence_bert_config.json") if (tdir / "sentence_bert_config.json").is_file() else {}
    )
    if set(st_conf) - _TRANSFORMER_KEYS or st_conf.get("do_lower_case", False):
        raise Unsupported(f"sentence_bert_config.json {st_conf} asks for more than max_seq_length")
    max_len = int(st_conf.get("max_seq_length") or 0)
    if not 2 <= max_len <= config.max_positions:
        raise Unsupported(f"max_seq_length {max_len} is not within 2..{config.max_positions}")
    _check_pooling(_json(model_dir / modules[1].get("path", "") / "config.json"), config.hidden)
    if (model_dir / "config_sentence_transformers.json").is_file():
        conf = _json(model_dir / "config_sentence_transformers.json")
        if set(conf) - _ST_CONFIG_KEYS or conf.get("default_prompt_name"):
            raise Unsupported("config_sentence_transformers.json sets more than the numpy runtime honours")
    _check_tokenizer(tdir)
    weights = tdir / "model.safetensors"
    if not weights.is_file():
        raise Unsupported("no model.safetensors (pytorch_model.bin needs torch to read)")
    try:
        header = safetensors_file.read_header(weights)
    except (OSError, ValueError) as exc:
        raise Unsupported(str(exc)) from exc
    needed = weight_names(config)
    for prefix in ("", "bert."):
        if all(header.get(prefix + n, {}).get("dtype") in ("F32", "F16") for n in needed):
            return ModelPlan(tdir, config, max_len, weights, prefix)
    raise Unsupported("model.safetensors lacks float32 or float16 BERT tensors under the expected names")
