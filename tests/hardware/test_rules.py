"""The doctor's rules, fed synthetic reports: each problem gives the right finding and fix."""
from __future__ import annotations

from typing import Any

import pytest

from coursekit.hardware import rules
from coursekit.hardware.rules import Finding, evaluate, exit_code, status

from .conftest import gpu_machine


def codes(report: dict[str, Any], *levels: str) -> set[str]:
    return {f.code for f in evaluate(report) if not levels or f.level in levels}


def only(report: dict[str, Any], code: str) -> Finding:
    (finding,) = [f for f in evaluate(report) if f.code == code]
    return finding


def test_a_healthy_cpu_machine_has_no_errors_or_warnings(make_report) -> None:
    findings = evaluate(make_report())
    assert [f.code for f in findings if f.level != "info"] == []
    assert "cpu-only" in {f.code for f in findings}
    assert exit_code(findings) == 0 and status(findings) == "ok"


def test_a_healthy_gpu_machine_has_no_errors_or_warnings(make_report) -> None:
    report = gpu_machine(make_report())
    for name, device in (("tensorflow", "GPU:0"), ("jax", "cuda:0")):
        report["frameworks"][name]["devices"].append(
            {"name": device, "kind": "gpu", "description": "H100", "memory_bytes": None,
             "tiny_op": {"ok": True, "seconds": 0.1, "error": None}})
    assert codes(report) == set()


@pytest.mark.parametrize("framework", ["numpy", "torch", "tensorflow", "jax"])
def test_a_missing_framework_is_an_error(make_report, framework: str) -> None:
    report = make_report()
    report["frameworks"][framework] = {"status": "missing", "version": None, "reason": "ModuleNotFoundError",
                                       "seconds": 0.1, "devices": [], "details": {}, "warnings": []}
    finding = only(report, f"missing:{framework}")
    assert finding.level == "error" and "pip install" in finding.fix
    assert exit_code(evaluate(report)) == 1 and status(evaluate(report)) == "broken"


def test_a_framework_that_crashes_on_import_is_an_error_with_its_reason(make_report) -> None:
    report = make_report()
    report["frameworks"]["tensorflow"].update(status="broken", devices=[],
                                              reason="the interpreter crashed (SIGILL) while importing tensorflow")
    finding = only(report, "broken:tensorflow")
    assert finding.level == "error" and "SIGILL" in finding.message


def test_a_framework_that_hangs_is_an_error(make_report) -> None:
    report = make_report()
    report["frameworks"]["jax"].update(status="timeout", devices=[], reason="took longer than 120 s")
    assert only(report, "timeout:jax").level == "error"


def test_a_tiny_op_failing_on_a_gpu_is_an_error_pointing_at_cpu_fallback(make_report, device_factory) -> None:
    report = gpu_machine(make_report())
    report["frameworks"]["torch"]["devices"][-1] = device_factory(
        "cuda:0", "gpu", ok=False, error="CUDA error: no kernel image is available for execution on the device")
    finding = only(report, "tiny-op-failed:torch:cuda:0")
    assert finding.level == "error" and "no kernel image" in finding.message
    assert "COURSEKIT_DEVICE=cpu" in finding.fix
    assert exit_code(evaluate(report)) == 1


def test_a_framework_with_no_device_is_an_error(make_report) -> None:
    report = make_report()
    report["frameworks"]["jax"]["devices"] = []
    assert only(report, "no-device:jax").level == "error"


def test_cpu_only_torch_on_a_gpu_machine_is_a_warning_with_the_cuda_wheel_fix(make_report) -> None:
    report = gpu_machine(make_report(), torch_sees_it=False)
    finding = only(report, "torch-cpu-build")
    assert finding.level == "warning"
    assert "NVIDIA H100 80GB HBM3" in finding.message
    assert "download.pytorch.org/whl/cu" in finding.fix and "torch==2.13.0" in finding.fix
    assert exit_code(evaluate(report)) == 0


