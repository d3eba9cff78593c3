"""How easy the code is to change, measured with `ast`: four figures for issue 28.

    .venv/bin/python scripts/code_shape.py            # a table
    .venv/bin/python scripts/code_shape.py --json     # the same figures as JSON

- longest functions in resolver/ (lines from `def` to its last line, decorators excluded);
- module-level mutable state: names a `global` statement rebinds, and module-level
  lower-case names bound to a mutable container (dict/list/set literal, comprehension,
  or a call to dict/list/set/OrderedDict/defaultdict/deque/WeakValueDictionary ...);
- import cycles between resolver's modules: strongly connected components of the
  import graph, once with module-level imports only and once with imports inside
  functions too (a function-level import is how a cycle is usually hidden);
- places a new reason must be added: for every reason and warning code (the
  enums in resolver/domain/codes.py when it exists, else the strings the pipeline
  passes as `reason=` / `code=`), the files of resolver/ (Python string constants,
  and the text of templates) that spell it out. The figure is the most such files.

Nothing is asserted: it prints what it finds.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "resolver"
# Module-level names Django and Python give a meaning to: not state of ours.
CONVENTIONS = {"urlpatterns", "app_name", "default_app_config"}
IMMUTABLE_CALLS = {"TypeVar", "ContextVar", "Lock", "RLock", "frozenset", "Path", "Signal"}
MUTABLE_CALLS = {"dict", "list", "set", "OrderedDict", "defaultdict", "deque", "Counter",
                 "WeakValueDictionary", "WeakKeyDictionary", "WeakSet"}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def longest_functions(trees: dict[str, ast.Module], top: int = 8) -> list[tuple[int, str]]:
    sizes = []
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sizes.append((node.end_lineno - node.lineno + 1, f"{name}.{node.name}"))
    return sorted(sizes, reverse=True)[:top]


def _is_mutable(value: ast.expr | None) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in MUTABLE_CALLS
    return False


def mutable_state(trees: dict[str, ast.Module]) -> list[str]:
    found = set()
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found.update(f"{name}.{n} (global)" for n in node.names)
        for node in tree.body:
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign):
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                if not isinstance(target, ast.Name) or target.id.startswith("__") or target.id in CONVENTIONS:
                    continue
                # An UPPER_CASE literal is a table by convention (read, never written); an
                # empty container built by a call is there to be filled, whatever its name.
                if isinstance(value, ast.Call) and _is_mutable(value):
                    found.add(f"{name}.{target.id}")
                elif not target.id.isupper() and _is_mutable(value):
                    found.add(f"{name}.{target.id}")
    return sorted(found)


def singletons(trees: dict[str, ast.Module]) -> list[str]:
    """Module-level lower-case names bound to an instance of a class (a registry, a settings object)."""
    found = []
    for name, tree in trees.items():
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                func = node.value.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                for target in targets:
                    if (isinstance(target, ast.Name) and not target.id.isupper() and called[:1].isupper()
                            and called not in MUTABLE_CALLS and called not in IMMUTABLE_CALLS):
                        found.append(f"{name}.{target.id} = {called}()")
    return sorted(found)


def _imports(name: str, tree: ast.Module, known: set[str], *, nested: bool) -> set[str]:
    """The resolver modules `name` imports (at module level, or anywhere when `nested`)."""
    package = name if (PACKAGE / Path(*name.split(".")[1:]) / "__init__.py").exists() else name.rpartition(".")[0]
    nodes = ast.walk(tree) if nested else _module_level(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _module_level(tree: ast.Module):
    """Imports that run when the module is imported: not inside a def, not under `if TYPE_CHECKING`."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def cycles(trees: dict[str, ast.Module], *, nested: bool) -> list[list[str]]:
    known = set(trees)
    graph = {name: _imports(name, tree, known, nested=nested) for name, tree in trees.items()}
    # A package importing its own submodule (`__init__` re-exports) is no cycle of design.
    for name in graph:
        graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    return [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
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
            result.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(result, key=len, reverse=True)


def reason_codes(trees: dict[str, ast.Module]) -> list[str]:
    """Every clarification reason and warning code the domain declares."""
    codes_tree = trees.get("resolver.domain.codes")
    if codes_tree is not None:
        found = []
        for cls in codes_tree.body:
            if isinstance(cls, ast.ClassDef) and cls.name in ("Reason", "WarningCode"):
                for node in cls.body:
                    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
                        first = node.value.elts[0]
                    elif isinstance(node, ast.Assign):
                        first = node.value
                    else:
                        continue
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        found.append(first.value)
        return found
    found = set()
    for node in ast.walk(trees["resolver.domain.pipeline"]):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("Outcome", "OutcomeWarning")):
            continue
        for keyword in node.keywords:
            if keyword.arg in ("reason", "code"):
                found |= {c.value for c in ast.walk(keyword.value) if isinstance(c, ast.Constant)
                          and isinstance(c.value, str) and re.fullmatch(r"[a-z_]+", c.value)}
        if isinstance(node, ast.FunctionDef) and node.name == "_unsure":
            found |= {c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                      and re.fullmatch(r"[a-z_]+", c.value)}
    return sorted(found)


