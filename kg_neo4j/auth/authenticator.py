"""Who is calling: a bearer token resolved to a :class:`Principal` (docs/team.md).

Three sources, any together: the single ``--auth-token`` (principal ``token``, ``write`` on the
configured namespace), the grants file (tokens by SHA-256), OAuth JWTs (principal = the subject claim,
grants from the grants file by subject and by the groups claim).
"""

from __future__ import annotations

import hmac

from kg_neo4j.auth.grants import AuthError, Grant, Principal
from kg_neo4j.auth.grants_file import GrantsFile, hash_token
from kg_neo4j.auth.metadata import audiences
from kg_neo4j.auth.oauth import JwtVerifier
from kg_neo4j.auth.watched import Unreadable
from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import Settings

#: The principal the single ``--auth-token`` resolves to.
SINGLE_TOKEN_PRINCIPAL = "token"


class Authenticator:
    """Resolves a bearer token to a Principal; :meth:`from_settings` builds it."""

    def __init__(
        self,
        *,
        single_token: str | None = None,
        namespace: str = "default",
        grants_file: GrantsFile | None = None,
        verifier: JwtVerifier | None = None,
    ) -> None:
        self._single = single_token or None
        self._single_principal = Principal(SINGLE_TOKEN_PRINCIPAL, (Grant.exact(namespace, "write"),))
        self.grants_file = grants_file
        self.verifier = verifier

    @classmethod
    def from_settings(cls, settings: Settings) -> Authenticator:
        """A ConfigError names the setting at fault (a missing grants file, OAuth half configured)."""
        grants_file = GrantsFile.open(settings.grants_file) if settings.grants_file is not None else None
        verifier = None
        if settings.oauth_issuer and not settings.oauth_jwks:
            raise ConfigError(
                "KG_NEO4J_OAUTH_JWKS must be set with KG_NEO4J_OAUTH_ISSUER: "
                "the issuer's JWKS URL or the path of a local JWKS file"
            )
        if settings.oauth_jwks and not settings.oauth_issuer:
            raise ConfigError(
                "KG_NEO4J_OAUTH_ISSUER must be set with KG_NEO4J_OAUTH_JWKS: the tokens' issuer"
            )
        if settings.oauth_issuer and settings.oauth_jwks:
            verifier = JwtVerifier(
                settings.oauth_issuer,
                settings.oauth_jwks,
                audiences(settings),
                subject_claim=settings.oauth_subject_claim,
                groups_claim=settings.oauth_groups_claim,
                jwks_lifespan=settings.oauth_jwks_lifespan,
            )
        return cls(
            single_token=settings.auth_token,
            namespace=settings.namespace,
            grants_file=grants_file,
            verifier=verifier,
        )

    @property
    def enabled(self) -> bool:
        """False: no token, no grants file, no OAuth (every request is let in, as before)."""
        return bool(self._single or self.grants_file or self.verifier)

    @property
    def oauth(self) -> bool:
        return self.verifier is not None

    async def authenticate(self, token: str) -> Principal:
        """The token's principal; :class:`AuthError` with a reason safe to show when it is not valid."""
        if not token:
            raise AuthError("no bearer token")
        # digests compared, not the strings: compare_digest's time still tells a length apart
        if self._single is not None and hmac.compare_digest(hash_token(token), hash_token(self._single)):
            return self._single_principal
        if self.grants_file is not None:
            try:
                principal = self.grants_file.by_token(token)
            except Unreadable:
                principal = None
                if self.verifier is None or not _looks_like_jwt(token):
                    raise AuthError("the server's grants file is broken: no token is accepted") from None
            if principal is not None:
                return principal
        if self.verifier is not None and _looks_like_jwt(token):
            identity = await self.verifier.verify(token)
            if self.grants_file is None:
                return Principal(identity.subject, ())
            try:
                return self.grants_file.by_subject(identity.subject, identity.groups)
            except Unreadable:
                raise AuthError("the server's grants file is broken: no token is accepted") from None
        raise AuthError("unknown token")


def _looks_like_jwt(token: str) -> bool:
    """A compact JWS: three dot-separated parts (the grants file's tokens have no dot)."""
    return token.count(".") == 2
