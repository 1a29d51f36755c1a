"""mypy resolves every first-party import, and CI and the README run that same check.

``tools/``, ``graphs/`` and ``prompts/`` become ``tablerag_agents.tools`` (...) through
setuptools' ``package-dir``; an editable install serves them with an import hook that
mypy cannot follow. pyproject's ``mypy_path`` points at ``.ci/mypy_path``, whose
``tablerag_agents/`` links each mapped folder under its import name, and an unresolved
``tablerag_agents.*`` import is an error, not a silent ``Any``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from package_layout import PACKAGE, REPO, iter_modules, package_dirs, pyproject

MISSING = f"{PACKAGE}.no_such_module"
REVEALED = {  # a name defined in each mapped package -> its type as mypy reveals it
    (
        "tablerag_agents.tools.toolkit",
        "TableRAGToolkit",
    ): "tablerag_agents.tools.toolkit.TableRAGToolkit",
    ("tablerag_agents.graphs.state", "InputState"): "tablerag_agents.graphs.state.InputState",
    ("tablerag_agents.prompts", "load_prompt"): "functools._lru_cache_wrapper[str]",
}


def _mypy(tmp_path: Path, probe: str, *modules: str) -> list[str]:
    """Check the module ``probe`` and ``modules`` with the project's configuration, as CI does.

    mypy runs from the repository root; other imports are resolved but not analysed
    (``--follow-imports=skip``), which keeps this to a few seconds.
    """
    (tmp_path / "probe.py").write_text(probe, encoding="utf-8")
    args = [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml")]
    args += ["--follow-imports=skip", "--cache-dir", str(tmp_path / "cache"), "--no-pretty"]
    for module in ("probe", *modules):
        args += ["-m", module]
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    proc = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.stderr == "", proc.stderr
    return proc.stdout.splitlines()


def test_mypy_resolves_every_first_party_module(tmp_path: Path) -> None:
    modules = [m.name for m in iter_modules()]
    assert len(modules) > 100 and "tablerag_agents.tools.toolkit" in modules
    imports = [f"import {name}" for name in [*modules, MISSING]]
    reveals = [f"from {mod} import {name}\nreveal_type({name})" for mod, name in REVEALED]
    out = _mypy(tmp_path, "\n".join([*imports, *reveals]) + "\n", *{mod for mod, _ in REVEALED})
    not_found = [line for line in out if "import-not-found" in line]
    # Only the deliberately missing module: an unresolved first-party import is an error.
    assert len(not_found) == 1 and f'"{MISSING}"' in not_found[0], "\n".join(out)
    revealed = [line.split("Revealed type is ")[1] for line in out if "Revealed type" in line]
    # Typed, not Any: the mapped packages' own definitions.
    assert len(revealed) == len(REVEALED), "\n".join(out)
    for want, got in zip(REVEALED.values(), revealed, strict=True):
        assert want in got, (want, got)


def test_mypy_path_links_every_mapped_package() -> None:
    config = pyproject()["tool"]["mypy"]
    link_root = Path(config["mypy_path"].replace("$MYPY_CONFIG_FILE_DIR", str(REPO)))
    for name, folder in package_dirs().items():
        if name != PACKAGE:
            link = link_root.joinpath(*name.split("."))
            assert link.is_symlink() and link.resolve() == folder.resolve(), name
    # mypy checks every package of the mapping, not only the folder named tablerag_agents
    assert set(config["packages"]) == set(package_dirs())


def test_first_party_imports_are_never_ignored() -> None:
    config = pyproject()["tool"]["mypy"]
    first_party = [o for o in config["overrides"] if f"{PACKAGE}.*" in o["module"]]
    assert [o.get("ignore_missing_imports") for o in first_party] == [False]


def test_ci_and_readme_run_the_configured_check() -> None:
    """CI and a developer run plain ``mypy``: the configured packages, paths and overrides."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    stage = ci.split('stage "lint and types"')[1].split("stage ")[0]
    assert re.search(r"^mypy$", stage, re.M), stage
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    development = readme.split("## Development")[1].split("\n## ")[0]
    assert re.search(r"^mypy\b", development, re.M), development