def places_per_code(trees: dict[str, ast.Module], paths: dict[str, Path], codes: list[str]) -> dict[str, list[str]]:
    places: dict[str, set[str]] = {code: set() for code in codes}
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                # The code itself as a value (prose that mentions it in passing is not a place).
                if node.value in places:
                    places[node.value].add(str(paths[name].relative_to(ROOT)))
    for template in PACKAGE.rglob("*.html"):
        text = template.read_text()
        for code in codes:
            if re.search(rf"[\"']{re.escape(code)}[\"']", text):
                places[code].add(str(template.relative_to(ROOT)))
    return {code: sorted(files) for code, files in places.items()}


def measure() -> dict:
    paths = modules()
    trees = {name: ast.parse(path.read_text(), filename=str(path)) for name, path in paths.items()}
    codes = reason_codes(trees)
    places = places_per_code(trees, paths, codes)
    return {
        "longest_functions": longest_functions(trees),
        "functions_over_60_lines": sum(1 for size, _ in longest_functions(trees, top=10_000) if size > 60),
        "module_level_mutable_state": mutable_state(trees),
        "module_level_singletons": singletons(trees),
        "import_cycles_module_level": cycles(trees, nested=False),
        "import_cycles_with_function_imports": cycles(trees, nested=True),
        "places_per_code": places,
        "places_a_new_reason_touches": max((len(v) for v in places.values()), default=0),
        "files_naming_any_code": sorted({f for files in places.values() for f in files}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    figures = measure()
    if parser.parse_args().json:
        print(json.dumps(figures, indent=2))
        return
    print("longest functions (lines):")
    for size, name in figures["longest_functions"]:
        print(f"  {size:4d}  {name}")
    print(f"functions over 60 lines: {figures['functions_over_60_lines']}")
    state = figures["module_level_mutable_state"]
    print(f"module-level mutable state: {len(state)}")
    for name in state:
        print(f"  {name}")
    print(f"module-level singletons (objects, not modules, but one per process): "
          f"{len(figures['module_level_singletons'])}")
    for name in figures["module_level_singletons"]:
        print(f"  {name}")
    for key, label in (("import_cycles_module_level", "import cycles (module-level imports)"),
                       ("import_cycles_with_function_imports", "import cycles (function-level imports too)")):
        print(f"{label}: {len(figures[key])}")
        for component in figures[key]:
            print(f"  {' <-> '.join(component)}")
    print(f"places a new reason or warning is spelled out (most files for one code): "
          f"{figures['places_a_new_reason_touches']}")
    union = figures["files_naming_any_code"]
    print(f"files that name any reason or warning code: {len(union)}  {', '.join(union)}")
    for code, files in figures["places_per_code"].items():
        print(f"  {code}: {len(files)}  {', '.join(files)}")


if __name__ == "__main__":
    main()
