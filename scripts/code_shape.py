"""How easy the code is to change, measured with `ast`: the figures of issues 28 and 40.

    .venv/bin/python scripts/code_shape.py            # a table
    .venv/bin/python scripts/code_shape.py --json     # the same figures as JSON

- longest functions in resolver/ (lines from `def` to its last line, decorators excluded);
- longest classes (lines from `class` to its last line), the five longest;
- module-level mutable state: names a `global` statement rebinds, and module-level
  lower-case names bound to a mutable container (dict/list/set literal, comprehension,
  or a call to dict/list/set/OrderedDict/defaultdict/deque/WeakValueDictionary ...);
  then what a reviewer counts too: UPPER-CASE names bound to an instance of one of the
  package's own mutable classes (`PROCESS_READERS = ProcessReaders()`: state, whatever
  its case), and UPPER-CASE container literals (tables, read-only by convention; the
  ones the package writes into are marked);
- registries: classes named `...Registry`, classes whose `get`/`shared` method builds
  an object and keeps it in a per-key map, and per-key maps an AppConfig holds and a
  module-level function fills; each with whether it is bounded (an LRU, or entries
  popped beyond a maximum) and thread-safe (a Lock, or an LRU, which has one; either
  may come from a base class of the package), the package's classes it derives from,
  its own public methods, and where the process's one lives;
- import cycles between resolver's modules: strongly connected components of the
  import graph, once with module-level imports only and once with imports inside
  functions too (a function-level import is how a cycle is usually hidden);
- places a new reason must be added: for every reason and warning code (the
  enums in resolver/domain/codes.py when it exists, else the strings the pipeline
  passes as `reason=` / `code=`), the files of resolver/ (Python string constants,
  and the text of templates) that spell it out. The figure is the most such files.
  Then the same over README.md, docs/*.md and tests/ (a string constant of a test
  module, or the value quoted in any other file), kept apart from the package's;
- modules of resolver/ with a test file named for them (tests/**/test_<basename>.py;
  `__init__.py` and migrations are not counted), and the list of those without.

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


def modules(root: Path = ROOT) -> dict[str, Path]:
    found = {}
    for path in sorted((root / PACKAGE.name).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
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
    # A package's own name is the base of its relative imports; a module's is its package.
    package = name if any(k.startswith(name + ".") for k in known) else name.rpartition(".")[0]
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


def places_per_code(trees: dict[str, ast.Module], paths: dict[str, Path], codes: list[str],
                    root: Path = ROOT) -> dict[str, list[str]]:
    places: dict[str, set[str]] = {code: set() for code in codes}
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                # The code itself as a value (prose that mentions it in passing is not a place).
                if node.value in places:
                    places[node.value].add(str(paths[name].relative_to(root)))
    for template in (root / PACKAGE.name).rglob("*.html"):
        text = template.read_text()
        for code in codes:
            if re.search(rf"[\"']{re.escape(code)}[\"']", text):
                places[code].add(str(template.relative_to(root)))
    return {code: sorted(files) for code, files in places.items()}


def longest_classes(trees: dict[str, ast.Module], top: int = 5) -> list[tuple[int, str]]:
    sizes = []
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                sizes.append((node.end_lineno - node.lineno + 1, f"{name}.{node.name}"))
    return sorted(sizes, reverse=True)[:top]


def _called(value: ast.expr | None) -> str:
    """The name a call calls (`ProcessReaders` for `ProcessReaders()`), else ""."""
    if not isinstance(value, ast.Call):
        return ""
    func = value.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _immutable_class(node: ast.ClassDef) -> bool:
    """A frozen dataclass, an enum or a named tuple: an instance of it is a constant."""
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call) and any(
                k.arg == "frozen" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in decorator.keywords):
            return True
    bases = {ast.unparse(base).rpartition(".")[2] for base in node.bases}
    return bool(bases & {"Enum", "StrEnum", "IntEnum", "NamedTuple"})


def own_classes(trees: dict[str, ast.Module]) -> dict[str, ast.ClassDef]:
    """The package's classes by name (the last one wins where two modules share a name)."""
    return {node.name: node for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def _module_bindings(tree: ast.Module):
    """(name, value) for every module-level `NAME = value` and `NAME: T = value`."""
    for node in tree.body:
        if isinstance(node, ast.Assign):
            pairs = [(t, node.value) for t in node.targets]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            pairs = [(node.target, node.value)]
        else:
            continue
        for target, value in pairs:
            if isinstance(target, ast.Name) and not target.id.startswith("__"):
                yield target.id, value


def upper_case_state(trees: dict[str, ast.Module]) -> dict[str, list[str]]:
    """UPPER-CASE module-level names that are state after all, and the UPPER-CASE tables.

    `instances`: bound to an instance of one of the package's own classes that is not
    immutable (not a frozen dataclass, enum or named tuple). `tables`: bound to a
    dict/list/set literal or comprehension, marked `(written)` where the package
    assigns into it or calls a mutating method on it."""
    classes = own_classes(trees)
    written = _written_names(trees)
    instances, tables = [], []
    for name, tree in trees.items():
        for target, value in _module_bindings(tree):
            if not target.isupper():
                continue
            called = _called(value)
            if called in classes and not _immutable_class(classes[called]):
                instances.append(f"{name}.{target} = {called}()")
            elif isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
                tables.append(f"{name}.{target}" + (" (written)" if target in written else ""))
    return {"instances": sorted(instances), "tables": sorted(tables)}


MUTATORS = {"append", "extend", "insert", "update", "add", "setdefault", "pop", "popitem", "clear",
            "remove", "discard"}


def _written_names(trees: dict[str, ast.Module]) -> set[str]:
    """UPPER-CASE names the package writes into: `NAME[k] = v`, `del NAME[k]`, `NAME.update(...)`."""
    found = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                found |= {t.value.id for t in targets
                          if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)}
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in MUTATORS and isinstance(node.func.value, ast.Name)):
                found.add(node.func.value.id)
    return {name for name in found if name.isupper()}


