"""The series adds no import from ``paddle.autograd`` or ``paddle.base`` up
into ``paddle.jit``, and no import cycle between two modules; the op
attributes it writes are named in one module, ``paddle.base.op_attrs``.

Both are counted on the source of the installed ``paddle`` (this wheel, or
the dev tree with ``PADDLE_DEV_TREE``) against the stock wheel the build
patched (``.cache/base``, or ``$PADDLE_BASE_WHEEL``): every ``import``
statement counts, function-local ones too (not those under
``if TYPE_CHECKING:``, which do not run). Where ``paddle.autograd`` or ``paddle.base`` need ``paddle.jit``,
``paddle.jit`` installs its functions into ``paddle.autograd.jit_calls``.
"""

import ast
import os
import zipfile
from collections import Counter
from pathlib import Path

import paddle

ROOT = Path(__file__).resolve().parent.parent
LOWER = ("paddle.autograd", "paddle.base")
UPPER = "paddle.jit"


def _stock_wheel():
    """The stock wheel scripts/build.sh patched: $PADDLE_BASE_WHEEL, or the
    one it downloaded into .cache/base."""
    given = os.environ.get("PADDLE_BASE_WHEEL")
    if given:
        return Path(given)
    wheels = sorted((ROOT / ".cache" / "base").glob("paddlepaddle-*.whl"))
    assert wheels, (
        "no stock wheel in .cache/base: run scripts/build.sh, or set "
        "PADDLE_BASE_WHEEL to the wheel it patched"
    )
    return wheels[0]


def _stock_sources():
    with zipfile.ZipFile(_stock_wheel()) as wheel:
        return {
            name: wheel.read(name).decode("utf-8")
            for name in wheel.namelist()
            if name.startswith("paddle/") and name.endswith(".py")
        }


def _tree_sources():
    top = Path(paddle.__file__).resolve().parent.parent
    return {
        str(p.relative_to(top)): p.read_text(encoding="utf-8")
        for p in (top / "paddle").rglob("*.py")
    }


def _module_of(path):
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path, source, modules):
    """The modules that the file ``path`` imports (each statement once)."""
    module = _module_of(path)
    package = (
        module if path.endswith("__init__.py") else module.rpartition(".")[0]
    )
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    typing_only = set()  # `if TYPE_CHECKING:` imports do not run
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            typing_only.update(map(id, ast.walk(node)))
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from package import submodule` imports the submodule
            subs = [f"{target}.{alias.name}" for alias in node.names]
            if any(s in modules for s in subs):
                found += [s for s in subs if s in modules]
            else:
                found.append(target)
    return [t for t in found if t.startswith("paddle")]


def _graph(sources):
    modules = {_module_of(p) for p in sources}
    return {_module_of(p): _imports(p, s, modules) for p, s in sources.items()}


def _upward(graph):
    return Counter(
        m
        for m, targets in graph.items()
        if m.startswith(LOWER)
        for t in targets
        if t == UPPER or t.startswith(UPPER + ".")
    )


def _two_cycles(graph):
    edges = {(m, t) for m, targets in graph.items() for t in targets if m != t}
    return {tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges}


def test_no_new_upward_import_nor_cycle():
    stock, tree = _graph(_stock_sources()), _graph(_tree_sources())
    stock_up, tree_up = _upward(stock), _upward(tree)
    more = {m: (stock_up[m], n) for m, n in tree_up.items() if n > stock_up[m]}
    assert not more, (
        "imports of paddle.jit in paddle.autograd / paddle.base, "
        f"module: (stock, this): {more}"
    )
    new_cycles = sorted(_two_cycles(tree) - _two_cycles(stock))
    assert not new_cycles, f"import cycles the series adds: {new_cycles}"


def _string_constants(source):
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_op_attribute_names_are_defined_once():
    """Each op attribute name in ``paddle.base.op_attrs``, and the name of
    the `pylayer` op, is spelled there only: no other module of the tree
    holds it as a string where the stock one did not (stock spells
    ``"pd_op.pylayer"`` in some modules). The stock op names it reads
    (``"cf.yield"``) stay spelled where stock code spells them too."""
    from paddle.base import op_attrs

    names = {
        value: key
        for key, value in vars(op_attrs).items()
        if (key.endswith("_ATTR") or key == "PYLAYER_OP_NAME")
        and isinstance(value, str)
    }
    assert "saved_values" in names and "pd_op.pylayer" in names
    stock = Counter()
    for source in _stock_sources().values():
        stock.update(set(_string_constants(source)) & set(names))
    spelled = {}
    for path, source in _tree_sources().items():
        if path == "paddle/base/op_attrs.py":
            continue
        for value in set(_string_constants(source)) & set(names):
            spelled.setdefault(value, []).append(path)
    more = {
        names[v]: paths for v, paths in spelled.items() if len(paths) > stock[v]
    }
    assert not more, f"spelled outside paddle.base.op_attrs: {more}"


def _reads_bytecode(source):
    """Whether a module calls ``dis.get_instructions`` or
    ``dis.Bytecode``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        isinstance(node, ast.Attribute)
        and node.attr in ("get_instructions", "Bytecode")
        and isinstance(node.value, ast.Name)
        and node.value.id == "dis"
        for node in ast.walk(tree)
    )


def test_bytecode_is_read_in_one_module():
    """The series reads bytecode only through
    ``paddle.autograd.python_effects.read_instructions``: no module that
    stock has reads it where stock did not, and no new module but that one
    reads it."""
    stock = {p for p, s in _stock_sources().items() if _reads_bytecode(s)}
    readers = {p for p, s in _tree_sources().items() if _reads_bytecode(s)}
    assert "paddle/autograd/python_effects.py" in readers
    more = readers - stock - {"paddle/autograd/python_effects.py"}
    assert not more, f"modules reading bytecode themselves: {sorted(more)}"


def test_register_hook_asks_one_object():
    """Eager ``Tensor.register_hook`` asks ``tensor_hook_rules`` only: it
    imports nothing, and the static graph world and PyLayer install their
    rules there."""
    import inspect

    from paddle.base.dygraph.tensor_hook_rules import tensor_hook_rules

    source = inspect.getsource(paddle.Tensor.register_hook)
    body = source[source.index('"""', source.index('"""') + 3) :]
    assert "import" not in body
    assert "tensor_hook_rules.register(" in body
    assert tensor_hook_rules._checks and tensor_hook_rules._wraps
    assert tensor_hook_rules._added
