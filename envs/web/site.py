"""A small shop-admin web application with server-side state (products, orders, customers).

It is the ground-truth world for the web experiment: pages are rendered on the server, forms change the
state, a few widgets need JavaScript (a confirmation dialog) or hover (the account menu). The fixed
catalogue keeps tasks and page contents reproducible; `POST /__reset` restores it between episodes,
`GET /__state` exposes the state as JSON so that task success can be checked programmatically, and
`POST /__restore` puts a saved state back (the ground-truth lookahead of the MPC agent uses it).
"""

from __future__ import annotations

import copy
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask, abort, flash, jsonify, redirect, render_template, request, url_for

PAGE_SIZE = 5  # products per list page: keeps each page's tree short enough for a tiny CPU model


@dataclass
class Product:
    id: int
    name: str
    price: float
    stock: int
    category: str


@dataclass
class Customer:
    id: int
    name: str
    email: str
    city: str
    newsletter: bool


@dataclass
class Order:
    id: int
    customer_id: int
    items: list[tuple[int, int]]  # (product id, quantity)
    status: str  # "pending" | "shipped" | "cancelled"


@dataclass
class ShopState:
    """Everything the server remembers; `initial_state()` is the state after a reset."""

    products: dict[int, Product] = field(default_factory=dict)
    customers: dict[int, Customer] = field(default_factory=dict)
    orders: dict[int, Order] = field(default_factory=dict)
    next_product_id: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "products": [asdict(p) for p in self.products.values()],
            "customers": [asdict(c) for c in self.customers.values()],
            "orders": [asdict(o) | {"total": round(self.order_total(o), 2)} for o in self.orders.values()],
            "next_product_id": self.next_product_id,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ShopState:
        """Inverse of `to_json` (used to restore a snapshot); raises KeyError/TypeError on a bad document."""
        state = cls()
        for p in data["products"]:
            state.products[p["id"]] = Product(p["id"], p["name"], float(p["price"]), int(p["stock"]), p["category"])
        for c in data["customers"]:
            state.customers[c["id"]] = Customer(c["id"], c["name"], c["email"], c["city"], bool(c["newsletter"]))
        for o in data["orders"]:
            state.orders[o["id"]] = Order(o["id"], o["customer_id"], [tuple(i) for i in o["items"]], o["status"])
        state.next_product_id = int(data.get("next_product_id", max(state.products, default=0) + 1))
        return state

    def order_total(self, order: Order) -> float:
        return sum(self.products[pid].price * qty for pid, qty in order.items if pid in self.products)


_PRODUCTS = [
    ("Blue Mug", 8.50, 40, "Kitchen"),
    ("Red Pen", 1.20, 300, "Office"),
    ("Green Tea", 4.20, 75, "Grocery"),
    ("Notebook A5", 3.90, 120, "Office"),
    ("Desk Lamp", 24.00, 15, "Home"),
    ("Coffee Beans", 11.00, 60, "Grocery"),
    ("Steel Bottle", 17.50, 35, "Kitchen"),
    ("Wall Clock", 19.90, 12, "Home"),
    ("Stapler", 6.75, 48, "Office"),
    ("Honey Jar", 7.30, 22, "Grocery"),
    ("Cutting Board", 14.00, 18, "Kitchen"),
    ("Throw Pillow", 12.40, 30, "Home"),
]
_CUSTOMERS = [
    ("Ada Lovelace", "ada@example.com", "London", True),
    ("Alan Turing", "alan@example.com", "Manchester", False),
    ("Grace Hopper", "grace@example.com", "New York", True),
    ("Linus Pauling", "linus@example.com", "Portland", False),
    ("Marie Curie", "marie@example.com", "Paris", False),
    ("Katherine Johnson", "kjohnson@example.com", "Hampton", True),
]
_ORDERS = [
    (1, [(1, 2), (3, 1)], "pending"),
    (2, [(5, 1)], "shipped"),
    (3, [(6, 3), (10, 1)], "pending"),
    (4, [(2, 10), (4, 4)], "shipped"),
    (5, [(7, 1), (11, 1)], "pending"),
    (6, [(8, 1)], "cancelled"),
    (1, [(12, 2)], "shipped"),
    (3, [(9, 1), (2, 5)], "pending"),
]


def initial_state() -> ShopState:
    """The fixed catalogue every episode starts from."""
    state = ShopState()
    for i, (name, price, stock, category) in enumerate(_PRODUCTS, start=1):
        state.products[i] = Product(i, name, price, stock, category)
    for i, (name, email, city, newsletter) in enumerate(_CUSTOMERS, start=1):
        state.customers[i] = Customer(i, name, email, city, newsletter)
    for i, (customer_id, items, status) in enumerate(_ORDERS, start=1001):
        state.orders[i] = Order(i, customer_id, list(items), status)
    state.next_product_id = len(_PRODUCTS) + 1
    return state


def _parse_price(text: str) -> float | None:
    try:
        value = float(text.strip().lstrip("$"))
    except ValueError:
        return None
    return round(value, 2) if value >= 0 else None


def _parse_stock(text: str) -> int | None:
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if value >= 0 else None


def _product_form() -> tuple[str, float | None, int | None]:
    """(name, price, stock) of a submitted product form; None marks an invalid number."""
    name = request.form.get("name", "").strip()
    return name, _parse_price(request.form.get("price", "")), _parse_stock(request.form.get("stock", ""))