def _builds_and_keeps(method: ast.FunctionDef, classes: dict[str, ast.ClassDef]) -> bool:
    """Whether a `get`/`shared` method builds an object and keeps it under a key on `self`."""
    keeps = any(
        (isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) and "self." in ast.unparse(t.value)
                                           for t in n.targets))
        or (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "put"
            and ast.unparse(n.func.value).startswith("self."))
        for n in ast.walk(method))
    builds = any(_called(n) in classes or _called(n)[:1].isupper() for n in ast.walk(method)
                 if isinstance(n, ast.Call))
    return keeps and builds


def _is_registry(node: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> bool:
    if node.name.endswith("Registry"):
        return True
    return any(isinstance(m, ast.FunctionDef) and m.name in ("get", "shared") and _builds_and_keeps(m, classes)
               for m in node.body)


def _bases(node: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> list[str]:
    """The package's classes `node` derives from (`Registry` for `class R(Registry[str, Any])`)."""
    names = [ast.unparse(b.value if isinstance(b, ast.Subscript) else b).rpartition(".")[2] for b in node.bases]
    return [name for name in names if name in classes and name != node.name]


def _has(node: ast.AST, classes: dict[str, ast.ClassDef], test, seen: frozenset = frozenset()) -> bool:
    """Whether `node` passes `test` itself, through a package class it derives from, or through
    an instance of a package class it builds."""
    if any(test(n) for n in ast.walk(node)):
        return True
    related = [_called(n) for n in ast.walk(node) if isinstance(n, ast.Call)]
    if isinstance(node, ast.ClassDef):
        related += _bases(node, classes)
    return any(name in classes and name not in seen and _has(classes[name], classes, test, seen | {name})
               for name in related)


def _pops(n: ast.AST) -> bool:
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "popitem"


def _locks(n: ast.AST) -> bool:
    return _called(n) in ("Lock", "RLock")


def _holders(trees: dict[str, ast.Module]) -> dict[str, list[str]]:
    """Where each class's instance is kept: a module-level name, or an attribute of a class (an AppConfig's)."""
    held: dict[str, list[str]] = {}
    for name, tree in trees.items():
        for target, value in _module_bindings(tree):
            if _called(value):
                held.setdefault(_called(value), []).append(f"{name}.{target}")
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                if isinstance(node, ast.Assign) and _called(node.value):
                    for t in node.targets:
                        if isinstance(t, ast.Attribute) and ast.unparse(t.value) == "self":
                            held.setdefault(_called(node.value), []).append(f"{name}.{cls.name}.{t.attr}")
    return held


def registries(trees: dict[str, ast.Module]) -> list[dict]:
    """The per-key stores of built objects: registry classes, and the maps an AppConfig holds."""
    classes = own_classes(trees)
    held = _holders(trees)
    found = []
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and _is_registry(node, classes):
                found.append({
                    "name": f"{name}.{node.name}",
                    "bounded": _has(node, classes, _pops),
                    "thread_safe": _has(node, classes, _locks),
                    "methods": sorted(m.name for m in node.body if isinstance(m, ast.FunctionDef)
                                      and (not m.name.startswith("_") or m.name == "__len__")),
                    "bases": _bases(node, classes),
                    "held_by": sorted(held.get(node.name, [])),
                })
    return sorted(found, key=lambda r: r["name"]) + _app_config_maps(trees)


def _app_config_maps(trees: dict[str, ast.Module]) -> list[dict]:
    """`self.x = {}` in an AppConfig, filled by module functions that read `.x` and assign into it."""
    found = []
    for name, tree in trees.items():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
                    and any(ast.unparse(b).endswith("AppConfig") for b in n.bases)):
            for node in ast.walk(cls):
                if not (isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
                        and (isinstance(node.value, ast.Dict) or _called(node.value) in MUTABLE_CALLS)):
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for attr in (t.attr for t in targets if isinstance(t, ast.Attribute)):
                    fillers = _fillers(trees, attr)
                    found.append({
                        "name": f"{name}.{cls.name}.{attr}",
                        "bounded": any(_has(f, {}, _pops) for _, f in fillers),
                        "thread_safe": any(_has(f, {}, _locks) or "lock" in ast.unparse(f).lower()
                                           for _, f in fillers),
                        "methods": sorted(f"{m}.{f.name}" for m, f in fillers),
                        "bases": [],
                        "held_by": [f"{name}.{cls.name}.{attr}"],
                    })
    return found


def _fillers(trees: dict[str, ast.Module], attr: str) -> list[tuple[str, ast.FunctionDef]]:
    """Module-level functions that read `<something>.attr` and assign into a subscript."""
    found = []
    for name, tree in trees.items():
        for func in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
            reads = any(isinstance(n, ast.Attribute) and n.attr == attr for n in ast.walk(func))
            fills = any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) for t in n.targets)
                        for n in ast.walk(func))
            if reads and fills:
                found.append((name, func))
    return found


