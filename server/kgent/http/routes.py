"""The HTTP routes the method table builds: one per method whose route maps 1:1 to its service call.

A route's params are its path placeholders plus, for GET, the query string and, otherwise, the JSON body (none or `{}`
when the path says everything); they are checked by the method's own params model, so HTTP answers the same
`invalid params` errors as the daemon. The OpenAPI entry is made from the same model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from pydantic.alias_generators import to_snake

from kgent.http.front import Front, current
from kgent.service.handshake import ParamsError
from kgent.service.wire.base import params_error
from kgent.service.wire.methods import METHODS, Http, Method

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def fastapi_path(path: str) -> str:
    """`/api/runs/{runId}/cancel` → `/api/runs/{run_id}/cancel` (Python names in the router and OpenAPI)."""
    return _PLACEHOLDER.sub(lambda m: "{" + to_snake(m.group(1)) + "}", path)


def placeholders(path: str) -> list[str]:
    return _PLACEHOLDER.findall(path)


def built() -> list[tuple[Method, Http]]:
    """The (method, route) pairs this module serves."""
    return [(m, r) for m in METHODS if isinstance(m.http, tuple) for r in m.http if r.built]


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        raise ParamsError("invalid params: the body is not JSON") from None
    if not isinstance(data, dict):
        raise ParamsError("invalid params: the body must be a JSON object")
    return data


def _openapi(m: Method, route: Http) -> dict[str, Any]:
    """The operation's parameters (and body) from the params model."""
    schema = m.params.model_json_schema(by_alias=True, mode="validation")
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    in_path = placeholders(route.path)
    params = [
        {
            "name": to_snake(name),
            "in": "path",
            "required": True,
            "schema": props.get(name, {"type": "string"}),
        }
        for name in in_path
    ]
    rest = {k: v for k, v in props.items() if k not in in_path}
    extra: dict[str, Any] = {}
    if route.verb == "GET":
        params += [
            {"name": k, "in": "query", "required": k in required, "schema": v} for k, v in rest.items()
        ]
    else:
        body = {"type": "object", "properties": rest}
        if required - set(in_path):
            body["required"] = sorted(required - set(in_path))
        extra["requestBody"] = {
            "required": bool(required - set(in_path)),
            "content": {"application/json": {"schema": body}},
        }
    return {"parameters": params, **extra}


def _endpoint(m: Method, route: Http) -> Any:
    assert m.call is not None and m.params is not None, m.name
    call, model, changes = m.call, m.params, route.verb != "GET"

    async def endpoint(request: Request) -> JSONResponse:
        front: Front = current(request)
        data = {key: request.path_params[to_snake(key)] for key in placeholders(route.path)}
        if route.verb == "GET":
            try:
                params = model.model_validate_strings({**request.query_params, **data})
            except ValidationError as exc:
                raise params_error(exc) from None
        else:
            params = model.parse({**await _body(request), **data})
        svc = (front.live() if changes else front).svc  # a shutting-down server changes nothing
        return JSONResponse((await call(svc, params)).wire())

    endpoint.__name__ = m.name.rsplit("/", 1)[-1]
    return endpoint


def add_routes(app: FastAPI) -> None:
    """Serve every built route of the table."""
    for m, route in built():
        tags: list[str | Any] = [route.path.split("/")[2]]  # runs, sessions
        app.add_api_route(
            fastapi_path(route.path),
            _endpoint(m, route),
            methods=[route.verb],
            response_model=m.result,
            tags=tags,
            summary=f"`{m.name}`",
            openapi_extra=_openapi(m, route),
        )
