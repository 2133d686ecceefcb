"""``rag keys``, ``rag search`` and ``rag ask``: the question side of the command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from rag.cli.common import App, echo_json, fails_cleanly, json_option, owner_option, pass_app

F = TypeVar("F", bound=Callable[..., Any])


def _filter_args(narrow: dict[str, Any]) -> dict[str, Any]:
    return {
        "source_prefix": narrow["source_prefix"],
        "meta": narrow["meta"],
        "date_from": narrow["date_from"],
        "date_to": narrow["date_to"],
        "lang": narrow["doc_lang"],
    }


def engine(app: App) -> Any:
    """The answering pipeline with this invocation's database, embedder, LLM and reranker."""
    from rag.answer.engine import Engine
    from rag.answer.llm import make_llm
    from rag.search.rerank import make_reranker

    return Engine(
        app.db,
        app.settings,
        app.embedder,
        make_llm(app.settings),
        reranker=make_reranker(app.settings),
    )


def filter_options(fn: F) -> F:
    """--source-prefix, --meta KEY=VALUE..., --date-from, --date-to, --lang."""
    options = [
        click.option(
            "--source-prefix", default=None, help="Only documents whose source_id starts so."
        ),
        click.option(
            "--meta",
            "meta",
            multiple=True,
            metavar="KEY=VALUE",
            help="Only documents whose metadata has KEY equal to VALUE (repeatable; a JSON number, "
            'true/false or "quoted string" keeps its type, anything else is a string).',
        ),
        click.option(
            "--date-from", default=None, metavar="YYYY-MM-DD", help="Document date on or after."
        ),
        click.option(
            "--date-to", default=None, metavar="YYYY-MM-DD", help="Document date on or before."
        ),
        click.option("--lang", "doc_lang", default=None, help="Only documents in this language."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def parse_filter(
    source_prefix: str | None,
    meta: tuple[str, ...],
    date_from: str | None,
    date_to: str | None,
    lang: str | None,
) -> Any:
    """The options as a SearchFilter (None when none is given).

    Raises:
        InputError: a malformed KEY=VALUE, a bad date or any check of SearchFilter.from_mapping.
    """
    from rag.errors import InputError
    from rag.search.filters import SearchFilter

    pairs: dict[str, Any] = {}
    for item in meta:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise InputError(f"--meta takes KEY=VALUE, not {item[:60]!r}")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        pairs[key] = value if isinstance(value, str | int | float | bool) else raw
    raw_filter = {
        "source_prefix": source_prefix,
        "metadata": pairs,
        "date_from": date_from,
        "date_to": date_to,
        "lang": lang,
    }
    parsed = SearchFilter.from_mapping(raw_filter)
    return None if parsed.empty else parsed


@click.command("keys")
@click.argument("text")
@click.option("--lang", default=None, help="Language code; detected when omitted.")
@json_option
@fails_cleanly
def keys_command(text: str, lang: str | None, as_json: bool) -> None:
    """Print the language, tokens and lemma / stem / prefix keys of TEXT (for debugging)."""
    from rag.language.keys import chunk_keys, detect_language
    from rag.language.question_keys import query_keys

    language = lang or detect_language(text)
    q = query_keys(text, language)
    c = chunk_keys(text, language)
    data: dict[str, Any] = {
        "lang": language,
        "tokens": [
            {
                "surface": w.surface,
                "form": w.form,
                "keys": list(w.keys),
                "content_word": w in q.words,
                "needs_form_map": w.needs_form_map,
            }
            for w in q.all_words
        ],
        "chunk_keys": c.keys,
        "token_count": c.token_count,
    }
    if as_json:
        echo_json(data)
        return
    click.echo(f"lang: {language}")
    for t in data["tokens"]:
        mark = " " if t["content_word"] else "-"
        click.echo(f"{mark} {t['surface']:<20} {' '.join(t['keys'])}")
    click.echo(f"chunk keys ({c.token_count} tokens): {c.tsvector}")


@click.command()
@click.argument("question")
@owner_option
@click.option(
    "--mode", type=click.Choice(["hybrid", "fts", "vector"]), default="hybrid", show_default=True
)
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 200))
@filter_options
@json_option
@pass_app
@fails_cleanly
def search(
    app: App,
    question: str,
    owner: str,
    mode: str,
    limit: int,
    as_json: bool,
    **narrow: Any,
) -> None:
    """Show the fused candidates for QUESTION with their ranks, distance and evidence."""
    filters = parse_filter(**_filter_args(narrow))
    result = engine(app).search(
        app.owner_id(owner), question, mode=mode, limit=limit, filters=filters
    )
    if as_json:
        echo_json(result.as_dict())
        return
    for d in result.degraded:
        click.echo(f"degraded: {d['component']} ({d['reason']}): {d['message']}", err=True)
    if result.retrieval.searched_as:
        click.echo(f"searched as: {result.retrieval.searched_as}")
    for i, h in enumerate(result.hits, 1):
        c, j = h.candidate, h.judgement
        dist = "-" if c.distance is None else f"{c.distance:.4f}"
        a = j.answer
        if j.passed:
            verdict = j.rule
        elif j.rule and a is not None:
            verdict = f"{j.rule}, does not answer: {a.reason}"
        else:
            verdict = "no evidence"
        click.echo(
            f"{i:>2}. {c.source_id} #{c.chunk_id}  rrf {c.rrf_score:.4f}  fts {c.fts_rank or '-'}"
            f"  vec {c.vector_rank or '-'}  dist {dist}  cover {j.coverage:.2f}  [{verdict}]"
        )
        if a is not None and a.window:
            start, end = a.window
            click.echo(f"    window {start}-{end}: {' '.join(c.text[start:end].split())[:200]}")
            pull = "" if j.pull is None else f"  pull {j.pull:+.4f}"
            click.echo(f"    {answerability_line(a)}{pull}")
        else:
            click.echo(f"    {' '.join(c.text.split())[:160]}")
    for h in result.hidden:
        click.echo(
            f"hidden: {h['source_id']} #{h['chunk_id']} (superseded by {h['superseded_by']})"
        )
    if not result.hits:
        click.echo("no candidates")


