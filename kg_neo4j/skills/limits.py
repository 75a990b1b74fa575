"""The limits and thresholds of skill files, their import and crystallize_skill
(docs/knowledge.md#skill-files-import-skills-and-crystallize_skill)."""

from __future__ import annotations

from kg_neo4j.knowledge.vocabulary import Trust
from kg_neo4j.models import MAX_OBSERVATION_CHARS

#: a skill file larger than this is refused (skill files are hand-written prose)
MAX_SKILL_FILE_BYTES = 1024 * 1024
#: a knowledge item's content is at most this long (longer sections are split into parts)
MAX_CONTENT_CHARS = MAX_OBSERVATION_CHARS
#: at most this many characters of a path the caller gives
MAX_PATH_CHARS = 1024
SKILL_SUFFIX = ".md"
SOURCE_PREFIX = "skills/"
HEADING_JOIN = " > "

#: crystallize: share of an item's content words a section must contain for the item to count as reflected
LEXICAL_THRESHOLD = 0.6
#: crystallize with an embedding model: cosine similarity at which a section reflects an item
SEMANTIC_THRESHOLD = 0.8
#: crystallize with an embedding model: knowledge less similar to the topic than this (and sharing no content
#: word with it) is not about the topic (all-MiniLM-L6-v2: unrelated sentences score below 0.1, "authentication"
#: against "Rotate the JWT signing keys every 90 days" 0.23)
TOPIC_MIN_SIMILARITY = 0.15
#: crystallize: at most this many skill files in one call, and sections embedded at most
MAX_SKILL_PATHS = 50
MAX_EMBEDDED_SECTIONS = 2000
#: crystallize: at most this many characters of skill files in one call
MAX_SKILL_CHARS_PER_CALL = 4 * 1024 * 1024
DEFAULT_CRYSTALLIZE_LIMIT = 20
MAX_CRYSTALLIZE_LIMIT = 100

#: the trust an import may give (a principle needs the expert's exact quote)
IMPORT_TRUSTS = (Trust.PATTERN, Trust.INFERENCE)
