"""Our LALR loop (parser/lalr.py) against Lark's own parser on the same tables and tokens,
and the table cache (parser/tables.py)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from lark import Lark
from lark.exceptions import UnexpectedToken as LarkUnexpectedToken
from lark.lexer import Lexer

import autodiff.parser as parser_pkg
from autodiff.parser import TgError, lalr, parse, tables

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.parse_bench import make_program  # noqa: E402

SAMPLES = sorted(ROOT.joinpath("samples").glob("*.tg"))


class _Positioned(lalr.Token):
    """Our token with the offsets Lark's loop copies into its own $END token."""

    __slots__ = ("start_pos", "end_pos")


def _for_lark(token: lalr.Token) -> _Positioned:
    copy = _Positioned(token.type, token.value, token.line, token.column, token.end_line, token.end_column)
    copy.start_pos = copy.end_pos = 0
    return copy


class _Replay(Lexer):
    """Hands Lark the tokens TgLexer makes, as it makes them (Lark adds its own $END)."""

    tokens: iter = iter(())
    end = None  # our $END token, once reached

    def __init__(self, conf) -> None:
        pass

    def lex(self, text):
        for token in _Replay.tokens:
            if token.type == "$END":
                _Replay.end = token
                return
            yield _for_lark(token)


@pytest.fixture(scope="module")
def larks_parser():
    """Lark's LALR parser for tg.lark, building with the same ToAst methods as ours."""
    to_ast = parser_pkg._get_parser().to_ast
    return Lark(tables.GRAMMAR.read_text(), parser="lalr", lexer=_Replay, start=list(tables.STARTS),
                transformer=to_ast, maybe_placeholders=False)


@pytest.fixture
def with_larks_loop(monkeypatch, larks_parser):
    """Make autodiff.parser run Lark's loop instead of ours, everything else unchanged."""
    starts = {state: name for name, state in parser_pkg._get_parser().start_states.items()}

    def larks_loop(tokens, actions, reducers, start_state):
        _Replay.tokens = tokens
        try:
            return larks_parser.parse("", start=starts[start_state])
        except LarkUnexpectedToken as exc:  # same shape as ours, for errors.translate
            token = exc.token if exc.token.type != "$END" else _Replay.end
            raise lalr.UnexpectedToken(token, set(exc.expected)) from None

    monkeypatch.setattr(lalr, "parse", larks_loop)


def _outcome(source: str):
    try:
        return parse(source, "p.tg")
    except TgError as exc:
        return (exc.error_class, exc.message, exc.line, exc.col, exc.end_col)


def _programs() -> list[str]:
    return [path.read_text() for path in SAMPLES] + [make_program(600)]


def _mutants(count: int = 400) -> list[str]:
    """Broken variants of the samples: one character deleted, or a token inserted."""
    rng = random.Random(5)
    sources = [path.read_text() for path in SAMPLES]
    out = []
    for _ in range(count):
        text = rng.choice(sources)
        at = rng.randrange(len(text))
        if rng.random() < 0.5:
            out.append(text[:at] + text[at + 1:])
        else:
            out.append(text[:at] + rng.choice([":", ")", "(", ",", "=", " if ", "\n    ", "[", " not "]) + text[at:])
    return out


def test_same_ast_as_larks_own_loop(with_larks_loop, monkeypatch):
    programs = _programs()
    theirs = [_outcome(p) for p in programs]
    monkeypatch.undo()
    ours = [_outcome(p) for p in programs]
    assert len(programs) > 90
    for source, a, b in zip(programs, ours, theirs):
        assert a == b, source[:200]


def test_same_errors_as_larks_own_loop(with_larks_loop, monkeypatch):
    """Broken programs stop at the same token with the same message (the expected sets agree)."""
    programs = _mutants()
    theirs = [_outcome(p) for p in programs]
    monkeypatch.undo()
    ours = [_outcome(p) for p in programs]
    assert sum(isinstance(o, tuple) for o in ours) > 100  # most mutants are errors
    for source, a, b in zip(programs, ours, theirs):
        assert a == b, source[:200]


# ---- the table cache ----

@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "autodiff-tg"


def _no_build(grammar):
    raise AssertionError("tables were rebuilt instead of read from the cache")


def test_tables_are_built_once_then_read(cache_home, monkeypatch):
    built = tables.load()
    files = list(cache_home.iterdir())
    assert len(files) == 1 and files[0].suffix == ".marshal"
    monkeypatch.setattr(tables, "build", _no_build)
    assert tables.load() == built


def test_a_changed_grammar_rebuilds(cache_home, tmp_path, monkeypatch):
    tables.load()
    grammar = tmp_path / "tg.lark"
    grammar.write_text(tables.GRAMMAR.read_text().replace("| \"...\" -> ellipsis\n", ""))
    monkeypatch.setattr(tables, "GRAMMAR", grammar)
    changed = tables.load()
    assert "ellipsis" not in {rule[2] for rule in changed.rules}
    assert len(list(cache_home.iterdir())) == 2


def test_a_damaged_cache_is_rebuilt(cache_home, monkeypatch):
    tables.load()
    (path,) = cache_home.iterdir()
    path.write_bytes(path.read_bytes()[:1000])
    builds = []
    build = tables.build
    monkeypatch.setattr(tables, "build", lambda grammar: builds.append(1) or build(grammar))
    assert tables.load().start_states.keys() == {"module", "fexpr"}
    assert builds == [1] and path.stat().st_size > 1000  # built and written again


def test_an_unwritable_cache_directory_still_parses(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file where the folder should go
    assert tables._cache_path("x") is None
    assert tables.load().start_states.keys() == {"module", "fexpr"}


def test_the_only_conflicts_end_a_lambda_body():
    """Lark resolves a shift/reduce conflict by shifting, which for `lambda: a + b` is Python's
    reading (the body takes every operator after it). No other conflict may exist."""
    import logging

    from lark import logger as lark_logger

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    handler, level = Keep(), lark_logger.level
    lark_logger.addHandler(handler)
    lark_logger.setLevel(logging.DEBUG)
    try:
        Lark(tables.GRAMMAR.read_text(), parser="lalr", lexer=_Replay, start=list(tables.STARTS),
             debug=True, cache=False)
    finally:
        lark_logger.removeHandler(handler)
        lark_logger.setLevel(level)
    conflicts = [r for r in records if "conflict" in r.lower()]
    rules = {r.strip() for r in records if r.lstrip().startswith("*")}
    assert conflicts and all(r.startswith("Shift/Reduce") for r in conflicts)
    assert rules == {"* <lambdef : LAMBDA COLON test>", "* <lambdef : LAMBDA lambda_parameters COLON test>"}
