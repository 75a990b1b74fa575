"""The numpy embedding runtime gives sentence-transformers' vectors for the packaged model, is
chosen by ``auto`` only for models it runs exactly, and serves a real MCP session end to end.

Real model (the installed all-MiniLM-L6-v2), real texts (the frozen recall_eval/ conversations
plus over-long, many-script, emoji, whitespace and empty texts), real Neo4j, real MCP client.
Speed is measured in benchmarks/bench_first_write.py, not here.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kg_neo4j.embeddings import RUNTIMES, SentenceEmbedder, load_embedder, resolve_model
from kg_neo4j.embeddings.numpy_support import Unsupported, check_model
from kg_neo4j.errors import ConfigError
from support.servers import KG, Neo4jInfo, server_env

ROOT = Path(__file__).resolve().parent.parent
MODEL = "all-MiniLM-L6-v2"


def real_texts(n: int) -> list[str]:
    data = json.loads((ROOT / "benchmarks" / "recall_eval" / "dataset.json").read_text())
    turns = [t["text"] for c in data["conversations"] for s in c["sessions"] for t in s["turns"]]
    questions = [q["question"] for c in data["conversations"] for q in c["questions"]]
    rng = random.Random(7)
    awkward = [
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
    rest = [" ".join(rng.sample(turns, 40)) for _ in range(12)]  # far beyond 256 tokens
    rest += rng.sample(questions, 60)
    rest += rng.sample(turns, max(0, n - len(awkward) - len(rest)))
    rng.shuffle(rest)
    texts = awkward + rest[: n - len(awkward)]  # the awkward ones always, whatever n
    rng.shuffle(texts)
    return texts


@pytest.fixture(scope="module")
def packaged() -> Any:
    info = resolve_model(MODEL)
    assert info is not None
    return info


#: The sentence-transformers side, run in a child process so that pytest itself never imports torch (its
#: exit then prints nothing after pytest's summary): reads jobs as JSON on stdin, writes answers on stdout.
#: ``encode``: kg-neo4j's own sentence-transformers runtime, or ``auto`` for what auto picks and gives;
#: ``tokens``: sentence-transformers' token ids (attention-masked) per text.
TORCH_CHILD = """
import json, sys
from kg_neo4j.embeddings import SentenceEmbedder, resolve_model
out = []
for job in json.load(sys.stdin):
    emb = SentenceEmbedder(resolve_model(job["model"]), runtime=job.get("runtime", "sentence-transformers"))
    if job["op"] == "encode":
        out.append({"runtime": emb.runtime, "vectors": [list(map(float, v)) for v in emb.encode(job["texts"])]})
    else:
        model = emb.model()
        ids = []
        for text in job["texts"]:
            f = model.tokenize([text])
            ids.append(f["input_ids"][0][f["attention_mask"][0].bool()].tolist())
        out.append({"runtime": emb.runtime, "tokens": ids})
json.dump(out, sys.stdout)
"""


def in_torch_child(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", TORCH_CHILD],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout))


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory, packaged: Any) -> dict[str, Path]:
    """The packaged model's directory copied as is, and with CLS pooling (which numpy refuses)."""
    into = tmp_path_factory.mktemp("variants")
    return {
        "copy": variant(packaged.path, into, {}),
        "cls": variant(packaged.path, into, UNSUPPORTED["cls pooling"][0]),
    }


@pytest.fixture(scope="module")
def torch_side(packaged: Any, variants: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """Everything this module compares against sentence-transformers, from one child process (torch
    loads once): the packaged model's vectors and token ids, and what ``auto`` gives for CLS pooling."""
    model = str(packaged.path)
    jobs = {
        "vectors 400": {"op": "encode", "model": model, "texts": real_texts(400)},
        "vectors 40": {"op": "encode", "model": model, "texts": real_texts(40)},
        "vectors 30": {"op": "encode", "model": model, "texts": real_texts(30)},
        "tokens 120": {"op": "tokens", "model": model, "texts": real_texts(120)},
        "cls auto 40": {
            "op": "encode",
            "model": str(variants["cls"]),
            "runtime": "auto",
            "texts": real_texts(40),
        },
    }
    answers = in_torch_child(list(jobs.values()))
    return dict(zip(jobs, answers, strict=True))


def cosines(a: list[list[float]], b: list[list[float]]) -> Any:
    x, y = np.asarray(a), np.asarray(b)
    return (x * y).sum(axis=1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))


