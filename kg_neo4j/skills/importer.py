"""**import-skills** (``import_skill_tree``; the command: :mod:`kg_neo4j.commands.skills`): every ``.md`` file under the directory (sorted;
hidden files and directories left out, directory links not followed, each file read through
``read_skill_file`` so a file link leading out of the directory is reported and skipped),
stored in batches (one transaction each) with ``existing="skip"``: a name already taken is
skipped, so running it again stores only sections that are new.  A section whose text
changed keeps its stored content (change it with ``update_knowledge``).  The configured
embedding model embeds what is stored, as the server does.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import (
    KnowledgeIn,
)
from kg_neo4j.skills.markdown import check_import_labels, skill_knowledge
from kg_neo4j.skills.paths import list_skill_files, read_skill_file, skills_root
from kg_neo4j.store.knowledge import KnowledgeStore

log = logging.getLogger("kg_neo4j.skills")

MAX_REPORTED_FILES = 20


async def import_skill_tree(
    ks: KnowledgeStore,
    directory: Path,
    *,
    knowledge_type: str | None = None,
    trust: str = "pattern",
    category: str = "creative",
    batch_size: int = 200,
    progress: bool = True,
) -> dict[str, Any]:
    """Store every section of the ``.md`` files under ``directory`` (sorted) as knowledge, in
    batches of ``batch_size`` items (one transaction each) with ``existing="skip"``: a name
    already taken is counted as skipped, so running it again stores nothing new.

    A file that cannot be read safely (a link leading out, over the size cap, not UTF-8) is
    reported in ``rejected_files`` and the others are imported."""
    kind, t, cat = check_import_labels(knowledge_type, trust, category)
    if batch_size < 1:
        raise ValidationError("batch size must be at least 1", field="batch_size")
    root = skills_root(directory)
    files = list_skill_files(root)
    report: dict[str, Any] = {
        "directory": str(root),
        "namespace": ks.graph.namespace,
        "files": 0,
        "sections": 0,
        "stored": 0,
        "skipped": 0,
        "rejected": 0,
        "rejected_files": [],
    }
    batch: list[KnowledgeIn] = []
    names: set[str] = set()

    async def flush() -> None:
        if batch:
            stored = await ks.store(batch, existing="skip")
            report["stored"] += len(stored)
            report["skipped"] += len(batch) - len(stored)
            batch.clear()

    with tqdm(
        total=len(files),
        desc="import skills",
        unit="file",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for rel in files:
            try:
                _, text = read_skill_file(root, rel)
            except ValidationError as exc:
                report["rejected"] += 1
                if len(report["rejected_files"]) < MAX_REPORTED_FILES:
                    report["rejected_files"].append({"path": rel, "error": str(exc)})
                log.warning("import-skills: %s", exc)
                bar.update(1)
                continue
            items = skill_knowledge(rel, text, knowledge_type=kind, trust=t, category=cat)
            report["files"] += 1
            report["sections"] += len(items)
            for item in items:
                if item.name in names:  # only a file named like another's heading path can do this
                    report["skipped"] += 1
                    continue
                names.add(item.name)
                batch.append(item)
                if len(batch) >= batch_size:
                    await flush()
            bar.update(1)
        await flush()
    return report
