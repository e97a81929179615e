"""tests/build runs scripts/build.sh (minutes): only when asked for.

`scripts/test.sh` (pytest `tests`) leaves these tests out; name this directory
(`scripts/test.sh tests/build`) or a test in it, or select them with `-m`.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent


def _asked_for(config):
    if config.getoption("markexpr"):
        return True
    base = Path(config.invocation_params.dir)
    for arg in config.args:
        p = (base / arg.split("::")[0]).resolve()
        if p == HERE or HERE in p.parents:
            return True
    return False


def pytest_collection_modifyitems(config, items):
    if _asked_for(config):
        return
    skipped = [
        i for i in items if HERE in Path(str(i.fspath)).resolve().parents
    ]
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = [i for i in items if i not in skipped]
