"""sentence-transformers (and torch with it) is an optional extra: the packaged model runs without it, and a
model that needs it is a one-line error naming the extra, at start.

Each case runs in a child Python in which ``sentence_transformers`` cannot be imported (``sys.modules``
holds None for it, as when it is not installed), so this process never imports torch.  The installed-wheel
step of .ci/run checks the same on a real install without it (``import torch`` fails there).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kg_neo4j.embeddings.model_files import PACKAGED_MODEL_DIR

pytestmark = pytest.mark.unit

WITHOUT_ST = "import sys\nsys.modules['sentence_transformers'] = None\n"


def child(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_ST + code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_the_packaged_model_embeds_without_sentence_transformers() -> None:
    got = child(
        "import json\n"
        "from kg_neo4j.embeddings import SentenceEmbedder, resolve_model\n"
        "e = SentenceEmbedder(resolve_model('all-MiniLM-L6-v2'))\n"
        "v = e.encode(['Alice speaks Portuguese'])[0]\n"
        "print(json.dumps({'runtime': e.runtime, 'dim': len(v), 'norm': sum(x * x for x in v),\n"
        "                  'torch': 'torch' in sys.modules}))\n"
    )
    assert got["runtime"] == "numpy" and got["dim"] == 384 and got["torch"] is False
    assert abs(float(got["norm"]) - 1.0) < 1e-4  # normalised, as sentence-transformers gives them


@pytest.mark.parametrize("runtime", ["auto", "sentence-transformers"])
def test_a_model_that_needs_the_extra_is_an_error_naming_it(tmp_path: Path, runtime: str) -> None:
    model = tmp_path / "roberta-like"
    shutil.copytree(PACKAGED_MODEL_DIR, model)
    if runtime == "auto":  # a model the numpy runtime cannot run, so auto would take sentence-transformers
        config = json.loads((model / "config.json").read_text())
        (model / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    got = child(
        "import json\n"
        "from kg_neo4j.embeddings import SentenceEmbedder, resolve_model\n"
        "from kg_neo4j.errors import ConfigError\n"
        "try:\n"
        f"    SentenceEmbedder(resolve_model({str(model)!r}), runtime={runtime!r})\n"
        "    print(json.dumps({'error': None}))\n"
        "except ConfigError as exc:\n"
        "    print(json.dumps({'error': str(exc)}))\n"
    )
    error = str(got["error"])
    assert "pip install 'kg-neo4j[sentence-transformers]'" in error, error
    assert str(model) in error and "\n" not in error
    assert ("model_type" in error) if runtime == "auto" else ("'sentence-transformers' was chosen" in error)
