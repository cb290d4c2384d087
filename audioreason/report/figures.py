"""The report's figures, drawn with matplotlib (Agg backend) as inline SVG, each with a caption naming the
models, backbones, judge and reasoning modes behind it.

Every figure reads the scorers' own numbers (``Entry.result``) through ``scale.fraction``; the only values
computed here are read-outs of per-chain outcomes the scorer reports (the chain ladder: the share of chains
whose first k links are correct, whose mean over k = 1..3 is the Chain score of Eq. 3) and the uniform
guesser's rungs (prod_j 1/n_j, the terms of the random Chain of AudioSpan App. B.3).

Readable at their rendered size: every axis on the one 0-1 scale; long set names on a horizontal bar's axis or
in a legend below the axes (never repeated under each bar); a figure grows with its bars (``_slot``); an n/a
is a labelled mark ("n/a" at the bar's foot), never a 0 bar. Error bars are the 95% interval each value
carries in its result (``D["uncertainty"][F]["ci95"]``, ``interval``); a value without one has none. The
drawn intervals are read back from the artists into ``Figure.intervals`` (what the tests check).
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.scorers.registry import ACCURACY, DECLARATIONS

from .load import Entry, Results, unique
from .scale import display, fraction, judged, number, unavailable

LINKS = ("P", "U", "R")
DECOMPOSITION = ("TS", "FS", "XS", "AH", "UN")
DECOMPOSITION_NAMES = {
    "TS": "text-sufficient",
    "FS": "fragment-sufficient",
    "XS": "cross-fragment",
    "AH": "audio-hurt",
    "UN": "unsolved",
}
MODE_COLOURS = {"Reasoning": "#2ca02c", "Decoration": "#d62728", "Scaffolding": "#ff7f0e", None: "#7f7f7f"}


@dataclass
class Figure:
    key: str
    title: str
    svg: str
    caption: list[str] = field(default_factory=list)  # provenance: models, backbones, judge, modes, notes
    data: dict[str, Any] = field(default_factory=dict)  # what the bars show, 0-1; None: n/a (no bar)
    # the error bars drawn, read from the artists: {"axes": title, "from": [x, y], "to": [x, y]} in data units
    intervals: list[dict[str, Any]] = field(default_factory=list)


CI_LABEL = "_ci95"  # the label of an error bar's line collection (an underscore keeps it out of legends)
INTERVAL_NOTE = (
    "error bars: the 95% interval each value carries in its result (uncertainty.ci95; its method and "
    "resamples are in results.json); a value without one has none"
)
NA_FONT = 6  # an n/a mark's size; _slot leaves each bar at least this much room


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    # Stable element ids (the same data, the same file); every text (labels, titles, ticks, legends) as plain
    # text: a model named "gpt$\\frac{$x" is a name, not mathtext to parse.
    plt.rcParams.update(
        {
            "svg.fonttype": "none",
            "font.size": 9,
            "axes.titlesize": 10,
            "figure.dpi": 100,
            "svg.hashsalt": "audioreason",
            "text.parse_math": False,
        }
    )
    return plt


def _figure(width: float, height: float, rows: int = 1, cols: int = 1, **kw: Any) -> tuple[Any, Any]:
    """A figure laid out by matplotlib's constrained layout (labels, legends and titles never clipped)."""
    fig, axes = _pyplot().subplots(rows, cols, figsize=(width, height), layout="constrained", squeeze=False, **kw)
    flat = [ax for row in axes for ax in row]
    return fig, (flat[0] if len(flat) == 1 else flat)


def _drawn_intervals(fig: Any) -> list[dict[str, Any]]:
    out = []
    for ax in fig.axes:
        for collection in ax.collections:
            if collection.get_label() == CI_LABEL:
                out += [
                    {
                        "axes": ax.get_title() or ax.get_ylabel(),
                        "from": [float(v) for v in seg[0]],
                        "to": [float(v) for v in seg[-1]],
                    }
                    for seg in collection.get_segments()
                ]
    return out


def _svg(fig: Any) -> tuple[str, list[dict[str, Any]]]:
    """The SVG of ``fig`` and the error bars drawn on it."""
    intervals = _drawn_intervals(fig)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: the SVG sits inline in HTML
    return re.sub(r"<metadata>.*?</metadata>\s*", "", text, count=1, flags=re.S), intervals


def _made(key: str, title: str, fig: Any, caption: list[str], data: Optional[dict[str, Any]] = None) -> Figure:
    svg, intervals = _svg(fig)
    return Figure(key, title, svg, caption + ([INTERVAL_NOTE] if intervals else []), data or {}, intervals)


