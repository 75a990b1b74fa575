"""Placeholder until its helper lands it."""

from __future__ import annotations

import argparse

from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    raise ConfigError("not implemented yet")
