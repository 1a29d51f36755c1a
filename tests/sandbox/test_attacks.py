"""Every hostile payload is contained, and the sandbox keeps serving normal requests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from attack_kit import AttackContext, attack_context, check_normal, host_alive, run_attack
from attack_payloads import ATTACKS

from tablerag_agents.sandbox import Sandbox, SandboxPolicy
from tablerag_agents.sandbox.bwrap import RuntimePaths

pytestmark = pytest.mark.sandbox

POLICY = SandboxPolicy(timeout_s=2.0, kill_grace_s=1.0, max_workers=2)


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


def test_suite_is_large_enough() -> None:
    assert len(ATTACKS) >= 15
    assert len({a.name for a in ATTACKS}) == len(ATTACKS)


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_is_contained(sb: Sandbox, ctx: AttackContext, attack) -> None:  # noqa: ANN001
    results = run_attack(sb, attack, ctx)
    attack.check(results, ctx)
    host_alive(ctx)
    assert os.environ.get(ctx.env_name) == ctx.env_secret  # the host itself is untouched
    check_normal(sb)
