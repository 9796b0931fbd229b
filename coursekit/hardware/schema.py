"""The JSON schema of ``coursekit doctor --json`` (the field-by-field prose is in ``doctor.py``).

``SCHEMA_VERSION`` changes only when a field is removed, renamed or changes type; new
optional fields keep the version. Consumers should check it before reading the rest.
"""
from __future__ import annotations

import functools
from typing import Any

SCHEMA_VERSION = 1

_STR = {"type": "string"}
_STR_OR_NULL = {"type": ["string", "null"]}
_INT_OR_NULL = {"type": ["integer", "null"]}
_NUM_OR_NULL = {"type": ["number", "null"]}
_NONNEG = {"type": "number", "minimum": 0}


def _object(properties: dict[str, Any], *, required: list[str] | None = None, extra: bool = True) -> dict[str, Any]:
    return {"type": "object", "properties": properties,
            "required": list(properties) if required is None else required,
            "additionalProperties": extra}


_TINY_OP = _object({"ok": {"type": "boolean"}, "seconds": _NUM_OR_NULL, "error": _STR_OR_NULL})

_FRAMEWORK_DEVICE = _object({
    "name": _STR,
    "kind": {"enum": ["cpu", "gpu", "mps", "tpu", "other"]},
    "description": _STR_OR_NULL,
    "memory_bytes": _INT_OR_NULL,
    "tiny_op": _TINY_OP,
})

_FRAMEWORK = _object({
    "status": {"enum": ["ok", "missing", "broken", "timeout"]},
    "version": _STR_OR_NULL,
    "reason": _STR_OR_NULL,
    "seconds": _NONNEG,
    "devices": {"type": "array", "items": _FRAMEWORK_DEVICE},
    "details": {"type": "object"},
    "warnings": {"type": "array", "items": _STR},
})

_BLAS = {"oneOf": [{"type": "null"}, _object({
    "name": _STR_OR_NULL, "version": _STR_OR_NULL, "threads": _INT_OR_NULL, "detail": _STR_OR_NULL,
})]}

_PACKAGE = _object({"version": _STR_OR_NULL, "distribution": _STR_OR_NULL,
                    "required": {"type": "boolean"}, "purpose": _STR})

_GPU_DEVICE = _object({
    "index": {"type": "integer"},
    "name": _STR,
    "uuid": _STR_OR_NULL,
    "pci_bus_id": _STR_OR_NULL,
    "memory_bytes": _INT_OR_NULL,
    "compute_capability": _STR_OR_NULL,
    "pcie_link_gen": _INT_OR_NULL,
    "pcie_link_width": _INT_OR_NULL,
    "pcie_peak_gbps": _NUM_OR_NULL,
    "known_peak": _STR_OR_NULL,
})

_FINDING = _object({
    "level": {"enum": ["error", "warning", "info"]},
    "code": _STR,
    "message": _STR,
    "fix": _STR,
}, extra=False)

_PEAK = _object({
    "name": _STR,
    "tflops": {"type": "object", "additionalProperties": _NONNEG},
    "memory_gbps": _NUM_OR_NULL,
    "source": _STR,
    "estimate": {"type": "boolean"},
})

_BENCH_RESULT = _object({
    "kind": {"enum": ["matmul", "copy", "h2d", "d2h"]},
    "device": _STR,
    "dtype": {"enum": ["fp32", "tf32", "bf16", "fp16", None]},
    "variant": {"enum": ["pageable", "pinned", None]},
    "size": {"type": "integer", "minimum": 0},
    "work_per_call": _NONNEG,
    "value": {"type": ["number", "null"], "exclusiveMinimum": 0},
    "unit": {"enum": ["TFLOP/s", "GB/s"]},
    "peak": {"type": ["number", "null"], "exclusiveMinimum": 0},
    "peak_name": _STR_OR_NULL,
    "peak_is_estimate": {"type": "boolean"},
    "fraction_of_peak": {"type": ["number", "null"], "exclusiveMinimum": 0},
    "timing": {"oneOf": [{"type": "null"}, _object({
        "median_s": {"type": "number", "exclusiveMinimum": 0},
        "spread": _NONNEG,
        "repeats": {"type": "integer", "minimum": 1},
        "inner": {"type": "integer", "minimum": 1},
        "method": {"enum": ["cuda-events", "synchronize+perf_counter", "perf_counter"]},
    })]},
    "threads": _INT_OR_NULL,
    "skipped": _STR_OR_NULL,
})

