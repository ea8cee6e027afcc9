"""The judge client: OpenAI-compatible chat completions over aiohttp, with cache and budget.

One `JudgeClient` serves a run. It answers the engine's `JudgeRequest` s (see
`assertly.engine._judging`): settings are the config's ``judge:`` with the assertion's own
``config:`` over them; every sample is looked up in the store's judge cache by a SHA-256 of
(base_url, model, messages, parameters) before any call. Calls retry 429, 5xx, broken
connections and cut-off bodies with exponential backoff (honouring ``Retry-After``) until the
judgement's time is spent, and go through the runner's rate limiter: the judge shares the
run's ``rate_limit``, and its calls are made inside the trial's slot of ``concurrency``.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from .._secrets import mask_url, remember_from_environment, url_secrets
from ..engine.graded._judging import VERDICT_SCHEMA, Judgement, JudgeRequest, read_verdict, start_of
from ..engine.graded._vectors import vectors_problem
from ._chat import ChatReply, cached_chat, kept_chat
from ._reading import cached_vector, read_vectors, token_count

if TYPE_CHECKING:
    from ..loading import JudgeModel
    from ..store import RunStore

__all__ = ["CACHE_MODES", "CacheMode", "JudgeClient"]

CacheMode = Literal["rw", "ro", "off", "replay"]
CACHE_MODES: tuple[CacheMode, ...] = ("rw", "ro", "off", "replay")

_VARIABLE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
# Structured output asked for, in order: a server that rejects one (HTTP 400/422) gets the next.
_FORMATS: tuple[dict[str, Any] | None, ...] = (
    {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "strict": True, "schema": VERDICT_SCHEMA},
    },
    {"type": "json_object"},
    None,
)
_BODY_LIMIT = 4 * 2**20


def usd(amount: float) -> str:
    """An amount of dollars as people write it: ``$0``, ``$0.00002``, ``$0.004``, ``$2.50``."""
    if amount == 0:
        return "$0"
    if abs(amount) >= 0.01:
        return f"${amount:,.2f}"
    return "$" + f"{amount:.8f}".rstrip("0").rstrip(".")


class _Failure(Exception):
    """A judge call that cannot succeed (its message goes into the error verdict)."""


class _Retry(Exception):
    """A judge call worth trying again (429, 5xx, a broken connection or body)."""

    def __init__(self, message: str, after: float | None = None) -> None:
        super().__init__(message)
        self.after = after


class JudgeClient:
    """Answers judge requests for one run.

    Args:
        config: The config's ``judge:`` (None: only assertions that name base_url and model
            in their own ``config:`` can be judged).
        store: Where the judge cache lives (None: no cache).
        cache: rw (read and write), ro (read only), off (neither), replay (read; a miss is an
            error, nothing is called).
        secrets: Where the API keys go, for redaction.
        timeout_s: One judgement's time (retries included) when the config gives none.
        wait: The runner's rate limiter, awaited before every call.
    """

    def __init__(
        self,
        config: JudgeModel | None,
        store: RunStore | None,
        *,
        cache: CacheMode = "rw",
        secrets: set[str] | None = None,
        timeout_s: float = 60.0,
        wait: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.cache: CacheMode = cache
        self.secrets = secrets if secrets is not None else set()
        self.timeout_s = (config.timeout_s if config and config.timeout_s else None) or timeout_s
        self._wait = wait
        self._session: Any = None
        self._formats: dict[str, int] = {}  # per endpoint: the first format it accepts
        self.cost_usd = 0.0
        self.tokens = 0
        self.calls = 0
        self.cached = 0
        self._api_key: str | None = None
        self._key_problem: str | None = None
        # The budget (max_cost_usd), reserved before each call: without it, -j 8 calls all
        # passed the check at $0 and a $2.50 budget ended at $8.00 (issue 29). One event loop
        # runs the client, so plain counters and an event to wake the waiters suffice.
        self._in_flight = 0
        self._reserved = 0.0
        self._estimate: float | None = None  # the costliest call so far: what one may cost
        self._changed: asyncio.Event | None = None
        if config is not None and config.api_key:
            self._api_key, self._key_problem = self._secret(config.api_key)
        if config is not None:  # http://user:password@host/v1: the password is a secret
            self.secrets.update(url_secrets(config.base_url))

    def _secret(self, text: str) -> tuple[str | None, str | None]:
        """An api_key as written (``${VAR}`` read from the environment), registered secret."""
        match = _VARIABLE.match(text)
        if match is None:
            self.secrets.add(text)
            return text, None
        value = os.environ.get(match.group(1))
        if not value:
            return None, f"api_key: environment variable {match.group(1)} is not set"
        self.secrets.add(remember_from_environment(value))
        return value, None

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    # -- settings --------------------------------------------------------------------------
    def settings(self, options: Mapping[str, Any]) -> dict[str, Any] | str:
        """The config's judge settings with an assertion's over them, or what is missing."""
        base: dict[str, Any] = self.config.model_dump() if self.config is not None else {}
        merged = {**base, **{k: v for k, v in options.items() if v is not None}}
        if not merged.get("base_url") or not merged.get("model"):
            return (
                "no judge is configured: add judge: {base_url: …, model: …} to the config "
                "(or base_url and model to the assertion's config:)"
            )
        self.secrets.update(url_secrets(str(merged["base_url"])))
        merged.setdefault("temperature", 0.0)
        merged.setdefault("samples", 1)
        # A key belongs to its endpoint: an assertion that names another base_url gets no key
        # unless it names one (as ${VAR}) too.
        if "api_key" in options:
            merged["api_key"], problem = self._secret(str(options["api_key"]))
        elif self.config is not None and merged["base_url"] == self.config.base_url:
            merged["api_key"], problem = self._api_key, self._key_problem
        else:
            merged["api_key"], problem = None, None
        # A key that cannot be read matters only to a call: replies in the cache need none.
        merged["key_problem"] = problem
        return merged

    @staticmethod
    def cache_key(settings: Mapping[str, Any], messages: Any, sample: int) -> str:
        """The SHA-256 naming one sample of a request: endpoint, model, messages, parameters."""
        parameters = {
            "temperature": settings.get("temperature"),
            "seed": settings.get("seed"),
            "max_tokens": settings.get("max_tokens"),
            "sample": sample,
        }
        text = json.dumps(
            [str(settings["base_url"]).rstrip("/"), settings["model"], list(messages), parameters],
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    # -- answering -------------------------------------------------------------------------
    async def answer(self, request: JudgeRequest) -> Judgement:
        """The judgement for ``request``: its replies (or vectors), or why there are none."""
        if request.texts:
            return await self._embeddings(request)
        settings = self.settings(request.options)
        if isinstance(settings, str):
            return Judgement(error=settings)
        deadline = time.monotonic() + self.timeout_s
        samples = int(settings["samples"])
        replies: list[str] = []
        cost, tokens, cached = 0.0, 0, 0
        for sample in range(samples):
            key = self.cache_key(settings, request.messages, sample)
            reply = self.store.judge_reply(key) if self.store and self.cache != "off" else None
            # A cached reply is trusted only if it reads as a verdict now: a store written by
            # an older, laxer version may hold one that this version refuses. Such a reply is
            # a miss (asked again, and overwritten in rw).
            unreadable = None if reply is None else read_verdict(reply)
            if reply is not None and not isinstance(unreadable, str):
                replies.append(reply)
                cached += 1
                self.cached += 1
                continue
            if self.cache == "replay":
                why = (
                    f"the cached judgement for this request cannot be read ({unreadable})"
                    if isinstance(unreadable, str)
                    else "no cached judgement for this request"
                )
                return Judgement(
                    error=f"{why} (--judge-cache replay; cache key {key[:16]}…): run once "
                    "with --judge-cache rw to record it",
                    cost_usd=cost,
                    tokens=tokens,
                )
            if settings["key_problem"]:
                return Judgement(error=settings["key_problem"], cost_usd=cost, tokens=tokens)
            spent_all, reservation = await self._reserve()
            if spent_all:
                return Judgement(error=spent_all, cost_usd=cost, tokens=tokens)
            seed = settings.get("seed")
            call_settings = {**settings, "seed": None if seed is None else seed + sample}
            messages = request.messages
            spent = None
            try:
                reply, used, spent = await self._call(
                    call_settings,
                    deadline,
                    "/chat/completions",
                    functools.partial(_chat_body, call_settings, messages),
                    self._reply,
                )
            except _Failure as failure:
                return Judgement(error=str(failure), cost_usd=cost, tokens=tokens)
            finally:
                self._release(reservation, spent)
            cost += spent
            tokens += used
            # Only a reply that reads as a verdict is kept: an unreadable one (an error of the
            # check) would otherwise answer every later run without the judge being asked.
            if (
                self.store is not None
                and self.cache == "rw"
                and not isinstance(read_verdict(reply), str)
            ):
                self.store.save_judge_reply(
                    key, reply, str(settings["model"]), used, spent, _now_iso()
                )
            replies.append(reply)
        return Judgement(tuple(replies), cached=cached == samples, cost_usd=cost, tokens=tokens)

    async def chat(
        self, messages: Sequence[Mapping[str, Any]], options: Mapping[str, Any] | None = None
    ) -> ChatReply:
        """A plain chat completion (no verdict format asked, none read; `_chat`): as `answer`."""
        settings = self.settings(options or {})
        if isinstance(settings, str):
            return ChatReply(error=settings)
        key = self.cache_key(settings, messages, 0)
        found = cached_chat(self.store, self.cache, key)
        if found is not None:
            self.cached += found.cached
            return found
        if settings["key_problem"]:
            return ChatReply(error=settings["key_problem"])
        spent_all, reservation = await self._reserve()
        if spent_all:
            return ChatReply(error=spent_all)
        spent, deadline = None, time.monotonic() + self.timeout_s
        body = functools.partial(_body, settings, messages, None)
        try:
            reply, used, spent = await self._call(
                settings, deadline, "/chat/completions", lambda _: body(), self._reply
            )
        except _Failure as failure:
            return ChatReply(error=str(failure))
        finally:
            self._release(reservation, spent)
        keep = self.store if self.cache == "rw" else None
        return kept_chat(keep, key, reply, settings, used, spent, _now_iso())

    async def _reserve(self) -> tuple[str | None, float]:
        """Wait until a call fits the budget: (why none may be made, or None; its reservation).

        A call is made while the cost so far plus what the calls in flight are expected to
        cost (each the costliest call so far) is under ``max_cost_usd``; until one call has
        said what calls cost, one call at a time. So a run ends at most one call's cost over
        its budget, however many calls run at once.
        """
        limit = self.config.max_cost_usd if self.config is not None else None
        if limit is None:
            return None, 0.0
        while True:
            spent_all = self._spent()
            if spent_all:
                return spent_all, 0.0
            if self._estimate is None:
                if self._in_flight == 0:
                    break
            elif self.cost_usd + self._reserved < limit:
                break
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()  # a call in flight ends (set by `_release`)
        reservation = self._estimate or 0.0
        self._in_flight += 1
        self._reserved += reservation
        return None, reservation

    def _release(self, reservation: float, spent: float | None) -> None:
        """A call reserved by `_reserve` ended (``spent``: its cost; None: it failed)."""
        if self.config is None or self.config.max_cost_usd is None:
            return
        self._in_flight -= 1
        self._reserved -= reservation
        if spent is not None:
            self._estimate = max(self._estimate or 0.0, spent)
        if self._changed is not None:  # wake every waiter; the next wait makes a new event
            self._changed.set()
            self._changed = None

    def _spent(self) -> str | None:
        """Why no more calls may be made (the budget is spent), or None."""
        limit = self.config.max_cost_usd if self.config is not None else None
        if limit is not None and self.cost_usd >= limit:
            return (
                f"the judge's budget is spent: {usd(self.cost_usd)} of max_cost_usd "
                f"{usd(limit)} in this run, so no more judge calls are made"
            )
        return None

    async def _embeddings(self, request: JudgeRequest) -> Judgement:
        """Vectors of ``request.texts`` from ``/embeddings`` (cached per text; one call)."""
        options = dict(request.options)
        model = options.pop("model", None) or (
            self.config.embedding_model if self.config is not None else None
        )
        if not model:
            return Judgement(
                error="similar with provider: openai needs an embedding model: "
                "judge.embedding_model in the config, or model in the assertion's config:"
            )
        settings = self.settings({**options, "model": model})
        if isinstance(settings, str):
            return Judgement(error=settings)
        base = str(settings["base_url"]).rstrip("/")
        keys = [
            hashlib.sha256(
                json.dumps(["embeddings", base, model, text], ensure_ascii=False).encode(
                    "utf-8", "surrogatepass"
                )
            ).hexdigest()
            for text in request.texts
        ]
        vectors: dict[str, tuple[float, ...]] = {}
        if self.store is not None and self.cache != "off":
            for key in keys:
                found = self.store.judge_reply(key)
                cached = cached_vector(found) if found is not None else None
                if cached is not None:  # an invalid one (cached by an older version): asked again
                    vectors[key] = cached
        missing = [(key, text) for key, text in zip(keys, request.texts, strict=True)]
        missing = [(key, text) for key, text in missing if key not in vectors]
        self.cached += len(keys) - len(missing)
        cost, tokens = 0.0, 0
        if missing:
            problem = (
                f"no cached embedding for {len(missing)} text(s) (--judge-cache replay)"
                if self.cache == "replay"
                else settings["key_problem"] or self._spent()
            )
            if problem:
                return Judgement(error=problem)
            spent_all, reservation = await self._reserve()
            if spent_all:
                return Judgement(error=spent_all)
            texts = list(dict.fromkeys(text for _, text in missing))
            body = {"model": model, "input": texts}
            deadline = time.monotonic() + self.timeout_s
            parse = functools.partial(self._vectors, count=len(texts))
            spent = None
            try:
                data, tokens, cost = await self._call(
                    settings, deadline, "/embeddings", lambda form: body, parse
                )
                spent = cost
            except _Failure as failure:
                return Judgement(error=str(failure))
            finally:
                self._release(reservation, spent)
            by_text = dict(zip(texts, data, strict=True))
            for key, text in missing:
                vectors[key] = by_text[text]
                if self.store is not None and self.cache == "rw":
                    self.store.save_judge_reply(
                        key, json.dumps(by_text[text]), model, 0, 0.0, _now_iso()
                    )
        answered = [vectors[key] for key in keys]
        # Each vector is valid on its own; a cached one and a new one may still be of two
        # lengths (the endpoint's model changed under the same name): not comparable.
        problem = vectors_problem(answered, [f"text {index + 1}" for index in range(len(keys))])
        if problem is not None:
            return Judgement(error=f"the endpoint's embeddings are unusable: {problem}")
        return Judgement(
            vectors=tuple(answered),
            cached=not missing,
            cost_usd=cost,
            tokens=tokens,
        )

    def _vectors(
        self, data: Any, text: str, settings: Mapping[str, Any], *, count: int
    ) -> tuple[Any, int, float]:
        """The ``count`` vectors of an ``/embeddings`` response, in input order; tokens; cost.

        Raises:
            _Failure: The response is not ``count`` valid vectors of one length (nothing of
                it is cached then).
        """
        spent = self._usage(data, settings)  # the call was made: it counts either way
        vectors = read_vectors(data, text, count)
        if isinstance(vectors, str):
            raise _Failure(vectors)
        return vectors, *spent

    def _usage(self, data: Any, settings: Mapping[str, Any]) -> tuple[int, float]:
        """(tokens, cost) of a response, counted in the run's totals."""
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        prompt = token_count(usage.get("prompt_tokens"))
        completion = token_count(usage.get("completion_tokens"))
        reported = usage.get("cost")
        if isinstance(reported, int | float) and not isinstance(reported, bool) and reported >= 0:
            cost = float(reported)
        else:
            cost = (
                prompt * float(settings.get("input_usd_per_mtok") or 0.0)
                + completion * float(settings.get("output_usd_per_mtok") or 0.0)
            ) / 1e6
        self.calls += 1
        self.tokens += prompt + completion
        self.cost_usd += cost
        return prompt + completion, cost

    async def _call(
        self,
        settings: Mapping[str, Any],
        deadline: float,
        path: str,
        make_body: Callable[[int], dict[str, Any]],
        parse: Callable[[Any, str, Mapping[str, Any]], tuple[Any, int, float]],
    ) -> tuple[Any, int, float]:
        """One reply: (text, tokens, cost). Retries until ``deadline``.

        Raises:
            _Failure: The judge could not answer (its reason).
        """
        import aiohttp

        url = str(settings["base_url"]).rstrip("/") + path
        attempt = 0
        last = "no attempt was made"
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Failure(self._gave_up(last, attempt, deadline))
            if self._wait is not None:
                await self._wait()
            attempt += 1
            form = self._formats.get(url, 0)
            body = make_body(form)
            try:
                return await self._post(url, settings, body, remaining, parse)
            except _Rejected as rejected:
                if form + 1 < len(_FORMATS):
                    self._formats[url] = form + 1  # this server does not take that format
                    attempt -= 1
                    continue
                raise _Failure(str(rejected)) from None
            except _Retry as retry:
                last = str(retry)
                delay = (
                    retry.after if retry.after is not None else min(0.1 * 2 ** (attempt - 1), 5.0)
                )
                if time.monotonic() + delay >= deadline:
                    raise _Failure(self._gave_up(last, attempt, deadline)) from None
                await asyncio.sleep(delay)
            except (aiohttp.ClientError, TimeoutError) as error:
                shown = mask_url(url)  # never its password
                last = f"cannot reach the judge at {shown}: {type(error).__name__}: {error}"
                delay = min(0.1 * 2 ** (attempt - 1), 5.0)
                if time.monotonic() + delay >= deadline:
                    raise _Failure(self._gave_up(last, attempt, deadline)) from None
                await asyncio.sleep(delay)

    def _gave_up(self, last: str, attempt: int, deadline: float) -> str:
        """``last`` with the attempts made and the time they really took.

        The time is measured: a retry that could not end before the time limit is not made,
        so a run gives up before the limit ("7 attempt(s) in 6.8 s", not "in 10 s").
        """
        elapsed = max(0.0, time.monotonic() - (deadline - self.timeout_s))
        return (
            f"{last} (gave up after {attempt} attempt(s) in {elapsed:.1f} s; the time limit "
            f"is {self.timeout_s:g} s)"
        )

    async def _post(
        self,
        url: str,
        settings: Mapping[str, Any],
        body: dict[str, Any],
        remaining: float,
        parse: Callable[[Any, str, Mapping[str, Any]], tuple[Any, int, float]],
    ) -> tuple[Any, int, float]:
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession()
        headers = {"Content-Type": "application/json"}
        if settings.get("api_key"):
            headers["Authorization"] = f"Bearer {settings['api_key']}"
        timeout = aiohttp.ClientTimeout(total=remaining)
        async with self._session.post(url, json=body, headers=headers, timeout=timeout) as response:
            raw = await response.content.read(_BODY_LIMIT)
            status = response.status
            retry_after = _retry_after(response.headers.get("retry-after"))
        text = raw.decode("utf-8", errors="replace")
        if status == 429 or status >= 500:
            raise _Retry(f"the judge answered HTTP {status}: {start_of(text)!r}", retry_after)
        if status in (400, 422) and body.get("response_format") is not None:
            raise _Rejected(f"HTTP {status}: {start_of(text)!r}")
        if status >= 300:
            raise _Failure(f"the judge answered HTTP {status}: {start_of(text)!r}")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # deeply nested arrays raise RecursionError
            raise _Retry(
                f"the judge's response is not JSON (cut off?): {start_of(text)!r}"
            ) from None
        return parse(data, text, settings)

    def _reply(self, data: Any, text: str, settings: Mapping[str, Any]) -> tuple[str, int, float]:
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise _Failure(
                f"the judge's response has no choices[0].message: {start_of(text)!r}"
            ) from None
        refusal = message.get("refusal") if isinstance(message, dict) else None
        if refusal:
            raise _Failure(f"the judge refused: {start_of(str(refusal))!r}")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise _Failure(f"the judge's reply has no text content: {start_of(text)!r}")
        return content, *self._usage(data, settings)


class _Rejected(Exception):
    """The server rejected the request's response_format (HTTP 400/422)."""


def _chat_body(settings: Mapping[str, Any], messages: Any, form: int) -> dict[str, Any]:
    return _body(settings, messages, _FORMATS[form])


def _body(
    settings: Mapping[str, Any], messages: Any, response_format: dict[str, Any] | None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": settings["model"],
        "messages": list(messages),
        "temperature": settings.get("temperature", 0.0),
    }
    if settings.get("seed") is not None:
        body["seed"] = settings["seed"]
    if settings.get("max_tokens") is not None:
        body["max_tokens"] = settings["max_tokens"]
    if response_format is not None:
        body["response_format"] = response_format
    return body


def _retry_after(value: str | None) -> float | None:
    try:
        return min(max(float(value), 0.0), 30.0) if value is not None else None
    except ValueError:
        return None


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
