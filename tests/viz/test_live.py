"""LossCurve and the live/static switch, in a real kernel.

A batch run (nbclient, as under nbval and nbgrader) must keep plain pictures and text and no
widget; a request that carries a cell id, as JupyterLab's do, gets the widget and a plot
redrawn in place. Both are driven through a real ipykernel.
"""
from __future__ import annotations

import os
import queue

import nbformat
import numpy as np
import pytest
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

from coursekit.viz import LossCurve
from machine_load import scaled

WIDGET = "application/vnd.jupyter.widget-view+json"
STEPPER = """
import torch
from coursekit.viz import BackwardStepper
a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
b = a + a
BackwardStepper((b + b).sum())
"""
TRAINING = """
from coursekit.viz import LossCurve
with LossCurve("falling", log=True) as curve:
    for step in range(5):
        curve.add(10.0 ** -step)
        curve.add(2.0 ** -step, "other")
        if step == 0:
            print("first step done")
"""


def test_the_figure_holds_every_series_and_the_summary_their_ends():
    curve = LossCurve("fit", log=True, styles={"yours": {"ls": "--"}}, live=False)
    for step in range(4):
        curve.add(np.float64(8.0 / 2 ** step), "torch")
        curve.add(8.0 / 2 ** step + 1e-9, "yours")
    curve.extend([0.5, 0.25], "torch")
    ax = curve.figure().axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    np.testing.assert_array_equal(lines["torch"].get_ydata(), [8, 4, 2, 1, 0.5, 0.25])
    assert lines["yours"].get_linestyle() == "--"
    assert ax.get_yscale() == "log" and ax.get_title() == "fit: 6 steps"
    assert ax.get_legend() is not None
    assert curve.summary().splitlines() == ["torch  8 -> 0.25 (6 values)",
                                            "yours  8 -> 1 (4 values)"]


def test_a_tensor_value_is_read_as_a_number():
    import torch
    curve = LossCurve(live=False)
    curve.add(torch.tensor(2.5))
    assert curve.series == {"loss": [2.5]}


@pytest.mark.slow
def test_a_batch_run_keeps_pictures_and_text_and_no_widget(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(STEPPER),
                                         nbformat.v4.new_code_cell(TRAINING)])
    env = {k: v for k, v in os.environ.items() if k != "COURSEKIT_VIZ"}
    NotebookClient(nb, timeout=scaled(120), kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=env)
    stepper, training = (cell.outputs for cell in nb.cells)
    assert not any(WIDGET in o.get("data", {}) for cell in nb.cells for o in cell.outputs)
    assert [o.output_type for o in stepper] == ["display_data", "stream"]
    assert "image/png" in stepper[0].data
    assert "Step 4 of 4: node 4 (leaf (3,))" in stepper[1].text and "= [4. 4. 4.]" in stepper[1].text
    # Drawn once, at the end, after everything the loop printed.
    assert [o.output_type for o in training] == ["stream", "display_data", "stream"]
    assert training[0].text == "first step done\n" and "image/png" in training[1].data
    assert training[2].text.splitlines() == ["loss   1 -> 0.0001 (5 values)",
                                             "other  1 -> 0.0625 (5 values)"]


def _run_as_jupyterlab(client, code: str) -> list[dict]:
    """Send ``code`` as JupyterLab does (a cell id in the request's metadata); the iopub
    messages it caused, until the kernel is idle again."""
    msg = client.session.msg("execute_request", {
        "code": code, "silent": False, "store_history": True, "user_expressions": {},
        "allow_stdin": False, "stop_on_error": True}, metadata={"cellId": "cell-1"})
    client.shell_channel.send(msg)
    replies = []
    while True:
        try:
            reply = client.get_iopub_msg(timeout=scaled(120))
        except queue.Empty:
            pytest.fail(f"no idle status after {code!r}; got {replies}")
        if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        if reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
            return replies
        replies.append(reply)


@pytest.mark.slow
def test_a_jupyterlab_request_gets_the_widget_and_a_plot_redrawn_in_place(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "COURSEKIT_VIZ"}
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    try:
        stepper = _run_as_jupyterlab(client, STEPPER)
        errors = [m["content"] for m in stepper if m["msg_type"] == "error"]
        assert not errors, errors
        shown = [m["content"]["data"] for m in stepper if m["msg_type"] == "display_data"]
        assert len(shown) == 1 and WIDGET in shown[0] and "image/png" in shown[0]
        training = _run_as_jupyterlab(client, TRAINING)
        kinds = [m["msg_type"] for m in training
                 if m["msg_type"] in ("display_data", "update_display_data", "stream")]
        # Drawn at the first value, while the loop runs; replaced in place at the end.
        assert kinds[:2] == ["display_data", "stream"] and kinds.count("display_data") == 1
        assert kinds[-2:] == ["update_display_data", "stream"]
        ids = {m["content"]["transient"]["display_id"] for m in training
               if "display" in m["msg_type"]}
        assert len(ids) == 1
        # A request without a cell id, as nbclient sends, is a batch run.
        printed: list[str] = []
        client.execute_interactive(
            "from coursekit.viz import interactive; print(interactive())", timeout=scaled(60),
            output_hook=lambda m: printed.append(m["content"].get("text", "")))
        assert "".join(printed).strip() == "False"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