def create_app() -> Flask:
    """Build the Flask app with its own state (one app per server, so tests never share state)."""
    app = Flask(__name__, template_folder=str(Path(__file__).parent / "templates"))
    app.secret_key = "rlvr-sim-local-site"  # signs the flash-message cookie; the site is loopback-only
    lock = threading.Lock()
    app.extensions["shop_state"] = initial_state()

    def state() -> ShopState:
        return app.extensions["shop_state"]

    @app.context_processor
    def _counts() -> dict[str, Any]:
        return {"money": lambda v: f"${v:.2f}"}

    @app.post("/__reset")
    def reset() -> Any:
        with lock:
            app.extensions["shop_state"] = initial_state()
        return jsonify({"ok": True})

    @app.post("/__restore")
    def restore() -> Any:
        try:
            restored = ShopState.from_json(request.get_json(force=True))
        except (KeyError, TypeError, ValueError) as exc:
            return jsonify({"ok": False, "error": f"bad state document: {exc!r}"}), 400
        with lock:
            app.extensions["shop_state"] = restored
        return jsonify({"ok": True})

    @app.get("/__state")
    def dump_state() -> Any:
        with lock:
            return jsonify(copy.deepcopy(state().to_json()))

    @app.get("/")
    def dashboard() -> str:
        s = state()
        pending = sum(o.status == "pending" for o in s.orders.values())
        low = [p for p in s.products.values() if p.stock < 20]
        return render_template("dashboard.html", n_products=len(s.products), pending=pending,
                               n_customers=len(s.customers), low_stock=low)

    @app.get("/products")
    def products() -> str:
        query = request.args.get("q", "").strip()
        items = [p for p in state().products.values() if query.lower() in p.name.lower()]
        pages = max(1, (len(items) + PAGE_SIZE - 1) // PAGE_SIZE)
        page = min(max(1, request.args.get("page", 1, type=int) or 1), pages)
        shown = items[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
        return render_template("products.html", products=shown, query=query, page=page, pages=pages,
                               n_found=len(items))

    @app.route("/products/new", methods=["GET", "POST"])
    def new_product() -> Any:
        error = None
        if request.method == "POST":
            name, price, stock = _product_form()
            if not name or price is None or stock is None:
                error = "Enter a name, a price and a stock"
            else:
                with lock:
                    s = state()
                    pid = s.next_product_id
                    s.products[pid] = Product(pid, name, price, stock, request.form.get("category", "Home"))
                    s.next_product_id += 1
                flash(f"Created {name}")
                return redirect(url_for("product", product_id=pid))
        return render_template("product_new.html", error=error)

    @app.route("/products/<int:product_id>", methods=["GET", "POST"])
    def product(product_id: int) -> Any:
        s = state()
        if product_id not in s.products:
            abort(404)
        item = s.products[product_id]
        error = None
        if request.method == "POST":
            name, price, stock = _product_form()
            if not name or price is None or stock is None:
                error = "Invalid value: price and stock must be non-negative numbers"
            else:
                with lock:
                    item.name, item.price, item.stock = name, price, stock
                flash(f"Saved {name}")
                return redirect(url_for("product", product_id=product_id))
        return render_template("product.html", product=item, error=error)

    @app.post("/products/<int:product_id>/delete")
    def delete_product(product_id: int) -> Any:
        with lock:
            item = state().products.pop(product_id, None)
        if item is None:
            abort(404)
        flash(f"Deleted {item.name}")
        return redirect(url_for("products"))

    @app.get("/orders")
    def orders() -> str:
        status = request.args.get("status", "all")
        s = state()
        shown = [o for o in s.orders.values() if status == "all" or o.status == status]
        return render_template("orders.html", orders=shown, status=status, customers=s.customers,
                               total=s.order_total)

    @app.get("/orders/<int:order_id>")
    def order(order_id: int) -> str:
        s = state()
        if order_id not in s.orders:
            abort(404)
        o = s.orders[order_id]
        lines = [(s.products[pid], qty) for pid, qty in o.items if pid in s.products]
        return render_template("order.html", order=o, customer=s.customers[o.customer_id], lines=lines,
                               total=s.order_total(o))

    @app.post("/orders/<int:order_id>/<any(ship, cancel):verb>")
    def change_order(order_id: int, verb: str) -> Any:
        with lock:
            o = state().orders.get(order_id)
            if o is None:
                abort(404)
            if o.status == "pending":
                o.status = "shipped" if verb == "ship" else "cancelled"
                flash(f"Order #{order_id} {o.status}")
            else:
                flash(f"Order #{order_id} is already {o.status}")
        return redirect(url_for("order", order_id=order_id))

    @app.get("/customers")
    def customers() -> str:
        return render_template("customers.html", customers=list(state().customers.values()))

    @app.route("/customers/<int:customer_id>", methods=["GET", "POST"])
    def customer(customer_id: int) -> Any:
        s = state()
        if customer_id not in s.customers:
            abort(404)
        c = s.customers[customer_id]
        error = None
        if request.method == "POST":
            email = request.form.get("email", "").strip()
            if "@" not in email:
                error = "Invalid email address"
            else:
                with lock:
                    c.email = email
                    c.newsletter = request.form.get("newsletter") == "on"
                flash(f"Saved {c.name}")
                return redirect(url_for("customer", customer_id=customer_id))
        n_orders = sum(o.customer_id == customer_id for o in s.orders.values())
        return render_template("customer.html", customer=c, n_orders=n_orders, error=error)

    @app.get("/account/<any(profile, settings):section>")
    def account(section: str) -> str:
        return render_template("account.html", section=section)

    @app.errorhandler(404)
    def not_found(_: Exception) -> tuple[str, int]:
        return render_template("not_found.html"), 404

    return app