def _quoted(code: str) -> re.Pattern:
    return re.compile(rf"[\"'`]{re.escape(code)}[\"'`]")


def _spelled(path: Path, codes: list[str]) -> set[str]:
    """The codes a file spells: a test module's string constant that is the code (or quotes it),
    or the code quoted ("...", '...' or `...`) in any other text file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return set()
    if path.suffix == ".py":
        try:
            strings = [n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant)
                       and isinstance(n.value, str)]
        except SyntaxError:
            strings = [text]
        return {code for code in codes if any(s == code or _quoted(code).search(s) for s in strings)}
    return {code for code in codes if _quoted(code).search(text)}


def places_outside(codes: list[str], root: Path = ROOT) -> dict[str, dict[str, list[str]]]:
    """For every code, the files of README.md and docs/*.md ("docs"), and of tests/ ("tests"), that spell it."""
    docs = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    tests = sorted(p for p in (root / "tests").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    places: dict[str, dict[str, set[str]]] = {code: {"docs": set(), "tests": set()} for code in codes}
    for group, files in (("docs", docs), ("tests", tests)):
        for path in files:
            if path.is_file():
                for code in _spelled(path, codes):
                    places[code][group].add(str(path.relative_to(root)))
    return {code: {group: sorted(files) for group, files in groups.items()} for code, groups in places.items()}


def tested_modules(paths: dict[str, Path], root: Path = ROOT) -> dict:
    """Modules (not `__init__.py`) with a tests/**/test_<basename>.py, and the list of those without."""
    test_files = {p.stem for p in (root / "tests").rglob("test_*.py")}
    counted = {name: path for name, path in paths.items() if path.name != "__init__.py"}
    named = sorted(name for name, path in counted.items() if f"test_{path.stem}" in test_files)
    return {"modules": len(counted), "with_a_test_file_named_for_them": len(named),
            "without": sorted(set(counted) - set(named))}


def measure(root: Path = ROOT) -> dict:
    paths = modules(root)
    trees = {name: ast.parse(path.read_text(), filename=str(path)) for name, path in paths.items()}
    codes = reason_codes(trees)
    places = places_per_code(trees, paths, codes, root)
    outside = places_outside(codes, root)
    everywhere = {code: len(places[code]) + len(outside[code]["docs"]) + len(outside[code]["tests"])
                  for code in codes}
    upper = upper_case_state(trees)
    return {
        "longest_functions": longest_functions(trees),
        "functions_over_60_lines": sum(1 for size, _ in longest_functions(trees, top=10_000) if size > 60),
        "longest_classes": longest_classes(trees),
        "module_level_mutable_state": mutable_state(trees),
        "module_level_singletons": singletons(trees),
        "upper_case_instances": upper["instances"],
        "upper_case_tables": upper["tables"],
        "registries": registries(trees),
        "import_cycles_module_level": cycles(trees, nested=False),
        "import_cycles_with_function_imports": cycles(trees, nested=True),
        "places_per_code": places,
        "places_a_new_reason_touches": max((len(v) for v in places.values()), default=0),
        "files_naming_any_code": sorted({f for files in places.values() for f in files}),
        "places_per_code_docs_and_tests": outside,
        "files_a_new_reason_touches": {
            "package": max((len(v) for v in places.values()), default=0),
            "docs": max((len(v["docs"]) for v in outside.values()), default=0),
            "tests": max((len(v["tests"]) for v in outside.values()), default=0),
            "all": max(everywhere.values(), default=0),
        },
        "tested_modules": tested_modules(paths, root),
    }


def _print_functions_and_state(figures: dict) -> None:
    print("longest functions (lines):")
    for size, name in figures["longest_functions"]:
        print(f"  {size:4d}  {name}")
    print(f"functions over 60 lines: {figures['functions_over_60_lines']}")
    print("longest classes (lines):")
    for size, name in figures["longest_classes"]:
        print(f"  {size:4d}  {name}")
    state = figures["module_level_mutable_state"]
    print(f"module-level mutable state: {len(state)}")
    for name in state:
        print(f"  {name}")
    print(f"module-level singletons (objects, not modules, but one per process): "
          f"{len(figures['module_level_singletons'])}")
    for name in figures["module_level_singletons"]:
        print(f"  {name}")
    print(f"UPPER-CASE module-level instances of the package's own mutable classes: "
          f"{len(figures['upper_case_instances'])}")
    for name in figures["upper_case_instances"]:
        print(f"  {name}")
    tables = figures["upper_case_tables"]
    print(f"UPPER-CASE module-level tables (container literals; read-only unless marked): {len(tables)}")
    for name in tables:
        print(f"  {name}")
    print(f"registries (per-key stores of built objects): {len(figures['registries'])}")
    for r in figures["registries"]:
        print(f"  {r['name']}: {'bounded' if r['bounded'] else 'UNBOUNDED'}, "
              f"{'thread-safe' if r['thread_safe'] else 'NO LOCK'}; "
              f"{'a ' + ', '.join(r['bases']) + '; ' if r['bases'] else ''}"
              f"methods {', '.join(r['methods'])}; held by {', '.join(r['held_by']) or '-'}")


def _print_codes_and_tests(figures: dict) -> None:
    print(f"places a new reason or warning is spelled out (most files for one code): "
          f"{figures['places_a_new_reason_touches']}")
    union = figures["files_naming_any_code"]
    print(f"files that name any reason or warning code: {len(union)}  {', '.join(union)}")
    for code, files in figures["places_per_code"].items():
        print(f"  {code}: {len(files)}  {', '.join(files)}")
    most = figures["files_a_new_reason_touches"]
    print(f"files a new reason touches, most for one code: package {most['package']}, "
          f"README and docs {most['docs']}, tests {most['tests']}, all {most['all']}")
    for code, groups in figures["places_per_code_docs_and_tests"].items():
        print(f"  {code}: package {len(figures['places_per_code'][code])}, docs {len(groups['docs'])} "
              f"({', '.join(groups['docs'])}), tests {len(groups['tests'])} ({', '.join(groups['tests'])})")
    tested = figures["tested_modules"]
    print(f"modules with a test file named for them: {tested['with_a_test_file_named_for_them']} "
          f"of {tested['modules']}; without ({len(tested['without'])}):")
    for name in tested["without"]:
        print(f"  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    figures = measure()
    if parser.parse_args().json:
        print(json.dumps(figures, indent=2))
        return
    _print_functions_and_state(figures)
    for key, label in (("import_cycles_module_level", "import cycles (module-level imports)"),
                       ("import_cycles_with_function_imports", "import cycles (function-level imports too)")):
        print(f"{label}: {len(figures[key])}")
        for component in figures[key]:
            print(f"  {' <-> '.join(component)}")
    _print_codes_and_tests(figures)

if __name__ == "__main__":
    main()
