"""With matplotlib imported (and preloaded in the warm worker), the sandbox refuses all it did.

Charts run model-written matplotlib code in the sandbox. Every payload of
``attack_payloads.py`` runs again after ``import matplotlib.pyplot``, in a sandbox
whose zygote preloads it (the fast set-up for charts), and matplotlib's own doors
are tried: reading host files and URLs through it, writing figures outside /tmp,
LaTeX and GUI backends (programs and displays that do not exist inside), and a
planted config that must not reach the next session.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from attack_kit import (
    READ_ERRORS,
    WRITE_ERRORS,
    Attack,
    AttackContext,
    attack_context,
    check_normal,
    failed,
    host_alive,
    host_missing,
    no_connection,
    no_leak,
    run_attack,
)
from attack_payloads import ATTACKS

from tablerag_agents.sandbox import ExecResult, Sandbox, SandboxPolicy
from tablerag_agents.sandbox.bwrap import RuntimePaths

pytestmark = pytest.mark.sandbox

POLICY = SandboxPolicy(
    timeout_s=2.0, kill_grace_s=1.0, max_workers=2, preload=("matplotlib.pyplot",)
)
MPL = "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\n"
R = list[ExecResult]


@pytest.fixture(scope="module")
def ctx() -> Iterator[AttackContext]:
    site = RuntimePaths.detect().site_packages[0]
    with attack_context(site) as context:
        context.timeout, context.grace = POLICY.timeout_s, POLICY.kill_grace_s
        context.max_processes = POLICY.max_processes
        yield context


@pytest.fixture(scope="module")
def sb(ctx: AttackContext) -> Iterator[Sandbox]:
    with Sandbox(POLICY) as sandbox:
        yield sandbox


def _with_matplotlib(attack: Attack) -> Attack:
    return Attack(attack.name, [MPL + step for step in attack.steps], attack.check, attack.timeout)


def _read_denied(rs: R, c: AttackContext) -> None:
    failed(rs[0], *READ_ERRORS)
    no_leak(rs[0], c.home_secret)


def _url_refused(rs: R, c: AttackContext) -> None:
    failed(rs[0], "ValueError", "URLError", "OSError")
    no_connection(c)


def _write_denied(rs: R, c: AttackContext) -> None:
    failed(rs[0], *WRITE_ERRORS)
    host_missing(c.repo / "evil_chart.png")


def _raises(*types: str, text: str = "") -> object:
    def check(rs: R, c: AttackContext) -> None:
        failed(rs[0], *types)
        assert text in (rs[0].error or ""), rs[0].error

    return check


def _config_not_kept(rs: R, c: AttackContext) -> None:
    assert rs[0].ok, rs[0]
    assert rs[1].ok and rs[1].value == [[], "agg", False], f"state leaked: {rs[1]}"


PLANT_CONFIG = (
    "import os\nos.makedirs('/tmp/.config/matplotlib', exist_ok=True)\n"
    "open('/tmp/.config/matplotlib/matplotlibrc', 'w').write('backend: TkAgg\\n')\n"
    "plt.rcParams['text.usetex'] = True\n'planted'"
)
AFTER_PLANT = (
    "import os\n[os.listdir('/tmp'), matplotlib.get_backend(), plt.rcParams['text.usetex']]"
)
MPL_ATTACKS = [
    Attack("mpl_imread_host_file", [MPL + "plt.imread('$home_canary')"], _read_denied),
    Attack("mpl_rc_file_host_file", [MPL + "matplotlib.rc_file('$home_canary')"], _read_denied),
    Attack(
        "mpl_imread_url",
        [MPL + "import matplotlib.image as im\nim.imread('http://127.0.0.1:$port/x.png')"],
        _url_refused,
    ),
    Attack(
        "mpl_savefig_outside_tmp",
        [MPL + "fig = plt.figure()\nfig.savefig('$repo/evil_chart.png')"],
        _write_denied,
    ),
    Attack(
        "mpl_usetex_runs_latex",
        [
            MPL + "import io\nplt.rcParams['text.usetex'] = True\nfig = plt.figure()\n"
            "fig.text(0.5, 0.5, '$$x$$')\nfig.savefig(io.BytesIO())"
        ],
        _raises("RuntimeError", text="latex could not be found"),
    ),
    Attack(
        "mpl_gui_backend",
        [MPL + "matplotlib.use('TkAgg', force=True)\nplt.figure()"],
        _raises("ImportError", text="headless"),
    ),
    Attack(
        "mpl_huge_render",
        [
            MPL
            + "import io\nfig = plt.figure(figsize=(60, 60), dpi=1000)\nfig.savefig(io.BytesIO())"
        ],
        _raises("MemoryError", "ValueError"),
    ),
    Attack(
        "mpl_config_for_next_session", [MPL + PLANT_CONFIG, MPL + AFTER_PLANT], _config_not_kept
    ),
]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_every_attack_is_still_contained_with_matplotlib(
    sb: Sandbox, ctx: AttackContext, attack: Attack
) -> None:
    attack.check(run_attack(sb, _with_matplotlib(attack), ctx), ctx)
    host_alive(ctx)
    assert os.environ.get(ctx.env_name) == ctx.env_secret
    check_normal(sb)


@pytest.mark.parametrize("attack", MPL_ATTACKS, ids=[a.name for a in MPL_ATTACKS])
def test_matplotlib_doors_are_shut(sb: Sandbox, ctx: AttackContext, attack: Attack) -> None:
    attack.check(run_attack(sb, attack, ctx), ctx)
    host_alive(ctx)
    check_normal(sb)