def test_numpy_runtime_gives_the_same_vectors(packaged: Any, torch_side: dict[str, Any]) -> None:
    texts = real_texts(400)
    light = SentenceEmbedder(packaged, runtime="numpy")
    reference = torch_side["vectors 400"]
    assert light.runtime == "numpy" and reference["runtime"] == "sentence-transformers"
    ours, theirs = light.encode(texts), reference["vectors"]
    assert len(ours) == len(texts) and all(len(v) == 384 for v in ours)
    cos = cosines(ours, theirs)
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.9999, f"cosine {cos.min()} for {texts[worst][:80]!r}"
    assert np.allclose(np.linalg.norm(np.asarray(ours), axis=1), 1.0, atol=1e-5)
    # one text at a time (no padding) gives what a mixed batch gave
    alone = light.encode([texts[worst], texts[0]])
    assert cosines(alone, [ours[worst], ours[0]]).min() >= 0.99999


def test_numpy_runtime_concurrent_calls_get_their_own_vectors(packaged: Any) -> None:
    """Tool calls encode at the same time (to_thread); the worker pool and tokenizer are shared."""
    from concurrent.futures import ThreadPoolExecutor

    texts = real_texts(160)
    light = SentenceEmbedder(packaged, runtime="numpy")
    parts = [texts[i::4] for i in range(4)]
    alone = [light.encode(p) for p in parts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(light.encode, parts))
    for a, b in zip(alone, together, strict=True):
        assert len(a) == len(b) and cosines(a, b).min() >= 0.99999


def test_numpy_runtime_tokenizes_as_sentence_transformers(packaged: Any, torch_side: dict[str, Any]) -> None:
    """Same token ids, truncation at max_seq_length (256) included."""
    from kg_neo4j.embeddings.numpy_encoder import NumpyEncoder

    texts = real_texts(120)
    ours = NumpyEncoder(check_model(packaged.path)).tokenizer.encode_batch(texts)
    for text, enc, theirs in zip(texts, ours, torch_side["tokens 120"]["tokens"], strict=True):
        assert enc.ids == theirs, text[:80]
    assert max(len(e.ids) for e in ours) == 256


