"""``rag db``, ``rag ingest``, ``rag sample`` and ``rag documents``: the schema and the documents."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from rag.cli.common import App, echo_json, fails_cleanly, json_option, owner_option, pass_app

# --- db -------------------------------------------------------------------------------------------


@click.group()
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
        from rag.cli.embed import drain_with_progress

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
            + (
                f" ({summary.vectors_kept} unchanged chunks kept their vectors)"
                if summary.vectors_kept
                else ""
            )
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


@click.command()
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


@click.command()
@owner_option
@wait_option
@json_option
@pass_app
@fails_cleanly
def sample(app: App, owner: str, wait: bool, as_json: bool) -> None:
    """Load the shipped Czech sample knowledge base."""
    from rag.eval.sets import SAMPLE_DIR

    _ingest(app, [SAMPLE_DIR], owner, as_json, wait=wait)


# --- documents ------------------------------------------------------------------------------------


@click.group()
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


# Added to the `rag` group by rag.cli.main.
COMMANDS = (db, ingest, sample, documents)
