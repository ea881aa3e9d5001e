"""The house's shape, read from the import statements: packages in one order, the engine's
rooms in one order, no import cycle, `cli/` using other packages' public names only, and
every package installed and described."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent

# Each package imports only the packages before it (lazy imports inside functions included).
PACKAGES = ("text", "parser", "engine", "interpreter", "cli")
# Each room of the engine imports only the rooms before it; api.py, on top, assembles `torch`.
ROOMS = ("core", "numerics", "numpy", "random", "graph", "ops", "tensors", "autograd", "nn",
         "optim", "data", "api")


def _modules() -> dict[tuple[str, ...], Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[parts[:-1] if parts[-1] == "__init__" else parts] = path
    return found


MODULES = _modules()


def _imports(name: tuple[str, ...], top_level_only: bool = False) -> list[tuple[tuple[str, ...], list[str], int]]:
    """(module imported, names taken from it, line) for each autodiff import of a module."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name[:-1]
    nodes = tree.body if top_level_only else ast.walk(tree)
    found = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = base + tuple(node.module.split(".") if node.module else ())
            elif (node.module or "").startswith("autodiff."):
                target = tuple(node.module.split(".")[1:])
            else:
                continue
            names = [a.name for a in node.names]
            modules = [target + (n,) for n in names if target + (n,) in MODULES]
            found += [(m, [], node.lineno) for m in modules]
            rest = [n for n in names if target + (n,) not in MODULES]
            if rest or not modules:
                found.append((target, rest, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(tuple(a.name.split(".")[1:]), [], node.lineno) for a in node.names
                      if a.name.startswith("autodiff.")]
    return found


def _where(name, line) -> str:
    return f"{MODULES[name].relative_to(ROOT)}:{line}"


def test_packages_import_only_the_packages_before_them():
    wrong = [f"{_where(name, line)} imports {'.'.join(target)}"
             for name in MODULES for target, _, line in _imports(name)
             if PACKAGES.index(target[0]) > PACKAGES.index(name[0])]
    assert not wrong, "\n".join(wrong)


def _room(name: tuple[str, ...]) -> str:
    return name[1] if len(name) > 1 else ""


def test_engine_rooms_import_only_the_rooms_before_them():
    engine = [name for name in MODULES if name[0] == "engine" and len(name) > 1]
    assert {_room(n) for n in engine} == set(ROOMS), "a room of the engine is not in ROOMS"
    wrong = [f"{_where(name, line)} ({_room(name)}) imports {'.'.join(target)}"
             for name in engine for target, _, line in _imports(name)
             if target[0] == "engine" and len(target) > 1
             and ROOMS.index(_room(target)) > ROOMS.index(_room(name))]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle_between_modules_at_import_time():
    graph = {name: {t for t, _, _ in _imports(name, top_level_only=True) if t in MODULES}
             for name in MODULES}
    state: dict = {}

    def visit(name, path):
        if state.get(name) == 2:
            return
        assert state.get(name) != 1, "import cycle: " + " -> ".join(
            ".".join(p) for p in path + [name])
        state[name] = 1
        for child in sorted(graph[name]):
            if child[:len(name)] != name:  # a package importing its own modules is no cycle
                visit(child, path + [name])
        state[name] = 2

    for name in MODULES:
        visit(name, [])


def test_cli_takes_no_private_name_from_another_package():
    wrong = [f"{_where(name, line)} takes {n} from {'.'.join(target)}"
             for name in MODULES if name[0] == "cli"
             for target, names, line in _imports(name) if target[0] != "cli"
             for n in names if n.startswith("_") and n != "_"]
    assert not wrong, "\n".join(wrong)


# cli/ reads other packages' objects through their public surface; each exception names
# why it cannot: (file, attribute) -> reason.
PRIVATE_ATTRIBUTE_ALLOWED = {
    ("cli/guard.py", "_exit"): "os._exit: the standard library's exit for a forked child, "
                               "which must not run the parent's clean-up",
    ("cli/repl_process.py", "_exit"): "os._exit, as in cli/guard.py",
}
# Engine fields with no PyTorch counterpart: cli reads them through
# engine/tensors/inspection.py, never directly; the writes it must make: (file, attribute)
# -> reason.
ENGINE_FIELDS = ("array", "saved", "meta")
ENGINE_FIELD_WRITES = {
    ("cli/check.py", "array"): "check perturbs a leaf's value in place (a write, not a read) "
                               "to take finite differences",
}


def _attribute_uses(test):
    """(file, line, attribute, text) for each attribute access in cli/*.py that `test` picks."""
    for path in sorted((ROOT / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and test(node):
                yield str(path.relative_to(ROOT)), node.lineno, node.attr, ast.unparse(node)


def _private(node: ast.Attribute) -> bool:
    attr = node.attr
    if not attr.startswith("_") or (attr.startswith("__") and attr.endswith("__")):
        return False  # (a dunder is Python's protocol, not a package's private name)
    return not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))


def test_cli_reaches_no_private_attribute_of_another_package():
    uses = list(_attribute_uses(_private))
    wrong = [f"{f}:{line}: {text}" for f, line, attr, text in uses
             if (f, attr) not in PRIVATE_ATTRIBUTE_ALLOWED]
    assert not wrong, "\n".join(wrong)
    used = {(f, attr) for f, _, attr, _ in uses}
    assert set(PRIVATE_ATTRIBUTE_ALLOWED) <= used, "a stale allow-list entry"


def test_the_private_attribute_check_catches_one():
    tree = ast.parse("Tensor._wrap(a)\nself._x\nx.__class__\nnode.saved\n")
    found = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and _private(n)]
    assert found == ["_wrap"]


def _engine_field(node: ast.Attribute) -> bool:
    numpy = isinstance(node.value, ast.Name) and node.value.id == "np"  # (np.array)
    return node.attr in ENGINE_FIELDS and not numpy


def test_cli_reads_engine_fields_only_through_inspection():
    reads = [f"{f}:{line}: {text}" for f, line, attr, text in _attribute_uses(
        lambda n: _engine_field(n) and not isinstance(n.ctx, ast.Store))]
    assert not reads, "\n".join(reads)
    writes = {(f, attr) for f, _, attr, _ in _attribute_uses(
        lambda n: _engine_field(n) and isinstance(n.ctx, ast.Store))}
    assert writes == set(ENGINE_FIELD_WRITES)


def test_every_package_is_installed_and_says_what_it_owns():
    packages = [name for name, path in MODULES.items() if path.name == "__init__.py"]
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    installed = set(config["tool"]["setuptools"]["packages"])
    assert {"autodiff." + ".".join(p) for p in packages} == installed
    silent = [".".join(p) for p in packages
              if not ast.get_docstring(ast.parse(MODULES[p].read_text(encoding="utf-8")))]
    assert not silent, f"packages without a docstring saying what they own: {silent}"


PROGRAM = ("from autodiff.engine.api import torch\n"
           "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
           "b = torch.tensor([3.0, 4.0], requires_grad=True)\n"
           "((a * b).exp().sum() + (a @ b)).backward()\n"
           "print(a.grad.tolist(), b.grad.tolist(), a.sin_ is not None)\n")


def test_any_room_imported_first_leaves_the_engine_whole():
    """Families are registered by the tensor module, not by whoever happens to import them:
    whichever room a process imports first, every op, method and operator works after it."""
    expected = None
    for room in ROOMS:
        code = f"import autodiff.engine.{room}\n" + PROGRAM
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, f"{room}: {done.stderr}"
        expected = expected or done.stdout
        assert done.stdout == expected, room
    assert expected.endswith("True\n")
