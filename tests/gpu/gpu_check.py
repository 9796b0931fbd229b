"""``make gpu-check``: every GPU path of the course, checked in one run on a lent GPU machine.

The course promises that lab00, lab01 and lab09 run unchanged on a GPU, and ``coursekit doctor
--bench`` promises GEMM, bandwidth and transfer figures as a share of the device's peak. A GPU
machine is lent rarely, for about 15 minutes in all: this script is the one call to make then.
It runs the steps below in order, writes its report after each, and stops cleanly on SIGTERM
or SIGINT (the report says where):

1. **setup**: CUDA or not (without it: a loud dry run, below); the packages the harness needs
   that the machine lacks, installed from ``.whl/`` (``device_env.CARRIED``), timed.
2. **doctor**: ``coursekit doctor --bench --json``; its figures against the known peaks.
3. **labs**: each lab in ``LABS_ON_GPU``, in a child process with a time budget
   (``lab_run.py``): the solution notebook with ``$COURSEKIT_DEVICE=cuda``, the visible and
   hidden checks through the mutant suite's in-process harness on cuda, again on the CPU and
   again on cuda; what differs from the CPU beyond the checks' tolerances, what differs
   between the two cuda runs, torch's TF32 settings and what a float32 matmul really does.
4. **report**: ``gpu_check.json`` (everything), ``gpu_check.md`` (the short table, also
   printed) and ``gpu_check.log`` (the children's output) in ``--out``.

One lab's failure or timeout never stops the others. The exit code is 0 when every lab ran and
passed and the doctor ran, 1 otherwise, 128 + the signal when stopped.

On the device machine (Python 3.12 and torch with CUDA, no network, no Jupyter packages):
first, here, ``make gpu-wheels`` (fetches the 14 carried wheels for Python 3.12 into ``.whl/``,
2.9 MiB); then one call of the device tool, with ``carry=[".whl"]`` and ``timeout_s=600``::

    export PYTHONUNBUFFERED=1; nvidia-smi -L; if command -v make >/dev/null; then make gpu-check GPU_CHECK_OUT="$OUT"; else python3 tests/gpu/gpu_check.py --out "$OUT"; fi

It fits in 10 minutes on an H100: a budget of 540 s (``--budget``), the doctor at most 150 s,
each lab at most 150 s (``--lab-budget``), and a lab starts only with 30 s or more left. A dry
run allows 600 s a lab and 1800 s in all: a busy 2-core CPU is that much slower.

Without CUDA (this machine, CI) the same script is a **dry run**, said loudly at the start and
the end and in the report's ``mode``: the labs run on the CPU, the dtype probe on the CPU and on
torch's ``meta`` device, the doctor with ``--quick``. ``tests/gpu/test_gpu_check.py`` runs it
end to end on the device's packages only (``device_env.simulated_site``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [p for p in (str(HERE), str(REPO)) if p not in sys.path]

import device_env
import gpu_report
from lab_run import write_json

# The labs whose text says their code runs unchanged on a GPU (``GPU_CLAIM``); a test keeps
# this list and the notebooks' text in step.
LABS_ON_GPU = ("lab00_setup", "lab01_graphs", "lab09_performance")
GPU_CLAIM = re.compile(r"\bruns?\s+unchanged\b", re.IGNORECASE)

BUDGET_S = 540.0        # the device tool stops a command at 600 s
DOCTOR_TIMEOUT_S = 150.0
LAB_BUDGET_S = 150.0
# A dry run's limits: a busy 2-core CPU takes minutes where the GPU machine takes seconds
# (lab09's bf16 timing cell alone: 60 s), and no device tool stops it.
DRY_RUN_BUDGET_S = 1800.0
DRY_RUN_LAB_BUDGET_S = 600.0
# A crash in these fails the lab; one in the others (the CPU baseline, the repeat, the settings,
# the precision probe) is said in the reason, and the lab's verdict stands.
ESSENTIAL_PHASES = ("notebook", "harness", "checks")
MIN_LAB_S = 30.0        # a lab is not started with less than this left (or its budget, if less)
KILL_GRACE_S = 5.0
POLL_S = 0.5


def labs_claiming_gpu(root: Path = REPO) -> list[str]:
    """Labs of the manifest whose solution's Markdown says the code runs unchanged."""
    import tomllib

    manifest = tomllib.loads((root / "course" / "course.toml").read_text())
    found = []
    for lab in manifest.get("lab", []):
        notebook = json.loads((root / "solutions" / lab["id"] / f"{lab['id']}.ipynb").read_text())
        text = " ".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
        if GPU_CLAIM.search(" ".join(text.split())):
            found.append(lab["id"])
    return found


