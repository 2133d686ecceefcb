"""What every ``rag`` command module shares: the lazily built App, clean failures, JSON output, options."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import click

from rag.errors import RagError
from rag.settings import Settings
from rag.store import DEFAULT_OWNER

F = TypeVar("F", bound=Callable[..., Any])


class App:
    """What one invocation needs, built lazily: settings, the database, the embedder."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._db: Any = None
        self._embedder: Any = None
        self._embedder_made = False

    @property
    def db(self) -> Any:
        if self._db is None:
            from rag.db import Database

            self._db = Database(self.settings)
        return self._db

    @property
    def embedder(self) -> Any:
        if not self._embedder_made:
            from rag.embedders import make_embedder

            self._embedder = make_embedder(self.settings)
            self._embedder_made = True
        return self._embedder

    def owner_id(self, name: str, *, create: bool = False) -> int | None:
        from rag.store import ensure_owner, find_owner

        with self.db.connection() as conn:
            oid = ensure_owner(conn, name) if create else find_owner(conn, name)
            conn.commit()
        return oid

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def fails_cleanly(fn: F) -> F:
    """Map RagError to ``rag: error: ...`` and exit status 1."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RagError as e:
            click.echo(f"rag: error: {' '.join(str(e).split())}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


pass_app = click.make_pass_decorator(App)
owner_option = click.option(
    "--owner", default=DEFAULT_OWNER, show_default=True, help="Whose documents to use."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