@pytest.mark.unit
def test_auto_runs_the_packaged_model_on_numpy_without_torch(packaged: Any) -> None:
    code = (
        "import sys; from kg_neo4j.embeddings import load_embedder; "
        "e = load_embedder('all-MiniLM-L6-v2', background=False); v = e.encode(['hello', '']); "
        "print(e.runtime, len(v), len(v[0]), 'torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.split() == ["numpy", "2", "384", "False", "False"]
    emb = load_embedder(MODEL, background=False)
    assert emb is not None and emb.runtime == "numpy"


def variant(base: Path, into: Path, edit: dict[str, Any]) -> Path:
    """A copy of the packaged model's directory (big files linked) with some JSON files changed."""
    out = into / f"variant-{len(list(into.iterdir()))}"
    shutil.copytree(base, out, ignore=shutil.ignore_patterns("*.safetensors", "*.md"))
    (out / "model.safetensors").symlink_to(base / "model.safetensors")
    for name, change in edit.items():
        path = out / name
        if change is None:
            path.unlink()
        else:
            path.write_text(json.dumps(change(json.loads(path.read_text()))))
    return out


UNSUPPORTED: dict[str, tuple[dict[str, Any], str]] = {
    "cls pooling": (
        {
            "1_Pooling/config.json": lambda c: {
                **c,
                "pooling_mode_cls_token": True,
                "pooling_mode_mean_tokens": False,
            }
        },
        "pooling",
    ),
    "relu activation": ({"config.json": lambda c: {**c, "hidden_act": "relu"}}, "hidden_act"),
    "relative positions": (
        {"config.json": lambda c: {**c, "position_embedding_type": "relative_key"}},
        "position_embedding_type",
    ),
    "another architecture": ({"config.json": lambda c: {**c, "model_type": "roberta"}}, "model_type"),
    "a Dense module": (
        {
            "modules.json": lambda m: [
                *m[:2],
                {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
            ]
        },
        "modules",
    ),
    "lower-casing in sentence-transformers": (
        {"sentence_bert_config.json": lambda c: {**c, "do_lower_case": True}},
        "sentence_bert_config.json",
    ),
    "a default prompt": (
        {
            "config_sentence_transformers.json": lambda c: {
                **c,
                "prompts": {"q": "query: "},
                "default_prompt_name": "q",
            }
        },
        "config_sentence_transformers.json",
    ),
    "no tokenizer.json": ({"tokenizer.json": None}, "tokenizer.json"),
}


@pytest.mark.unit
@pytest.mark.parametrize("case", list(UNSUPPORTED))
def test_anything_else_is_refused_by_numpy(packaged: Any, tmp_path: Path, case: str) -> None:
    edit, named = UNSUPPORTED[case]
    path = variant(packaged.path, tmp_path, edit)
    with pytest.raises(Unsupported) as info:
        check_model(path)
    assert named in str(info.value)
    model = resolve_model(str(path))
    assert model is not None
    assert SentenceEmbedder(model).runtime == "sentence-transformers"  # auto falls back
    with pytest.raises(ConfigError) as forced:
        SentenceEmbedder(model, runtime="numpy")
    message = str(forced.value)
    assert "'numpy'" in message and named in message and "'auto' or 'sentence-transformers'" in message


def test_a_model_numpy_cannot_run_is_run_by_sentence_transformers(
    variants: dict[str, Path], torch_side: dict[str, Any]
) -> None:
    """CLS pooling: what mean pooling would give is another vector, so refusing it matters."""
    model = resolve_model(str(variants["cls"]))
    assert model is not None and SentenceEmbedder(model).runtime == "sentence-transformers"
    auto = torch_side["cls auto 40"]  # encoded by what auto picked, in the child
    assert auto["runtime"] == "sentence-transformers"
    assert cosines(auto["vectors"], torch_side["vectors 40"]["vectors"]).min() < 0.99


def test_a_copy_of_the_packaged_model_runs_on_numpy(
    variants: dict[str, Path], torch_side: dict[str, Any]
) -> None:
    """A local BERT directory (not only the packaged name) gets the numpy runtime."""
    model = resolve_model(str(variants["copy"]))
    assert model is not None and SentenceEmbedder(model).runtime == "numpy"
    texts = real_texts(30)
    assert cosines(SentenceEmbedder(model).encode(texts), torch_side["vectors 30"]["vectors"]).min() >= 0.9999


@pytest.mark.unit
def test_unknown_runtime_is_an_error_naming_the_choices(packaged: Any) -> None:
    with pytest.raises(ConfigError) as info:
        SentenceEmbedder(packaged, runtime="onnx")
    assert "onnx" in str(info.value) and ", ".join(RUNTIMES) in str(info.value)


async def test_mcp_session_writes_and_finds_with_the_numpy_runtime(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = server_env(neo4j_info, KG_NEO4J_EMBEDDING_MODEL=MODEL, HF_HUB_OFFLINE="1")
    params = StdioServerParameters(command=KG, args=["serve", "--namespace", namespace], env=env)
    people = [
        {"name": "Ines", "entityType": "person", "observations": ["Keeps bees on her roof in Lisbon"]},
        {"name": "Tomas", "entityType": "person", "observations": ["Repairs vintage motorcycles"]},
        {"name": "Wren", "entityType": "person", "observations": ["Sings in a choir every Thursday"]},
    ]
    with tempfile.TemporaryFile(mode="w+") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            created = await session.call_tool("create_entities", {"entities": people})
            assert not created.is_error, getattr(created.content[0], "text", "")
            found = await session.call_tool(
                "search_memory", {"query": "who looks after insects that make honey?", "limit": 1}
            )
            assert not found.is_error, getattr(found.content[0], "text", "")
            data = found.structured_content
        errlog.seek(0)
        stderr = errlog.read()
    assert data["mode"] == "hybrid"
    assert data["hits"][0]["name"] == "Ines" and "bees" in data["hits"][0]["observation"]
    assert re.search(rf"embedding model {MODEL} loaded with the numpy runtime", stderr), stderr[-2000:]
