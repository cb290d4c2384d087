"""The report's figures, drawn with matplotlib (Agg backend) as inline SVG, each with a caption naming the
models, backbones, judge and reasoning modes behind it.

Every figure reads the scorers' own numbers (``Entry.result``) through ``scale.fraction``; the only values
computed here are read-outs of per-chain outcomes the scorer reports (the chain ladder: the share of chains
whose first k links are correct, whose mean over k = 1..3 is the Chain score of Eq. 3) and the uniform
guesser's rungs (prod_j 1/n_j, the terms of the random Chain of AudioSpan App. B.3).
"""
from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from .load import Entry, Results, unique
from .scale import display, fraction, judged, number, unavailable

LINKS = ("P", "U", "R")
DECOMPOSITION = ("TS", "FS", "XS", "AH", "UN")
DECOMPOSITION_NAMES = {"TS": "text-sufficient", "FS": "fragment-sufficient", "XS": "cross-fragment",
                       "AH": "audio-hurt", "UN": "unsolved"}
MODE_COLOURS = {"Reasoning": "#2ca02c", "Decoration": "#d62728", "Scaffolding": "#ff7f0e", None: "#7f7f7f"}


@dataclass
class Figure:
    key: str
    title: str
    svg: str
    caption: list[str] = field(default_factory=list)  # provenance: models, backbones, judge, modes, notes
    data: dict[str, Any] = field(default_factory=dict)  # what the bars show, in percent; None: n/a (no bar)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    # Stable element ids (the same data, the same file); every text (labels, titles, ticks, legends) as plain
    # text: a model named "gpt$\\frac{$x" is a name, not mathtext to parse.
    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.titlesize": 10, "figure.dpi": 100,
                         "svg.hashsalt": "audioreason", "text.parse_math": False})
    return plt


def _svg(fig: Any) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    text = buffer.getvalue()
    text = text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: the SVG sits inline in HTML
    return re.sub(r"<metadata>.*?</metadata>\s*", "", text, count=1, flags=re.S)  # RDF about the file, not the data


def _height(share: Optional[float]) -> float:
    """A bar's height in percent; a missing value is a gap (NaN draws nothing), never a 0 bar."""
    return math.nan if share is None else 100 * share


def _bars(ax: Any, xs: Sequence[float], shares: Sequence[Optional[float]], width: float = 0.8,
          **style: Any) -> list[Optional[float]]:
    """Bars of ``shares`` (fractions) at ``xs``; a missing one draws no bar and "n/a" at its foot, never a 0
    bar. Returns the heights in percent (None: n/a), for ``Figure.data``."""
    heights = [None if v is None else 100 * v for v in shares]
    ax.bar(xs, [math.nan if h is None else h for h in heights], width, **style)
    for x, h in zip(xs, heights):
        if h is None:
            ax.text(x, 1, "n/a", ha="center", va="bottom", rotation=90, fontsize=6, color="#777777")
    return heights


def _colours(n: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


# ---------------------------------------------------------------------------------------------
# Provenance
# ---------------------------------------------------------------------------------------------

def _judge(entry: Entry) -> Optional[str]:
    judges = entry.result.get("judges")
    if judges:
        raters = entry.result.get("raters")
        return f"{', '.join(map(str, judges))}" + (f", {raters} rater(s)" if raters else "")
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
    """M1-M6 per set on one radar; an unavailable metric leaves a gap (never a 0)."""
    from ..scoring.aria import METRIC_NAMES, METRICS

    if not entries:
        return None
    plt = _pyplot()
    angles = [2 * math.pi * i / len(METRICS) for i in range(len(METRICS))]
    fig = plt.figure(figsize=(5.2, 4.6))
    ax = fig.add_subplot(projection="polar")
    missing = []
    for e, colour in zip(entries, _colours(len(entries))):
        values = [fraction(e.result.get(m), "aria", m, e.result) for m in METRICS]
        missing += [f"{m} of {e.label}" for m, v in zip(METRICS, values) if v is None]
        ys = [math.nan if v is None else v for v in values]
        ax.plot(angles + angles[:1], ys + ys[:1], marker="o", color=colour,
                label=f"{e.label}: {e.result.get('reasoning_mode') or 'no mode'}")
    ax.set_xticks(angles)
    ax.set_xticklabels([f"{m}\n{METRIC_NAMES[m]}" for m in METRICS], fontsize=7)
    ax.set_ylim(0, 1)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=7, frameon=False)
    caption = provenance(entries)
    if missing:
        caption.append("unavailable (gap in the polygon, not 0): " + ", ".join(missing))
    return Figure("aria_radar", "ARIA-Rubrics profile M1-M6 per model (ARIA-Rubrics §3.3)", _svg(fig), caption)


