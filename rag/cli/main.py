"""The ``rag`` command: the group, and every command module's commands added to it.

Errors become one line on stderr and a non-zero exit status (rag.cli.common.fails_cleanly).
"""

from __future__ import annotations

import logging
import signal
import sys
from typing import Any

import click

from rag.cli import calibrate, documents, embed, evaluation, query, serve
from rag.cli.common import App
from rag.errors import RagError
from rag.logs import configure as configure_logging
from rag.settings import Settings


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


for _module in (documents, query, embed, evaluation, calibrate, serve):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    """Console entry point."""
    cli(prog_name="rag")


if __name__ == "__main__":
    main()
