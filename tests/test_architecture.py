"""The package's shape (docs/architecture.md): rooms that import only what their docstring allows, no import cycles
(type-only imports included), no module over 600 lines, no Python function over 80 lines of code outside compiled
kernels, few names with a leading underscore imported from another module, cases on the public API alone.

Run as a script to print the counts and the arrows between rooms (the numbers in docs/architecture.md):
``python tests/test_architecture.py``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "flexbody"
MAX_LINES = 600
MAX_FUNCTION_LINES = 80
"""Lines of code of a Python function (from its first statement after the docstring to its end): the docstring, which
documents the public API, does not count; numba kernels (``@nb.njit``) are exempt."""
MAX_CASE_LINES = 250
MAX_PRIVATE_IMPORTS = 40
"""Names with a leading underscore that one module imports from another (a name shared between modules is not
private to one)."""
TOP_LEVEL = {"errors", "progress", "precompile", "threads", "deprecation", "_version"}  # single-module rooms


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, child.end_lineno + 1))
    return lines


def imports_of(name: str, path: Path, modules: dict[str, Path], type_only: bool = False) -> set[str]:
    """The flexbody modules ``name`` imports anywhere (module level or inside functions), with ``type_only`` those
    under ``if TYPE_CHECKING`` too; ``from package import module`` counts as importing that module."""
    tree = ast.parse(path.read_text())
    skip = set() if type_only else _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" for alias in node.names] + [source]
        else:
            continue
        for imported in targets:
            target = imported
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(type_only: bool = False) -> dict[str, set[str]]:
    """Module → imported modules (with ``type_only``, the imports for type checkers too), without the arrows
    between a package and its own modules (an ``__init__`` re-exporting its modules, a module importing from its
    own package's ``__init__``)."""
    modules = package_modules()
    graph = {}
    for name, path in modules.items():
        graph[name] = {
            t
            for t in imports_of(name, path, modules, type_only)
            if not (t.startswith(name + ".") or name.startswith(t + "."))
        }
    return graph


def private_imports() -> list[tuple[str, str, str]]:
    """(importing module, source module, name) of every name with a leading underscore that a flexbody module
    imports from another flexbody module."""
    found = []
    for name, path in package_modules().items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.startswith("flexbody"):
                found += [(name, source, a.name) for a in node.names if a.name.startswith("_") and a.name[1] != "_"]
    return found


def long_functions() -> list[tuple[str, str, int]]:
    """(module, function, lines of code) of the Python functions over :data:`MAX_FUNCTION_LINES` lines of code."""
    found = []
    for name, path in package_modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if any("jit" in ast.unparse(d) for d in node.decorator_list):
                continue  # a compiled kernel
            body = node.body
            documented = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
            first = body[1].lineno if documented and len(body) > 1 else body[0].lineno
            lines = node.end_lineno - first + 1
            if lines > MAX_FUNCTION_LINES:
                found.append((name, node.name, lines))
    return found


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "flexbody"


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for source, targets in graph.items():
        rooms.setdefault(room_of(source), set()).update(room_of(t) for t in targets if room_of(t) != room_of(source))
    return rooms


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def allowed_rooms(room: str) -> set[str] | None:
    """The rooms a package's docstring allows it to import ("May import: a, b." or "anything"), None for
    a single-module room."""
    init = PACKAGE / room / "__init__.py"
    if not init.is_file():
        return None
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    match = re.search(r"May import:\s*(.+?)\.\s*$", doc, flags=re.S | re.M)
    assert match, f"flexbody/{room}/__init__.py: the docstring does not say what the package may import"
    text = match.group(1).replace("\n", " ")
    if text.strip().startswith("anything"):
        return {room_of(m) for m in package_modules()}
    return {word.strip() for word in text.split(",")}


def test_no_import_cycles_between_modules():
    assert cycles(import_graph()) == []


def test_no_import_cycles_between_modules_counting_type_only_imports():
    """The lower rooms name the workspace through the rigid.state_view.StateView protocol, not by importing it."""
    assert cycles(import_graph(type_only=True)) == []


def test_few_private_names_cross_modules():
    found = private_imports()
    assert len(found) <= MAX_PRIVATE_IMPORTS, found


def test_no_python_function_over_80_lines_of_code():
    assert long_functions() == []


RUN_MODULES = (
    "simulation",
    "resumption",
    "restart",
    "run_plan",
    "runner",
    "explicit",
    "alpha_run",
    "generalized_alpha",
    "alpha_records",
)
"""The modules that wire a run (flexbody.solvers.*): the plan, its runner, the integrators' loops."""

COMPILED_KERNELS = {"alpha_iterations", "alpha_run", "joint_terms"}
"""Numba kernels called from those modules (positional arguments: numba dispatches faster without keywords)."""


def test_runs_are_not_wired_by_position():
    """No call in the run modules passes more than 5 positional arguments (issue 32: ``simulate`` passed 16 to
    its explicit body), except to compiled kernels and the logger's format arguments."""
    found = []
    for name in RUN_MODULES:
        for node in ast.walk(ast.parse((PACKAGE / "solvers" / f"{name}.py").read_text())):
            if not isinstance(node, ast.Call):
                continue
            called = ast.unparse(node.func)
            positional = [a for a in node.args if not isinstance(a, ast.Starred)]
            if len(positional) > 5 and called.split(".")[-1] not in COMPILED_KERNELS and not called.startswith("log."):
                found.append(f"{name}: {called}({len(positional)} positional)")
    assert found == []


def test_no_import_cycles_between_rooms():
    assert cycles(room_graph(import_graph())) == []


def test_every_package_imports_only_the_rooms_its_docstring_allows():
    rooms = room_graph(import_graph())
    for room in sorted(rooms):
        allowed = allowed_rooms(room)
        if allowed is None:
            continue
        assert rooms[room] <= allowed, f"flexbody.{room} imports {sorted(rooms[room] - allowed)} beyond its docstring"


@pytest.mark.parametrize("name", sorted(package_modules()))
def test_module_is_at_most_600_lines(name):
    lines = len(package_modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines"


def test_the_rooms_are_few():
    rooms = {room_of(m) for m in package_modules()} - {"flexbody"}
    assert len(rooms) <= 20, sorted(rooms)


@pytest.mark.parametrize("case", sorted((ROOT / "cases").glob("[0-9][0-9]_*.py")), ids=lambda p: p.stem)
def test_cases_use_the_public_api_only(case):
    tree = ast.parse(case.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert all(a.name != "flexbody" or a.asname == "fb" for a in node.names)
            assert not any(a.name.startswith("flexbody.") for a in node.names), ast.unparse(node)
        elif isinstance(node, ast.ImportFrom):
            assert not (node.module or "").startswith("flexbody"), f"{case.name}: {ast.unparse(node)}"


@pytest.mark.parametrize("case", sorted((ROOT / "cases").glob("[0-9][0-9]_*.py")), ids=lambda p: p.stem)
def test_case_file_is_at_most_250_lines(case):
    """A case tells its problem's story (build, main, the expected value and its source); reference solutions,
    fits, convergence studies and extra figures belong in the tests, ``fb.plots`` or the docs (issue 32)."""
    lines = len(case.read_text().splitlines())
    assert lines <= MAX_CASE_LINES, f"{case.name} has {lines} lines"


def summary() -> str:
    graph = import_graph()
    modules = package_modules()
    lines = {m: len(p.read_text().splitlines()) for m, p in modules.items()}
    rooms = room_graph(graph)
    text = [
        f"{len(modules)} modules, {sum(lines.values())} lines, {sum(map(len, graph.values()))} import arrows "
        f"between modules, {len(set(map(room_of, modules)) - {'flexbody'})} rooms, "
        f"{sum(map(len, rooms.values()))} arrows between rooms, largest module {max(lines.values())} lines "
        f"({max(lines, key=lines.get)}), cycles: {cycles(graph) or 'none'} "
        f"(with type-only imports: {cycles(import_graph(type_only=True)) or 'none'}), "
        f"private names imported across modules: {len(private_imports())}, "
        f"functions over {MAX_FUNCTION_LINES} lines of code: {len(long_functions())}"
    ]
    for room in sorted(rooms):
        text.append(f"  {room} -> {', '.join(sorted(rooms[room])) or '-'}")
    return "\n".join(text)


if __name__ == "__main__":
    print(summary())
