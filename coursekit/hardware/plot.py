"""``plot_bench``: benchmark results as bars, each a fraction of its device's peak.

matplotlib is imported only when a plot is drawn, so importing ``coursekit.hardware`` stays
cheap and works without it.
"""
from __future__ import annotations

from typing import Any, Iterable


def _as_dicts(results: Any) -> list[dict[str, Any]]:
    """Accept ``BenchResult`` objects, their dicts, a doctor report, or its ``bench`` section."""
    if isinstance(results, dict):
        results = (results.get("bench") or results).get("results", [])
    return [r.as_dict() if hasattr(r, "as_dict") else dict(r) for r in results]


def _short_rate(value: float, unit: str) -> str:
    if unit == "TFLOP/s":
        return f"{value:.1f} TFLOP/s" if value >= 1 else f"{value * 1000:.0f} GFLOP/s"
    return f"{value:.1f} GB/s"


def plot_bench(results: Iterable[Any] | dict[str, Any], ax: Any = None, title: str | None = None) -> Any:
    """Draw one horizontal bar per measured result, its length the fraction of peak.

    Results without a known peak are drawn as hatched stubs labelled with the absolute
    figure; skipped ones are left out. The dashed line at 1.0 is the peak.

    Args:
        results: ``run_benchmarks(...)`` output, or a doctor report / its ``bench`` dict.
        ax: a matplotlib Axes to draw on (default: a new figure).
        title: the plot title.

    Returns:
        The matplotlib Axes.
    """
    import matplotlib.pyplot as plt

    rows = [r for r in _as_dicts(results) if r.get("value") is not None]
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.45 * max(len(rows), 1) + 1.2))
    labels, widths, colours, notes, hatches = [], [], [], [], []
    palette = {"matmul": "tab:blue", "copy": "tab:green", "h2d": "tab:orange", "d2h": "tab:red"}
    for r in rows:
        test = r["kind"] + (f" {r['dtype']}" if r.get("dtype") else "") + (f" {r['variant']}" if r.get("variant") else "")
        labels.append(f"{r['device']}  {test}")
        fraction = r.get("fraction_of_peak")
        widths.append(fraction if fraction is not None else 0.02)
        hatches.append("" if fraction is not None else "//")
        colours.append(palette.get(r["kind"], "tab:gray"))
        note = _short_rate(r["value"], r["unit"])
        note += f"  ({100 * fraction:.0f} % of {r.get('peak_name') or 'peak'}{' est.' if r.get('peak_is_estimate') else ''})" \
            if fraction is not None else "  (peak unknown)"
        notes.append(note)
    positions = list(range(len(rows)))
    bars = ax.barh(positions, widths, color=colours)
    for bar, hatch in zip(bars, hatches):
        bar.set_hatch(hatch)
    for y, width, note in zip(positions, widths, notes):
        ax.text(width + 0.01, y, note, va="center", fontsize=8)
    ax.set_yticks(positions, labels)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_xlim(0, max([1.25] + [w + 0.5 for w in widths]))
    ax.set_xlabel("fraction of the device's peak")
    ax.set_title(title or "Measured throughput vs. peak")
    return ax
