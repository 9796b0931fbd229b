"""Machine facts (host.py) and the NVIDIA driver's view (nvidia.py), from canned text."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coursekit.hardware import host, nvidia

CPUINFO_X86 = """\
processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model name\t: Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz
cpu MHz\t\t: 2000.000
physical id\t: 0
core id\t\t: 0
flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512_bf16 amx_tile amx_bf16

processor\t: 1
vendor_id\t: GenuineIntel
physical id\t: 0
core id\t\t: 0

processor\t: 2
physical id\t: 0
core id\t\t: 1
"""

CPUINFO_ARM = """\
processor\t: 0
BogoMIPS\t: 2100.00
Features\t: fp asimd evtstrm aes sve bf16 i8mm
CPU implementer\t: 0x41
"""


def test_proc_cpuinfo_x86_fields_and_physical_core_count() -> None:
    parsed = host.parse_proc_cpuinfo(CPUINFO_X86)
    assert parsed["model"].startswith("Intel(R) Xeon(R) Platinum 8480+")
    assert parsed["vendor"] == "GenuineIntel" and parsed["family"] == 6
    assert {"avx2", "amx_bf16"} <= parsed["flags"]
    assert parsed["mhz"] == 2000.0
    assert parsed["physical_cores"] == 2  # three logical CPUs, two distinct core ids


def test_proc_cpuinfo_arm_features() -> None:
    parsed = host.parse_proc_cpuinfo(CPUINFO_ARM)
    assert {"asimd", "sve", "bf16"} <= parsed["flags"] and parsed["vendor"] == "ARM"


def test_cpu_info_on_this_machine_is_complete_enough() -> None:
    cpu = host.cpu_info()
    assert cpu.usable_cores >= 1 and cpu.compute_cores >= 1
    assert cpu.compute_cores <= cpu.usable_cores
    assert cpu.architecture
    d = cpu.as_dict()
    assert set(d) >= {"model", "physical_cores", "clock_ghz", "isa", "usable_cores"}
    assert all(isinstance(x, str) for x in d["isa"])


def test_machine_report_has_python_os_cpu_memory() -> None:
    report = host.machine_report()
    assert set(report) == {"python", "os", "cpu", "memory"}
    assert report["memory"]["total_bytes"] and report["memory"]["total_bytes"] > 0


SMI_HEADER = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
"""


def test_driver_text_parsers() -> None:
    assert nvidia.parse_cuda_driver_version(SMI_HEADER) == "12.4"
    assert nvidia.parse_cuda_driver_version("no gpu") is None
    proc = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
    assert nvidia.parse_proc_version(proc) == "550.54.15"
    proc_open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build\n"
    assert nvidia.parse_proc_version(proc_open) == "570.86.15"


def test_query_csv_rows_and_device_entries() -> None:
    fields = ("index", "name", "memory.total", "driver_version", "uuid", "pci.bus_id")
    text = ("0, NVIDIA H100 80GB HBM3, 81559, 550.54.15, GPU-abc, 00000000:18:00.0\n"
            "1, NVIDIA H100 PCIe, 81559, 550.54.15, GPU-def, 00000000:3B:00.0\n")
    rows = nvidia.parse_query_csv(text, fields)
    assert [r["name"] for r in rows] == ["NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe"]
    device = nvidia._device(rows[0], {"compute_cap": "9.0", "pcie.link.gen.max": "5", "pcie.link.width.max": "16"})
    assert device["memory_bytes"] == 81559 * 1024**2
    assert device["known_peak"] == "H100 SXM"
    assert device["pcie_peak_gbps"] == pytest.approx(63.0, rel=0.01)
    unknown = nvidia._device(rows[1], {"compute_cap": "[N/A]"})
    assert unknown["compute_capability"] is None and unknown["pcie_peak_gbps"] is None
    assert unknown["known_peak"] == "H100 PCIe"


@pytest.mark.parametrize("gen, width, expected", [(3, 16, 15.76), (4, 16, 31.5), (5, 16, 63.0), (4, 8, 15.75),
                                                  (None, 16, None), (9, 16, None)])
def test_pcie_link_peak(gen, width, expected) -> None:
    got = nvidia.pcie_peak_gbps(gen, width)
    assert got == (pytest.approx(expected, rel=0.01) if expected else None)


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None or Path("/proc/driver/nvidia").exists(),
                    reason="checks the report of a machine without an NVIDIA driver")
def test_driver_report_without_a_driver_says_so_and_does_not_raise() -> None:
    report = nvidia.driver_report()
    assert report == {"driver_present": False, "driver_version": None, "cuda_driver_version": None,
                      "nvidia_smi": None, "devices": [], "error": None}
