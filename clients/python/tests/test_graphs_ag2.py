"""Workflow graphs of conformance/fixtures/graphs.json (written by the TypeScript adapters) against the real AG2
`TransitionGraph`: AG2's own factories write the same bytes, and AG2 reads each graph back unchanged."""

from __future__ import annotations

from typing import Any

from ag2.network.transitions import TransitionGraph

from .conftest import fixture


def _made_by_ag2(factory: dict[str, Any]) -> TransitionGraph:
    if factory["kind"] == "round_robin":
        return TransitionGraph.round_robin(factory["participants"], max_turns=factory["max_turns"])
    return TransitionGraph.sequence(factory["steps"])


def test_ag2_factories_write_the_typescript_bytes() -> None:
    cases = [c for c in fixture("graphs.json") if c["factory"] is not None]
    assert [c["name"] for c in cases] == ["round_robin", "round_robin-uncapped", "sequence"]
    for case in cases:
        assert _made_by_ag2(case["factory"]).dumps() == case["dumps"]


def test_ag2_reads_every_graph_back_unchanged() -> None:
    cases = fixture("graphs.json")
    assert len(cases) == 4
    for case in cases:
        assert TransitionGraph.loads(case["dumps"]).dumps() == case["dumps"]
