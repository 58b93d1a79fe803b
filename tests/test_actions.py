"""The application layer's values: action kinds and their order, grouping, GPU resolution and output formats.

The renderers only render these (issue 19): what is listed first, which packages share a line, and which GPUs
a command judges are decided here, once.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from cudafit.actions import Action, ActionKind, action_rank, group_actions, inside_site
from cudafit.analysis import CheckRequest, MachineSummary, jit_allowed_in, run_check
from cudafit.cli.common import MachineUse, output_format, resolve_gpus
from cudafit.model import Gpu, parse_compute_capability, parse_driver_version
from cudafit.probe import inventory_to_dict
from cudafit.probe.inventory import GpuDevice, Inventory
from cudafit.report.formats import OutputFormat, Renderers, render
from cudafit.rules.status import Status

#: Another machine's inventory as ``cudafit gpus --json`` records it: one RTX 2080 at CUDA ordinal 0, driver 570.
INVENTORY = inventory_to_dict(
    Inventory(
        devices=(GpuDevice(0, "NVIDIA GeForce RTX 2080", parse_compute_capability("7.5"), "nvml", cuda_index=0),),
        source="nvml",
        driver_version=parse_driver_version("570.124.06"),
    )
)


def test_action_kinds_are_listed_worst_first_with_runtime_after_partial() -> None:
    """The order follows rules.status (fails worse than partial worse than jit); a run-time compiler's problem
    sits between a hole in shipped code and a JIT's cost."""
    assert sorted(ActionKind, key=lambda k: k.rank) == [
        ActionKind.FAILS,
        ActionKind.PARTIAL,
        ActionKind.RUNTIME,
        ActionKind.JIT,
    ]
    assert action_rank("native") > action_rank("jit") > action_rank("runtime") > action_rank("fails")
    assert action_rank("none") == action_rank("native")  # not actions: after every kind, in their own order


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (Status.FAILS, ActionKind.FAILS),
        ("partial", ActionKind.PARTIAL),
        (Status.JIT, ActionKind.JIT),
        (Status.NATIVE, None),
        (Status.NONE, None),
        (Status.UNKNOWN, None),
    ],
)
def test_the_kind_of_an_action_is_the_status_of_its_cell(status: Status | str, kind: ActionKind | None) -> None:
    assert ActionKind.of_status(status) is kind


def test_packages_with_the_same_fix_share_one_action_and_the_worst_gpu_comes_first() -> None:
    fix = "upgrade the NVIDIA driver"
    actions = [
        Action(ActionKind.JIT, ("a",), 0, "build with sm_86"),
        Action(ActionKind.FAILS, ("a",), 1, fix),
        Action(ActionKind.FAILS, ("b",), 1, fix),
        Action(ActionKind.FAILS, ("b",), 1, "or install an older build"),  # an alternative: stays after its fix
        Action(ActionKind.RUNTIME, ("c",), 0, fix),  # same message, other GPU and kind: its own line
    ]
    grouped = group_actions(actions)
    assert [(a.gpu, a.kind, a.packages, a.message) for a in grouped] == [
        (1, ActionKind.FAILS, ("a", "b"), fix),
        (1, ActionKind.FAILS, ("b",), "or install an older build"),
        (0, ActionKind.RUNTIME, ("c",), fix),
        (0, ActionKind.JIT, ("a",), "build with sm_86"),
    ]
    assert grouped[0].to_dict() == {"severity": "fails", "package": "a, b", "gpu": 1, "message": fix}


def test_messages_name_files_as_found_inside_site_packages() -> None:
    text = "rebuild /home/me/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so (sm_80)"
    assert inside_site(text) == "rebuild torch/lib/libtorch_cuda.so (sm_80)"


def test_named_gpus_resolve_to_gpu_values_without_probing() -> None:
    choice = resolve_gpus(["RTX 3090", "sm_90"], driver="570.124.06", probe=False)
    assert [g.compute_capability for g in choice.gpus] == [parse_compute_capability(c) for c in ("8.6", "9.0")]
    assert all(g.index is None for g in choice.gpus)
    assert choice.driver == parse_driver_version("570.124.06")
    assert choice.machine is None and choice.errors == ()


