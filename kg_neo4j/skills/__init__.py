"""Skill markdown and the knowledge graph (docs/knowledge-model.md#skill-files).

Four modules, one job each: ``paths`` (safe paths: the only way a skill file is found and read),
``markdown`` (a file cut into sections and sections into knowledge items), ``importer`` (a skill tree
stored as knowledge), ``sync`` (crystallize: which knowledge a skill file does not reflect yet); their
limits in ``limits``.  The names the server and the tests use are importable from here.
"""

from kg_neo4j.skills.importer import import_skill_tree
from kg_neo4j.skills.limits import (
    DEFAULT_CRYSTALLIZE_LIMIT,
    LEXICAL_THRESHOLD,
    MAX_CRYSTALLIZE_LIMIT,
    MAX_PATH_CHARS,
    MAX_SKILL_FILE_BYTES,
    MAX_SKILL_PATHS,
    SEMANTIC_THRESHOLD,
)
from kg_neo4j.skills.markdown import (
    check_import_labels,
    infer_type,
    knowledge_name,
    skill_knowledge,
    split_sections,
)
from kg_neo4j.skills.paths import list_skill_files, read_skill_file, resolve_skill_path, skills_root
from kg_neo4j.skills.sync import CrystallizeResult, content_words, coverage, crystallize

__all__ = [
    "DEFAULT_CRYSTALLIZE_LIMIT",
    "LEXICAL_THRESHOLD",
    "MAX_CRYSTALLIZE_LIMIT",
    "MAX_PATH_CHARS",
    "MAX_SKILL_FILE_BYTES",
    "MAX_SKILL_PATHS",
    "SEMANTIC_THRESHOLD",
    "CrystallizeResult",
    "check_import_labels",
    "content_words",
    "coverage",
    "crystallize",
    "import_skill_tree",
    "infer_type",
    "knowledge_name",
    "list_skill_files",
    "read_skill_file",
    "resolve_skill_path",
    "skill_knowledge",
    "skills_root",
    "split_sections",
]
