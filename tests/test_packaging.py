"""The package layout and the README/CI contract."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_mapped_namespaces_import_and_bare_names_do_not_leak() -> None:
    for name in ("tools", "graphs", "prompts"):
        mod = importlib.import_module(f"tablerag_agents.{name}")
        assert Path(mod.__file__).parent == REPO / name
    # In a clean interpreter away from the repo, `tools` is not importable.
    proc = subprocess.run(
        [sys.executable, "-c", "import tools"], cwd="/", capture_output=True, text=True
    )
    assert proc.returncode != 0 and "No module named 'tools'" in proc.stderr


def test_every_subpackage_is_declared_in_pyproject() -> None:
    declared = set(re.findall(r'"(tablerag_agents[\w.]*)"', (REPO / "pyproject.toml").read_text()))
    roots = {
        "tablerag_agents": REPO / "tablerag_agents",
        "tablerag_agents.tools": REPO / "tools",
        "tablerag_agents.graphs": REPO / "graphs",
        "tablerag_agents.prompts": REPO / "prompts",
    }
    found = set()
    for pkg, root in roots.items():
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root).parts
            if "data" not in rel:
                found.add(".".join((pkg, *rel)))
    assert found <= declared, f"add to [tool.setuptools] packages: {sorted(found - declared)}"


def _readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    return re.findall(r"```bash\n(python3 -m venv .*?)\n```", text)


def test_readme_has_two_setup_commands_and_ci_runs_the_test_one() -> None:
    demo, tests = _readme_commands()[:2]
    assert demo.endswith("tablerag demo")
    assert tests.endswith("pytest")
    assert tests in (REPO / ".ci" / "run").read_text()


def test_test_files_have_unique_names() -> None:
    """pytest imports test files by basename (no packages): two alike names break collection."""
    from collections import Counter
    from pathlib import Path

    names = Counter(p.name for p in Path(__file__).parent.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []


def test_tests_import_helpers_by_bare_name() -> None:
    """Helpers in tests/ are on pytest's ``pythonpath``; ``tests`` itself is not a package.

    ``from tests.fakes import ...`` only resolves when the working directory happens to be
    the repo root on sys.path, and fails collection in a clean CI checkout.
    """
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "tests").rglob("*.py")
        if re.search(r"^\s*(from|import) tests[.\s]", path.read_text(encoding="utf-8"), re.M)
    ]
    assert not offenders, f"import test helpers as `from fakes import ...`: {offenders}"
