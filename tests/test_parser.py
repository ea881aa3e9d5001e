"""Parser: one program per construct, precedence, positions, and syntax errors."""

import pytest
from tiers import slow

from autodiff.parser import ast, parse, parse_expression
from autodiff.text.diagnostics import TgError


def expr(text):
    return parse_expression(text)


def show(node):
    """Compact prefix form of an expression, for precedence tests."""
    if isinstance(node, ast.BinOp):
        return f"({node.op} {show(node.left)} {show(node.right)})"
    if isinstance(node, ast.UnaryOp):
        return f"({node.op} {show(node.operand)})"
    if isinstance(node, ast.BoolOp):
        return f"({node.op} {' '.join(show(v) for v in node.values)})"
    if isinstance(node, ast.Compare):
        rest = " ".join(f"{op} {show(c)}" for op, c in zip(node.ops, node.comparators))
        return f"(cmp {show(node.left)} {rest})"
    if isinstance(node, ast.IfExp):
        return f"(if {show(node.test)} {show(node.body)} {show(node.orelse)})"
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return repr(node.value)
    return type(node).__name__


@pytest.mark.parametrize("text, shape", [
    ("-2**2", "(- (** 2 2))"),
    ("2**-1", "(** 2 (- 1))"),
    ("2**3**2", "(** 2 (** 3 2))"),
    ("a - b - c", "(- (- a b) c)"),
    ("a + b * c", "(+ a (* b c))"),
    ("a @ b + c", "(+ (@ a b) c)"),
    ("a // b % c", "(% (// a b) c)"),
    ("not a == b", "(not (cmp a == b))"),
    ("a or b and c", "(or a (and b c))"),
    ("a < b <= c != d", "(cmp a < b <= c != d)"),
    ("a is not b", "(cmp a is not b)"),
    ("a not in b", "(cmp a not in b)"),
    ("x if c else y if d else z", "(if c x (if d y z))"),
    ("-x.y", "(- Attribute)"),
    ("a | b ^ c & d", "(| a (^ b (& c d)))"),
    # the grammar's operator rules are flat (issue 5): ToAst restores Python's precedence
    ("a and not b == c", "(and a (not (cmp b == c)))"),
    ("-a ** -b ** c", "(- (** a (- (** b c))))"),
    ("a * -b ** c + d", "(+ (* a (- (** b c))) d)"),
    ("(a + b) * c", "(* (+ a b) c)"),
    ("(a < b) < c", "(cmp (cmp a < b) < c)"),
    ("(a and b) and c", "(and (and a b) c)"),
    ("a if b else c or d", "(if b a (or c d))"),
    ("not a if b else c", "(if b (not a) c)"),
    ("a == b or c == d", "(or (cmp a == b) (cmp c == d))"),
    ("a < b + c < d", "(cmp a < (+ b c) < d)"),
    ("a ** b ** c ** d", "(** a (** b (** c d)))"),
])
def test_precedence(text, shape):
    assert show(expr(text)) == shape


def test_every_statement_kind():
    src = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport math\n"
        "a = 1\na, b = 1, 2\n(c, d) = [3, 4]\nx[0] = 1\nx.grad = None\n"
        "a += 1; a -= 1; a *= 2; a /= 2; a **= 2; a @= b; a //= 2; a %= 2\n"
        "print(a, sep='', end='')\n"
        "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n"
        "while a:\n    break\n"
        "for i, j in zip(a, b):\n    continue\n"
        "def f(p, q=2):\n    return p\n"
        "assert a, 'msg'\nassert a\n"
        "with torch.no_grad():\n    y = 1\n"
        "with torch.no_grad() as g:\n    pass\n"
        "total = (1 +\n         2)\n"
        "z = 1 + \\\n    2  # comment\n"
    )
    body = parse(src).body
    kinds = [type(s).__name__ for s in body]
    assert kinds[:4] == ["Import"] * 4
    assert body[1].module == "torch.nn" and body[1].asname == "nn"
    assert "AugAssign" in kinds and "While" in kinds and "For" in kinds and "With" in kinds
    fn = next(s for s in body if isinstance(s, ast.FunctionDef))
    assert [p.name for p in fn.params] == ["p", "q"] and fn.params[1].default.value == 2
    ifs = next(s for s in body if isinstance(s, ast.If))
    assert isinstance(ifs.orelse[0], ast.If) and isinstance(ifs.orelse[0].orelse[0], ast.Pass)
    ops = [s.op for s in body if isinstance(s, ast.AugAssign)]
    assert ops == ["+", "-", "*", "/", "**", "@", "//", "%"]


