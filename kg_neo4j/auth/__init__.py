"""Who is calling and what they may do: principals, grants and scopes, the grants file, OAuth JWT
verification and the protected-resource metadata (docs/team.md).

No I/O beyond the grants and JWKS files and the issuer's JWKS URL; the HTTP side
(kg_neo4j/server/http.py) asks :class:`Authenticator` on each request.
"""

from __future__ import annotations

from kg_neo4j.auth.authenticator import SINGLE_TOKEN_PRINCIPAL, Authenticator
from kg_neo4j.auth.grants import SCOPES, AuthError, Grant, Principal, Scope, allows, parse_grant
from kg_neo4j.auth.grants_file import GrantsFile
from kg_neo4j.auth.metadata import base_url, protected_resource_metadata, resource_metadata_url
from kg_neo4j.auth.oauth import JwtVerifier

__all__ = [
    "SCOPES",
    "SINGLE_TOKEN_PRINCIPAL",
    "AuthError",
    "Authenticator",
    "Grant",
    "GrantsFile",
    "JwtVerifier",
    "Principal",
    "Scope",
    "allows",
    "base_url",
    "parse_grant",
    "protected_resource_metadata",
    "resource_metadata_url",
]
