from datetime import timedelta, timezone, datetime
import pytest
from kg_neo4j.models import EntityIn, RelationIn, RelationInvalidate, RelationUpdate, TraverseIn
from kg_neo4j.errors import NotFoundError

def R(a,b,t="knows",**kw): return RelationIn.model_validate({"from":a,"to":b,"relationType":t,**kw})

async def test_probe(store, clock, sync_driver, neo4j_info, namespace):
    t0 = clock.now()
    await store.create_entities([EntityIn(name=n, entityType="t", observations=[]) for n in "ABCD"])
    # 1: future validFrom dedupe
    fut = (t0 + timedelta(days=5)).isoformat()
    a = await store.create_relations([R("A","B","f", validFrom=fut)])
    b = await store.create_relations([R("A","B","f", validFrom=fut)])
    print("future dup:", len(a), len(b))
    # 2: invalidate with validUntil before valid_from
    await store.create_relations([R("A","C","x")])
    try:
        r = await store.invalidate_relations([RelationInvalidate.model_validate({"from":"A","to":"C","relationType":"x","validUntil":(t0-timedelta(days=1)).isoformat()})])
        print("invalidate before valid_from ->", r)
    except Exception as e:
        print("invalidate err", type(e), e)
    # 3: update validUntil before validFrom
    await store.create_relations([R("A","D","y")])
    try:
        r = await store.update_relations([RelationUpdate.model_validate({"from":"A","to":"D","relationType":"y","validUntil":(t0-timedelta(days=1)).isoformat()})])
        print("update until<from ->", r)
    except Exception as e:
        print("update err", type(e), e)
    # 9: asOf with +05:00
    await store.create_relations([R("B","C","z")])
    at = (t0 + timedelta(hours=1)).astimezone(timezone(timedelta(hours=5)))
    g = await store.read_graph(as_of=at)
    print("tz asOf rels", [(r.from_, r.to, r.relationType) for r in g.relations])
    at = (t0 - timedelta(hours=1)).astimezone(timezone(timedelta(hours=-5)))
    g = await store.read_graph(as_of=at)
    print("tz asOf before", [(r.from_, r.to, r.relationType) for r in g.relations], [e.name for e in g.entities])
    # weight bool/str
    for w in (True, "0.5"):
        try:
            print("weight", repr(w), R("A","B",weight=w).weight)
        except Exception as e:
            print("weight", repr(w), "rejected")
    # created valid_until in past
    try:
        r = await store.create_relations([R("C","D","past", validFrom=(t0-timedelta(days=3)).isoformat(), validUntil=(t0-timedelta(days=2)).isoformat())])
        print("past window created", r)
        g = await store.read_graph(as_of=t0-timedelta(days=2, hours=12))
        print("asOf in past window", [(x.from_, x.to, x.relationType) for x in g.relations])
    except Exception as e:
        print("past err", e)
