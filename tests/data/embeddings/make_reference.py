"""Make the embedding test data, once, by hand, with sentence-transformers (and so torch) installed.

The test suite never needs torch: it checks the numpy runtime against what this script stored.

    python -m venv /tmp/st-venv && /tmp/st-venv/bin/pip install -e '.[sentence-transformers]'
    /tmp/st-venv/bin/python tests/data/embeddings/make_reference.py

It writes, beside itself:

* ``reference.json`` and ``reference_vectors.npy``: a fixed set of texts (short, long beyond the
  256-token truncation, many scripts, emoji, whitespace, empty), sentence-transformers' own token ids
  for them, and the vectors sentence-transformers' ``encode(normalize_embeddings=True)`` gives with
  all-MiniLM-L6-v2 as published (float32 weights).  tests/test_embedding_runtime.py checks the
  numpy runtime against them.
* ``tiny-bert-128/``: a small random BERT (128 dimensions, 2 layers, its own 1,000-word WordPiece
  vocabulary, float16 weights) in the layout the numpy runtime runs: the "other model, other
  dimension" of tests/test_reembed.py.

Nothing is downloaded: sentence-transformers loads the packaged model's own files (checked against
the published file's sha256).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PACKAGED = ROOT / "kg_neo4j" / "embeddings" / "all-MiniLM-L6-v2"
#: sentence-transformers/all-MiniLM-L6-v2's model.safetensors as published (Hugging Face's sha256).
PUBLISHED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
N_TEXTS = 200

AWKWARD = [
    "",
    " ",
    "\t\n",
    "A" * 600,
    "日本語のテキストと漢字",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "emoji 🙂🚀 👩‍👩‍👧 🇩🇪",
    "Cafe\u0301 vs Café",
    "zero\u200bwidth\u200djoiner",
    "ÀÉÎÕÜ ÇÑ ß",
    "def f(x):\n    return x * 2",
    "https://example.com/a?b=c#d",
]


def texts(n: int) -> list[str]:
    """The awkward texts, 12 texts far beyond 256 tokens, questions and turns of the v1 recall set."""
    data = json.loads((ROOT / "benchmarks" / "recall_eval" / "dataset.json").read_text())
    turns = [t["text"] for c in data["conversations"] for s in c["sessions"] for t in s["turns"]]
    questions = [q["question"] for c in data["conversations"] for q in c["questions"]]
    rng = random.Random(7)
    rest = [" ".join(rng.sample(turns, 40)) for _ in range(12)]
    rest += rng.sample(questions, 60)
    rest += rng.sample(turns, n - len(AWKWARD) - len(rest))
    out = AWKWARD + rest
    rng.shuffle(out)
    return out


def reference(model_dir: Path) -> None:
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    assert next(model.parameters()).dtype == torch.float32
    chosen = texts(N_TEXTS)
    vectors = model.encode(chosen, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    tokens = []
    for text in chosen:
        f = model.tokenize([text])
        tokens.append(f["input_ids"][0][f["attention_mask"][0].bool()].tolist())
    np.save(HERE / "reference_vectors.npy", vectors.astype(np.float32), allow_pickle=False)
    meta: dict[str, Any] = {
        "about": "made by tests/data/embeddings/make_reference.py; vectors in reference_vectors.npy, row i for texts[i]",
        "model": "all-MiniLM-L6-v2 (published float32 weights, sha256 " + PUBLISHED_SHA256 + ")",
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "texts": chosen,
        "tokens": tokens,
    }
    (HERE / "reference.json").write_text(json.dumps(meta, ensure_ascii=False, indent=0) + "\n")


def tiny_model() -> None:
    """A random 128-d, 2-layer BERT with a 1,000-word vocabulary learnt from the v1 recall set, float16,
    in the packaged model's layout (sentence-transformers >= 6 saves another, which the numpy runtime
    refuses; sentence-transformers reads both).  The WordPiece trainer numbers the ``##`` letters in
    another order from run to run, so a new run gives another (equally good) tokenizer.json."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    data = json.loads((ROOT / "benchmarks" / "recall_eval" / "dataset.json").read_text())
    corpus = [t["text"] for c in data["conversations"] for s in c["sessions"] for t in s["turns"]]
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator(corpus, vocab_size=1000, min_frequency=2)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=wordpiece.get_vocab_size(),
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=256,
        max_position_embeddings=128,
    )
    out = HERE / "tiny-bert-128"
    shutil.rmtree(out, ignore_errors=True)
    BertModel(config, add_pooling_layer=False).save_pretrained(out)
    BertTokenizerFast(tokenizer_object=wordpiece._tokenizer, do_lower_case=True).save_pretrained(out)
    as_float16(out / "model.safetensors", "random weights, made by tests/data/embeddings/make_reference.py")
    for name in ("modules.json", "config_sentence_transformers.json", "sentence_bert_config.json"):
        shutil.copy(PACKAGED / name, out / name)
    (out / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 128, "do_lower_case": False})
    )
    (out / "1_Pooling").mkdir()
    pooling = json.loads((PACKAGED / "1_Pooling" / "config.json").read_text())
    (out / "1_Pooling" / "config.json").write_text(json.dumps({**pooling, "word_embedding_dimension": 128}))


def as_float16(path: Path, note: str) -> None:
    """A safetensors file's float32 tensors as float16 (numpy rounds each value to the nearest float16);
    other tensors (``embeddings.position_ids``, int64) as they are."""
    from safetensors.numpy import load, save_file

    tensors = {
        n: t.astype(np.float16) if t.dtype == np.float32 else t for n, t in load(path.read_bytes()).items()
    }
    save_file(tensors, str(path), metadata={"format": "pt", "kg-neo4j": note})
    path.chmod(0o644)  # safetensors writes 0600; the wheel would carry it


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    weights = (PACKAGED / "model.safetensors").read_bytes()
    if hashlib.sha256(weights).hexdigest() != PUBLISHED_SHA256:
        raise SystemExit("the packaged model.safetensors is not all-MiniLM-L6-v2's published one")
    reference(PACKAGED)
    tiny_model()


if __name__ == "__main__":
    main()