def test_literals():
    assert expr("1e-3").value == 1e-3 and expr(".5").value == 0.5 and expr("2.").value == 2.0
    assert expr("0x1F").value == 31 and expr("1_000").value == 1000
    assert expr("True").value is True and expr("None").value is None and expr("...").value is ...
    assert expr(r"'a\tb\n'").value == "a\tb\n" and expr(r'r"a\n"').value == "a\\n"
    assert expr('"a" "b"').value == "ab"
    assert expr('"""x\ny"""').value == "x\ny"
    assert isinstance(expr("[]"), ast.List) and isinstance(expr("()"), ast.Tuple)
    assert len(expr("(1,)").elts) == 1


def test_fstring_fields_and_positions():
    node = parse('s = f"v={x + 1:.3f} {y!r:>8} {{lit}}"\n').body[0].value
    assert isinstance(node, ast.FString)
    first = node.parts[1]
    assert isinstance(first.value, ast.BinOp) and first.spec.parts == (".3f",)
    assert (first.value.line, first.value.col) == (1, 10)
    assert node.parts[3].conversion == "r" and node.parts[-1] == " {lit}"


def test_subscripts_and_calls():
    node = expr("x[0, 1:, ::2, None, ...]")
    parts = node.index.elts
    assert isinstance(parts[1], ast.Slice) and parts[1].upper is None
    assert parts[2].step.value == 2 and parts[3].value is None and parts[4].value is ...
    call = expr("f(1, k=2)(3)")
    assert isinstance(call.func, ast.Call) and call.func.keywords[0].arg == "k"
    assert isinstance(expr("x[[0, 2]]").index, ast.List)


def test_positions():
    stmt = parse("\ny = x.sum() + 1\n").body[0]
    call = stmt.value.left
    assert (stmt.line, stmt.col) == (2, 1)
    assert (call.line, call.col, call.end_col) == (2, 5, 12)


def err(src):
    with pytest.raises(TgError) as info:
        parse(src, "prog.tg")
    return info.value


def test_expected_expression_message_and_caret():
    src = "x = 1\n\ny = (x + )\n"
    e = err(src)
    assert e.render(src) == ("prog.tg:3:10: SyntaxError: expected an expression, got ')'\n"
                             "    y = (x + )\n"
                             "             ^")
    assert e.exit_code == 2


@pytest.mark.parametrize("src, cls, fragment, line", [
    ("if x\n    y = 1\n", "SyntaxError", "expected ':'", 1),
    ("print(1 2)\n", "SyntaxError", "expected ',' or ')'", 1),
    ("x = (1 + 2\n", "SyntaxError", "'(' was never closed", 1),
    ("x = 1)\n", "SyntaxError", "unmatched ')'", 1),
    ("x = 'abc\n", "SyntaxError", "unterminated string literal", 1),
    ("x = 1\n  y = 2\n", "IndentationError", "unexpected indent", 2),
    ("if x:\ny = 2\n", "IndentationError", "expected an indented block", 2),
    ("if x:\n    y = 1\n  z = 2\n", "IndentationError", "unindent does not match", 3),
    ("if x:\n        y = 1\n\tz = 2\n", "TabError", "inconsistent use of tabs", 3),
    ("x = $\n", "SyntaxError", "invalid character", 1),
    ("f() = 1\n", "SyntaxError", "cannot assign to function call", 1),
])
def test_syntax_errors(src, cls, fragment, line):
    e = err(src)
    assert (e.error_class, e.line) == (cls, line)
    assert fragment in e.message
    assert "Traceback" not in e.render(src)


