"""The package's layers, checked from the source: who may import whom, and no import circles.

    edgechat/core      the engine; knows nothing of the service, the window or the CLI
    edgechat/service   Qt-free; drives the core through its facade (edgechat.core.engine)
    edgechat/ui        the window; reaches below only through the facade, the records and the
                       service protocol (plus the host that starts the service)
    edgechat/cli.py    the command line; the facade, the records, and the model set-up modules

Imports inside functions count the same as imports at the top of a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import edgechat

PKG = Path(edgechat.__file__).parent

# What each front end may import from below it (exact module names).
UI_ALLOWED = {
    "edgechat.core",  # sets the telemetry switches before anything loads onnxruntime
    "edgechat.core.engine",
    "edgechat.core.records",
    "edgechat.core.paths",
    "edgechat.core.conversations",  # saved chats: the window's own data, plain records
    "edgechat.service.protocol",
    "edgechat.service.host",  # the entry point of the engine process, and the in-process host
}
SERVICE_ALLOWED = {"edgechat.core", "edgechat.core.engine", "edgechat.core.records", "edgechat.core.paths"}
CLI_ALLOWED = {
    "edgechat",
    "edgechat.core",
    "edgechat.core.engine",
    "edgechat.core.records",
    "edgechat.core.paths",
    # `edgechat models ...`: setting up and managing model files, not a library
    "edgechat.core.embedding.modelbuild.minilm",
    "edgechat.core.llm.manager",
    "edgechat.core.llm.catalog",
    "edgechat.core.llm.download",
    "edgechat.ui.app",
}
PARTS = {"parts", "_store", "_retriever", "_pipeline"}  # behind the facade: benchmarks and tests only


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PKG.rglob("*.py")}


def imports_of(path: Path) -> set[str]:
    """Every edgechat module `path` imports (`from pkg import mod` names the module)."""
    me = module_name(path)
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = me.split(".")
                base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                out.add(f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod)
    return {m for m in out if m == "edgechat" or m.startswith("edgechat.")}


def below(mod: str, layer: str) -> bool:
    return mod == layer or mod.startswith(layer + ".")


def test_core_knows_nothing_above_it():
    bad = [(m, i) for m, p in MODULES.items() if below(m, "edgechat.core") for i in imports_of(p)
           if not below(i, "edgechat.core")]
    assert not bad, bad


def test_service_reaches_the_core_only_through_the_facade():
    bad = [(m, i) for m, p in MODULES.items() if below(m, "edgechat.service") for i in imports_of(p)
           if below(i, "edgechat.core") and i not in SERVICE_ALLOWED or below(i, "edgechat.ui") or i == "edgechat.cli"]
    assert not bad, bad


def test_window_reaches_below_only_through_facade_records_and_protocol():
    bad = [(m, i) for m, p in MODULES.items() if below(m, "edgechat.ui") for i in imports_of(p)
           if not below(i, "edgechat.ui") and i != "edgechat" and i not in UI_ALLOWED]
    assert not bad, bad


def test_command_line_uses_the_facade():
    bad = sorted(i for i in imports_of(MODULES["edgechat.cli"]) if i not in CLI_ALLOWED)
    assert not bad, bad


def test_front_ends_never_open_the_engine_up():
    """`Engine.parts` (the store, the retriever) is for benchmarks and tests."""
    bad = []
    for m, p in MODULES.items():
        if not (below(m, "edgechat.ui") or below(m, "edgechat.service") or m == "edgechat.cli"):
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in PARTS and "engine" in ast.unparse(node.value):
                bad.append(f"{m}:{node.lineno} {ast.unparse(node)}")
    assert not bad, bad


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_no_import_circles():
    graph = {m: {i for i in imports_of(p) if i in MODULES and i != m} for m, p in MODULES.items()}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_answer_pass_keeps_no_state_between_questions():
    """The answer's steps keep nothing at module level that one question could change for the
    next: a module-level name bound to a mutable container (a set, a list, a dict) is a constant
    only when it is written in capitals (a table such as TUNED), never written to afterwards."""
    mutable = (ast.Set, ast.List, ast.Dict, ast.SetComp, ast.ListComp, ast.DictComp)
    found = []
    for path in sorted((PKG / "core" / "answering").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = set()
        for node in tree.body:
            target, value = None, None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                target, value = node.target.id, node.value
            if target is None or value is None or target == "__all__":
                continue
            made = isinstance(value, mutable) or (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                                                  and value.func.id in {"set", "list", "dict"})
            if made and not target.lstrip("_").isupper():
                found.append(f"{path.name}: {target}")
            elif made:
                constants.add(target)
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node in (n for f in functions for n in ast.walk(f)):  # a table written to while answering is state too
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in constants
                    and node.func.attr in {"add", "append", "update", "setdefault", "pop", "clear", "extend"}):
                found.append(f"{path.name}: {node.func.value.id}.{node.func.attr}")
    assert not found, found