def mode_regions(rule: str) -> list[tuple[str, tuple[float, float], tuple[float, float]]]:
    """(mode, (accuracy from, to), (ARIA from, to)) rectangles of a reasoning-mode rule at its default
    thresholds (``audioreason.scoring.aria``). Under the paper's rule the low-accuracy half has no mode of
    its own: Scaffolding is read from M2-M5 (high M3 with low M2, M4, M5), not from this plane."""
    from ..scoring.aria import FittedThresholds, ProfileThresholds

    if rule == "fitted":
        t = FittedThresholds()
        return [("Reasoning", (t.accuracy, 1), (t.aria_reasoning, 1)), ("Decoration", (t.accuracy, 1), (0, t.aria_reasoning)),
                ("Scaffolding", (0, t.accuracy), (t.aria_scaffolding, 1)), ("Decoration", (0, t.accuracy), (0, t.aria_scaffolding))]
    t = ProfileThresholds()
    return [("Reasoning", (t.accuracy, 1), (t.aria, 1)), ("Decoration", (t.accuracy, 1), (0, t.aria)),
            (None, (0, t.accuracy), (0, 1))]


def _default_mode(result: dict[str, Any]) -> Optional[str]:
    """The mode the recorded rule gives at its default thresholds (None when the profile is incomplete)."""
    from ..scoring.aria import reasoning_mode

    profile = {k: number(result.get(k)) for k in ("M2", "M3", "M4", "M5", "aria", "accuracy")}
    if any(v is None for v in profile.values()) or not result.get("aria_complete", True):
        return None
    return reasoning_mode(profile, result.get("reasoning_mode_rule", "paper"))


def aria_vs_accuracy(entries: Sequence[Entry]) -> Optional[Figure]:
    """Each set at (accuracy, ARIA) over the mode regions of its rule; a hollow marker is an ARIA that
    averages fewer than six metrics (not comparable, no mode)."""
    placed = [e for e in entries if number(e.result.get("aria")) is not None and number(e.result.get("accuracy")) is not None]
    if not placed:
        return None
    plt = _pyplot()
    rules = unique(e.result.get("reasoning_mode_rule", "paper") for e in placed)
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    for mode, (x0, x1), (y0, y1) in mode_regions(rules[0]):
        ax.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, color=MODE_COLOURS[mode], alpha=0.12, lw=0))
        ax.text((x0 + x1) / 2, y1 - 0.03, mode or "Scaffolding (by M2-M5) or no mode", ha="center", va="top",
                fontsize=7, color=MODE_COLOURS[mode])
    caption = provenance(placed)
    for e, colour in zip(placed, _colours(len(placed))):
        x, y = fraction(e.result["accuracy"], "aria", "accuracy", e.result), number(e.result["aria"])
        complete = bool(e.result.get("aria_complete", len(e.result.get("aria_metrics") or []) == 6))
        ax.scatter([x], [y], s=50, color=colour, facecolors=colour if complete else "none", zorder=3,
                   label=f"{e.label}: {e.result.get('reasoning_mode') or 'no mode'}")
        if not complete:
            caption.append(f"{e.label}: ARIA averages {'+'.join(e.result.get('aria_metrics') or [])} only (hollow "
                           "marker): not comparable with the six-metric ARIA; no mode")
        elif _default_mode(e.result) != e.result.get("reasoning_mode"):
            caption.append(f"{e.label}: its recorded mode differs from the default thresholds' (custom thresholds)")
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="accuracy (ARIA App. E answer)", ylabel="ARIA (mean of M1-M6)")
    ax.legend(loc="lower left", fontsize=7, frameon=False)
    caption.append(f"regions: rule {rules[0]!r} at its default thresholds (ARIA-Rubrics §3.4)"
                   + (f"; other rules present: {rules[1:]}" if len(rules) > 1 else ""))
    return Figure("aria_modes", "ARIA vs accuracy with the reasoning-mode regions (ARIA-Rubrics §3.4)", _svg(fig),
                  caption)