def interval(values: Any, name: str) -> Optional[tuple[float, float]]:
    """The 95% interval ``values["uncertainty"][name]["ci95"]`` (0-1), or None where there is none (no
    uncertainty recorded, or ``unavailable``); a malformed one is an error naming the field."""
    block = values.get("uncertainty") if isinstance(values, Mapping) else None
    entry = block.get(name) if isinstance(block, Mapping) else None
    ci = entry.get("ci95") if isinstance(entry, Mapping) else None
    if ci is None:
        return None
    if not (isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in map(number, ci) and ci[0] <= ci[1]):
        raise ValueError(f"uncertainty.{name}.ci95 is {ci!r}, not [low, high] with low <= high")
    return float(ci[0]), float(ci[1])


def _errorbars(
    ax: Any,
    xs: Sequence[float],
    values: Sequence[Optional[float]],
    cis: Sequence[Optional[tuple[float, float]]],
    horizontal: bool = False,
    **style: Any,
) -> None:
    """An error bar from low to high at each x whose value and interval are known (none for an n/a)."""
    shown = [(x, ci) for x, v, ci in zip(xs, values, cis) if v is not None and ci is not None]
    if not shown:
        return
    at = [x for x, _ in shown]
    mid, half = [(lo + hi) / 2 for _, (lo, hi) in shown], [(hi - lo) / 2 for _, (lo, hi) in shown]
    style = {"ecolor": "#222222", "elinewidth": 0.9, "capsize": 2, **style}
    drawn = (
        ax.errorbar(mid, at, xerr=half, fmt="none", **style)
        if horizontal
        else ax.errorbar(at, mid, yerr=half, fmt="none", **style)
    )
    for collection in drawn.lines[2]:
        collection.set_label(CI_LABEL)


def _slot(n_sets: int) -> float:
    """Inches per group of ``n_sets`` side-by-side bars: each bar wide enough for its n/a mark."""
    return max(0.9, 0.13 * n_sets)


def _bars(
    ax: Any,
    xs: Sequence[float],
    shares: Sequence[Optional[float]],
    width: float = 0.8,
    cis: Optional[Sequence[Optional[tuple[float, float]]]] = None,
    **style: Any,
) -> list[Optional[float]]:
    """Bars of ``shares`` (fractions) at ``xs`` with their intervals; a missing one draws no bar and "n/a" at
    its foot, never a 0 bar. Returns the heights (None: n/a), for ``Figure.data``."""
    ax.bar(xs, [math.nan if v is None else v for v in shares], width, **style)
    for x, v in zip(xs, shares):
        if v is None:
            ax.text(x, 0.01, "n/a", ha="center", va="bottom", rotation=90, fontsize=NA_FONT, color="#555555")
    _errorbars(ax, xs, shares, cis or [None] * len(xs))
    return list(shares)