def test_cpu_only_torch_is_detected_from_the_driver_alone(make_report) -> None:
    # /proc/driver/nvidia exists but nvidia-smi is missing: still a GPU machine.
    report = make_report()
    report["gpu"]["driver_present"] = True
    assert "torch-cpu-build" in codes(report, "warning")


def test_cuda_torch_with_a_driver_too_old_is_a_warning_naming_both_versions(make_report) -> None:
    report = gpu_machine(make_report())
    torch = report["frameworks"]["torch"]
    torch["devices"] = torch["devices"][:1]
    torch["details"].update(cuda_build="12.8", cuda_available=False, cuda_device_count=0)
    report["gpu"]["cuda_driver_version"] = "12.2"
    finding = only(report, "torch-no-cuda")
    assert "12.2" in finding.fix and "12.8" in finding.fix


def test_torch_sees_the_gpu_but_tensorflow_does_not(make_report) -> None:
    report = gpu_machine(make_report())
    finding = only(report, "tensorflow-no-gpu")
    assert finding.level == "warning" and "tensorflow[and-cuda]" in finding.fix
    assert "CPU-only build" in finding.fix  # the synthetic TF was not built with CUDA


def test_tensorflow_built_with_cuda_but_without_gpu_names_its_cuda_version(make_report) -> None:
    report = gpu_machine(make_report())
    report["frameworks"]["tensorflow"]["details"].update(built_with_cuda=True, cuda_build="12.5.1", cudnn_build="9")
    assert "12.5.1" in only(report, "tensorflow-no-gpu").fix


def test_torch_sees_the_gpu_but_jax_does_not(make_report) -> None:
    report = gpu_machine(make_report())
    assert 'jax[cuda12]' in only(report, "jax-no-gpu").fix


def test_jax_kept_on_cpu_on_purpose_is_only_info(make_report) -> None:
    report = gpu_machine(make_report())
    report["env"]["JAX_PLATFORMS"] = "cpu"
    assert only(report, "jax-cpu-forced").level == "info"
    assert "jax-no-gpu" not in codes(report)


def test_no_gpu_warnings_on_a_cpu_only_machine(make_report) -> None:
    assert not codes(make_report()) & {"tensorflow-no-gpu", "jax-no-gpu", "torch-cpu-build", "torch-no-cuda"}


def test_missing_ipywidgets_is_a_warning_not_an_error(make_report) -> None:
    report = make_report()
    report["packages"]["ipywidgets"]["version"] = None
    finding = only(report, "missing:ipywidgets")
    assert finding.level == "warning" and "ipywidgets>=8" in finding.fix
    assert exit_code(evaluate(report)) == 0


def test_old_ipywidgets_is_a_warning(make_report) -> None:
    report = make_report()
    report["packages"]["ipywidgets"]["version"] = "7.8.1"
    assert only(report, "old:ipywidgets").level == "warning"


def test_missing_jupyterlab_or_nbgrader_is_an_error(make_report) -> None:
    for name in ("jupyterlab", "nbgrader"):
        report = make_report()
        report["packages"][name]["version"] = None
        assert only(report, f"missing:{name}").level == "error"


def test_missing_nbgrader_lab_extension_is_a_warning(make_report) -> None:
    report = make_report()
    report["jupyter"]["labextensions"]["@jupyter/nbgrader"] = {"installed": False, "enabled": False, "path": None}
    finding = only(report, "labextension-missing:@jupyter/nbgrader")
    assert finding.level == "warning" and "nbgrader" in finding.fix


def test_disabled_widgets_extension_is_a_warning_with_the_enable_command(make_report) -> None:
    report = make_report()
    report["jupyter"]["labextensions"]["@jupyter-widgets/jupyterlab-manager"]["enabled"] = False
    finding = only(report, "labextension-disabled:@jupyter-widgets/jupyterlab-manager")
    assert finding.fix == "jupyter labextension enable @jupyter-widgets/jupyterlab-manager"