_BENCH = _object({
    "quick": {"type": "boolean"},
    "devices": {"type": "array", "items": _STR},
    "seconds": _NONNEG,
    "peaks": {"type": "object", "additionalProperties": {"oneOf": [{"type": "null"}, _PEAK]}},
    "results": {"type": "array", "items": _BENCH_RESULT},
})

REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "coursekit doctor report",
    **_object({
        "schema_version": {"const": SCHEMA_VERSION},
        "tool": _object({"name": {"const": "coursekit doctor"}, "version": _STR_OR_NULL}),
        "created": {"type": "string", "format": "date-time"},
        "status": {"enum": ["ok", "warnings", "broken"]},
        "exit_code": {"type": "integer", "minimum": 0},
        "seconds": _NONNEG,
        "machine": _object({
            "python": _object({"version": _STR, "implementation": _STR, "executable": _STR}),
            "os": _object({"system": _STR, "release": _STR, "platform": _STR}),
            "cpu": _object({
                "model": _STR_OR_NULL,
                "vendor": _STR_OR_NULL,
                "architecture": _STR,
                "physical_cores": _INT_OR_NULL,
                "logical_cores": _INT_OR_NULL,
                "usable_cores": {"type": "integer", "minimum": 1},
                "clock_ghz": _NUM_OR_NULL,
                "clock_source": _STR_OR_NULL,
                "isa": {"type": "array", "items": _STR},
                "last_level_cache_bytes": _INT_OR_NULL,
            }),
            "memory": _object({"total_bytes": _INT_OR_NULL, "available_bytes": _INT_OR_NULL}),
        }),
        "env": {"type": "object", "additionalProperties": _STR},
        "packages": {
            "type": "object",
            "required": ["numpy", "torch", "tensorflow", "jax", "nbgrader", "jupyterlab", "ipywidgets"],
            "additionalProperties": _PACKAGE,
        },
        "jupyter": _object({
            "labextensions": {"type": "object", "additionalProperties": _object({
                "installed": {"type": "boolean"}, "enabled": {"type": "boolean"}, "path": _STR_OR_NULL})},
            "server_extensions": {"type": "object", "additionalProperties": {"type": "boolean"}},
        }),
        "blas": _object({"numpy": _BLAS, "torch": _BLAS}),
        "frameworks": {
            "type": "object",
            "properties": {name: _FRAMEWORK for name in ("numpy", "torch", "tensorflow", "jax")},
            "required": ["numpy", "torch", "tensorflow", "jax"],
            "additionalProperties": _FRAMEWORK,
        },
        "gpu": _object({
            "driver_present": {"type": "boolean"},
            "driver_version": _STR_OR_NULL,
            "cuda_driver_version": _STR_OR_NULL,
            "nvidia_smi": _STR_OR_NULL,
            "devices": {"type": "array", "items": _GPU_DEVICE},
            "error": _STR_OR_NULL,
        }),
        "grading": _object({"monitor_compiled": {"type": "boolean"}}),
        "findings": {"type": "array", "items": _FINDING},
        "bench": {"oneOf": [{"type": "null"}, _BENCH]},
    }),
}


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    cls = jsonschema.validators.validator_for(REPORT_SCHEMA)
    cls.check_schema(REPORT_SCHEMA)
    return cls(REPORT_SCHEMA, format_checker=cls.FORMAT_CHECKER)


def validate(report: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` if ``report`` does not match ``REPORT_SCHEMA``.

    Needs the ``jsonschema`` package (a test-time dependency).
    """
    _validator().validate(report)
