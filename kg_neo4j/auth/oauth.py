"""OAuth 2.1 resource server: JWT access tokens checked with PyJWT against the issuer's keys
(docs/team.md#oauth).

Only asymmetric algorithms are accepted (an HS* token "signed" with the public key as its secret is
the classic key-confusion attack; ``none`` is no signature).  The key is chosen by the token's ``kid``
among the JWKS's signing keys and must fit the token's algorithm.  The claims checked: signature,
``iss``, ``aud``, ``exp`` (required), ``nbf`` and ``iat`` when present, and the subject claim
(required), with :data:`LEEWAY_SECONDS` for clock skew.  Every refusal is an :class:`AuthError`
whose reason never contains the token.  No cryptography is written here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
import jwt
from jwt import PyJWK, PyJWKClient, PyJWKSet

from kg_neo4j.auth.grants import AuthError
from kg_neo4j.auth.watched import Unreadable, WatchedFile
from kg_neo4j.errors import ConfigError

log = logging.getLogger("kg_neo4j.auth")

#: Clock skew tolerated on ``exp``, ``nbf`` and ``iat``, in seconds.
LEEWAY_SECONDS = 30
#: The algorithms a token may be signed with, by the key type (JWK ``kty``) each needs.
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "RSA": ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
    "EC": ("ES256", "ES384", "ES512"),
    "OKP": ("EdDSA",),
}
ALLOWED_ALGORITHMS = tuple(alg for algs in ALGORITHMS.values() for alg in algs)
#: How long keys fetched from a JWKS URL are kept before they are fetched again, by default
#: (``KG_NEO4J_OAUTH_JWKS_LIFESPAN``).  An unknown ``kid`` fetches at most once per PyJWT's cooldown
#: (30 s, or the lifespan when shorter), so random kids cannot make us hammer the issuer.
JWKS_LIFESPAN_SECONDS = 300.0
JWKS_COOLDOWN_SECONDS = 30.0


@dataclass(frozen=True)
class Identity:
    """What a verified token says about its bearer."""

    subject: str
    groups: tuple[str, ...]


def _parse_jwks(text: str) -> PyJWKSet:
    try:
        jwks = PyJWKSet.from_dict(json.loads(text))
    except (jwt.PyJWTError, TypeError, AttributeError, KeyError) as exc:
        raise ValueError(f"not a JWKS with a usable key ({exc})") from None
    if not any(k.key_type in ALGORITHMS and k.public_key_use in ("sig", None) for k in jwks.keys):
        raise ValueError("not a JWKS with a usable key (no RSA, EC or OKP signing key)")
    return jwks


class JwtVerifier:
    """Verifies JWT access tokens of ``issuer`` for ``audience`` (any of them, when several)."""

    def __init__(
        self,
        issuer: str,
        jwks: str,
        audience: str | Sequence[str],
        *,
        subject_claim: str = "sub",
        groups_claim: str = "groups",
        leeway: float = LEEWAY_SECONDS,
        jwks_lifespan: float = JWKS_LIFESPAN_SECONDS,
    ) -> None:
        self.issuer = issuer
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        self.subject_claim = subject_claim
        self.groups_claim = groups_claim
        self.leeway = leeway
        self._client: PyJWKClient | None = None
        self._file: WatchedFile[PyJWKSet] | None = None
        if jwks.startswith(("http://", "https://")):
            self._client = PyJWKClient(
                jwks,
                cache_jwk_set=True,
                lifespan=jwks_lifespan,
                timeout=10,
                cooldown_duration=min(JWKS_COOLDOWN_SECONDS, jwks_lifespan),
            )
        else:
            self._file = WatchedFile(Path(jwks), _parse_jwks, "JWKS file")
            try:
                self._file.get()
            except Unreadable as exc:
                raise ConfigError(f"KG_NEO4J_OAUTH_JWKS: {exc}") from None

    async def verify(self, token: str) -> Identity:
        """The token's subject and groups; :class:`AuthError` naming the problem when it is not valid."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise AuthError("malformed token") from None
        alg = header.get("alg")
        if alg not in ALLOWED_ALGORITHMS:
            raise AuthError(f"unsupported algorithm {alg!r}")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise AuthError("malformed token")
        key = await self._key(kid)
        if not _fits(key, alg):
            raise AuthError(f"key {key.key_id!r} is not for algorithm {alg}")
        claims = self._decode(token, key, alg)
        subject = claims.get(self.subject_claim)
        if not isinstance(subject, str) or not subject:
            raise AuthError(f"claim {self.subject_claim!r} must be a non-empty string")
        return Identity(subject, self._groups(claims))

    def _decode(self, token: str, key: PyJWK, alg: str) -> dict[str, Any]:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud", self.subject_claim]},
            )
        except jwt.ExpiredSignatureError:
            raise AuthError("token expired") from None
        except jwt.ImmatureSignatureError:
            raise AuthError("token not yet valid") from None
        except jwt.InvalidAudienceError:
            raise AuthError("wrong audience") from None
        except jwt.InvalidIssuerError:
            raise AuthError("wrong issuer") from None
        except jwt.InvalidSignatureError:
            raise AuthError("bad signature") from None
        except jwt.exceptions.InvalidSubjectError:
            raise AuthError("claim 'sub' must be a non-empty string") from None
        except jwt.MissingRequiredClaimError as exc:
            raise AuthError(f"missing claim {exc.claim!r}") from None
        except jwt.PyJWTError as exc:  # DecodeError, InvalidIssuedAtError, a non-numeric exp...
            log.debug("token refused: %s", exc)
            raise AuthError("malformed token") from None
        return claims

    async def _key(self, kid: str | None) -> PyJWK:
        if self._file is not None:
            try:
                keys = [k for k in self._file.get().keys if k.public_key_use in ("sig", None)]
            except Unreadable:
                raise AuthError("the server cannot read its OAuth keys") from None
        else:
            assert self._client is not None
            client = self._client
            try:
                if kid is not None:  # PyJWKClient re-fetches once (after its cooldown) for an unknown kid
                    return await anyio.to_thread.run_sync(client.get_signing_key, kid)
                keys = await anyio.to_thread.run_sync(client.get_signing_keys)
            except jwt.PyJWKClientConnectionError as exc:
                log.error("cannot fetch the OAuth issuer's keys: %s", exc)
                raise AuthError("the server cannot fetch the issuer's keys") from None
            except jwt.PyJWKClientError:
                raise AuthError(f"unknown key id {kid!r}" if kid else "token has no key id") from None
        if kid is None:
            if len(keys) == 1:  # a JWKS of one key: a token without kid can only mean it
                return keys[0]
            raise AuthError("token has no key id")
        for key in keys:
            if key.key_id == kid:
                return key
        raise AuthError(f"unknown key id {kid!r}")

    def _groups(self, claims: dict[str, Any]) -> tuple[str, ...]:
        value = claims.get(self.groups_claim)
        if value is None:
            return ()
        if isinstance(value, str):  # some providers send a single group as a string
            return (value,)
        if isinstance(value, list) and all(isinstance(g, str) for g in value):
            return tuple(value)
        raise AuthError(f"claim {self.groups_claim!r} must be a list of strings")


def _fits(key: PyJWK, alg: str) -> bool:
    """Whether ``key`` may verify ``alg``: the ``alg`` the JWK declares if it does, else any RSA
    algorithm for an RSA key, and for EC and OKP keys the one their curve implies (PyJWK's guess)."""
    declared = key._jwk_data.get("alg")  # noqa: SLF001 - PyJWK keeps the JWK's members only there
    if alg not in ALGORITHMS.get(str(key.key_type), ()):
        return False
    if isinstance(declared, str):
        return alg == declared
    return key.key_type == "RSA" or alg == key.algorithm_name
