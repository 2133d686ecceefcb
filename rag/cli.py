"""The ``rag`` command. Errors become one line on stderr and a non-zero exit status."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from rag.errors import RagError
from rag.logs import configure as configure_logging
from rag.settings import Settings
from rag.store import DEFAULT_OWNER

F = TypeVar("F", bound=Callable[..., Any])
SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
SAMPLE_OWNER = DEFAULT_OWNER


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


def _terminate(signum: int, frame: Any) -> None:
    # SIGTERM should run atexit handlers (they release the embedded PostgreSQL).
    raise SystemExit(128 + signum)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="Log progress and decisions to stderr.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """rag: question answering over your own documents that knows when it does not know."""
    signal.signal(signal.SIGTERM, _terminate)
    try:
        settings = Settings.from_env()
    except RagError as e:
        click.echo(f"rag: error: {e}", err=True)
        sys.exit(1)
    configure_logging(
        settings.log_format,
        logging.INFO if verbose else logging.WARNING,
        log_text=settings.log_text,
    )
    app = App(settings)
    ctx.obj = app
    ctx.call_on_close(app.close)


pass_app = click.make_pass_decorator(App)
owner_option = click.option(
    "--owner", default=DEFAULT_OWNER, show_default=True, help="Whose documents to use."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


# --- db -------------------------------------------------------------------------------------------


@cli.group()
def db() -> None:
    """Database schema: migrate and show status."""


@db.command("migrate")
@pass_app
@fails_cleanly
def db_migrate(app: App) -> None:
    """Apply pending migrations (safe to run any number of times)."""
    from rag.db import database_url, migrate

    applied = migrate(database_url(app.settings))
    if applied:
        for m in applied:
            click.echo(f"applied {m.version:03d}_{m.name}")
    else:
        click.echo("database is up to date")


@db.command("status")
@pass_app
@fails_cleanly
def db_status(app: App) -> None:
    """List migrations and whether each is applied."""
    from rag.db import database_url, migration_status

    for m, at in migration_status(database_url(app.settings)):
        click.echo(f"{m.version:03d}_{m.name:<30} {at or 'pending'}")


# --- ingestion ------------------------------------------------------------------------------------


def _ingest(app: App, paths: list[Path], owner: str, as_json: bool, *, wait: bool = False) -> None:
    """Ingest ``paths``; each file's source_id is its path relative to the argument it came from.

    A directory's files are named relative to the directory ("prirucka/benefity.md"), a file
    given by itself by its name, as an upload is: the ids stay the same wherever the files are
    checked out, and the API reaches them as ``/v1/documents/prirucka/benefity.md``. Two files
    that would share an id in one run are an error for the second.

    The chunks are committed without vectors and queued; with ``wait``, they are embedded here
    before the command returns.
    """
    from tqdm import tqdm

    from rag.errors import InputError
    from rag.ingest.formats import ExtractLimits
    from rag.ingest.loaders import LoadedDocument, LoadFailure, iter_paths, load_path, rebased
    from rag.ingest.writer import Ingestor

    settings = app.settings
    limits = ExtractLimits.of(settings)
    files: dict[str, tuple[Path, Path]] = {}  # by real path: a file reached twice loads once
    for arg in paths:
        root = arg if arg.is_dir() else arg.parent
        for path in iter_paths([arg]):
            files.setdefault(os.path.realpath(path), (path, root))
    bar = tqdm(
        total=len(files),
        unit="file",
        disable=as_json or len(files) < 2,
        file=sys.stderr,
        leave=False,
        desc="1/2 text and keys" if wait else None,
    )
    ingestor = Ingestor(app.db, settings, app.embedder, owner, bulk_after=settings.bulk_load_chunks)
    first_origin: dict[str, str] = {}

    def items() -> Any:
        for path, root in files.values():
            for item in rebased(
                load_path(path, max_bytes=settings.max_upload_bytes, limits=limits), root
            ):
                if isinstance(item, LoadedDocument):
                    earlier = first_origin.setdefault(item.source_id, item.origin)
                    if earlier != item.origin:
                        why = f"{item.origin}: source_id {item.source_id!r} is also {earlier}'s"
                        item = LoadFailure(item.origin, InputError(why))
                yield item
            bar.update(1)

    summary = ingestor.add_all(items(), workers=settings.prepare_workers)
    bar.close()
    waiting, error = summary.unembedded, None
    if wait and app.embedder is not None:
        from rag.cli_embed import drain_with_progress

        result = drain_with_progress(app, ingestor.owner_id, quiet=as_json, desc="2/2 vectors")
        waiting, error = result.remaining, result.error
    if as_json:
        echo_json({**summary.as_dict(), "waiting": waiting, "embed_error": error})
    else:
        for failure in summary.failures:
            click.echo(f"rag: error: {failure['error']}", err=True)
        if error:
            click.echo(f"rag: error: embedder failed: {error}", err=True)
        click.echo(
            f"{summary.added} added, {summary.replaced} replaced, {summary.unchanged} unchanged,"
            f" {summary.failed} failed; {summary.chunks} chunks in {summary.seconds:.1f} s"
        )
        if waiting and app.embedder is not None:
            click.echo(
                f"searchable by words now; {waiting} chunks wait for vectors: `rag serve` fills"
                " them in the background, or run `rag embed` (progress: `rag stats`)"
            )
    if summary.failed or error:
        sys.exit(1)


wait_option = click.option(
    "--wait",
    is_flag=True,
    help="Embed the new chunks before returning (progress over both phases).",
)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@owner_option
@wait_option
@json_option
@pass_app
@fails_cleanly
def ingest(app: App, paths: tuple[Path, ...], owner: str, wait: bool, as_json: bool) -> None:
    """Ingest files, directories (recursively) and JSONL files.

    Formats: txt, md, html, pdf, docx, and JSONL lines {"id", "text", "title"?, "lang"?,
    "metadata"?}. Unchanged documents are skipped; changed ones are replaced atomically.
    Documents are searchable by words when this returns; their vectors are filled by
    `rag serve` in the background, `rag embed`, or here with --wait.
    """
    _ingest(app, list(paths), owner, as_json, wait=wait)


@cli.command()
@owner_option
@wait_option
@json_option
@pass_app
@fails_cleanly
def sample(app: App, owner: str, wait: bool, as_json: bool) -> None:
    """Load the shipped Czech sample knowledge base."""
    _ingest(app, [SAMPLE_DIR], owner, as_json, wait=wait)


# --- documents ------------------------------------------------------------------------------------


@cli.group()
def documents() -> None:
    """List, show and delete the owner's documents."""


