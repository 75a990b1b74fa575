"""The file formats of ``kg-neo4j import`` and ``export`` (docs/moving-over.md): names only, so the
command line can offer them without importing the code that reads and writes them."""

IMPORT_FORMATS = ("jsonl", "memory-json", "simple-memory", "memorymesh", "full")
EXPORT_FORMATS = ("jsonl", "memorymesh", "simple-memory", "full")

#: The header of kg-neo4j's own lossless export (kg_neo4j.transfer: the ``full`` format).
FULL_FORMAT = "kg-neo4j-full"
FULL_VERSION = 1
