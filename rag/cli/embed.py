"""``rag embed``, ``rag reindex`` and ``rag stats``: the vectors of an owner's chunks."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import click

from rag.cli.common import App, echo_json, fails_cleanly, json_option, owner_option, pass_app
from rag.errors import RagError


@dataclass
class Drained:
    remaining: int
    error: str | None


def drain_with_progress(
    app: App, owner_id: int, *, quiet: bool, desc: str | None = None
) -> Drained:
    """Embed the owner's queue with a progress bar (its ETA is the time left)."""
    from tqdm import tqdm

    from rag.ingest.embed_queue import claimable, drain

    total = claimable(app.db, owner_id)
    with tqdm(
        total=total, unit="chunk", disable=quiet, file=sys.stderr, leave=False, desc=desc
    ) as bar:

        def progress(done: int, remaining: int) -> None:
            bar.total = done + remaining
            bar.n = done
            bar.refresh()

        result = drain(
            app.db,
            app.embedder,
            owner_id,
            batch=app.settings.embed_worker_batch,
            progress=progress,
            max_attempts=app.settings.embed_max_attempts,
        )
    return Drained(claimable(app.db, owner_id), result.error)


@click.command()
@owner_option
@click.option(
    "--retry-failed",
    is_flag=True,
    help="Try again the chunks set aside after their embedding kept failing.",
)
@json_option
@pass_app
@fails_cleanly
def embed(app: App, owner: str, retry_failed: bool, as_json: bool) -> None:
    """Fill the owner's missing vectors now (the queue `rag serve` drains), with an ETA."""
    from rag.errors import ConfigError
    from rag.ingest import embed_failures

    if app.embedder is None:
        raise ConfigError("no embedder configured (RAG_EMBEDDER=none)")
    owner_id = app.owner_id(owner)
    if owner_id is None:
        raise RagError(f"owner {owner!r} has no documents")
    retried = 0
    if retry_failed:
        with app.db.connection() as conn:
            retried = embed_failures.forget(conn, owner_id)
            conn.commit()
    before = time.perf_counter()
    result = drain_with_progress(app, owner_id, quiet=as_json)
    seconds = time.perf_counter() - before
    with app.db.connection() as conn:
        aside = embed_failures.set_aside(conn, owner_id)
        conn.commit()
    if as_json:
        echo_json(
            {
                "model": app.embedder.model_id,
                "waiting": result.remaining,
                "set_aside": aside,
                "retried": retried,
                "error": result.error,
                "seconds": round(seconds, 3),
            }
        )
    else:
        if result.error:
            click.echo(f"rag: error: embedder failed: {result.error}", err=True)
        click.echo(
            f"{result.remaining} chunks of owner {owner!r} wait for a vector of"
            f" {app.embedder.model_id} ({seconds:.1f} s)"
        )
        if aside:
            click.echo(
                f"{aside} chunks set aside after {app.settings.embed_max_attempts} failed"
                " attempts (`rag stats` shows why; `rag embed --retry-failed` tries them again)"
            )
    if result.error or aside:
        sys.exit(1)


@click.command()
@owner_option
@click.option("--force", is_flag=True, help="Re-embed every chunk, not only missing vectors.")
@click.option(
    "--analyses",
    is_flag=True,
    help="Store the sentence analyses of chunks that lack one of this version now (what `rag serve` does in the background), instead of embedding.",
)
@json_option
@pass_app
@fails_cleanly
def reindex(app: App, owner: str, force: bool, analyses: bool, as_json: bool) -> None:
    """Embed chunks that lack a vector of the configured model (switching models is one command)."""
    from tqdm import tqdm

    from rag.errors import ConfigError
    from rag.ingest.reindex import count_pending
    from rag.ingest.reindex import reindex as run

    if analyses:
        _reanalyze(app, owner, as_json)
        return
    if app.embedder is None:
        raise ConfigError("no embedder configured (RAG_EMBEDDER=none)")
    owner_id = app.owner_id(owner)
    if owner_id is None:
        raise RagError(f"owner {owner!r} has no documents")
    total = count_pending(app.db, owner_id, app.embedder.model_id, force=force)
    with tqdm(total=total, unit="chunk", disable=as_json, file=sys.stderr, leave=False) as bar:
        summary = run(
            app.db,
            app.embedder,
            owner_id,
            force=force,
            batch=app.settings.embed_batch,
            progress=bar.update,
        )
    if as_json:
        echo_json({"model": app.embedder.model_id, **summary.as_dict()})
    else:
        click.echo(f"{summary.embedded} chunks embedded with {app.embedder.model_id}")
        for e in summary.errors:
            click.echo(f"rag: error: embedder failed: {e}", err=True)
    if summary.failed:
        sys.exit(1)


def _reanalyze(app: App, owner: str, as_json: bool) -> None:
    """``rag reindex --analyses``: the owner's queued sentence analyses, computed and stored."""
    from tqdm import tqdm

    from rag.ingest.analysis_queue import drain, waiting
    from rag.search.answerability import ANALYSIS_VERSION

    owner_id = app.owner_id(owner)
    if owner_id is None:
        raise RagError(f"owner {owner!r} has no documents")
    total = waiting(app.db, owner_id)
    with tqdm(total=total, unit="chunk", disable=as_json, file=sys.stderr, leave=False) as bar:
        done = drain(
            app.db, owner_id, batch=app.settings.analysis_worker_batch, progress=bar.update
        )
    if as_json:
        echo_json(
            {
                "analysis_version": ANALYSIS_VERSION,
                "analysed": done.analysed,
                "seconds": round(done.seconds, 3),
            }
        )
    else:
        click.echo(
            f"{done.analysed} chunks of owner {owner!r} analysed (version {ANALYSIS_VERSION},"
            f" {done.seconds:.1f} s)"
        )


@click.command()
@owner_option
@json_option
@pass_app
@fails_cleanly
def stats(app: App, owner: str, as_json: bool) -> None:
    """Documents, chunks, unembedded chunks and embedding models of the owner."""
    from dataclasses import asdict

    from rag.ingest.embed_queue import embedding_status
    from rag.store import owner_stats

    owner_id = app.owner_id(owner)
    model = app.embedder.model_id if app.embedder is not None else None
    with app.db.connection() as conn:
        s = owner_stats(conn, owner_id)
        progress = embedding_status(conn, model, s.chunks, s.models, owner_id)
        conn.commit()
    if as_json:
        echo_json({**asdict(s), "embedding": asdict(progress)})
        return
    click.echo(f"documents: {s.documents}\nchunks: {s.chunks}\nunembedded: {s.unembedded}")
    for name, n in s.models.items():
        click.echo(f"model {name}: {n} chunks")
    if model is not None:
        click.echo(f"indexed by meaning: {progress.embedded} of {progress.total} ({model})")
        workers = progress.workers
        if progress.rate is not None:
            eta = progress.eta_seconds
            left = f", about {_duration(eta)} left" if eta is not None else ""
            click.echo(f"embedding workers: {workers}, {progress.rate} chunks/s{left}")
        elif progress.waiting:
            click.echo("embedding workers: none running (start `rag serve` or run `rag embed`)")
        if progress.error:
            click.echo(f"embedding error: {progress.error}")
        if progress.set_aside or progress.retrying:
            click.echo(
                f"failed to embed: {progress.set_aside} set aside (`rag embed --retry-failed`),"
                f" {progress.retrying} to be tried again; last error: {progress.chunk_error}"
            )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# Added to the `rag` group by rag.cli.main.
COMMANDS = (embed, reindex, stats)