@documents.command("list")
@owner_option
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 10000))
@click.option("--after", default=0, type=click.IntRange(0), help="Show documents after this id.")
@json_option
@pass_app
@fails_cleanly
def documents_list(app: App, owner: str, limit: int, after: int, as_json: bool) -> None:
    """List documents (id, chunks, source_id, title; [stale] or [superseded by ...])."""
    from rag.store import list_documents

    owner_id = app.owner_id(owner)
    rows = []
    if owner_id is not None:
        with app.db.connection() as conn:
            rows = list_documents(conn, owner_id, after=after, limit=limit)
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        standing = {"fresh": "", "stale": "  [stale]"}.get(
            r["standing"], f"  [superseded by {r['superseded_by']}]"
        )
        click.echo(
            f"{r['document_id']:>6}  {r['chunks']:>4} chunks  {r['source_id']}  "
            f"{r['title'] or ''}{standing}"
        )


@documents.command("show")
@click.argument("ref")
@owner_option
@json_option
@pass_app
@fails_cleanly
def documents_show(app: App, ref: str, owner: str, as_json: bool) -> None:
    """Show one document by id or source_id."""
    from rag.errors import NotFound
    from rag.store import get_document

    owner_id = app.owner_id(owner)
    if owner_id is None:
        raise NotFound(f"no document {ref!r}")
    with app.db.connection() as conn:
        row = get_document(conn, owner_id, ref)
    if as_json:
        echo_json(row)
        return
    for k, v in row.items():
        click.echo(f"{k:>13}: {v}")


@documents.command("delete")
@click.argument("ref")
@owner_option
@pass_app
@fails_cleanly
def documents_delete(app: App, ref: str, owner: str) -> None:
    """Delete a document, its chunks and their statistics."""
    from rag.errors import NotFound
    from rag.store import delete_document

    owner_id = app.owner_id(owner)
    if owner_id is None:
        raise NotFound(f"no document {ref!r}")
    with app.db.connection() as conn:
        row = delete_document(conn, owner_id, ref)
    click.echo(f"deleted {row['document_id']} {row['source_id']}")


# Commands defined in other modules register themselves on import.
from rag import (  # noqa: E402
    cli_calibrate,  # noqa: F401
    cli_embed,  # noqa: F401
    cli_eval,  # noqa: F401
    cli_query,  # noqa: F401
    cli_serve,  # noqa: F401
)


def main() -> None:
    """Console entry point."""
    cli(prog_name="rag")


if __name__ == "__main__":
    main()
