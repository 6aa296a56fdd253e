"""Model routes: named ways to reach a model, as the config file's `[routes.NAME]` tables.

A route is everything one agent's requests need besides the history (its fields are on
`Route`). The key is never part of it: a route names the environment variable that holds
the key (`api_key_env`), and only the composition root reads that variable. The route's
name is the agent's provider name (`AgentOptions.provider`, logged in each
`request/header`), as upstream names its routes (`deepseek-official`), so a resumed
session finds its route again by name. Textual-free: the CLI checks routes before it
imports the app.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dsh_tui.harness import AgentOptions

from .cost import Prices

PROVIDER_KINDS = ("deepseek", "openai-compatible", "demo")
DEEPSEEK_KEY_ENV = "DEEPSEEK_API_KEY"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_MODELS = {"demo": "demo", "deepseek": "deepseek-v4-flash"}
DEEPSEEK_EFFORTS = ("off", "low", "high", "max")
"""`dsh_tui.llm.deepseek.REASONING_EFFORTS` (the UI may not import llm; a test keeps them equal)."""
DEEPSEEK_MAX_TOKENS = 393_216
"""DeepSeek's hard cap on `max_tokens` (docs/contract.md §11.1)."""
TIMEOUTS = ("connect_timeout", "first_byte_timeout", "read_timeout", "idle_timeout")
PRICES = ("price_input", "price_cached", "price_output")
"""Prices per million tokens: fresh input, cache reads, output (`cost.Prices`)."""
MAX_PRICE = 1_000_000.0
SETTINGS = ("provider", "model", "base_url", "api_key_env", "max_tokens", "temperature",
            "reasoning_effort", *TIMEOUTS, *PRICES, "price_currency")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_EFFORT = re.compile(r"[a-z][a-z0-9_-]{0,19}")
_CURRENCY = re.compile(r"[^\W\d_]{1,4}|[$€£¥₹₩₽¢]")


@dataclass(frozen=True, slots=True)
class Route:
    """One way to reach a model. `None` leaves a setting to the adapter (or the server).

    Which adapter (`deepseek`, `openai-compatible` or `demo`), which server and model, the
    sampling settings the person chose (`max_tokens`, `temperature`, `reasoning_effort`)
    and how long to wait (`connect_timeout`, `first_byte_timeout`, `read_timeout`,
    `idle_timeout`), and, optionally, what its tokens cost (`price_input`,
    `price_cached`, `price_output` per million tokens, in `price_currency`; the tree
    shows a cost only when they are set).
    """

    name: str
    provider: str
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None
    connect_timeout: float | None = None
    first_byte_timeout: float | None = None
    read_timeout: float | None = None
    idle_timeout: float | None = None
    price_input: float | None = None
    price_cached: float | None = None
    price_output: float | None = None
    price_currency: str = "$"

    @property
    def prices(self) -> Prices | None:
        """What this route's tokens cost, or None when the config names no prices (the
        parser allows input and output only together)."""
        if self.price_input is None or self.price_output is None:
            return None
        return Prices(self.price_input, self.price_output, self.price_cached,
                      self.price_currency)

    @property
    def key_env(self) -> str | None:
        """The environment variable the key is read from (None: send no key). A DeepSeek
        route reads DEEPSEEK_API_KEY unless it names another; an OpenAI-compatible route
        sends a key only when it names the variable, so no key goes to a local server
        nobody asked to receive one."""
        return self.api_key_env or (DEEPSEEK_KEY_ENV if self.provider == "deepseek" else None)

    def missing_key(self, env: Mapping[str, str]) -> str | None:
        """The variable this route needs a key from and `env` lacks, or None. A DeepSeek
        route always needs one; an OpenAI-compatible route when it names a variable (the
        built-in one sends OPENAI_API_KEY only if it happens to be set)."""
        needs = self.provider == "deepseek" or (self.api_key_env is not None
                                                and self.name != "openai-compatible")
        if needs and self.key_env and not env.get(self.key_env):
            return self.key_env
        return None

    def agent_options(self, model: str | None = None) -> AgentOptions:
        """The options an agent on this route is created with."""
        return AgentOptions(provider=self.name, model=model or self.model,
                            max_tokens=self.max_tokens, reasoning_effort=self.reasoning_effort,
                            temperature=self.temperature)

    def timeouts(self) -> dict[str, float]:
        """The timeouts this route sets, as the adapters' keyword arguments."""
        out: dict[str, float] = {}
        for name in TIMEOUTS:
            value = getattr(self, name)
            if value is not None:
                out[name] = float(value)
        return out

    @property
    def label(self) -> str:
        """`name · model` (just the name when they are the same)."""
        if not self.model or self.model == self.name:
            return self.name
        return f"{self.name} · {self.model}"

    def describe(self) -> str:
        """One line for a chooser: the label and the settings that are set."""
        parts = [self.label]
        if self.provider != self.name:
            parts.append(self.provider)
        if self.max_tokens is not None:
            parts.append(f"max_tokens {self.max_tokens:,}")
        if self.temperature is not None:
            parts.append(f"temperature {self.temperature:g}")
        if self.reasoning_effort is not None:
            parts.append(f"effort {self.reasoning_effort}")
        prices = self.prices
        if prices is not None:
            unit = prices.currency
            cached = f" cached {unit}{prices.cached:g}" if prices.cached is not None else ""
            parts.append(f"per M tokens: in {unit}{prices.input:g}{cached} "
                         f"out {unit}{prices.output:g}")
        return " · ".join(parts)


