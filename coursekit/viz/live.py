"""``LossCurve``: a loss plot that grows while the training loop runs.

::

    with LossCurve("two-layer net", log=True) as curve:
        for step in range(500):
            ...
            curve.add(loss.item())                 # one series, "loss"
            # curve.add(val_loss, "validation")    # or several, by name

In JupyterLab the picture is redrawn in place while the loop runs and a last time when the
``with`` block ends. Redraws are at least ``interval`` seconds apart, and further apart when
drawing is slow (four times the last drawing's time), so drawing takes at most about a fifth
of the loop's time. Where no one watches (nbval, nbgrader, a script; see
:func:`coursekit.viz.display.interactive`) it is drawn once, at the end. Either way the
notebook keeps a plain PNG (a Jupyter display that is updated, not a widget: no widget state
is needed to see it later), followed by one line per series with its first and last value.
"""
from __future__ import annotations

import time
import uuid
from typing import Any

from .display import interactive, png, show_png


class LossCurve:
    """Loss values per series, drawn live in JupyterLab and once at the end elsewhere.

    Args:
        title: the plot's title.
        log: a logarithmic y axis (losses that fall by orders of magnitude).
        xlabel, ylabel: the axes' labels.
        styles: matplotlib line options per series name (``{"yours": {"ls": "--"}}``).
        interval: least seconds between two redraws while the loop runs.
        live: redraw while the loop runs; default: whether a person is watching.
        summary: print each series' first and last value under the final picture (off
            when the cell prints its own).

    Attributes:
        series: the values added, ``{name: [float, ...]}`` in the order of their first value.
    """

    def __init__(self, title: str = "", *, log: bool = False, xlabel: str = "step",
                 ylabel: str = "loss", styles: dict[str, dict[str, Any]] | None = None,
                 interval: float = 0.5, live: bool | None = None,
                 summary: bool = True) -> None:
        self.title, self.log, self.xlabel, self.ylabel = title, log, xlabel, ylabel
        self.styles = dict(styles or {})
        self.interval, self.print_summary = interval, summary
        self.live = interactive() if live is None else live
        self.series: dict[str, list[float]] = {}
        self._display_id = f"coursekit-loss-{uuid.uuid4().hex}"
        self._shown = False
        self._next_draw = 0.0  # time.monotonic() from which the next redraw may happen

    def add(self, value: Any, series: str = "loss") -> None:
        """Append one value (a number, or a one-element tensor) to ``series``."""
        value = float(value.item() if hasattr(value, "item") else value)
        self.series.setdefault(series, []).append(value)
        if self.live and time.monotonic() >= self._next_draw:
            self.show()

    def extend(self, values: Any, series: str = "loss") -> None:
        """Append several values to ``series`` (one redraw at most)."""
        for value in values:
            self.series.setdefault(series, []).append(
                float(value.item() if hasattr(value, "item") else value))
        if self.live and time.monotonic() >= self._next_draw:
            self.show()

    def figure(self) -> Any:
        """The plot of every series so far, as a matplotlib Figure."""
        from matplotlib.figure import Figure

        figure = Figure(figsize=(7, 3.5))
        ax = figure.add_subplot()
        for name, values in self.series.items():
            ax.plot(range(len(values)), values, label=name, **self.styles.get(name, {}))
        if self.log:
            ax.set_yscale("log")
        steps = max((len(v) for v in self.series.values()), default=0)
        ax.set(xlabel=self.xlabel, ylabel=self.ylabel + (" (log scale)" if self.log else ""),
               title=f"{self.title}{': ' if self.title else ''}{steps} steps")
        if len(self.series) > 1:
            ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        return figure

    def show(self) -> None:
        """Draw now: the first time as a new output, later by replacing it."""
        if not self.series:
            return
        start = time.monotonic()
        show_png(png(self.figure()), display_id=self._display_id, update=self._shown)
        self._shown = True
        now = time.monotonic()
        self._next_draw = now + max(self.interval, 4 * (now - start))

    def summary(self) -> str:
        """One line per series: its first and last value and how many there are."""
        width = max((len(name) for name in self.series), default=0)
        return "\n".join(f"{name:<{width}}  {values[0]:.4g} -> {values[-1]:.4g} "
                         f"({len(values)} values)" for name, values in self.series.items())

    def close(self) -> None:
        """The final picture, then the summary (what a batch run keeps)."""
        if self.series:
            self.show()
            if self.print_summary:
                print(self.summary())

    def __enter__(self) -> LossCurve:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        # Also after an error in the loop: what was trained so far is still worth seeing.
        self.close()