# ---------------------------------------------------------------------------------------------
# Accuracy
# ---------------------------------------------------------------------------------------------

def accuracy_bars(entries: Sequence[Entry]) -> Optional[Figure]:
    if not entries:
        return None
    plt = _pyplot()
    labels = [f"{e.label}\n{e.result.get('rule', '')}" for e in entries]
    correct = [fraction(e.result.get("accuracy"), "accuracy", "accuracy", e.result) for e in entries]
    unanswered = [(e.result.get("unanswered") or 0) / e.result["n"] if e.result.get("n") else None for e in entries]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(entries) + 2), 3.2))
    xs = range(len(entries))
    # A missing accuracy or count is a gap (no bar, "n/a"), never a 0 bar.
    heights = _bars(ax, list(xs), correct, color="#1f77b4", label="correct")
    ax.bar(xs, [_height(u) for u in unanswered], bottom=[_height(v) for v in correct], color="#c7c7c7",
           label="unanswered (no choice extracted)")
    ax.set_xticks(list(xs), labels, fontsize=7)
    ax.set(ylabel="% of items", ylim=(0, 100))
    ax.legend(fontsize=7, frameon=False)
    caption = provenance(entries)
    caption += [f"{e.label}: accuracy not available" for e, v in zip(entries, correct) if v is None]
    return Figure("accuracy", "Accuracy and unanswered share per set", _svg(fig), caption,
                  {"correct": dict(zip(labels, heights))})


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
    """R_N (percent of Full accuracy kept with 1/N of the audio) against N per model ("All That Glitters
    Is Not Audio" §2.2, Figure 2)."""
    rows = _per_model(entries, "retention")
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.0, 3.4))
    caption, drawn = provenance(entries), 0
    for (e, model, per_n), colour in zip(rows, _colours(len(rows))):
        points = sorted((int(n), fraction(v.get("R_N"), e.scorer, "R_N", e.result)) for n, v in per_n.items()
                        if isinstance(v, dict))
        shown = [(n, 100 * r) for n, r in points if r is not None]
        caption += [f"{model}: R_{n} undefined ({per_n[str(n)].get('reason') or 'no value'})"
                    for n, r in points if r is None]
        if shown:
            drawn += 1
            ax.plot(*zip(*shown), marker="o", color=colour, label=f"{model} [{e.template}]" if e.template else model)
    if not drawn:
        return None
    ax.axhline(100, color="grey", lw=0.8, ls=":")
    ax.set(xlabel="N (fragments; each holds 1/N of the audio)", ylabel="R_N (% of Full accuracy)")
    ax.legend(fontsize=7, frameon=False)
    return Figure("retention", "Retention curves R_N (All That Glitters Is Not Audio, §2.2)", _svg(fig), caption)