class Stopped(BaseException):
    """SIGTERM or SIGINT arrived: stop, write what there is, exit."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class GpuCheck:
    """One run: the report being built, the output folder, the deadline, the child in hand."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.out: Path = args.out
        self.out.mkdir(parents=True, exist_ok=True)
        self.start = time.monotonic()
        self.deadline = self.start + (args.budget or BUDGET_S)  # until setup knows the mode
        self.child: subprocess.Popen | None = None
        self.env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
        # JAX takes 75 % of the GPU's memory when a process first uses it (the doctor's probe,
        # lab00's environment report): with this it takes what it needs, beside torch.
        self.env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        self.env.pop("COURSEKIT_MODE", None)
        self.log = open(self.out / "gpu_check.log", "w")  # open for the whole run
        self.report: dict[str, Any] = {
            "schema": 1, "tool": "tests/gpu/gpu_check.py", "started": _utc(), "finished": None,
            "mode": None, "target_device": None, "budget_s": args.budget, "seconds": 0.0,
            "complete": False, "stopped": None, "steps": [], "environment": {}, "setup": {},
            "doctor": None, "labs": {}, "exit_code": None,
        }

    # -- bookkeeping ---------------------------------------------------------------------------

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def say(self, message: str) -> None:
        print(message, flush=True)
        print(message, file=self.log, flush=True)

    def save(self) -> None:
        self.report["seconds"] = round(time.monotonic() - self.start, 1)
        write_json(self.out / "gpu_check.json", self.report)
        (self.out / "gpu_check.md").write_text(gpu_report.render(self.report))

    def step(self, name: str, body: Any) -> Any:
        """Run one step; record its status and time; save the report whatever happens."""
        left = f" ({self.left():.0f} s left of the budget)" if self.report["mode"] else ""
        self.say(f"\n>>> {name}{left}")
        entry = {"name": name, "status": "running", "seconds": None}
        self.report["steps"].append(entry)
        began = time.monotonic()
        try:
            value = body()
            entry["status"] = "ok"
            return value
        except Stopped:
            entry["status"] = "stopped"
            raise
        except Exception as error:  # noqa: BLE001 — one step's crash is reported, not fatal
            entry["status"] = f"crashed: {type(error).__name__}: {error}"
            self.say(f"!!! {name} crashed: {error!r}")
            return None
        finally:
            entry["seconds"] = round(time.monotonic() - began, 1)
            self.save()

    # -- 1. setup ------------------------------------------------------------------------------

    def setup(self) -> None:
        began = time.monotonic()
        env = self.report["environment"]
        env.update(python=platform.python_version(), executable=sys.executable,
                   machine=platform.machine(), host_cpus=os.cpu_count())
        try:
            import torch
        except Exception as error:
            env["torch"] = None
            self.report["mode"], self.report["target_device"] = "dry-run", "cpu"
            self.report["dry_run_reason"] = f"torch cannot be imported ({error})"
            raise
        env.update(torch=torch.__version__, cuda=torch.version.cuda,
                   cudnn=torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)
        from lab_run import matmul_settings

        env["matmul_settings"] = matmul_settings()
        cuda = torch.cuda.is_available()
        if cuda and not self.args.dry_run:
            props = torch.cuda.get_device_properties(0)
            from coursekit.hardware.peaks import lookup_gpu

            peak = lookup_gpu(props.name, props.total_memory)
            env.update(device_name=props.name, device_memory_bytes=props.total_memory,
                       device_capability=f"{props.major}.{props.minor}",
                       device_count=torch.cuda.device_count(),
                       known_peak=peak.name if peak else None)
            self.report.update(mode="gpu", target_device="cuda", probe_devices=["cuda"])
        else:
            why = ("--dry-run was asked for" if cuda else
                   "no CUDA device here (torch.cuda.is_available() is False)")
            self.report.update(mode="dry-run", target_device="cpu", probe_devices=["cpu", "meta"],
                               dry_run_reason=why)
        dry = self.report["mode"] == "dry-run"
        if self.args.budget is None:
            self.args.budget = DRY_RUN_BUDGET_S if dry else BUDGET_S
        if self.args.lab_budget is None:
            self.args.lab_budget = DRY_RUN_LAB_BUDGET_S if dry else LAB_BUDGET_S
        self.deadline = self.start + self.args.budget
        self.report["budget_s"], self.report["lab_budget_s"] = self.args.budget, self.args.lab_budget
        if dry:
            self.say(gpu_report.banner(self.report))
        setup = self.report["setup"]
        missing = device_env.missing_on_device()
        wheels = REPO / ".whl"
        if not missing:
            setup["detail"] = "nothing to install: every package the harness needs is here"
        elif any(wheels.glob("*.whl")):
            target = Path(tempfile.mkdtemp(prefix="coursekit-gpu-site-"))
            seconds, names = device_env.install(wheels, target)
            sys.path.insert(0, str(target))
            self.env["PYTHONPATH"] = os.pathsep.join(
                [str(target)] + [p for p in self.env.get("PYTHONPATH", "").split(os.pathsep) if p])
            setup.update(installed=names, target=str(target), install_seconds=round(seconds, 1))
            setup["detail"] = f"installed {len(names)} carried wheels from .whl/ in {seconds:.1f} s"
            still = device_env.missing_on_device()
            if still:
                setup["detail"] += f"; STILL MISSING: {', '.join(still)}"
        else:
            setup["detail"] = (f"MISSING and no .whl/ to install from: {', '.join(missing)} — run "
                               f"`make gpu-wheels` before the call and carry .whl")
        self.env["PYTHONPATH"] = os.pathsep.join(
            [p for p in self.env.get("PYTHONPATH", "").split(os.pathsep) if p] + [str(REPO)])
        setup["missing_before"] = missing
        setup["seconds"] = round(time.monotonic() - began, 1)
        self.say(f"setup: {setup['detail']} ({setup['seconds']} s)")

    # -- 2. doctor -----------------------------------------------------------------------------

    def doctor(self) -> None:
        quick = self.report["mode"] == "dry-run" or self.args.quick
        command = [sys.executable, "-m", "coursekit.cli", "doctor", "--bench", "--json",
                   "--timeout", "60"] + (["--quick"] if quick else [])
        section: dict[str, Any] = {"command": " ".join(["coursekit"] + command[3:]), "status": "running"}
        self.report["doctor"] = section
        timeout = min(self.args.doctor_timeout, max(self.left() - MIN_LAB_S, 10.0))
        began = time.monotonic()
        code, output = self._child(command, timeout, capture=True)
        section["seconds"] = round(time.monotonic() - began, 1)
        if code is None:
            section.update(status="timeout", error=f"no report within {timeout:.0f} s")
            return
        try:
            doctor = json.loads(output)
        except json.JSONDecodeError:
            section.update(status="failed", exit_code=code,
                           error=f"exit {code} without a JSON report (see gpu_check.log)")
            self.log.write(output)
            return
        bench = doctor.get("bench") or {}
        section.update(status=doctor.get("status"), exit_code=code, report=doctor,
                       peaks=bench.get("peaks"), findings=doctor.get("findings", []),
                       figures=[{k: r.get(k) for k in ("kind", "device", "dtype", "variant", "size", "value",
                                                       "unit", "peak", "peak_name", "peak_is_estimate",
                                                       "fraction_of_peak", "skipped")}
                                for r in bench.get("results", [])])
        gpus = (doctor.get("gpu") or {}).get("devices") or []
        if gpus:
            section["driver_gpus"] = [{k: g.get(k) for k in ("name", "memory_bytes", "known_peak",
                                                            "pcie_link_gen", "pcie_link_width")}
                                      for g in gpus]

    # -- 3. labs -------------------------------------------------------------------------------

    def lab(self, lab_id: str) -> None:
        budget = min(self.args.lab_budget, self.left())
        entry: dict[str, Any] = {"status": "running", "budget_s": round(budget, 1)}
        self.report["labs"][lab_id] = entry
        if budget < min(MIN_LAB_S, self.args.lab_budget):
            entry.update(status="skipped", reason=f"only {max(budget, 0):.0f} s of the run's budget left")
            return
        result_path = Path(tempfile.mkdtemp(prefix="coursekit-gpu-lab-")) / f"{lab_id}.json"
        command = [sys.executable, str(HERE / "lab_run.py"), lab_id,
                   "--device", self.report["target_device"], "--baseline", "cpu",
                   "--result", str(result_path)]
        if self.report["mode"] == "dry-run":
            command.append("--meta-probe")
        if self.args.no_repeat:
            command.append("--no-repeat")
        began = time.monotonic()

        def merge() -> None:
            if result_path.exists():
                try:
                    entry.update(json.loads(result_path.read_text()))
                except (OSError, json.JSONDecodeError):
                    pass  # being replaced right now: the next poll reads it
            entry["seconds"] = round(time.monotonic() - began, 1)

        code, _ = self._child(command, budget, on_poll=merge, merge_every=2.0)
        merge()
        entry["exit_code"] = code
        entry["status"], entry["reason"] = self._lab_verdict(entry, code, budget)
        self.say(f"{lab_id}: {entry['status']}" + (f" — {entry['reason']}" if entry["reason"] else ""))

    @staticmethod
    def _lab_verdict(entry: dict[str, Any], code: int | None, budget: float) -> tuple[str, str]:
        if entry.get("skipped"):
            return "skipped", entry["skipped"]
        phases = entry.get("phases", [])
        last = phases[-1]["name"] if phases else "start"
        if code is None and not entry.get("done"):
            return "timeout", f"stopped at its {budget:.0f} s budget, after phase '{last}'"
        crashed = [f"{p['name']} {p['status']}" for p in phases
                   if p["status"] != "ok" and p["name"] in ESSENTIAL_PHASES]
        notes = [f"{p['name']} {p['status']}" for p in phases
                 if p["status"] != "ok" and p["name"] not in ESSENTIAL_PHASES]
        notebook, checks = entry.get("notebook"), entry.get("checks")
        problems = [entry["error"]] if entry.get("error") else []
        if notebook and notebook.get("error"):
            e = notebook["error"]
            problems.append(f"notebook cell {e['cell']} raised {e['exception'].splitlines()[0][:160]}")
        if checks and not checks["passed"]:
            problems.append(f"checks {checks['score']:g}/{checks['max_score']:g}")
        problems += crashed
        if not entry.get("done"):
            problems.append(f"the child ended (exit {code}) after phase '{last}'")
        if code is None:  # every phase done, but the process was still there at the budget
            problems.append(f"it finished every phase but had not exited at its {budget:.0f} s budget")
        return ("failed" if problems else "passed"), "; ".join(problems + notes)

    # -- children ------------------------------------------------------------------------------

    def _child(self, command: list[str], timeout: float, *, capture: bool = False,
               on_poll: Any = None, merge_every: float = 2.0) -> tuple[int | None, str]:
        """Run ``command`` in its own process group; ``(exit code, stdout)``, ``None`` on timeout.

        Its output goes to the log unless ``capture``; ``on_poll`` runs every
        ``merge_every`` seconds while it runs (the partial results reach the report).
        """
        self.log.flush()
        with tempfile.TemporaryFile("w+") as captured:
            self.child = subprocess.Popen(command, cwd=REPO, env=self.env, start_new_session=True,
                                          stdout=captured if capture else self.log,
                                          stderr=self.log, stdin=subprocess.DEVNULL, text=True)
            limit = time.monotonic() + timeout
            next_merge = time.monotonic() + merge_every
            try:
                while self.child.poll() is None:
                    if time.monotonic() > limit:
                        self._stop_child()
                        return None, ""
                    time.sleep(POLL_S)
                    if on_poll is not None and time.monotonic() > next_merge:
                        on_poll()
                        self.save()
                        next_merge = time.monotonic() + merge_every
                code = self.child.returncode
            finally:
                self._stop_child()
            captured.seek(0)
            return code, captured.read()

    def _stop_child(self) -> None:
        """End the child and everything it started (its process group), gently first."""
        child, self.child = self.child, None
        if child is None or child.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
            try:
                os.killpg(child.pid, sig)
            except ProcessLookupError:
                return
            try:
                child.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    # -- the run -------------------------------------------------------------------------------

    def run(self) -> int:
        def stop(signum: int, frame: Any) -> None:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            raise Stopped(signum)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        code = 1
        try:
            self.step("setup", self.setup)
            if self.report["mode"] is None:
                raise RuntimeError("setup failed before it could tell GPU from dry run")
            if not self.args.no_doctor:
                self.step("doctor", self.doctor)
            for lab_id in self.args.labs:
                self.step(lab_id, lambda lab_id=lab_id: self.lab(lab_id))
            self.report["complete"] = True
            labs = self.report["labs"].values()
            doctor_ok = self.args.no_doctor or (self.report["doctor"] or {}).get("status") in (
                "ok", "warnings", "broken")
            code = 0 if doctor_ok and labs and all(lab["status"] == "passed" for lab in labs) else 1
        except Stopped as stopped:
            self._stop_child()
            running = next((s["name"] for s in reversed(self.report["steps"])
                            if s["status"] in ("running", "stopped")), "start")
            self.report["stopped"] = f"{stopped} during {running}"
            for lab in self.report["labs"].values():
                if lab.get("status") == "running":
                    lab.update(status="stopped", reason=f"{stopped} arrived while it ran")
            code = 128 + stopped.signum
        except Exception as error:  # noqa: BLE001 — the report is still written
            self.report["error"] = f"{type(error).__name__}: {error}"
        finally:
            self.report["finished"] = _utc()
            self.report["exit_code"] = code
            self.save()
            table = gpu_report.render(self.report)
            self.say("\n" + table)
            self.say(f"report: {self.out / 'gpu_check.json'}, table: {self.out / 'gpu_check.md'}, "
                     f"log: {self.out / 'gpu_check.log'}")
            self.log.close()
        return code


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gpu_check.py", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "build" / "gpu-check",
                        help="folder for gpu_check.json, gpu_check.md and gpu_check.log")
    parser.add_argument("--labs", type=lambda s: [x for x in s.split(",") if x], default=list(LABS_ON_GPU),
                        help=f"comma-separated labs (default: {','.join(LABS_ON_GPU)})")
    parser.add_argument("--budget", type=float, help=f"seconds for the whole run (default {BUDGET_S:.0f}; "
                                                      f"dry run {DRY_RUN_BUDGET_S:.0f})")
    parser.add_argument("--lab-budget", type=float, help=f"seconds per lab (default {LAB_BUDGET_S:.0f}; "
                                                          f"dry run {DRY_RUN_LAB_BUDGET_S:.0f})")
    parser.add_argument("--doctor-timeout", type=float, default=DOCTOR_TIMEOUT_S)
    parser.add_argument("--dry-run", action="store_true", help="a dry run even where CUDA works")
    parser.add_argument("--quick", action="store_true", help="the doctor's --quick sizes on a GPU too")
    parser.add_argument("--no-doctor", action="store_true", help="leave out step 2")
    parser.add_argument("--no-repeat", action="store_true",
                        help="run each lab's checks once on the device (no non-determinism check)")
    parser.add_argument("--download-wheels", type=Path, metavar="DIR",
                        help="only fetch the carried wheels for the device into DIR (needs PyPI)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.download_wheels:
        files = device_env.download(args.download_wheels)
        total = sum(f.stat().st_size for f in files)
        print(f"{len(files)} wheels, {total / 2**20:.1f} MiB, in {args.download_wheels}")
        return 0
    unknown = [lab for lab in args.labs if not (REPO / "solutions" / lab).is_dir()]
    if unknown:
        print(f"unknown labs: {', '.join(unknown)}", file=sys.stderr)
        return 2
    return GpuCheck(args).run()


if __name__ == "__main__":
    sys.exit(main())
