"""The type stubs (`ares/__init__.pyi`, `ares/random.pyi`) declare every public name the
package has, so editors complete all of it."""

from __future__ import annotations

import ast
import os
import types

import ares as ar


def _declared(path: str) -> set[str]:
    tree = ast.parse(open(path).read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def _public(module) -> set[str]:
    return {n for n, v in vars(module).items()
            if not n.startswith("_") and not isinstance(v, types.ModuleType)
            and getattr(v, "__module__", module.__name__) != "__future__"
            and n not in ("annotations",)}


def test_the_stubs_declare_every_public_name():
    here = os.path.dirname(ar.__file__)
    assert os.path.exists(os.path.join(here, "py.typed"))
    missing = _public(ar) - _declared(os.path.join(here, "__init__.pyi"))
    assert not missing, f"not in __init__.pyi: {sorted(missing)}"
    missing = _public(ar.random) - _declared(os.path.join(here, "random.pyi"))
    assert not missing, f"not in random.pyi: {sorted(missing)}"
    missing = _public(ar.linalg) - _declared(os.path.join(here, "linalg.pyi"))
    assert not missing, f"not in linalg.pyi: {sorted(missing)}"