def answerability_line(a: Any) -> str:
    """One line of a window's checks: answer type, required tokens, focus words."""

    def where(items: list[dict[str, Any]]) -> str:
        return " ".join(f"{x['word']}:{x['matched_by'] or '-'}" for x in items) or "none"

    wanted = a.answer_type or "any"
    met = (
        f"{wanted}={a.type_token}"
        if a.type_token
        else f"{wanted} (none)"
        if a.answer_type
        else wanted
    )
    return f"type {met}  required {where(a.required)}  focus {where(a.focus)}"


@click.command()
@click.argument("question")
@owner_option
@filter_options
@json_option
@pass_app
@fails_cleanly
def ask(app: App, question: str, owner: str, as_json: bool, **narrow: Any) -> None:
    """Answer QUESTION from the knowledge base, or say that it is not there."""
    filters = parse_filter(**_filter_args(narrow))
    answer = engine(app).ask(app.owner_id(owner), question, filters=filters)
    if as_json:
        echo_json(answer.as_dict())
        return
    for d in answer.degraded:
        click.echo(f"degraded: {d['component']} ({d['reason']}): {d['message']}", err=True)
    if answer.status == "related":
        click.echo("related: no direct answer; the sources are only near the question", err=True)
    click.echo(answer.answer)
    for i, s in enumerate(answer.sources, 1):
        # a related source: the rule that admitted it, and the check that refused it
        refused = (s.evidence.get("answerability") or {}).get("reason")
        why = f"{s.evidence['rule']}, refused: {refused}" if s.evidence.get("related") else None
        click.echo(f"[{i}] {s.source_id} ({why or s.evidence['rule']})", err=False)
    if answer.status == "not_found":
        sys.exit(0)


# Added to the `rag` group by rag.cli.main.
COMMANDS = (keys_command, search, ask)