def test_disabled_nbgrader_server_extension_is_a_warning(make_report) -> None:
    report = make_report()
    report["jupyter"]["server_extensions"]["validate_assignment"] = False
    assert "server-extension-disabled:nbgrader.validate_assignment" in codes(report, "warning")


def test_unavailable_coursekit_device_is_a_warning_listing_what_exists(make_report) -> None:
    report = make_report()
    report["env"]["COURSEKIT_DEVICE"] = "cuda"
    finding = only(report, "coursekit-device-unavailable")
    assert "cpu" in finding.fix
    report["env"]["COURSEKIT_DEVICE"] = "cpu"
    assert "coursekit-device-unavailable" not in codes(report)


def test_thread_limits_are_info(make_report) -> None:
    report = make_report()
    report["env"]["OMP_NUM_THREADS"] = "1"
    assert only(report, "threads-limited:OMP_NUM_THREADS").level == "info"


def test_a_coursekit_without_its_compiled_grading_monitor_is_info_with_the_fix(make_report) -> None:
    report = make_report()
    report["grading"]["monitor_compiled"] = False
    finding = only(report, "grading-monitor-uncompiled")
    assert finding.level == "info" and "C compiler" in finding.fix


def test_reference_blas_is_a_warning(make_report) -> None:
    report = make_report()
    report["blas"]["numpy"]["name"] = "blas"
    assert "slow-blas" in codes(report, "warning")


def test_low_memory_and_old_python(make_report) -> None:
    report = make_report()
    report["machine"]["memory"]["total_bytes"] = 2 * 1024**3
    report["machine"]["python"]["version"] = "3.9.18"
    assert "low-memory" in codes(report, "warning") and "python-too-old" in codes(report, "error")


def test_failed_benchmark_is_a_warning(make_report) -> None:
    report = make_report()
    report["bench"] = {"results": [{"kind": "matmul", "device": "cuda:0", "dtype": "bf16",
                                    "skipped": "failed: OutOfMemoryError: CUDA out of memory"}]}
    assert only(report, "bench-failed:matmul:cuda:0").level == "warning"


def test_every_error_and_warning_comes_with_a_fix(make_report) -> None:
    report = gpu_machine(make_report(), torch_sees_it=False)
    report["packages"]["ipywidgets"]["version"] = None
    report["frameworks"]["jax"].update(status="broken", reason="boom", devices=[])
    report["jupyter"]["labextensions"]["@jupyter/nbgrader"]["installed"] = False
    findings = evaluate(report)
    assert len([f for f in findings if f.level != "info"]) >= 4
    assert all(f.fix for f in findings if f.level in ("error", "warning"))
    assert [f.level for f in findings] == sorted((f.level for f in findings), key=rules.LEVELS.index)


def test_an_empty_or_partial_report_does_not_crash_the_rules() -> None:
    evaluate({})
    evaluate({"frameworks": {"torch": {"status": "ok"}}, "gpu": {"driver_present": True}})


def test_a_rule_that_raises_becomes_a_finding_not_a_crash(make_report) -> None:
    def broken_rule(report):
        raise KeyError("surprise")

    (finding,) = evaluate(make_report(), rules=[broken_rule])
    assert finding.code == "rule-failed:broken_rule" and finding.level == "warning"


def test_exit_code_and_status_from_levels() -> None:
    info, warn, err = (Finding(level, "c", "m", "f") for level in ("info", "warning", "error"))
    assert (exit_code([]), status([])) == (0, "ok")
    assert (exit_code([info]), status([info])) == (0, "ok")
    assert (exit_code([info, warn]), status([warn])) == (0, "warnings")
    assert (exit_code([warn, err]), status([err, info])) == (1, "broken")
    assert exit_code([{"level": "error"}]) == 1
