"""Structured output from chat models behind any OpenAI-compatible endpoint.

``structured(...)`` makes one JSON-schema structured-output call and validates the reply with a
pydantic model. Invalid output (not JSON, refused, truncated, failing validation) is asked for
again, up to ``attempts`` times, telling the model what was wrong. Transport failures are
retried by the client itself (``graphmem.llm.client``). Every final failure raises
``BackendError`` with one line saying what was wrong.

``strict_schema(model)`` is a pydantic model's JSON schema in the form strict structured output
accepts, so a reply's schema and its validator are one declaration.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from graphmem.errors import BackendError
from graphmem.llm.client import mapped_errors, one_line

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONSchema

#: Keywords strict mode refuses; the validator still checks them on the reply.
_NOT_STRICT = ("default", "minLength", "maxLength")


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_json_schema()`` for strict structured output: nested models inlined, every
    object closed (``additionalProperties: false``) with all its properties required."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def strict(node: Any) -> Any:
        if isinstance(node, list):
            return [strict(n) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return strict(defs[node["$ref"].rsplit("/", 1)[-1]])
        out = {k: strict(v) for k, v in node.items() if k not in _NOT_STRICT}
        if "properties" in out:
            out["additionalProperties"] = False
            out["required"] = list(out["properties"])
        return out

    return strict(schema)


def structured(
    client: openai.OpenAI,
    model: str,
    system: str,
    user: str,
    schema_name: str,
    json_schema: dict[str, Any],
    attempts: int = 3,
    *,
    validator: type[BaseModel] | None = None,
) -> dict[str, Any]:
    """Ask ``model`` for one JSON object matching ``json_schema`` (strict structured output) and
    return it as a dict, validated (and normalised) by ``validator`` when given.

    Invalid output is asked for again up to ``attempts`` times in all; the retry shows the
    model its previous reply and the error. Raises ``BackendError`` on final failure."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    response_format: ResponseFormatJSONSchema = {
        "type": "json_schema",
        "json_schema": {"name": schema_name, "schema": json_schema, "strict": True},
    }
    what = f"chat completion ({model}, {schema_name})"
    problem = "no attempt made"
    last_exc: Exception | None = None
    for _ in range(attempts):
        with mapped_errors(what):
            response = client.chat.completions.create(
                model=model, messages=list(messages), response_format=response_format, temperature=0
            )
        content: str | None = None
        try:
            choice = response.choices[0]
            message = choice.message
            content = message.content
            if getattr(message, "refusal", None):
                raise ValueError(f"the model refused: {message.refusal}")
            if choice.finish_reason == "length":
                raise ValueError("the reply was cut off (finish_reason=length)")
            if not content:
                raise ValueError("the reply was empty")
            data = json.loads(content)
            if not isinstance(data, dict):
                raise ValueError(f"expected a JSON object, got {type(data).__name__}")
            if validator is not None:
                data = validator.model_validate(data).model_dump(mode="json")
            return data
        except (AttributeError, IndexError, TypeError) as exc:
            last_exc, problem = exc, f"malformed response: {exc}"
        except json.JSONDecodeError as exc:
            last_exc, problem = exc, f"not JSON: {exc}"
        except ValidationError as exc:
            errors = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:5])
            last_exc, problem = exc, f"schema validation failed: {errors}"
        except ValueError as exc:
            last_exc, problem = exc, str(exc)
        if content:
            messages.append({"role": "assistant", "content": content})
        messages.append(
            {
                "role": "user",
                "content": f"Your reply was invalid ({problem}). Reply again with only a JSON object "
                f"that matches the {schema_name} schema.",
            }
        )
    raise BackendError(f"model output invalid after {attempts} attempts: {one_line(problem)}") from last_exc
