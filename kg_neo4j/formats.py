"""The file formats of ``kg-neo4j import`` and ``export`` (README "Moving over"): names only, so the
command line can offer them without importing the code that reads and writes them."""

IMPORT_FORMATS = ("jsonl", "memory-json", "simple-memory", "memorymesh", "full")
EXPORT_FORMATS = ("jsonl", "memorymesh", "simple-memory", "full")