@pytest.mark.parametrize("src, fragment", [
    ("def f():\n    x = yield 1\n", "'yield' inside an expression is not supported"),
    ("async def f():\n    pass\n", "'async'"),
    ("while x:\n    pass\nelse:\n    pass\n", "'while ... else'"),
    ("f(x for x in y, 1)\n", "expected"),
    ("f(1, x for x in y)\n", "Generator expression must be parenthesized"),
    ("def f(**k, a):\n    pass\n", "arguments cannot follow var-keyword argument"),
    ("def f(*):\n    pass\n", "named arguments must follow bare *"),
    ("def f(*a, *b):\n    pass\n", "* argument may appear only once"),
    ("lambda a, a: 1\n", "duplicate argument 'a'"),
    ("f(**a, b)\n", "positional argument follows keyword argument unpacking"),
    ("f(**a, *b)\n", "iterable argument unpacking follows keyword argument unpacking"),
    ("try:\n    pass\nexcept:\n    pass\nexcept E:\n    pass\n", "default 'except:' must be last"),
    ("del f()\n", "cannot delete function call"),
    ("try:\n    pass\n", "expected"),
])
def test_unsupported_constructs(src, fragment):
    e = err(src)
    assert fragment in e.message and e.exit_code == 2


def test_deep_parentheses_give_clean_error():
    e = err("x = " + "(" * 10000 + "1" + ")" * 10000 + "\n")
    assert e.message == "too many nested parentheses"


def test_deep_blocks_give_clean_error():
    src = "".join(" " * i + "if x:\n" for i in range(1000)) + " " * 1000 + "pass\n"
    e = err(src)
    assert e.message == "too many levels of indentation"


def test_long_operator_chain_parses_without_recursion():
    node = parse("x = " + " + ".join(["1"] * 5000) + "\n").body[0].value
    assert isinstance(node, ast.BinOp)


# ---- flat operator rules (issue 5): ToAst restores spans ----

def test_parenthesized_child_spans_its_parentheses():
    node = expr("(a + b) * c")
    assert (node.col, node.end_col) == (1, 12)
    assert (node.left.col, node.left.end_col) == (2, 7)  # the inner node keeps its own span
    call = parse("y = f((x))\n").body[0].value
    assert (call.args[0].col, call.args[0].end_col) == (8, 9)


def test_fstring_name_fields_match_parsed_fields():
    fast = parse('s = f"{w.grad}"\n').body[0].value.parts[0].value
    slow = parse('s = f"{w.grad }"\n').body[0].value.parts[0].value  # not a bare name: parsed
    assert fast == slow and (fast.col, fast.end_col) == (8, 14)


@pytest.mark.parametrize("src, fragment, col", [
    ("x.if = 1\n", "got 'if'", 3),  # keywords are never names, as in Python
    ("x = a == not b\n", "got 'not'", 10),
    ("x = (]\n", "closing parenthesis ']' does not match opening parenthesis '('", 6),
    ("x = a if b\n", "expected 'else'", 11),
    ("x = a if b if c else d else e\n", "expected 'else' after 'if' expression", 5),
])
def test_python_like_errors(src, fragment, col):
    e = err(src)
    assert fragment in e.message and e.col == col


# --- hostile input: Python's errors, linear time -------------------------------------------

STRING_BODIES = [r"\N", r"\N{", r"\N{bogus}", r"\N{DEGREE SIGN}", r"\U00110000", r"\U0001F600",
                 r"\x4", r"\x41", r"\u12", r"\u0041", r"\8", r"\777", r"a\qb", "é\\N", "\\é",
                 r"\\N{bogus}", r"\0", r"\n\t"]


@pytest.mark.parametrize("body", STRING_BODIES)
@pytest.mark.parametrize("prefix", ["", "r", "u"])
def test_string_escapes_decode_or_fail_as_python_does(body, prefix):
    source = f'x = {prefix}"{body}"\n'
    import warnings

    try:
        namespace: dict = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "invalid escape sequence": kept as written
            exec(compile(source, "<python>", "exec"), namespace)  # Python decides
        want = ("ok", namespace["x"])
    except SyntaxError as exc:
        want = ("SyntaxError", exc.msg)
    try:
        node = parse(source).body[0].value
        got = ("ok", node.value)
    except TgError as exc:
        got = (exc.error_class, exc.message)
    assert got == want


