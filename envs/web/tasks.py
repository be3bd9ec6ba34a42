"""The task suite on the shop site: objective text, start page and a programmatic success check.

A check sees the server state (`GET /__state`), the current URL path with query, and the agent's
`stop [answer]` text (None before the agent stops). `kind` says when it is judged:
- "state": after every step on the server state (the episode ends as soon as it holds);
- "url": after every step on the page the browser shows;
- "answer": only when the agent stops, on the answer text (normalised: case, spaces, `$`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Check = Callable[[dict[str, Any], str, "str | None"], bool]


@dataclass(frozen=True)
class WebTaskSpec:
    task_id: int
    objective: str
    kind: str  # "state" | "url" | "answer"
    check: Check
    start_path: str = "/"


def _product(state: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((p for p in state["products"] if p["name"] == name), None)


def _customer(state: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in state["customers"] if c["name"] == name)


def _order(state: dict[str, Any], order_id: int) -> dict[str, Any]:
    return next(o for o in state["orders"] if o["id"] == order_id)


def normalise_answer(text: str) -> str:
    """Lower case, no `$`, single spaces, no trailing period: how answers are compared."""
    return re.sub(r"\s+", " ", text.replace("$", "").strip().lower()).rstrip(".")


def _answer_is(*accepted: str) -> Check:
    wanted = {normalise_answer(a) for a in accepted}
    return lambda state, url, answer: answer is not None and normalise_answer(answer) in wanted


def _price_is(name: str, price: float) -> Check:
    return lambda s, u, a: (p := _product(s, name)) is not None and abs(p["price"] - price) < 1e-6


def _stock_is(name: str, stock: int) -> Check:
    return lambda s, u, a: (p := _product(s, name)) is not None and p["stock"] == stock


def _url_is(path: str) -> Check:
    return lambda s, u, a: u == path


def _build() -> list[WebTaskSpec]:
    specs: list[tuple[str, str, Check, str]] = [
        ("Set the price of Blue Mug to 9.00", "state", _price_is("Blue Mug", 9.00), "/"),
        ("Set the price of Green Tea to 5.00", "state", _price_is("Green Tea", 5.00), "/"),
        ("Set the stock of Desk Lamp to 0", "state", _stock_is("Desk Lamp", 0), "/"),
        ("Set the stock of Stapler to 100", "state", _stock_is("Stapler", 100), "/products"),
        ("Rename the product Red Pen to Black Pen", "state",
         lambda s, u, a: _product(s, "Black Pen") is not None and _product(s, "Red Pen") is None, "/"),
        ("Delete the product Wall Clock", "state",
         lambda s, u, a: _product(s, "Wall Clock") is None and len(s["products"]) == 11, "/products"),
        ("Add a new product named Tea Pot with price 25.00 and stock 10", "state",
         lambda s, u, a: (p := _product(s, "Tea Pot")) is not None and abs(p["price"] - 25.0) < 1e-6
         and p["stock"] == 10, "/products"),
        ("Mark order #1001 as shipped", "state", lambda s, u, a: _order(s, 1001)["status"] == "shipped", "/"),
        ("Cancel order #1005", "state", lambda s, u, a: _order(s, 1005)["status"] == "cancelled", "/orders"),
        ("Change the email of Alan Turing to alan@turing.org", "state",
         lambda s, u, a: _customer(s, "Alan Turing")["email"] == "alan@turing.org", "/"),
        ("Subscribe Marie Curie to the newsletter", "state",
         lambda s, u, a: _customer(s, "Marie Curie")["newsletter"] is True, "/customers"),
        ("Unsubscribe Ada Lovelace from the newsletter", "state",
         lambda s, u, a: _customer(s, "Ada Lovelace")["newsletter"] is False, "/"),
        ("What is the price of Green Tea?", "answer", _answer_is("4.20", "4.2"), "/"),
        ("What is the stock of Honey Jar?", "answer", _answer_is("22"), "/"),
        ("How many orders are pending?", "answer", _answer_is("4", "four"), "/"),
        ("Which customer placed order #1002?", "answer", _answer_is("Alan Turing"), "/orders"),
        ("What is the email of Grace Hopper?", "answer", _answer_is("grace@example.com"), "/"),
        ("What is the total of order #1003?", "answer", _answer_is("40.30"), "/"),
        ("Open the product page of Notebook A5", "url", _url_is("/products/4"), "/"),
        ("Search the products for tea", "url", _url_is("/products?q=tea"), "/products"),
        ("Go to page 2 of the product list", "url", _url_is("/products?page=2"), "/"),
        ("Show only the shipped orders", "url", _url_is("/orders?status=shipped"), "/"),
        ("Open the profile page from the account menu", "url", _url_is("/account/profile"), "/"),
        ("Open the page of customer Katherine Johnson", "url", _url_is("/customers/6"), "/customers"),
    ]
    return [WebTaskSpec(i, objective, kind, check, start) for i, (objective, kind, check, start) in enumerate(specs)]


WEB_TASKS: list[WebTaskSpec] = _build()


def get_task(task_id: int) -> WebTaskSpec:
    """The task with this id; raises ValueError naming the valid range."""
    if not isinstance(task_id, int) or not 0 <= task_id < len(WEB_TASKS):
        raise ValueError(f"unknown web task id {task_id!r}; valid ids are 0..{len(WEB_TASKS) - 1}")
    return WEB_TASKS[task_id]
