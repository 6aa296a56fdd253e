"""What an agent's tokens cost, when its route says what they cost, and never otherwise.

A route may name its prices per million tokens (`price_input`, `price_cached`,
`price_output`, in `price_currency`). Tokens are counted per route (an agent resumed on
another route has spent on both), and a cost is the sum over those routes only when every
route that spent tokens has a price for every kind of token it spent: a cached read on a
route that names no cached price makes the cost unknown, because charging it as input
would be a guess. Unknown is `None`, and the screen then shows no cost at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

PER = 1_000_000
"""Prices are per million tokens, as every provider's price list states them."""


@dataclass(frozen=True, slots=True)
class Tokens:
    """Tokens one route (or a subtree) spent: fresh input, cache reads, output."""

    input: int = 0
    cached: int = 0
    output: int = 0

    @property
    def total(self) -> int:
        """Every token the requests carried or produced."""
        return self.input + self.cached + self.output

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.input + other.input, self.cached + other.cached,
                      self.output + other.output)


@dataclass(frozen=True, slots=True)
class Prices:
    """A route's prices per million tokens; `cached` None: the route names none."""

    input: float
    output: float
    cached: float | None = None
    currency: str = "$"

    def cost(self, tokens: Tokens) -> float | None:
        """What `tokens` cost on this route; None when cache reads have no price."""
        if tokens.cached and self.cached is None:
            return None
        cached = tokens.cached * (self.cached or 0.0)
        return (tokens.input * self.input + cached + tokens.output * self.output) / PER


@dataclass(frozen=True, slots=True)
class Cost:
    """An amount in one currency; `NOTHING` (no currency) is what no tokens cost."""

    amount: float
    currency: str = "$"


NOTHING = Cost(0.0, "")
"""The cost of spending nothing: adds to any currency."""


def add_costs(a: Cost | None, b: Cost | None) -> Cost | None:
    """`a + b`; None when either is unknown or their currencies differ."""
    if a is None or b is None:
        return None
    if a.currency and b.currency and a.currency != b.currency:
        return None
    return Cost(a.amount + b.amount, a.currency or b.currency)


def cost_of(spent: Mapping[str, Tokens], prices: Callable[[str], Prices | None]) -> Cost | None:
    """The cost of tokens spent per route name (`NOTHING` when none were); None unless
    every route that spent tokens has prices for them, all in one currency."""
    total: Cost | None = NOTHING
    for route, tokens in spent.items():
        if not tokens.total:
            continue
        price = prices(route)
        amount = price.cost(tokens) if price is not None else None
        if price is None or amount is None:
            return None
        total = add_costs(total, Cost(amount, price.currency))
    return total


def sum_costs(costs: Iterable[Cost | None]) -> Cost | None:
    """A subtree's cost: None when any part is unknown or the currencies differ."""
    total: Cost | None = NOTHING
    for cost in costs:
        total = add_costs(total, cost)
    return total


def format_cost(cost: Cost) -> str:
    """`$0.42`, `$12.3`, `$128`, `<$0.01`, `$0`: short enough for a tree row."""
    amount, unit = cost.amount, cost.currency
    if amount <= 0:
        return f"{unit}0"
    if amount < 0.01:
        return f"<{unit}0.01"
    if amount < 10:
        return f"{unit}{amount:.2f}"
    if amount < 100:
        return f"{unit}{amount:.1f}"
    return f"{unit}{amount:,.0f}"
