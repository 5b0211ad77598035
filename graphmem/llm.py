"""A small shared helper for chat models behind any OpenAI-compatible endpoint.

- ``make_client(settings)``: an ``openai.OpenAI`` client with the library's own retries off
  (``max_retries=0``): retries are ours, bounded and visible;
- ``structured(...)``: one JSON-schema structured-output call, validated with a pydantic model.
  Invalid output (not JSON, refused, truncated, failing validation) is asked for again, up to
  ``attempts`` times, telling the model what was wrong; 429, 5xx and connection errors are
  retried with exponential backoff and jitter (at most ``transport_attempts`` tries and
  ``max_total_wait`` seconds of sleep per call). Every final failure raises ``BackendError``
  with one line saying what was wrong.

The backoff follows ``graphmem.embed.openai_compat`` (same "equal jitter", same Retry-After
handling, reusing its ``_retry_after``); its retry loop is a method of the embedder, so the
loop itself lives here as ``call_with_retries``.
"""

from __future__ import annotations

import json
import random
import time
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from pydantic import BaseModel, ValidationError

from .embed.openai_compat import _retry_after
from .errors import BackendError, ConfigurationError

if TYPE_CHECKING:
    import openai

    from .config import Settings

T = TypeVar("T")


def make_client(settings: "Settings", timeout: float = 60.0) -> "openai.OpenAI":
    """A client for ``settings.openai_base_url`` (None: api.openai.com) with retries off."""
    import openai  # imported here: it costs ~1 s, and only the LLM parts need it

    api_key = settings.openai_api_key.get_secret_value()
    if not api_key and settings.openai_base_url is None:
        raise ConfigurationError("the llm extractor/policy need OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
    return openai.OpenAI(
        base_url=settings.openai_base_url,
        api_key=api_key or "unused",  # local servers often need no key, but the client wants one
        max_retries=0,
        timeout=timeout,
    )


def _one_line(text: object, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def call_with_retries(
    fn: Callable[[], T],
    what: str,
    *,
    max_attempts: int = 4,
    base_delay: float = 0.5,
    max_delay: float = 8.0,
    max_total_wait: float = 20.0,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call ``fn``; retry 429, 5xx and connection errors with bounded backoff. Other API errors
    and the last retryable one raise ``BackendError`` naming ``what``."""
    import openai

    waited, attempt, last = 0.0, 0, None
    for attempt in range(1, max_attempts + 1):
        try:
            return fn()
        except openai.APIStatusError as exc:
            if exc.status_code != 429 and exc.status_code < 500:
                raise BackendError(f"{what} was rejected ({exc.status_code}): {_one_line(exc.message)}") from exc
            last, retry_after = exc, _retry_after(exc)
        except openai.APIConnectionError as exc:  # includes timeouts
            last, retry_after = exc, None
        except openai.OpenAIError as exc:
            raise BackendError(f"{what} failed: {_one_line(exc)}") from exc
        cap = min(max_delay, base_delay * 2 ** (attempt - 1))
        delay = min(max_delay, max(cap / 2 + random.uniform(0, cap / 2), retry_after or 0.0))
        if attempt == max_attempts or waited + delay > max_total_wait:
            break
        sleep(delay)
        waited += delay
    raise BackendError(
        f"{what} failed after {attempt} attempts ({waited:.1f} s of backoff): {_one_line(last)}"
    ) from last


def structured(
    client: "openai.OpenAI",
    model: str,
    system: str,
    user: str,
    schema_name: str,
    json_schema: dict[str, Any],
    attempts: int = 3,
    *,
    validator: type[BaseModel] | None = None,
    transport_attempts: int = 4,
    max_total_wait: float = 20.0,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Ask ``model`` for one JSON object matching ``json_schema`` (strict structured output) and
    return it as a dict, validated (and normalised) by ``validator`` when given.

    Invalid output is asked for again up to ``attempts`` times in all; the retry shows the
    model its previous reply and the error. Raises ``BackendError`` on final failure."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    messages: list[dict[str, str]] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": schema_name, "schema": json_schema, "strict": True},
    }
    what = f"chat completion ({model}, {schema_name})"
    problem = "no attempt made"
    last_exc: Exception | None = None
    for _ in range(attempts):
        response = call_with_retries(
            lambda: client.chat.completions.create(
                model=model, messages=list(messages), response_format=response_format, temperature=0
            ),
            what,
            max_attempts=transport_attempts,
            max_total_wait=max_total_wait,
            sleep=sleep,
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
            errors = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:5]
            )
            last_exc, problem = exc, f"schema validation failed: {errors}"
        except ValueError as exc:
            last_exc, problem = exc, str(exc)
        if content:
            messages.append({"role": "assistant", "content": content})
        messages.append({
            "role": "user",
            "content": f"Your reply was invalid ({problem}). Reply again with only a JSON object "
                       f"that matches the {schema_name} schema.",
        })
    raise BackendError(f"model output invalid after {attempts} attempts: {_one_line(problem)}") from last_exc
