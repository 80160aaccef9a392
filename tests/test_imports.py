# SPDX-License-Identifier: GPL-2.0
"""No two modules of kbtools import each other, directly or round a
longer circle (issue 29: cli and results once did). The graph is read
from the sources with ast, every form kbtools uses counted wherever it
stands (at the top or inside a function): `from kbtools import X`,
`from kbtools.X import NAME`, `import kbtools.X` and the relative
`from . import X`. Each check is shown to fail on a made-up package."""

import ast
import os
import tempfile
import unittest
from typing import Dict, List, Optional, Set

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.join(HERE, "..", "scripts", "kbtools")
PACKAGE = "kbtools"

Graph = Dict[str, Set[str]]


def _imported(node: ast.AST, package: str) -> List[str]:
    """The package's modules (or names, sorted out by the caller) that
    one import statement names."""
    if isinstance(node, ast.Import):
        return [a.name.split(".")[1] for a in node.names
                if a.name.startswith(package + ".")]
    if not isinstance(node, ast.ImportFrom):
        return []
    # "from kbtools.x import y" and "from .x import y" name module x,
    # "from kbtools import x" and "from . import x" name x itself.
    if node.level == 0 and node.module == package or \
            node.level == 1 and node.module is None:
        return [a.name for a in node.names]
    if node.level == 0 and node.module and \
            node.module.startswith(package + "."):
        return [node.module.split(".")[1]]
    if node.level == 1 and node.module:
        return [node.module.split(".")[0]]
    return []


def imports_of(source: str, modules: Set[str],
               package: str = PACKAGE) -> Set[str]:
    """The modules of MODULES that SOURCE imports, anywhere in it."""
    found: Set[str] = set()
    for node in ast.walk(ast.parse(source)):
        found.update(m for m in _imported(node, package) if m in modules)
    return found


def import_graph(directory: str, package: str = PACKAGE) -> Graph:
    """module -> the package's modules it imports, of every .py file of
    DIRECTORY (the package)."""
    names = sorted(f[:-3] for f in os.listdir(directory) if f.endswith(".py"))
    graph = {}
    for name in names:
        with open(os.path.join(directory, name + ".py"),
                  encoding="utf-8") as f:
            graph[name] = imports_of(f.read(), set(names), package) - {name}
    return graph


def find_cycle(graph: Graph) -> Optional[List[str]]:
    """A circle of imports as [a, b, ..., a], or None when there is none
    (depth-first search; a module on the current path seen again closes
    a circle)."""
    done: Set[str] = set()
    path: List[str] = []

    def visit(node: str) -> Optional[List[str]]:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            cycle = visit(nxt)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start)
        if cycle:
            return cycle
    return None


class ImportGraph(unittest.TestCase):
    def test_kbtools_has_no_import_cycle(self) -> None:
        graph = import_graph(PACKAGE_DIR)
        self.assertIn("results", graph)
        self.assertIn("stats", graph["results"])
        cycle = find_cycle(graph)
        self.assertIsNone(cycle, "kbtools modules import each other: "
                          + " -> ".join(cycle or []))

    def test_every_form_of_import_is_an_edge(self) -> None:
        modules = {"a", "b", "c", "d", "e", "f"}
        source = ("import os\n"
                  "from kbtools import a, b as bee\n"
                  "import kbtools.c\n"
                  "from kbtools.d import thing\n"
                  "from typing import List\n"
                  "def late() -> None:\n"
                  "    from . import e\n"
                  "    from .f import other\n"
                  "from kbtools import missing\n")
        self.assertEqual(imports_of(source, modules), modules)
        self.assertEqual(imports_of("import kbtoolsx\nfrom kbtoolsx.a "
                                    "import b\n", modules), set())

    def test_cycles_are_found(self) -> None:
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}),
                         ["a", "b", "c", "a"])
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"a"}}),
                         ["a", "b", "a"])
        self.assertEqual(find_cycle({"x": {"a"}, "a": {"a"}}), ["a", "a"])
        # Two ways to one module are no circle.
        self.assertIsNone(find_cycle({"a": {"b", "c"}, "b": {"d"},
                                      "c": {"d"}, "d": set()}))
        self.assertIsNone(find_cycle({}))

    def test_a_circle_through_a_function_level_import_fails(self) -> None:
        """The check as it runs on kbtools, on a package where cli
        imports results at its top and results imports cli inside a
        function (issue 29's circle)."""
        with tempfile.TemporaryDirectory() as d:
            files = {"cli.py": "from kbtools import results, output\n",
                     "output.py": "import sys\n",
                     "results.py": "def write():\n"
                                   "    from kbtools.cli import write\n"}
            for name, text in files.items():
                with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                    f.write(text)
            graph = import_graph(d)
            self.assertEqual(graph, {"cli": {"output", "results"},
                                     "output": set(),
                                     "results": {"cli"}})
            self.assertEqual(find_cycle(graph), ["cli", "results", "cli"])


if __name__ == "__main__":
    unittest.main()