def test_f_string_specs_nest_as_in_python():
    assert len(expr("f'{x:{y}}'").parts) == 1  # a field in a spec
    assert expr("f'{x:{y:3}}'").parts[0].spec.parts[0].spec is not None
    with pytest.raises(TgError, match="expressions nested too deeply"):
        parse("x = f'{1:{2:{3}}}'\n")
    with pytest.raises(TgError, match="expressions nested too deeply"):
        parse("x = f'{1:" + "{1:" * 1200 + "}" * 1200 + "}'\n")


def test_named_escapes_in_f_strings_are_not_fields():
    node = expr('f"\\N{DEGREE SIGN}{x}\\\\N{y}"')
    kinds = [type(p).__name__ if not isinstance(p, str) else p for p in node.parts]
    assert kinds == ["°", "FormattedValue", "\\N", "FormattedValue"]


def test_huge_decimal_literal_is_pythons_syntax_error():
    with pytest.raises(TgError, match=r"Exceeds the limit \(4300 digits\).*Consider hexadecimal"):
        parse("x = " + "7" * 5000 + "\n")
    assert parse("x = 0x" + "f" * 5000 + "\n").body[0].value.value == 16 ** 5000 - 1


def test_comparison_and_boolean_chains_grow_in_place():
    chain = expr(" < ".join(["a"] * 5))
    assert isinstance(chain, ast.Compare) and len(chain.comparators) == 4
    assert show(expr("a and b and c or d")) == "(or (and a b c) d)"


def test_a_right_leaning_chain_deeper_than_the_interpreter_takes_is_refused():
    assert show(expr(" ** ".join("abc"))) == "(** a (** b c))"
    with pytest.raises(TgError, match="expression nested too deeply"):
        parse("x = " + " ** ".join(["1"] * 10_000) + "\n")
    with pytest.raises(TgError, match="expression nested too deeply"):
        parse("x = " + " if c else ".join(["1"] * 1_000) + "\n")


def _parse_seconds(text: str) -> float:
    import time

    start = time.perf_counter()
    parse(text)
    return time.perf_counter() - start


@pytest.mark.parametrize("unit", [
    "elif x == {i}:\n    pass\n",       # an elif chain: one list, grown in place
    "y = a and b and c < d < e\n",      # chains of one operator
    "y = 'a' 'b' 'c' 'd' 'e' 'f'\n",     # adjacent strings, joined once
])
@slow
def test_parse_time_grows_linearly(unit):
    head = "x = 0\nif x == 0:\n    pass\n" if unit.startswith("elif") else ""
    small = head + "".join(unit.format(i=i) for i in range(2_000))
    large = head + "".join(unit.format(i=i) for i in range(20_000))
    assert _parse_seconds(large) < 20 * _parse_seconds(small) + 0.5  # ten times the text


def test_an_elif_chain_is_nested_ifs_like_pythons_ast():
    module = parse("if a:\n    pass\n" + "".join(f"elif b{i}:\n    pass\n" for i in range(3)))
    node, depth = module.body[0], 0
    while node.orelse:
        node, depth = node.orelse[0], depth + 1
    assert depth == 3 and node.test.id == "b2"


def test_a_line_separator_does_not_shift_the_quoted_line():
    source = "x = 1  # one\u2028two\x0cthree\ny = nope\n"
    error = TgError("NameError", "boom", filename="t.tg", line=2, col=5, end_col=9)
    assert error.render(source).splitlines()[1] == "    y = nope"


def test_a_long_line_is_quoted_around_the_caret():
    source = "x = " + "1 + " * 10_000 + "nope\n"
    col = len(source) - 4
    rendered = TgError("NameError", "boom", line=1, col=col, end_col=col + 4).render(source)
    quoted, caret = rendered.splitlines()[1:]
    assert len(quoted) < 300 and quoted.endswith("nope") and quoted.startswith("    ...")
    assert caret.index("^") == quoted.index("nope")
