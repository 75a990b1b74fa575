"""The numpy embedding runtime gives sentence-transformers' vectors for the packaged model, is
chosen by ``auto`` only for models it runs exactly, and serves a real MCP session end to end.

Real model (the installed all-MiniLM-L6-v2), real texts (tests/data/embeddings/reference.json:
questions and turns of the recall set plus over-long, many-script, emoji, whitespace and empty
texts), real Neo4j, real MCP client.  sentence-transformers' vectors and token ids for those texts
are stored beside them by tests/data/embeddings/make_reference.py (run by hand with torch), so the
suite needs no torch.  The one live comparison is marked ``sentence_transformers`` and runs only
when selected (``pytest -m sentence_transformers``, with the extra; without it, it fails, not skips).
Speed is measured in benchmarks (docs/performance.md), not here.
"""

from __future__ import annotations

import json
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
DATA = ROOT / "tests" / "data" / "embeddings"
MODEL = "all-MiniLM-L6-v2"
#: Cosine of each numpy vector with sentence-transformers' own: measured at worst 0.99999994 (float16 weights
#: would give 0.999999: docs/performance.md, "The packaged model's weights in float16").
TOLERANCE = 0.99999


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    """The stored texts, sentence-transformers' token ids and vectors (row i for text i)."""
    ref = json.loads((DATA / "reference.json").read_text(encoding="utf-8"))
    ref["vectors"] = np.load(DATA / "reference_vectors.npy", allow_pickle=False)
    assert len(ref["texts"]) == len(ref["tokens"]) == ref["vectors"].shape[0] == 200
    return dict(ref)


@pytest.fixture(scope="module")
def packaged() -> Any:
    info = resolve_model(MODEL)
    assert info is not None
    return info


def cosines(a: Any, b: Any) -> Any:
    x, y = np.asarray(a), np.asarray(b)
    return (x * y).sum(axis=1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))


@pytest.mark.line_independent
def test_numpy_runtime_gives_the_same_vectors(packaged: Any, reference: dict[str, Any]) -> None:
    texts = reference["texts"]
    light = SentenceEmbedder(packaged, runtime="numpy")
    assert light.runtime == "numpy"
    ours = light.encode(texts)
    assert len(ours) == len(texts) and all(len(v) == 384 for v in ours)
    cos = cosines(ours, reference["vectors"])
    worst = int(np.argmin(cos))
    assert cos.min() >= TOLERANCE, f"cosine {cos.min()} for {texts[worst][:80]!r}"
    assert np.allclose(np.linalg.norm(np.asarray(ours), axis=1), 1.0, atol=1e-5)
    # one text at a time (no padding) gives what a mixed batch gave
    alone = light.encode([texts[worst], texts[0]])
    assert cosines(alone, [ours[worst], ours[0]]).min() >= 0.99999


@pytest.mark.line_independent
def test_numpy_runtime_concurrent_calls_get_their_own_vectors(
    packaged: Any, reference: dict[str, Any]
) -> None:
    """Tool calls encode at the same time (to_thread); the worker pool and tokenizer are shared."""
    from concurrent.futures import ThreadPoolExecutor

    texts = reference["texts"][:160]
    light = SentenceEmbedder(packaged, runtime="numpy")
    parts = [texts[i::4] for i in range(4)]
    alone = [light.encode(p) for p in parts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(light.encode, parts))
    for a, b in zip(alone, together, strict=True):
        assert len(a) == len(b) and cosines(a, b).min() >= 0.99999


@pytest.mark.unit
def test_numpy_runtime_tokenizes_as_sentence_transformers(packaged: Any, reference: dict[str, Any]) -> None:
    """Same token ids, truncation at max_seq_length (256) included."""
    from kg_neo4j.embeddings.numpy_encoder import NumpyEncoder

    texts = reference["texts"]
    ours = NumpyEncoder(check_model(packaged.path)).tokenizer.encode_batch(texts)
    for text, enc, theirs in zip(texts, ours, reference["tokens"], strict=True):
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


def auto_runtime(model: Any, named: str) -> str:
    """The runtime ``auto`` picks; without the extra (the test venv), its error names the extra and why."""
    try:
        return SentenceEmbedder(model).runtime
    except ConfigError as exc:
        assert "pip install 'kg-neo4j[sentence-transformers]'" in str(exc) and named in str(exc)
        return "sentence-transformers"


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
    assert auto_runtime(model, named) == "sentence-transformers"  # auto falls back
    with pytest.raises(ConfigError) as forced:
        SentenceEmbedder(model, runtime="numpy")
    message = str(forced.value)
    assert "'numpy'" in message and named in message and "'auto' or 'sentence-transformers'" in message


@pytest.mark.line_independent
def test_a_copy_of_the_packaged_model_runs_on_numpy(
    packaged: Any, tmp_path: Path, reference: dict[str, Any]
) -> None:
    """A local BERT directory (not only the packaged name) gets the numpy runtime."""
    model = resolve_model(str(variant(packaged.path, tmp_path, {})))
    assert model is not None and SentenceEmbedder(model).runtime == "numpy"
    vectors = SentenceEmbedder(model).encode(reference["texts"][:30])
    assert cosines(vectors, reference["vectors"][:30]).min() >= TOLERANCE


#: The live side, run in a child process so that pytest itself never imports torch (its exit then prints
#: nothing after pytest's summary): the packaged model's vectors from kg-neo4j's sentence-transformers
#: runtime, and what ``auto`` picks and gives for the same model with CLS pooling.
LIVE_CHILD = """
import json, sys
from kg_neo4j.embeddings import SentenceEmbedder, resolve_model
job = json.load(sys.stdin)
out = {}
for key, model, runtime in (("st", job["model"], "sentence-transformers"), ("cls", job["cls"], "auto")):
    emb = SentenceEmbedder(resolve_model(model), runtime=runtime)
    out[key] = {"runtime": emb.runtime, "vectors": [list(map(float, v)) for v in emb.encode(job["texts"])]}
json.dump(out, sys.stdout)
"""


@pytest.mark.sentence_transformers
def test_live_sentence_transformers_agree_with_numpy_and_the_reference(
    packaged: Any, tmp_path: Path, reference: dict[str, Any]
) -> None:
    """Opt-in (``pytest -m sentence_transformers``, needs the extra): sentence-transformers itself, on
    the packaged weights, gives the numpy runtime's vectors and the stored reference; and a
    model numpy cannot run (CLS pooling) is run by sentence-transformers, giving other vectors."""
    texts = reference["texts"]
    cls = variant(packaged.path, tmp_path, UNSUPPORTED["cls pooling"][0])
    done = subprocess.run(
        [sys.executable, "-c", LIVE_CHILD],
        input=json.dumps({"model": str(packaged.path), "cls": str(cls), "texts": texts}),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    live = json.loads(done.stdout)
    assert (
        live["st"]["runtime"] == "sentence-transformers" and live["cls"]["runtime"] == "sentence-transformers"
    )
    ours = SentenceEmbedder(packaged, runtime="numpy").encode(texts)
    assert cosines(ours, live["st"]["vectors"]).min() >= 0.99999
    assert cosines(live["st"]["vectors"], reference["vectors"]).min() >= TOLERANCE
    assert cosines(live["cls"]["vectors"], live["st"]["vectors"]).min() < 0.99


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