def test_an_unknown_gpu_or_a_bad_driver_is_an_error_not_an_exception() -> None:
    assert resolve_gpus(["not-a-gpu-xyz"], probe=False).errors
    bad = resolve_gpus(["RTX 3090"], driver="abc", probe=False)
    assert bad.errors and not bad.gpus


@pytest.mark.parametrize(
    ("use", "names", "expected", "machine_read"),
    [
        (MachineUse.ADD, ["H100"], ["recorded", "named"], True),  # check: both, side by side
        (MachineUse.FILL, ["H100"], ["named"], True),  # find: the named GPUs, the machine's driver
        (MachineUse.FILL, [], ["recorded"], True),
        (MachineUse.INSTEAD, ["H100"], ["named"], False),  # explain: the names only
        (MachineUse.INSTEAD, [], ["recorded"], True),
    ],
)
def test_how_named_gpus_and_the_machine_combine(
    tmp_path: Path, use: MachineUse, names: list[str], expected: list[str], machine_read: bool
) -> None:
    inv = tmp_path / "node.json"
    inv.write_text(json.dumps(INVENTORY))
    choice = resolve_gpus(names, inventory=str(inv), probe=False, use=use)
    # a recorded (or probed) GPU keeps its CUDA ordinal; a named one has none
    assert ["named" if g.index is None else "recorded" for g in choice.gpus] == expected
    assert (choice.machine is not None) is machine_read
    assert (choice.driver == parse_driver_version("570.124.06")) is machine_read


def test_the_output_format_comes_from_the_flags() -> None:
    assert output_format(argparse.Namespace(json=True, markdown=False)) is OutputFormat.JSON
    assert output_format(argparse.Namespace(json=False, markdown=True)) is OutputFormat.MARKDOWN
    assert output_format(argparse.Namespace(json=False, format="sarif")) is OutputFormat.SARIF
    assert output_format(argparse.Namespace()) is OutputFormat.TEXT


def test_render_writes_the_format_asked_and_refuses_one_the_command_lacks(capsys: pytest.CaptureFixture[str]) -> None:
    renderers = Renderers(lambda doc, console: console.print(f"text {doc['n']}"), lambda doc: f"md {doc['n']}\n")
    render(OutputFormat.MARKDOWN, {"n": 1}, renderers)
    render(OutputFormat.TEXT, {"n": 2}, renderers)
    render(OutputFormat.JSON, {"n": 3}, renderers)
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["md 1", "text 2"] and json.loads("".join(out[2:])) == {"n": 3}
    with pytest.raises(ValueError, match="no sarif output"):
        render(OutputFormat.SARIF, {"n": 4}, renderers)


def test_run_check_says_when_ptx_jit_is_off_and_when_the_numbering_is_estimated() -> None:
    assert jit_allowed_in({}) and jit_allowed_in({"CUDA_DISABLE_PTX_JIT": "0"})
    assert not jit_allowed_in({"CUDA_DISABLE_PTX_JIT": "1"})
    machine = MachineSummary("ok", "nvml", None, (), ordering_estimated=True)
    request = CheckRequest(
        gpus=(Gpu("RTX 3090", parse_compute_capability("8.6")),),
        machine=machine,
        environ={"CUDA_DISABLE_PTX_JIT": "1"},
        use_cache=False,
    )
    analysis = run_check([], request, notes=["given"])
    assert analysis.notes == (
        "given",
        "CUDA_DISABLE_PTX_JIT is set: PTX is not counted as usable",
        "CUDA device numbering is estimated (FASTEST_FIRST); see cudafit gpus",
    )
    assert not analysis.jit_allowed and analysis.machine is machine
    assert analysis.status is Status.NONE and analysis.advice.actions == ()