def decomposition_bars(entries: Sequence[Entry]) -> Optional[Figure]:
    """TS/FS/XS/AH/UN shares of the items per model (All That Glitters Is Not Audio, Table 1)."""
    rows = [(e, m, v) for e, m, v in _per_model(entries, "decomposition") if v.get("n_items")]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 0.55 * len(rows) + 1.4))
    left = [0.0] * len(rows)
    for label, colour in zip(DECOMPOSITION, _colours(len(DECOMPOSITION))):
        shares = [100 * v["counts"].get(label, 0) / v["n_items"] for _, _, v in rows]
        ax.barh(range(len(rows)), shares, left=left, color=colour, label=f"{label} ({DECOMPOSITION_NAMES[label]})")
        left = [a + b for a, b in zip(left, shares)]
    ax.set_yticks(range(len(rows)), [f"{m} [{e.template}]" if e.template else m for e, m, _ in rows], fontsize=7)
    ax.set(xlabel="% of the items scored under Full and None", xlim=(0, 100))
    ax.legend(fontsize=7, frameon=False, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    caption = provenance(entries)
    caption += [f"{m}: {v['XS_unverified']} XS item(s) rest on errored or missing fragments (XS/AN bounds "
                f"{v.get('XS_over_AN_bounds')})" for _, m, v in rows if v.get("XS_unverified")]
    return Figure("decomposition", "Item decomposition TS/FS/XS/AH/UN (All That Glitters Is Not Audio, Table 1)",
                  _svg(fig), caption)


# ---------------------------------------------------------------------------------------------
# AudioSpan: chain ladder and per-link bars; rubric histogram, semantic vs temporal, rubric by tier
# ---------------------------------------------------------------------------------------------

def chain_ladder(chains: Sequence[dict[str, Any]]) -> list[Optional[float]]:
    """Share of chains whose first k links are correct, k = 1, 2, 3 (their mean is Eq. 3's Chain)."""
    links = [c["links"] for c in chains if isinstance(c, dict) and len(c.get("links") or []) == 3]
    if not links:
        return [None, None, None]
    return [sum(all(l[:k]) for l in links) / len(links) for k in (1, 2, 3)]


def uniform_options(random_chain: Any) -> Optional[int]:
    """The option count n with random Chain (1/n + 1/n^2 + 1/n^3) / 3 equal to ``random_chain`` (every link
    with n options), or None when no n from 2 to 26 gives it (mixed option counts)."""
    from ..scoring.anchor_chain import random_chain_expectation

    value = number(random_chain)
    if value is None:
        return None
    return next((n for n in range(2, 27) if math.isclose(random_chain_expectation([n] * 3), value, abs_tol=1e-12)),
                None)


def anchor_chain_figure(entries: Sequence[Entry]) -> Optional[Figure]:
    """(a) the chain ladder per set beside the uniform guesser's; (b) per-link accuracy with 1/n."""
    rows = [e for e in entries if isinstance(e.result.get("chain"), dict)]
    if not rows:
        return None
    plt = _pyplot()
    fig, (ladder, links) = plt.subplots(1, 2, figsize=(8.4, 3.4))
    width = 0.8 / len(rows)
    caption = provenance(rows)
    guess = uniform_options(rows[0].result["chain"].get("random_chain"))
    for i, (e, colour) in enumerate(zip(rows, _colours(len(rows)))):
        chain = e.result["chain"]
        rungs = chain_ladder(chain.get("chains") or [])
        xs = [k + (i - (len(rows) - 1) / 2) * width for k in range(3)]
        if None not in rungs:  # no per-chain outcomes: no bars (an empty rung is not a 0)
            ladder.bar(xs, [100 * r for r in rungs], width, color=colour,
                       label=f"{e.label}: Chain {display(chain.get('chain'), 'anchor_chain', 'chain', chain)}")
        per_link = [fraction(chain.get(name), "anchor_chain", name, chain) for name in LINKS]
        _bars(links, xs, per_link, width, color=colour, label=e.label)
        if None in rungs:
            caption.append(f"{e.label}: the result lists no per-chain outcomes; ladder not drawn")
        caption.append(f"{e.label}: {chain.get('n')} chains, {chain.get('unparsed')} unparsed replies, "
                       f"{e.result.get('chains_incomplete', 0)} incomplete chains left out")
    if guess:
        ladder.plot(range(3), [100 / guess ** k for k in (1, 2, 3)], "k--", marker="x",
                    label=f"uniform guess ({guess} options): Chain "
                          f"{display(rows[0].result['chain']['random_chain'], 'anchor_chain', 'random_chain')}")
        links.axhline(100 / guess, color="k", ls="--", lw=1, label=f"random 1/{guess}")
    else:
        caption.append("random baseline: option counts differ across links; see random_chain in the table")
    ladder.set_xticks(range(3), ["P", "P and U", "P, U and R"])
    ladder.set(ylabel="% of chains with the first k links correct", ylim=(0, 100), title="chain ladder (Eq. 3)")
    links.set_xticks(range(3), ["P (perception)", "U (understanding)", "R (reasoning)"])
    links.set(ylabel="accuracy %", ylim=(0, 100), title="per-link accuracy")
    ladder.legend(fontsize=7, frameon=False)
    links.legend(fontsize=7, frameon=False)
    return Figure("anchor_chain", "Anchor Chain ladder and per-link accuracy with the random baseline "
                                  "(AudioSpan Eq. 3, App. B.3)", _svg(fig), caption)


def rubric_figure(entries: Sequence[Entry]) -> Optional[Figure]:
    """(a) ten-bin histogram of item Rubric; (b) semantic% vs temporal% (Eq. 4) overall and by importance;
    (c) Rubric by duration tier."""
    rows = [e for e in entries if e.result.get("histogram") is not None or number(e.result.get("rubric")) is not None]
    if not rows:
        return None
    plt = _pyplot()
    fig, (hist, axes2, tiers) = plt.subplots(1, 3, figsize=(11.0, 3.4))
    width = 0.8 / len(rows)
    caption = provenance(rows)
    groups = [("all", None), ("essential", "essential"), ("supporting", "supporting")]
    tier_names = unique(t for e in rows for t in ((e.result.get("by") or {}).get("duration_tier") or {}))
    data: dict[str, Any] = {}
    for i, (e, colour) in enumerate(zip(rows, _colours(len(rows)))):
        r = e.result
        offset = (i - (len(rows) - 1) / 2) * width
        counts = r.get("histogram") or []
        total = sum(counts)
        if total:  # no item judged: no histogram (empty bins are not a 0% share)
            hist.bar([b + offset for b in range(len(counts))], [100 * c / total for c in counts],
                     width, color=colour, label=f"{e.label} (n={total})")
        elif counts:
            caption.append(f"{e.label}: no item was judged; the histogram is not drawn")
        for j, (name, key) in enumerate(groups):
            source = r if key is None else (r.get("by_importance") or {}).get(key) or {}
            sem = fraction(source.get("semantic"), e.scorer, "semantic", r)
            tem = fraction(source.get("temporal"), e.scorer, "temporal", r)
            _bars(axes2, [2 * j + offset], [sem], width, color=colour, label=e.label if j == 0 else None)
            _bars(axes2, [2 * j + 1 + offset], [tem], width, color=colour, hatch="//", alpha=0.6)
            caption += [f"{e.label}: {axis}% of {name} criteria undefined (no verdict on that axis)"
                        for axis, v in (("semantic", sem), ("temporal", tem)) if v is None]
        by_tier = (r.get("by") or {}).get("duration_tier") or {}
        means = [fraction(judged(by_tier.get(t) or {}, "mean"), e.scorer, "rubric", r) for t in tier_names]
        data[f"by tier: {e.label}"] = dict(zip(tier_names, _bars(tiers, [k + offset for k in range(len(tier_names))],
                                                                 means, width, color=colour, label=e.label)))
        headline = f"n/a ({unavailable(r)})" if unavailable(r) else display(r.get("rubric"), e.scorer, "rubric", r)
        caption.append(f"{e.label}: {r.get('n_failed', 0)} item(s) whose judging failed; Rubric {headline}")
        caption += [f"{e.label}: Rubric of tier {t} n/a (every item sent to the judge failed)" for t, m in
                    zip(tier_names, means) if m is None and (by_tier.get(t) or {}).get("mean") is not None]
    hist.set_xticks(range(10), [f"{10 * b}-{10 * b + 10}" for b in range(10)], rotation=60, fontsize=6)
    hist.set(xlabel="item Rubric (%)", ylabel="% of items", title="Rubric histogram")
    axes2.set_xticks(range(6), [f"{name}\n{axis}" for name, _ in groups for axis in ("semantic", "temporal")], fontsize=7)
    axes2.set(ylabel="%", ylim=(0, 100), title="semantic% vs temporal% (Eq. 4)")
    tiers.set_xticks(range(len(tier_names)), tier_names)
    tiers.set(ylabel="mean Rubric %", ylim=(0, 100), title="Rubric by duration tier")
    for ax in (hist, axes2, tiers):
        if ax.get_legend_handles_labels()[0]:  # an undrawn histogram has nothing to name
            ax.legend(fontsize=6, frameon=False)
    caption.append("semantic% and temporal% are reported overall and by importance; a split by tier is not in the "
                   "scorer's results")
    return Figure("audiospan_rubric", "AudioSpan Rubric: histogram, semantic vs temporal, by tier (AudioSpan Eq. 2, "
                                      "Eq. 4, App. D.4)", _svg(fig), caption, data)


# ---------------------------------------------------------------------------------------------
# MMAR-Rubrics per modality and category
# ---------------------------------------------------------------------------------------------

def mmar_rubrics_figure(entries: Sequence[Entry]) -> Optional[Figure]:
    """Rubrics (bars) and Accuracy (dots) per modality and per category (arXiv:2602.14224 §3.2)."""
    rows = [e for e in entries if e.result.get("modality") or e.result.get("category")]
    if not rows:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 3.8))
    width = 0.8 / len(rows)
    caption, data = provenance(rows), {}
    for ax, group in zip(axes, ("modality", "category")):
        names = unique(n for e in rows for n in (e.result.get(group) or {}))
        for i, (e, colour) in enumerate(zip(rows, _colours(len(rows)))):
            table = e.result.get(group) or {}
            xs = [k + (i - (len(rows) - 1) / 2) * width for k in range(len(names))]
            # a row whose judged items all failed is n/a (no bar), as in the table; a gated-only row is a real 0
            rub = [fraction(judged(table.get(n) or {}, "rubrics"), e.scorer, "rubrics", e.result) for n in names]
            acc = [fraction((table.get(n) or {}).get("accuracy"), e.scorer, "accuracy", e.result) for n in names]
            data[f"{group}: {e.label} Rubrics"] = dict(zip(names, _bars(ax, xs, rub, width, color=colour,
                                                                        label=f"{e.label} Rubrics")))
            ax.scatter(xs, [100 * v if v is not None else math.nan for v in acc], color="k", marker="_", s=120,
                       zorder=3, label="Accuracy" if i == 0 else None)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=7)
        ax.set(ylabel="x100", ylim=(0, 100), title=f"by {group}")
        ax.legend(fontsize=6, frameon=False)
    for e in rows:
        if unavailable(e.result):
            caption.append(f"{e.label}: Rubrics n/a: {unavailable(e.result)}")
        if any(v is None for g in ("modality", "category") for v in data.get(f"{g}: {e.label} Rubrics", {}).values()):
            caption.append(f"{e.label}: n/a (no bar): every item of that group sent to the judge failed")
        caption.append(f"{e.label}: judged {e.result.get('n_judged')}, gated {e.result.get('n_gated')}, "
                       f"failed {e.result.get('n_failed')} of {e.result.get('n')}")
    return Figure("mmar_rubrics", "MMAR-Rubrics per modality and category (arXiv:2602.14224 §3.2)", _svg(fig), caption,
                  data)