def _legend(fig: Any, handles: Sequence[Any], labels: Sequence[str], width: float, fontsize: float = 7) -> None:
    """One legend below the axes, in as many columns as its longest label lets fit the figure's width."""
    if not handles:
        return
    column = 0.55 * fontsize * max(map(len, labels)) / 72 + 0.45  # inches: the text and its handle
    ncol = max(1, min(len(labels), int(width // column)))
    fig.set_figheight(fig.get_figheight() + 1.25 * fontsize / 72 * math.ceil(len(labels) / ncol))  # room for it
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=fontsize, frameon=False)


def _axes_legend(fig: Any, axes: Sequence[Any], width: float, fontsize: float = 7) -> None:
    """The legend of every axes' labelled artists, each label once, below them."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    _legend(fig, list(seen.values()), list(seen), width, fontsize)


def _wrap(label: str, width: int = 56) -> str:
    return "\n".join(textwrap.wrap(label, width, break_on_hyphens=False)) or label


def _colours(n: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]  # one colour per set up to 20
    return [cmap(i % cmap.N) for i in range(n)]


# ---------------------------------------------------------------------------------------------
# Provenance
# ---------------------------------------------------------------------------------------------


def _judge(entry: Entry) -> Optional[str]:
    judges = entry.result.get("judges")
    if judges:
        raters = entry.result.get("raters")
        from ..judges.base import offline_judge_label

        label = offline_judge_label(entry.result)
        return (
            f"{', '.join(map(str, judges))}"
            + (f", {raters} rater(s)" if raters else "")
            + (f" {label}" if label else "")
        )
    judge = (entry.options.get("judge") or {}) if isinstance(entry.options.get("judge"), dict) else {}
    return judge.get("model") or judge.get("judge")


def provenance(entries: Sequence[Entry]) -> list[str]:
    """Caption lines: the models (sets) shown and, per scorer, what produced the numbers."""
    lines = [f"{e.scorer}: {e.label} (from {e.source})" for e in entries]
    for e in entries:
        backbones = e.result.get("backbones")
        if isinstance(backbones, dict) and backbones:
            lines.append(f"backbones of {e.label}: " + "; ".join(f"{k}: {v}" for k, v in backbones.items()))
        if e.scorer == "aria":
            mode = e.result.get("reasoning_mode") or "none assigned"
            lines.append(f"reasoning mode of {e.label}: {mode} (rule {e.result.get('reasoning_mode_rule', 'paper')})")
        judge = _judge(e) if e.scorer in ("mmar_rubrics", "audiospan_rubric") else None
        if judge:
            lines.append(f"judge of {e.label}: {judge}")
        if e.scorer == "accuracy" and e.result.get("rule_description"):
            lines.append(f"answer rule of {e.label}: {e.result['rule_description']}")
        if e.scorer == "anchor_chain" and e.result.get("parse"):
            lines.append(f"answer parsing of {e.label}: {e.result['parse']}")
    return list(dict.fromkeys(lines))


# ---------------------------------------------------------------------------------------------
# ARIA: radar and ARIA vs accuracy with the reasoning-mode regions
# ---------------------------------------------------------------------------------------------


def aria_radar(entries: Sequence[Entry]) -> Optional[Figure]:
    """M1-M6 per set on one radar, each vertex with its interval (a radial bar); an unavailable metric
    leaves a gap (never a 0)."""
    from audioreason.scorers.aria.formulas import METRIC_NAMES, METRICS

    if not entries:
        return None
    angles = [2 * math.pi * i / len(METRICS) for i in range(len(METRICS))]
    width = 6.4
    fig, ax = _figure(width, 5.0, subplot_kw={"projection": "polar"})
    missing = []
    for e, colour in zip(entries, _colours(len(entries))):
        values = [fraction(e.result.get(m), "aria", m, e.result) for m in METRICS]
        missing += [f"{m} of {e.label}" for m, v in zip(METRICS, values) if v is None]
        ys = [math.nan if v is None else v for v in values]
        ax.plot(
            angles + angles[:1],
            ys + ys[:1],
            marker="o",
            ms=3,
            color=colour,
            label=f"{e.label}: {e.result.get('reasoning_mode') or 'no mode'}",
        )
        _errorbars(ax, angles, values, [interval(e.result, m) for m in METRICS], ecolor=colour, capsize=0)
    ax.set_xticks(angles)
    ax.set_xticklabels([f"{m}\n{METRIC_NAMES[m]}" for m in METRICS], fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_rlabel_position(90 / len(METRICS))  # radius labels between the first two spokes, clear of the names
    ax.tick_params(axis="y", labelsize=6)
    _axes_legend(fig, [ax], width)
    caption = provenance(entries)
    if missing:
        caption.append("unavailable (gap in the polygon, not 0): " + ", ".join(missing))
    return _made("aria_radar", "ARIA-Rubrics profile M1-M6 per model (ARIA-Rubrics §3.3)", fig, caption)


def mode_regions(rule: str) -> list[tuple[str, tuple[float, float], tuple[float, float]]]:
    """(mode, (accuracy from, to), (ARIA from, to)) rectangles of a reasoning-mode rule at its default
    thresholds (``audioreason.scorers.aria.formulas``). Under the paper's rule the low-accuracy half has no mode of
    its own: Scaffolding is read from M2-M5 (high M3 with low M2, M4, M5), not from this plane."""
    from audioreason.scorers.aria.formulas import FittedThresholds, ProfileThresholds

    if rule == "fitted":
        t = FittedThresholds()
        return [
            ("Reasoning", (t.accuracy, 1), (t.aria_reasoning, 1)),
            ("Decoration", (t.accuracy, 1), (0, t.aria_reasoning)),
            ("Scaffolding", (0, t.accuracy), (t.aria_scaffolding, 1)),
            ("Decoration", (0, t.accuracy), (0, t.aria_scaffolding)),
        ]
    t = ProfileThresholds()
    return [
        ("Reasoning", (t.accuracy, 1), (t.aria, 1)),
        ("Decoration", (t.accuracy, 1), (0, t.aria)),
        (None, (0, t.accuracy), (0, 1)),
    ]


def _default_mode(result: dict[str, Any]) -> Optional[str]:
    """The mode the recorded rule gives at its default thresholds (None when the profile is incomplete)."""
    from audioreason.scorers.aria.formulas import reasoning_mode

    profile = {k: number(result.get(k)) for k in ("M2", "M3", "M4", "M5", "aria", "accuracy")}
    if any(v is None for v in profile.values()) or not result.get("aria_complete", True):
        return None
    return reasoning_mode(profile, result.get("reasoning_mode_rule", "paper"))


def aria_vs_accuracy(entries: Sequence[Entry]) -> Optional[Figure]:
    """Each set at (accuracy, ARIA) with both intervals, over the mode regions of its rule; a hollow marker is
    an ARIA that averages fewer than six metrics (not comparable, no mode)."""
    placed = [
        e for e in entries if number(e.result.get("aria")) is not None and number(e.result.get("accuracy")) is not None
    ]
    if not placed:
        return None
    plt = _pyplot()
    rules = unique(e.result.get("reasoning_mode_rule", "paper") for e in placed)
    width = 6.4
    fig, ax = _figure(width, 5.0)
    for mode, (x0, x1), (y0, y1) in mode_regions(rules[0]):
        ax.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, color=MODE_COLOURS[mode], alpha=0.12, lw=0))
        ax.text(
            (x0 + x1) / 2,
            y1 - 0.02,
            mode or "Scaffolding (by M2-M5)\nor no mode",
            ha="center",
            va="top",
            fontsize=7,
            color=MODE_COLOURS[mode],
        )
    caption = provenance(placed)
    for e, colour in zip(placed, _colours(len(placed))):
        x, y = fraction(e.result["accuracy"], "aria", "accuracy", e.result), number(e.result["aria"])
        complete = bool(e.result.get("aria_complete", len(e.result.get("aria_metrics") or []) == 6))
        ax.scatter(
            [x],
            [y],
            s=40,
            color=colour,
            facecolors=colour if complete else "none",
            zorder=3,
            label=f"{e.label}: {e.result.get('reasoning_mode') or 'no mode'}",
        )
        _errorbars(ax, [x], [y], [interval(e.result, "aria")], ecolor=colour)
        _errorbars(ax, [y], [x], [interval(e.result, "accuracy")], horizontal=True, ecolor=colour)
        if not complete:
            caption.append(
                f"{e.label}: ARIA averages {'+'.join(e.result.get('aria_metrics') or [])} only (hollow "
                "marker): not comparable with the six-metric ARIA; no mode"
            )
        elif _default_mode(e.result) != e.result.get("reasoning_mode"):
            caption.append(f"{e.label}: its recorded mode differs from the default thresholds' (custom thresholds)")
    # a margin around [0, 1]: a point at 0 or 1 (and its marker) is drawn whole
    ax.set(
        xlim=(-0.04, 1.04), ylim=(-0.04, 1.04), xlabel="accuracy (ARIA App. E answer)", ylabel="ARIA (mean of M1-M6)"
    )
    _axes_legend(fig, [ax], width)
    caption.append(
        f"regions: rule {rules[0]!r} at its default thresholds (ARIA-Rubrics §3.4)"
        + (f"; other rules present: {rules[1:]}" if len(rules) > 1 else "")
    )
    return _made("aria_modes", "ARIA vs accuracy with the reasoning-mode regions (ARIA-Rubrics §3.4)", fig, caption)


# ---------------------------------------------------------------------------------------------
# Accuracy
# ---------------------------------------------------------------------------------------------


def accuracy_bars(entries: Sequence[Entry]) -> Optional[Figure]:
    """One horizontal bar per set (its full name on the axis, wrapped): the correct share with its interval,
    then the unanswered share; a missing accuracy is "n/a", no bar."""
    if not entries:
        return None
    names = [f"{e.label} ({e.result['rule']})" if e.result.get("rule") else e.label for e in entries]
    labels = [_wrap(n) for n in names]
    correct = [fraction(e.result.get("accuracy"), "accuracy", "accuracy", e.result) for e in entries]
    unanswered = [(e.result.get("unanswered") or 0) / e.result["n"] if e.result.get("n") else None for e in entries]
    lines = sum(max(1, label.count("\n") + 1) for label in labels)
    width = 7.6
    fig, ax = _figure(width, 0.16 * lines + 0.12 * len(entries) + 1.2)
    ys = list(range(len(entries)))
    # A missing accuracy or count is a gap (no bar, "n/a"), never a 0 bar.
    ax.barh(ys, [math.nan if v is None else v for v in correct], 0.7, color="#1f77b4", label="correct")
    ax.barh(
        ys,
        [math.nan if u is None or v is None else u for v, u in zip(correct, unanswered)],
        0.7,
        left=[math.nan if v is None else v for v in correct],
        color="#c7c7c7",
        label="unanswered (no choice extracted)",
    )
    for y, v in zip(ys, correct):
        if v is None:
            ax.text(0.01, y, "n/a", va="center", fontsize=7, color="#555555")
    _errorbars(ax, ys, correct, [interval(e.result, "accuracy") for e in entries], horizontal=True)
    ax.set_yticks(ys, labels, fontsize=7)
    ax.invert_yaxis()  # the first set on top, as in the table
    ax.set(xlabel="share of items (0-1)", xlim=(0, 1))
    _axes_legend(fig, [ax], width)
    caption = provenance(entries)
    caption += [f"{e.label}: accuracy not available" for e, v in zip(entries, correct) if v is None]
    return _made(
        "accuracy", "Accuracy and unanswered share per set", fig, caption, {"correct": dict(zip(names, correct))}
    )


# ---------------------------------------------------------------------------------------------
# Text prior: retention curves and the item decomposition
# ---------------------------------------------------------------------------------------------


def _per_model(entries: Sequence[Entry], table: str) -> list[tuple[Entry, str, dict[str, Any]]]:
    rows = []
    for e in entries:
        for model, values in ((e.result.get(table) or {}).get("per_model") or {}).items():
            rows.append((e, model, values))
    return rows


def retention_curves(entries: Sequence[Entry]) -> Optional[Figure]:
    """R_N (the share of Full accuracy kept with 1/N of the audio) against N per model, with intervals ("All
    That Glitters Is Not Audio" §2.2, Figure 2)."""
    rows = _per_model(entries, "retention")
    if not rows:
        return None
    width = 6.4
    fig, ax = _figure(width, 4.0)
    caption, drawn = provenance(entries), 0
    for (e, model, per_n), colour in zip(rows, _colours(len(rows))):
        points = sorted(
            (int(n), fraction(v.get("R_N"), e.scorer, "R_N", e.result), interval(v, "R_N"))
            for n, v in per_n.items()
            if isinstance(v, dict)
        )
        shown = [(n, r) for n, r, _ in points if r is not None]
        caption += [
            f"{model}: R_{n} undefined ({per_n[str(n)].get('reason') or 'no value'})" for n, r, _ in points if r is None
        ]
        if shown:
            drawn += 1
            ax.plot(
                *zip(*shown), marker="o", ms=3, color=colour, label=f"{model} [{e.template}]" if e.template else model
            )
            _errorbars(
                ax, [n for n, _, _ in points], [r for _, r, _ in points], [ci for _, _, ci in points], ecolor=colour
            )
    if not drawn:
        return None
    ax.axhline(1, color="grey", lw=0.8, ls=":")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set(xlabel="N (fragments; each holds 1/N of the audio)", ylabel="R_N (share of Full accuracy kept)")
    _axes_legend(fig, [ax], width)
    return _made("retention", "Retention curves R_N (All That Glitters Is Not Audio, §2.2)", fig, caption)


def decomposition_bars(entries: Sequence[Entry]) -> Optional[Figure]:
    """TS/FS/XS/AH/UN shares of the items per model (All That Glitters Is Not Audio, Table 1)."""
    rows = [(e, m, v) for e, m, v in _per_model(entries, "decomposition") if v.get("n_items")]
    if not rows:
        return None
    labels = [_wrap(f"{m} [{e.template}]" if e.template else m) for e, m, _ in rows]
    width = 7.6
    fig, ax = _figure(width, 0.16 * sum(label.count("\n") + 1 for label in labels) + 0.12 * len(rows) + 1.4)
    left = [0.0] * len(rows)
    for label, colour in zip(DECOMPOSITION, _colours(len(DECOMPOSITION))):
        shares = [v["counts"].get(label, 0) / v["n_items"] for _, _, v in rows]
        ax.barh(range(len(rows)), shares, left=left, color=colour, label=f"{label} ({DECOMPOSITION_NAMES[label]})")
        left = [a + b for a, b in zip(left, shares)]
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set(xlabel="share of the items scored under Full and None (0-1)", xlim=(0, 1))
    _axes_legend(fig, [ax], width)
    caption = provenance(entries)
    caption += [
        f"{m}: {v['XS_unverified']} XS item(s) rest on errored or missing fragments (XS/AN bounds "
        f"{v.get('XS_over_AN_bounds')})"
        for _, m, v in rows
        if v.get("XS_unverified")
    ]
    return _made(
        "decomposition", "Item decomposition TS/FS/XS/AH/UN (All That Glitters Is Not Audio, Table 1)", fig, caption
    )


# ---------------------------------------------------------------------------------------------
# AudioSpan: chain ladder and per-link bars; rubric histogram, semantic vs temporal, rubric by tier
# ---------------------------------------------------------------------------------------------


def chain_ladder(chains: Sequence[dict[str, Any]]) -> list[Optional[float]]:
    """Share of chains whose first k links are correct, k = 1, 2, 3 (their mean is Eq. 3's Chain)."""
    links = [c["links"] for c in chains if isinstance(c, dict) and len(c.get("links") or []) == 3]
    if not links:
        return [None, None, None]
    return [sum(all(chain[:k]) for chain in links) / len(links) for k in (1, 2, 3)]


def uniform_options(random_chain: Any) -> Optional[int]:
    """The option count n with random Chain (1/n + 1/n^2 + 1/n^3) / 3 equal to ``random_chain`` (every link
    with n options), or None when no n from 2 to 26 gives it (mixed option counts)."""
    from audioreason.scorers.anchor_chain.formulas import random_chain_expectation

    value = number(random_chain)
    if value is None:
        return None
    return next(
        (n for n in range(2, 27) if math.isclose(random_chain_expectation([n] * 3), value, abs_tol=1e-12)), None
    )


def anchor_chain_figure(entries: Sequence[Entry]) -> Optional[Figure]:
    """(a) the chain ladder per set beside the uniform guesser's; (b) per-link accuracy with its interval and
    1/n."""
    rows = [e for e in entries if isinstance(e.result.get("chain"), dict)]
    if not rows:
        return None
    width = max(8.4, 2 * 3 * _slot(len(rows)) + 1.2)
    fig, (ladder, links) = _figure(width, 3.6, 1, 2)
    bar = 0.8 / len(rows)
    caption = provenance(rows)
    guess = uniform_options(rows[0].result["chain"].get("random_chain"))
    for i, (e, colour) in enumerate(zip(rows, _colours(len(rows)))):
        chain = e.result["chain"]
        rungs = chain_ladder(chain.get("chains") or [])
        xs = [k + (i - (len(rows) - 1) / 2) * bar for k in range(3)]
        if None not in rungs:  # no per-chain outcomes: no bars (an empty rung is not a 0)
            ladder.bar(xs, rungs, bar, color=colour)
        per_link = [fraction(chain.get(name), "anchor_chain", name, chain) for name in LINKS]
        _bars(
            links,
            xs,
            per_link,
            bar,
            [interval(chain, name) for name in LINKS],
            color=colour,
            label=f"{e.label}: Chain {display(chain.get('chain'), 'anchor_chain', 'chain', chain)}",
        )
        if None in rungs:
            caption.append(f"{e.label}: the result lists no per-chain outcomes; ladder not drawn")
        caption.append(
            f"{e.label}: {chain.get('n')} chains, {chain.get('unparsed')} unparsed replies, "
            f"{e.result.get('chains_incomplete', 0)} incomplete chains left out"
        )
    if guess:
        ladder.plot(
            range(3),
            [1 / guess**k for k in (1, 2, 3)],
            "k--",
            marker="x",
            label=f"uniform guess ({guess} options): Chain "
            f"{display(rows[0].result['chain']['random_chain'], 'anchor_chain', 'random_chain')}",
        )
        links.axhline(1 / guess, color="k", ls="--", lw=1, label=f"random 1/{guess}")
    else:
        caption.append("random baseline: option counts differ across links; see random_chain in the table")
    ladder.set_xticks(range(3), ["P", "P and U", "P, U and R"])
    ladder.set(ylabel="share of chains, first k links correct", ylim=(0, 1), title="chain ladder (Eq. 3)")
    links.set_xticks(range(3), ["P\n(perception)", "U\n(understanding)", "R\n(reasoning)"])
    links.set(ylabel="accuracy (0-1)", ylim=(0, 1), title="per-link accuracy")
    _axes_legend(fig, [links, ladder], width)
    return _made(
        "anchor_chain",
        "Anchor Chain ladder and per-link accuracy with the random baseline (AudioSpan Eq. 3, App. B.3)",
        fig,
        caption,
    )


def rubric_figure(entries: Sequence[Entry]) -> Optional[Figure]:
    """(a) ten-bin histogram of item Rubric; (b) semantic vs temporal (Eq. 4) overall and by importance;
    (c) Rubric by duration tier; (b) and (c) with their intervals."""
    rows = [e for e in entries if e.result.get("histogram") is not None or number(e.result.get("rubric")) is not None]
    if not rows:
        return None
    groups = [("all", None), ("essential", "essential"), ("supporting", "supporting")]
    tier_names = unique(t for e in rows for t in ((e.result.get("by") or {}).get("duration_tier") or {}))
    width = max(7.6, 6 * _slot(len(rows)) + 1.0)
    fig, (hist, axes2, tiers) = _figure(width, 8.4, 3, 1)
    bar = 0.8 / len(rows)
    caption = provenance(rows)
    data: dict[str, Any] = {}
    for i, (e, colour) in enumerate(zip(rows, _colours(len(rows)))):
        r = e.result
        offset = (i - (len(rows) - 1) / 2) * bar
        counts = r.get("histogram") or []
        total = sum(counts)
        if total:  # no item judged: no histogram (empty bins are not a 0 share)
            hist.bar([b + offset for b in range(len(counts))], [c / total for c in counts], bar, color=colour)
        elif counts:
            caption.append(f"{e.label}: no item was judged; the histogram is not drawn")
        for j, (name, key) in enumerate(groups):
            source = r if key is None else (r.get("by_importance") or {}).get(key) or {}
            sem = fraction(source.get("semantic"), e.scorer, "semantic", r)
            tem = fraction(source.get("temporal"), e.scorer, "temporal", r)
            _bars(
                axes2,
                [2 * j + offset],
                [sem],
                bar,
                [interval(source, "semantic")],
                color=colour,
                label=e.label if j == 0 else None,
            )
            _bars(
                axes2,
                [2 * j + 1 + offset],
                [tem],
                bar,
                [interval(source, "temporal")],
                color=colour,
                hatch="//",
                alpha=0.6,
            )
            caption += [
                f"{e.label}: {axis} of {name} criteria undefined (no verdict on that axis)"
                for axis, v in (("semantic", sem), ("temporal", tem))
                if v is None
            ]
        by_tier = (r.get("by") or {}).get("duration_tier") or {}
        means = [fraction(judged(by_tier.get(t) or {}, "mean"), e.scorer, "rubric", r) for t in tier_names]
        data[f"by tier: {e.label}"] = dict(
            zip(
                tier_names,
                _bars(
                    tiers,
                    [k + offset for k in range(len(tier_names))],
                    means,
                    bar,
                    [interval(by_tier.get(t), "mean") for t in tier_names],
                    color=colour,
                ),
            )
        )
        headline = f"n/a ({unavailable(r)})" if unavailable(r) else display(r.get("rubric"), e.scorer, "rubric", r)
        caption.append(f"{e.label}: {r.get('n_failed', 0)} item(s) whose judging failed; Rubric {headline}")
        caption += [
            f"{e.label}: Rubric of tier {t} n/a (every item sent to the judge failed)"
            for t, m in zip(tier_names, means)
            if m is None and (by_tier.get(t) or {}).get("mean") is not None
        ]
    hist.set_xticks(range(10), [f"{b / 10:.1f}-{(b + 1) / 10:.1f}" for b in range(10)], fontsize=7)
    hist.set(xlabel="item Rubric (0-1)", ylabel="share of items", title="Rubric histogram")
    axes2.set_xticks(
        range(6), [f"{name}\n{axis}" for name, _ in groups for axis in ("semantic", "temporal")], fontsize=7
    )
    axes2.set(ylabel="share (0-1)", ylim=(0, 1), title="semantic vs temporal (Eq. 4; temporal hatched)")
    tiers.set_xticks(range(len(tier_names)), tier_names)
    tiers.set(ylabel="mean Rubric (0-1)", ylim=(0, 1), title="Rubric by duration tier")
    _axes_legend(fig, [axes2], width)
    caption.append(
        "semantic and temporal are reported overall and by importance; a split by tier is not in the scorer's results"
    )
    return _made(
        "audiospan_rubric",
        "AudioSpan Rubric: histogram, semantic vs temporal, by tier (AudioSpan Eq. 2, Eq. 4, App. D.4)",
        fig,
        caption,
        data,
    )


# ---------------------------------------------------------------------------------------------
# MMAR-Rubrics per modality and category
# ---------------------------------------------------------------------------------------------


def mmar_rubrics_figure(entries: Sequence[Entry]) -> Optional[Figure]:
    """Rubrics (bars) and Accuracy (dots), each with its interval, per modality and per category
    (arXiv:2602.14224 §3.2)."""
    rows = [e for e in entries if e.result.get("modality") or e.result.get("category")]
    if not rows:
        return None
    names_of = {g: unique(n for e in rows for n in (e.result.get(g) or {})) for g in ("modality", "category")}
    width = max(7.6, max(len(v) for v in names_of.values()) * _slot(len(rows)) + 1.0)
    fig, axes = _figure(width, 6.8, 2, 1)
    bar = 0.8 / len(rows)
    caption, data = provenance(rows), {}
    for ax, group in zip(axes, ("modality", "category")):
        names = names_of[group]
        for i, (e, colour) in enumerate(zip(rows, _colours(len(rows)))):
            table = e.result.get(group) or {}
            xs = [k + (i - (len(rows) - 1) / 2) * bar for k in range(len(names))]
            # a row whose judged items all failed is n/a (no bar), as in the table; a gated-only row is a real 0
            rub = [fraction(judged(table.get(n) or {}, "rubrics"), e.scorer, "rubrics", e.result) for n in names]
            acc = [fraction((table.get(n) or {}).get("accuracy"), e.scorer, "accuracy", e.result) for n in names]
            data[f"{group}: {e.label} Rubrics"] = dict(
                zip(
                    names,
                    _bars(
                        ax,
                        xs,
                        rub,
                        bar,
                        [interval(table.get(n), "rubrics") for n in names],
                        color=colour,
                        label=f"{e.label} Rubrics",
                    ),
                )
            )
            ax.scatter(
                xs,
                [math.nan if v is None else v for v in acc],
                color="k",
                marker="_",
                s=60,
                zorder=3,
                label="Accuracy (dash; its interval in grey)",
            )
            _errorbars(ax, xs, acc, [interval(table.get(n), "accuracy") for n in names], ecolor="#888888", capsize=0)
        ax.set_xticks(range(len(names)), names, fontsize=7)
        ax.set(ylabel="score (0-1)", ylim=(0, 1), title=f"by {group}")
    _axes_legend(fig, axes, width)
    for e in rows:
        if unavailable(e.result):
            caption.append(f"{e.label}: Rubrics n/a: {unavailable(e.result)}")
        if any(v is None for g in ("modality", "category") for v in data.get(f"{g}: {e.label} Rubrics", {}).values()):
            caption.append(f"{e.label}: n/a (no bar): every item of that group sent to the judge failed")
        caption.append(
            f"{e.label}: judged {e.result.get('n_judged')}, gated {e.result.get('n_gated')}, "
            f"failed {e.result.get('n_failed')} of {e.result.get('n')}"
        )
    return _made("mmar_rubrics", "MMAR-Rubrics per modality and category (arXiv:2602.14224 §3.2)", fig, caption, data)


# ---------------------------------------------------------------------------------------------
# Validity: the correlation matrix of validity_report
# ---------------------------------------------------------------------------------------------


def correlation_heatmap(matrix: Optional[dict[str, Any]], inputs: str) -> Optional[Figure]:
    if not matrix or len(matrix.get("names") or []) < 2:
        return None
    names, r = matrix["names"], matrix["r"]
    grid = [[math.nan if v is None else v for v in row] for row in r]
    fig, ax = _figure(0.55 * len(names) + 2.6, 0.5 * len(names) + 1.8)
    image = ax.imshow(grid, vmin=-1, vmax=1, cmap="RdBu_r")
    for i, row in enumerate(r):
        for j, v in enumerate(row):
            ax.text(j, i, "n/a" if v is None else f"{v:.2f}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(names)), names)
    fig.colorbar(image, ax=ax, shrink=0.8, label=f"{matrix.get('method', 'pearson')} r")
    return _made("correlations", "Correlations between the measures (ARIA-Rubrics §4, Figure 4)", fig, [inputs])


# The scorers' figures, by the name a declaration gives them (``scorers.declare.Results.figures``), in the order
# a report draws them.
RENDERERS: dict[str, Callable[[Sequence[Entry]], Optional[Figure]]] = {
    draw.__name__: draw
    for draw in (
        aria_radar,
        aria_vs_accuracy,
        retention_curves,
        decomposition_bars,
        anchor_chain_figure,
        rubric_figure,
        mmar_rubrics_figure,
    )
}
# (results section, figure): accuracy's, then every figure a section's declaration names.
FIGURES: list[tuple[str, Callable[[Sequence[Entry]], Optional[Figure]]]] = [
    (ACCURACY, accuracy_bars),
    *(
        (section.name, draw)
        for name, draw in RENDERERS.items()
        for declaration in DECLARATIONS
        for section in declaration.results
        if name in section.figures
    ),
]


def draw_all(results: Results) -> list[tuple[str, Figure]]:
    """(scorer, figure) for every figure the results can support, in report order."""
    return [(scorer, fig) for scorer, draw in FIGURES if (fig := draw(results.of(scorer))) is not None]


__all__ = [
    "FIGURES",
    "Figure",
    "RENDERERS",
    "INTERVAL_NOTE",
    "accuracy_bars",
    "anchor_chain_figure",
    "aria_radar",
    "aria_vs_accuracy",
    "chain_ladder",
    "correlation_heatmap",
    "decomposition_bars",
    "draw_all",
    "interval",
    "mmar_rubrics_figure",
    "mode_regions",
    "provenance",
    "retention_curves",
    "rubric_figure",
    "uniform_options",
]
