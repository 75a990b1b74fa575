"""What resolving a bearer token costs, per request, before any tool runs (docs/performance.md).

``Authenticator.authenticate`` for: the single ``--auth-token``; a grants-file token among N
principals (stat + constant-time compare of every hash); an OAuth JWT (RS256 and ES256, JWKS in a
local file) with its grants from the grants file.  No Neo4j and no network: the figure is the
authentication itself, the part issue #30's 1.1x target (grants vs the single token, end to end over
HTTP) can lose to.

    .venv/bin/python benchmarks/bench_auth.py [--principals 10,100,1000] [--calls 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from kg_neo4j.auth import Authenticator
from kg_neo4j.auth import grants_file as gf
from kg_neo4j.settings import Settings

ISSUER = "https://login.example.com/realms/bench"
PUBLIC = "https://memory.example.com"


async def timed(call: Callable[[], Awaitable[object]], n: int, warm: int = 100) -> tuple[float, float]:
    """p50 and p99 of ``n`` calls, in microseconds (after ``warm`` warm-up calls)."""
    for _ in range(warm):
        await call()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        await call()
        samples.append((time.perf_counter_ns() - t0) / 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def grants_file(directory: Path, principals: int) -> tuple[Path, str]:
    """A grants file of ``principals`` principals; returns it and the token of the last one."""
    path = directory / f"grants-{principals}.toml"
    entries = {}
    token = ""
    for i in range(principals):
        token = gf.new_token()
        entries[f"user{i}"] = gf.Entry(gf.hash_token(token), (gf.parse_grant(f"team-{i}/*:write"),))
    gf.write(path, gf.GrantsData(entries, {"eng": (gf.parse_grant("shared:read"),)}))
    # the steady state: a file changed within the last 2 s is parsed again on every request
    # (kg_neo4j/auth/watched.py), a cost the "just changed" row shows
    old = time.time_ns() - 60 * 10**9
    os.utime(path, ns=(old, old))
    return path, token


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--principals", default="10,100,1000")
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    n = args.calls
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        single = Authenticator.from_settings(Settings(auth_token=gf.new_token()))
        token = single._single or ""  # noqa: SLF001 - the benchmark's own token
        rows.append(("single --auth-token", *await timed(lambda: single.authenticate(token), n)))
        for count in (int(c) for c in args.principals.split(",")):
            path, last = grants_file(directory, count)
            auth = Authenticator.from_settings(Settings(grants_file=path))
            rows.append(
                (
                    f"grants file, {count} principals",
                    *await timed(lambda a=auth, t=last: a.authenticate(t), n),
                )
            )
        # a change: the next request sees a new size and parses the file again
        changes = []
        for i in range(20):
            with path.open("a", encoding="utf-8") as f:
                f.write(f"# change {i}\n")
            old = time.time_ns() - 60 * 10**9
            os.utime(path, ns=(old, old))
            t0 = time.perf_counter_ns()
            await auth.authenticate(last)
            changes.append((time.perf_counter_ns() - t0) / 1000)
        rows.append(
            (
                f"grants file, {count} principals, the request after a change",
                statistics.median(changes),
                max(changes),
            )
        )
        # within 2 s of a change: read again on every request, parsed again only if the text differs
        os.utime(path)
        rows.append(
            (
                f"grants file, {count} principals, within 2 s of a change",
                *await timed(lambda: auth.authenticate(last), 200, warm=0),
            )
        )

        rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        ec_key = ec.generate_private_key(ec.SECP256R1())
        jwks = directory / "jwks.json"
        jwks.write_text(
            json.dumps(
                {
                    "keys": [
                        {**json.loads(RSAAlgorithm.to_jwk(rsa_key.public_key())), "kid": "r"},
                        {**json.loads(ECAlgorithm.to_jwk(ec_key.public_key())), "kid": "e"},
                    ]
                }
            )
        )
        path, _ = grants_file(directory, 100)
        oauth = Authenticator.from_settings(
            Settings(oauth_issuer=ISSUER, oauth_jwks=str(jwks), public_url=PUBLIC, grants_file=path)
        )
        claims = {
            "iss": ISSUER,
            "aud": PUBLIC,
            "sub": "user7",
            "exp": int(time.time()) + 3600,
            "groups": ["eng"],
        }
        for alg, key, kid in (("RS256", rsa_key, "r"), ("ES256", ec_key, "e")):
            signed = jwt.encode(claims, key, algorithm=alg, headers={"kid": kid})
            rows.append(
                (
                    f"OAuth JWT {alg} (+ grants by subject and group)",
                    *await timed(lambda s=signed: oauth.authenticate(s), n),
                )
            )

    print(f"authenticate(), {n} calls each (microseconds)")
    print(f"{'source':<52} {'p50':>8} {'p99':>8}")
    for name, p50, p99 in rows:
        print(f"{name:<52} {p50:>8.1f} {p99:>8.1f}")


if __name__ == "__main__":
    asyncio.run(main())
