"""One declaration per tool: everything about it in one place.

    @tool(
        "update_relations",
        description=...,
        input=UpdateRelationsIn,
        output=Changed,
        profiles=(D, A),
        example={"relations": [...]},
    )
    async def update_relations(rt: Runtime, req: UpdateRelationsIn) -> ToolOutput: ...

From the declaration come the advertised input schema (the input model's JSON schema, closed with
``additionalProperties: false``), the output schema, the annotations, the profiles that list the tool
(names in ``server/profiles.py``), an example call (valid against the seed graph of
``server/examples.py``: the docs show it, tests/test_input_sweep.py calls it and mutates it) and the
validation: the handler receives the validated model, never the raw arguments.  Validation is strict
(docs/input-validation.md#input-validation-and-limits): the arguments are checked as the JSON they came as, in one pydantic-core
pass (lists included), with no coercion between JSON types, no NaN or Infinity, and unknown fields
an error naming them, except in the ``reference`` profile, where they are stripped as the reference
server does.

Two explicit overrides of the advertised schema exist: ``reference_schema`` (the reference's exact JSON (docs/reference-schemas.md),
``reference_tools.json``, advertised in the ``reference`` profile) and ``schema`` (a hand-written
schema, e.g. MemoryMesh's schemas (docs/memorymesh.md)); tests/test_declarations.py checks that such a schema
names the same fields as the model that checks it.

Declaring a tool registers it: the server serves every tool declared in a module of
``kg_neo4j.server`` (:func:`kg_neo4j.server.app.builtin_tools` imports them all), so the declaration
is the only place a tool is named.  Tools made per server from schema files (``mesh_generated``) are
declared with ``builtin=False`` and not registered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pydantic
import pydantic_core

from kg_neo4j.errors import ValidationError
from kg_neo4j.server.registry import ErrorText, Runtime, ToolOutput, ToolSpec, schema_of

M = TypeVar("M", bound=pydantic.BaseModel)
TypedHandler = Callable[[Runtime, M], Awaitable[ToolOutput]]

#: declaring module -> its built-in tools, in the order declared.
_DECLARED: dict[str, list[ToolSpec]] = {}


def register(spec: ToolSpec, module: str) -> ToolSpec:
    """Serve ``spec`` as a built-in tool declared by ``module`` (``@tool`` does this; call it for a tool
    made from another, e.g. MemoryMesh's reads renamed in ``all``)."""
    _DECLARED.setdefault(module, []).append(spec)
    return spec


def declared() -> dict[str, list[ToolSpec]]:
    """The built-in tools registered so far, by declaring module (in the order declared)."""
    return {module: list(specs) for module, specs in _DECLARED.items()}


def closed(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``additionalProperties: false`` on every object that lists its properties and
    says nothing about others (an object that states ``additionalProperties`` keeps it)."""
    out: dict[str, Any] = closed_node(schema)
    return out


#: Keywords whose value maps names to schemas (not a schema itself), and ones holding plain values.
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_VALUES = frozenset({"default", "examples", "enum", "const", "required"})


def closed_node(node: Any) -> Any:
    if isinstance(node, list):
        return [closed_node(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: (
            {name: closed_node(sub) for name, sub in v.items()}
            if k in _SCHEMA_MAPS and isinstance(v, dict)
            else v
            if k in _VALUES
            else closed_node(v)
        )
        for k, v in node.items()
    }
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def stripped(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` without the keys ``schema`` does not list, at every level (the reference server's zod
    schemas strip unknown keys: in the ``reference`` profile, e.g. ``asOf`` or a relation's ``weight``
    are not seen)."""
    props = schema.get("properties")
    if isinstance(value, dict) and isinstance(props, dict):
        return {k: stripped(v, props[k]) for k, v in value.items() if k in props}
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        return [stripped(v, items) for v in value]
    return value


def validate(model: type[M], args: dict[str, Any], profile: str) -> M:
    """``args`` as ``model``, strictly (see the module's docstring); a :class:`ValidationError` that
    names the field otherwise."""
    try:
        # Checked as the JSON it came as: strict JSON mode takes ISO strings for timestamps and enum values
        # as strings, and nothing else (strict Python mode would want datetime and Enum objects).  NaN and
        # +-Infinity are written as their JavaScript literals; the models refuse them.
        return model.model_validate_json(
            pydantic_core.to_json(args, inf_nan_mode="constants"),
            strict=True,
            by_alias=True,
            by_name=False,
            extra="ignore" if profile == "reference" else "forbid",
        )
    except pydantic.ValidationError as exc:
        message, field = explain(exc, args)
        raise ValidationError(message, field=field) from exc


def explain(exc: pydantic.ValidationError, args: dict[str, Any]) -> tuple[str, str | None]:
    """The message of a rejected call: each error as ``path: what is wrong``.  For a batch, only the
    first bad item is shown (``relations[3].weight: ...``): one fix at a time, and the index says
    where."""
    errors = exc.errors()
    items = [
        e
        for e in errors
        if len(e["loc"]) >= 2
        and isinstance(e["loc"][1], int)
        and isinstance(args.get(str(e["loc"][0])), list)
    ]
    if items:
        key = str(items[0]["loc"][0])
        first = min(int(e["loc"][1]) for e in items if e["loc"][0] == key)
        parts = [f"{_path(e['loc'])}: {_message(e)}" for e in items if e["loc"][:2] == (key, first)]
        return f"{'; '.join(parts)}; nothing was written", key
    parts = [_top_message(e) for e in errors]
    field = str(errors[0]["loc"][0]) if errors and errors[0]["loc"] else None
    return f"{'; '.join(parts)}; nothing was done", field


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "value"


def _message(err: Any) -> str:
    return str(err["msg"]).removeprefix("Value error, ")


def _top_message(err: Any) -> str:
    loc = err["loc"]
    if len(loc) == 1 and err["type"] == "missing":
        return f"missing required argument '{loc[0]}'"
    if len(loc) == 1 and err["type"] == "too_long" and isinstance(err.get("input"), list):
        return (
            f"'{loc[0]}' has {len(err['input'])} items; at most {err['ctx']['max_length']} are accepted "
            "in one call (split the batch)"
        )
    return f"{_path(loc)}: {_message(err)}"


def tool(
    name: str,
    *,
    description: str,
    input: type[M],
    output: type[pydantic.BaseModel] | None = None,
    output_schema: dict[str, Any] | None = None,
    schema: dict[str, Any] | None = None,
    reference_schema: dict[str, Any] | None = None,
    profiles: tuple[str, ...],
    example: dict[str, Any],
    more_examples: tuple[dict[str, Any], ...] = (),
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    title: str | None = None,
    error_text: ErrorText | None = None,
    admin: bool = False,
    builtin: bool = True,
) -> Callable[[TypedHandler[M]], ToolSpec]:
    """Declare a tool over ``async def handler(rt, req: input) -> ToolOutput`` (see the module's docstring).

    ``schema``: a hand-written advertised schema instead of the model's.  ``reference_schema``: what the
    ``reference`` profile advertises (docs/reference-schemas.md, unclosed: there unknown fields are
    stripped, not refused).  ``profiles``: the profiles that list the tool.  ``example``: a call valid
    against the seed graph (``server/examples.py``); ``more_examples``: calls that fill what it leaves
    out (e.g. the other of two alternative fields).  ``admin``: callers need the ``admin`` scope
    (docs/team.md): the tool rewrites a whole namespace or reads the server's files.  ``builtin``: register
    the tool (served by every server whose profile lists it); False for a tool made per server."""
    if not profiles:
        raise ValueError(f"{name}: no profile lists it")
    advertised = closed(schema if schema is not None else schema_of(input))

    def declare(handler: TypedHandler[M]) -> ToolSpec:
        async def run(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
            if rt.profile == "reference" and reference_schema is not None:
                args = stripped(args, reference_schema)  # what the reference's zod schema keeps
            return await handler(rt, validate(input, args, rt.profile))

        spec = ToolSpec(
            name=name,
            description=description,
            handler=run,
            input_schema=reference_schema if reference_schema is not None else advertised,
            extended_schema=advertised if reference_schema is not None else None,
            output_schema=output_schema if output is None else schema_of(output),
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            title=title,
            profiles=profiles,
            error_text=error_text,
            input_model=input,
            example=example,
            more_examples=more_examples,
            admin=admin,
        )
        return register(spec, handler.__module__) if builtin else spec

    return declare
