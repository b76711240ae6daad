"""The typed stubs (python/toolfix/_toolfix.pyi) describe the native module as it is:
every public function and class, and every public method and property of each class."""

import ast
import pathlib

import toolfix
from toolfix import _toolfix

STUBS = pathlib.Path(toolfix.__file__).with_name("_toolfix.pyi")


def stub_tree():
    return ast.parse(STUBS.read_text())


def test_the_stubs_ship_with_the_package():
    assert STUBS.is_file()
    assert STUBS.with_name("py.typed").is_file()


def test_every_public_name_has_a_stub():
    tree = stub_tree()
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    stubbed |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target] if isinstance(t, ast.Name)}
    public = {n for n in dir(_toolfix) if not n.startswith("_")} | {"__version__"}
    missing = public - stubbed
    assert not missing, missing


def test_every_class_member_has_a_stub():
    tree = stub_tree()
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and hasattr(_toolfix, n.name)):
        stubbed = {f.name for f in cls.body if isinstance(f, ast.FunctionDef)} | {a.target.id for a in cls.body if isinstance(a, ast.AnnAssign)}
        real = {m for m in vars(getattr(_toolfix, cls.name)) if not m.startswith("_")}
        assert real <= stubbed, (cls.name, real - stubbed)
        assert stubbed - {"__init__", "__len__", "__contains__", "__bool__"} <= real | {"kind", "msg", "pos", "lineno", "colno", "hint"}, (cls.name, stubbed - real)