# ---------------------------------------------------------------------------------------------
# Validity: the correlation matrix of validity_report
# ---------------------------------------------------------------------------------------------

def correlation_heatmap(matrix: Optional[dict[str, Any]], inputs: str) -> Optional[Figure]:
    if not matrix or len(matrix.get("names") or []) < 2:
        return None
    plt = _pyplot()
    names, r = matrix["names"], matrix["r"]
    grid = [[math.nan if v is None else v for v in row] for row in r]
    fig, ax = plt.subplots(figsize=(0.55 * len(names) + 2.2, 0.5 * len(names) + 1.6))
    image = ax.imshow(grid, vmin=-1, vmax=1, cmap="RdBu_r")
    for i, row in enumerate(r):
        for j, v in enumerate(row):
            ax.text(j, i, "n/a" if v is None else f"{v:.2f}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    fig.colorbar(image, ax=ax, shrink=0.8, label=f"{matrix.get('method', 'pearson')} r")
    return Figure("correlations", "Correlations between the measures (ARIA-Rubrics §4, Figure 4)", _svg(fig), [inputs])


# The figures of a report, in order: (scorer whose entries it draws, function).
FIGURES: list[tuple[str, Callable[[Sequence[Entry]], Optional[Figure]]]] = [
    ("accuracy", accuracy_bars), ("aria", aria_radar), ("aria", aria_vs_accuracy),
    ("text_prior_decomposition", retention_curves), ("text_prior_decomposition", decomposition_bars),
    ("anchor_chain", anchor_chain_figure), ("audiospan_rubric", rubric_figure),
    ("mmar_rubrics", mmar_rubrics_figure),
]


def draw_all(results: Results) -> list[tuple[str, Figure]]:
    """(scorer, figure) for every figure the results can support, in report order."""
    return [(scorer, fig) for scorer, draw in FIGURES if (fig := draw(results.of(scorer))) is not None]


__all__ = ["FIGURES", "Figure", "accuracy_bars", "anchor_chain_figure", "aria_radar", "aria_vs_accuracy",
           "chain_ladder", "correlation_heatmap", "decomposition_bars", "draw_all", "mmar_rubrics_figure",
           "mode_regions", "provenance", "retention_curves", "rubric_figure", "uniform_options"]