def builtin_route(provider: str, *, model: str | None = None,
                  base_url: str | None = None) -> Route:
    """The route the `--provider` / `provider =` settings have always meant (the
    openai-compatible one sends OPENAI_API_KEY when it is set, as it always did)."""
    return Route(name=provider, provider=provider,
                 model=model or DEFAULT_MODELS.get(provider), base_url=base_url,
                 api_key_env=OPENAI_KEY_ENV if provider == "openai-compatible" else None)


Fail = Callable[..., Exception]
"""`fail(key, why, section=None)`: the config's error for a setting; it finds the key's
line (inside `[routes.SECTION]` when a section is named)."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return math.inf
    return number


def parse_route(name: str, table: Any, fail_anywhere: Fail) -> Route:
    """One `[routes.NAME]` table, checked; raises `fail(...)` naming the first problem."""
    where = f"[routes.{name}]"

    def fail(key: str, why: str) -> Exception:
        return fail_anywhere(key, why, name)

    if not _NAME.fullmatch(name):
        raise fail(name, f"route name {where} must be letters, digits, '-', '_' or '.' "
                         "(at most 40, starting with a letter or digit)")
    if not isinstance(table, Mapping):
        raise fail(name, f'routes.{name} must be a table: [routes.{name}] with provider, '
                         'model, …')
    for key in table:
        if key in ("api_key", "key", "token"):
            # Never echo the value: it may be the key itself.
            raise fail(key, f"{where} {key}: keys are not read from the config file; put the "
                            "key in an environment variable and name it with api_key_env")
        if key not in SETTINGS:
            raise fail(key, f'{where} unknown setting "{key}" (known: {", ".join(SETTINGS)})')
    for key in ("provider", "model", "base_url", "api_key_env", "reasoning_effort"):
        if key in table and (not isinstance(table[key], str) or not table[key].strip()):
            raise fail(key, f"{where} {key} must be a non-empty string")
    base_url = table.get("base_url")
    provider = table.get("provider") or ("openai-compatible" if base_url else None)
    if provider is None:
        raise fail(name, f"{where} needs provider = one of {', '.join(PROVIDER_KINDS)}")
    if provider == "deepseek-official":
        provider = "deepseek"
    if provider not in PROVIDER_KINDS:
        raise fail("provider", f'{where} unknown provider "{provider}" (choose '
                               f"{', '.join(PROVIDER_KINDS)})")
    if base_url is not None:
        from .config import base_url_problem

        why = base_url_problem(base_url)
        if why is not None:
            raise fail("base_url", f"{where} base_url {why}")
    if provider == "openai-compatible" and not base_url:
        raise fail(name, f"{where} provider openai-compatible needs base_url "
                         '(e.g. "http://127.0.0.1:8080/v1")')
    model = table.get("model") or DEFAULT_MODELS.get(provider)
    if not model:
        raise fail(name, f"{where} needs model = the name the server knows the model by")
    key_env = table.get("api_key_env")
    if key_env is not None and not _ENV_NAME.fullmatch(key_env):
        raise fail("api_key_env", f"{where} api_key_env must be an environment variable's "
                                  'name, such as "DEEPSEEK_API_KEY"')
    max_tokens = table.get("max_tokens")
    if max_tokens is not None:
        if type(max_tokens) is not int or max_tokens < 1:
            raise fail("max_tokens", f"{where} max_tokens must be a whole number of tokens, "
                                     "1 or more")
        if provider == "deepseek" and max_tokens > DEEPSEEK_MAX_TOKENS:
            raise fail("max_tokens", f"{where} max_tokens {max_tokens:,} is over DeepSeek's "
                                     f"limit of {DEEPSEEK_MAX_TOKENS:,}")
    temperature = table.get("temperature")
    if temperature is not None:
        number = _number(temperature)
        if number is None or not math.isfinite(number) or not 0 <= number <= 2:
            raise fail("temperature", f"{where} temperature must be a number from 0 to 2")
        temperature = number
    effort = table.get("reasoning_effort")
    if effort is not None:
        if provider == "deepseek" and effort not in DEEPSEEK_EFFORTS:
            raise fail("reasoning_effort", f'{where} reasoning_effort "{effort}" is not one '
                                           f"DeepSeek offers ({', '.join(DEEPSEEK_EFFORTS)})")
        if not _EFFORT.fullmatch(effort):
            raise fail("reasoning_effort", f"{where} reasoning_effort must be a word such as "
                                           '"low", "medium", "high" or "off"')
    timeouts: dict[str, float] = {}
    for key in TIMEOUTS:
        if key in table:
            number = _number(table[key])
            if number is None or not math.isfinite(number) or not 0 < number <= 86_400:
                raise fail(key, f"{where} {key} must be a number of seconds, more than 0 and "
                                "at most 86400")
            timeouts[key] = number
    prices: dict[str, float] = {}
    for key in PRICES:
        if key in table:
            number = _number(table[key])
            if number is None or not math.isfinite(number) or not 0 <= number <= MAX_PRICE:
                raise fail(key, f"{where} {key} must be a price per million tokens, a number "
                                f"from 0 to {MAX_PRICE:,.0f}")
            prices[key] = number
    if prices and not ("price_input" in prices and "price_output" in prices):
        missing = "price_output" if "price_input" in prices else "price_input"
        raise fail(next(iter(prices)), f"{where} {missing} is missing: a cost is shown only "
                                       "when price_input and price_output are both set")
    currency = table.get("price_currency")
    if currency is not None and (not isinstance(currency, str)
                                 or not _CURRENCY.fullmatch(currency)):
        raise fail("price_currency", f'{where} price_currency must be a short symbol or '
                                     'code, such as "$", "€", "¥" or "USD"')
    return Route(name=name, provider=provider, model=model, base_url=base_url,
                 api_key_env=key_env, max_tokens=max_tokens, temperature=temperature,
                 reasoning_effort=effort, **timeouts, **prices,
                 price_currency=currency if currency is not None else "$")


def parse_routes(tables: Any, fail: Fail) -> dict[str, Route]:
    """The `[routes]` table: name → Route, in the file's order."""
    if not isinstance(tables, Mapping):
        raise fail("routes", "routes must be tables: [routes.NAME] with provider, model, …")
    return {name: parse_route(name, table, fail) for name, table in tables.items()}
