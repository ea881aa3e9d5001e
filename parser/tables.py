"""The LALR(1) tables of tg.lark: Lark analyses the grammar, `lalr.parse` runs the tables.

Lark builds the tables from the grammar (about 0.4 s); they are then kept as plain data
(ints, strings, tuples, dicts) in the user's cache directory and read back with `marshal`
in about a millisecond, so a run imports no Lark at all (importing Lark and loading its
own cache cost ~55 ms of a ~200 ms start-up; issue 5). The cache holds the grammar text it
was built from and is rebuilt whenever tg.lark changes.

`Tables` fields:
- actions: one dict per state, symbol name -> int: a shift (or goto) to state `n` is `n`,
  a reduction by rule `r` is `~r` (negative). The end state of each start symbol shifts
  `$END`, so the parse ends when the last token is shifted.
- rules: per rule (origin, size, callback, keep, splice, expand1) with Lark's tree-shaping
  meaning: `callback` is the alias or rule name (a ToAst method), `keep` the child indices
  passed on (None: all), `splice` those whose children are inlined (rules named `_x`),
  `expand1` a `?rule` that hands on a single child unchanged.
- terminals: (name, pattern kind 'str' or 're', literal or regexp) for TgLexer.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib
from pathlib import Path
from typing import NamedTuple

GRAMMAR = Path(__file__).with_name("tg.lark")
STARTS = ("module", "fexpr")
_FORMAT = 1  # bump when the layout of the cached data changes


class Tables(NamedTuple):
    actions: list
    rules: list
    start_states: dict
    end_states: dict
    terminals: list


def load() -> Tables:
    """The tables for tg.lark: from the cache when it matches the grammar, else built."""
    grammar = GRAMMAR.read_text()
    path = _cache_path(grammar)
    if path is not None:
        try:
            with open(path, "rb") as f:
                data = marshal.loads(f.read())  # marshal.load(f) reads piecemeal: 8x slower
            if data["format"] == _FORMAT and data["grammar"] == grammar:
                return Tables(*data["tables"])
        except (OSError, EOFError, ValueError, TypeError, KeyError, IndexError):
            pass  # missing, stale or damaged: build again
    tables = build(grammar)
    if path is not None:
        _save(path, {"format": _FORMAT, "grammar": grammar, "tables": tuple(tables)})
    return tables


def build(grammar: str) -> Tables:
    """Run Lark's LALR analysis on the grammar and keep what parsing needs, as plain data."""
    from lark import Lark
    from lark.lexer import Lexer
    from lark.parsers.lalr_analysis import Shift

    class _Unused(Lexer):  # the tables only: TgLexer makes the tokens
        def __init__(self, conf):
            pass

        def lex(self, *args):
            raise NotImplementedError

    lark = Lark(grammar, parser="lalr", lexer=_Unused, start=list(STARTS), maybe_placeholders=False)
    table = lark.parser.parser.parser.parse_table
    rule_index = {rule: i for i, rule in enumerate(lark.rules)}
    actions = [{} for _ in range(len(table.states))]
    for state, row in table.states.items():
        for symbol, (action, arg) in row.items():
            actions[state][str(symbol)] = arg if action is Shift else ~rule_index[arg]
    for start in STARTS:
        end = table.end_states[start]
        actions[end]["$END"] = end
    rules = [_rule_shape(rule) for rule in lark.rules]
    terminals = [(str(t.name), t.pattern.type, t.pattern.value if t.pattern.type == "str" else t.pattern.to_regexp())
                 for t in lark.terminals]
    return Tables(actions, rules, dict(table.start_states), dict(table.end_states), terminals)


def _rule_shape(rule) -> tuple:
    """How Lark's tree builder would shape this rule's children (see the module docstring)."""
    keep_all = rule.options.keep_all_tokens
    kept = [i for i, sym in enumerate(rule.expansion) if keep_all or not (sym.is_term and sym.filter_out)]
    splice = tuple(i for i in kept if not rule.expansion[i].is_term and rule.expansion[i].name.startswith("_"))
    keep = None if len(kept) == len(rule.expansion) else tuple(kept)
    callback = str(rule.alias or rule.origin.name)
    expand1 = bool(rule.options.expand1 and not rule.alias)
    return str(rule.origin.name), len(rule.expansion), callback, keep, splice, expand1


def _cache_path(grammar: str) -> str | None:
    """A file in the user's cache directory, or None when that directory is not writable."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "autodiff-tg")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return None
    # marshal's format may change between Python versions; the checksum only tells grammars apart
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-{zlib.crc32(grammar.encode()):08x}"
    return os.path.join(folder, f"tg-tables-{_FORMAT}-{tag}.marshal")


def _save(path: str, data: dict) -> None:
    """Write atomically: parallel runs (autodiff test -j) may build the same tables at once."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            marshal.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
