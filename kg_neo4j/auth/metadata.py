"""The OAuth protected-resource metadata (RFC 9728) that tells MCP clients where to get a token.

One resource for every ``/mcp/<namespace>``: the server's public base URL, which is also the audience
tokens must carry (unless ``oauth_audience`` says otherwise).  Built with the MCP SDK's own model.
"""

from __future__ import annotations

from typing import Any

from kg_neo4j.auth.grants import SCOPES
from kg_neo4j.settings import Settings


def base_url(settings: Settings) -> str:
    """The server's public base URL: ``public_url`` (no trailing ``/``), else ``http://host:port``."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    host = f"[{settings.host}]" if ":" in settings.host else settings.host  # an IPv6 literal
    return f"http://{host}:{settings.port}"


def audiences(settings: Settings) -> list[str]:
    """The ``aud`` values accepted: ``oauth_audience``, else the base URL with or without its final
    ``/`` (providers differ in how they copy the resource they were asked for)."""
    if settings.oauth_audience:
        return [settings.oauth_audience]
    base = base_url(settings)
    return [base, base + "/"]


def protected_resource_metadata(settings: Settings) -> dict[str, Any]:
    """The RFC 9728 document (JSON-ready): resource, authorization_servers, bearer methods, scopes."""
    from mcp.shared.auth import ProtectedResourceMetadata  # here: importing mcp costs `kg-neo4j token` 0.7 s

    if not settings.oauth_issuer:
        raise ValueError("protected-resource metadata needs oauth_issuer")
    # validated from strings, not AnyHttpUrl objects: the model keeps an empty path empty
    # ("https://memory.example.com", the audience as configured), AnyHttpUrl alone would add a "/"
    doc = ProtectedResourceMetadata.model_validate(
        {
            "resource": base_url(settings),
            "authorization_servers": [settings.oauth_issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": list(SCOPES),
        }
    )
    return doc.model_dump(mode="json", by_alias=True, exclude_none=True)


def resource_metadata_url(settings: Settings) -> str:
    """Where the document is served (RFC 9728, section 3.1): ``<origin>/.well-known/oauth-protected-resource``
    followed by the base URL's path, if it has one."""
    from mcp.server.auth.routes import build_resource_metadata_url
    from pydantic import AnyHttpUrl

    return str(build_resource_metadata_url(AnyHttpUrl(base_url(settings))))
