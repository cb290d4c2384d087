"""The report's tables: one per scorer, each number as the scorer reported it, shown through ``scale.display``.
Rendered as Markdown (``markdown``) and inside the HTML report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.evaluation.rows import interval_text
from audioreason.scorers.registry import ACCURACY, DECLARATIONS

from .load import BENCHMARK_ACCURACY, Entry, Results, benchmark_key, unique
from .scale import display, interval, judged, number, rater_spread, unavailable


@dataclass
class Table:
    key: str
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


def _count(value: Any) -> str:
    return "n/a" if value is None else str(value)


def _of_n(part: Any, whole: Any) -> str:
    if part is None or not whole:
        return _count(part)
    return f"{part} of {whole}"


def shown(values: Any, scorer: str, field_name: str, value: Any = ...) -> str:
    """A headline's cell: its value with the 95% interval `audioreason score` recorded beside it (none beside
    an n/a, nothing for results scored before intervals were kept)."""
    text = display(values.get(field_name) if value is ... else value, scorer, field_name, values)
    return text if text == "n/a" else text + interval(values, field_name)


def accuracy_table(entries: Sequence[Entry]) -> Table:
    rows = [
        [
            e.label,
            e.result.get("rule", ""),
            shown(e.result, "accuracy", "accuracy"),
            f"{_count(e.result.get('correct'))}/{_count(e.result.get('n'))}",
            _of_n(e.result.get("unanswered"), e.result.get("n")),
            _count(e.result.get("failed")),
            shown(e.result, "accuracy", "official_scorer_accuracy"),
        ]
        for e in entries
    ]
    return Table(
        "accuracy",
        "Accuracy",
        ["set", "rule", "accuracy", "correct/n", "unanswered", "failed outputs", "official scorer"],
        rows,
        unique(f"{e.result.get('rule')}: {e.result.get('rule_description')}" for e in entries),
    )


def aria_table(entries: Sequence[Entry]) -> Table:
    metrics = ["M1", "M2", "M3", "M4", "M5", "M6", "aria"]
    rows = [
        [
            e.label,
            *(shown(e.result, "aria", m) for m in metrics),
            "+".join(e.result.get("aria_metrics") or []) or "none",
            shown(e.result, "aria", "accuracy"),
            display(e.result.get("unanswered_rate"), "aria", "unanswered_rate", e.result),
            f"{e.result.get('reasoning_mode') or 'none'} ({e.result.get('reasoning_mode_rule', 'paper')})",
            _count((e.result.get("counts") or {}).get("items", e.result.get("n"))),
        ]
        for e in entries
    ]
    notes = [f"{e.label}: {e.result['note']}" for e in entries if e.result.get("note")]
    notes += unique(f"{m}: {b}" for e in entries for m, b in (e.result.get("backbones") or {}).items())
    return Table(
        "aria",
        "ARIA-Rubrics (scores in [0, 1])",
        ["set", *metrics[:-1], "ARIA", "ARIA covers", "accuracy", "unanswered", "reasoning mode (rule)", "n"],
        rows,
        notes,
    )


def perturbations_table(entries: Sequence[Entry]) -> Table:
    rows = []
    for e in entries:
        for p in e.result.get("perturbations") or []:
            rows.append(
                [
                    e.label,
                    p.get("perturbation", ""),
                    display(p.get("aria"), "aria", "aria", p),
                    "n/a" if number((p.get("delta") or {}).get("aria")) is None else f"{p['delta']['aria']:+.4f}",
                    display(p.get("accuracy"), "aria", "accuracy", p),
                    display(p.get("answer_change_rate"), "aria", "answer_change_rate", p),
                    p.get("reasoning_mode") or "none",
                ]
            )
    return Table(
        "perturbations",
        "CoT perturbations (ARIA-Rubrics App. B, Table 7)",
        ["set", "perturbation", "ARIA", "ARIA delta", "accuracy", "answers changed", "mode"],
        rows,
    )


def judges_cell(result: Mapping[str, Any]) -> str:
    """The judges' names, with "(offline judge: ...)" when a judge ran in process."""
    from ..judges.base import offline_judge_label

    names = ", ".join(map(str, result.get("judges") or []))
    label = offline_judge_label(result)
    return f"{names} {label}".strip() if names else label


def mmar_rubrics_table(entries: Sequence[Entry]) -> Table:
    rows = []
    for e in entries:
        r = e.result
        alpha = (r.get("reliability") or {}).get("alpha")
        why = unavailable(r)
        rubrics = f"n/a ({why})" if why else shown(r, e.scorer, "rubrics") + rater_spread(r)
        rows.append(
            [
                e.label,
                rubrics,
                shown(r, e.scorer, "accuracy"),
                _count(r.get("n")),
                _count(r.get("n_judged")),
                _count(r.get("n_gated")),
                _count(r.get("n_failed")),
                judges_cell(r) + f" x{r.get('raters', '?')}",
                "n/a" if number(alpha) is None else f"{alpha:.3f}",
            ]
        )
    notes = unique(w for e in entries for w in e.result.get("warnings") or [])
    return Table(
        "mmar_rubrics",
        "MMAR-Rubrics (0-1; the paper prints 100 times these; arXiv:2602.14224 §3.2)",
        [
            "set",
            "Rubrics",
            "Accuracy",
            "n",
            "judged",
            "gated (wrong answer: 0)",
            "failed",
            "judge x raters",
            "raters' alpha",
        ],
        rows,
        notes,
    )


UNAVAILABLE_NOTE = (
    "n/a: every item of that row sent to the judge failed, so the value the scorer wrote (failures at 0) is not a score"
)


def mmar_groups_table(entries: Sequence[Entry]) -> Table:
    rows, notes = [], []
    for e in entries:
        for group in ("modality", "category", "sub-category"):
            for name, t in (e.result.get(group) or {}).items():
                rubrics = judged(t, "rubrics")  # a row of gated items only is a real 0 (the gate needs no judge)
                notes += [UNAVAILABLE_NOTE] if rubrics is None and t.get("rubrics") is not None else []
                cells = [
                    display(v, e.scorer, f, e.result)
                    for f, v in (("rubrics", rubrics), ("accuracy", t.get("accuracy")))
                ]
                cells = [c if c == "n/a" else c + interval(t, f) for c, f in zip(cells, ("rubrics", "accuracy"))]
                rows.append([e.label, group, name, *cells, _count(t.get("n"))])
    return Table(
        "mmar_groups",
        "MMAR-Rubrics by modality, category and sub-category",
        ["set", "group", "name", "Rubrics", "Accuracy", "n"],
        rows,
        unique(notes),
    )


def audiospan_rubric_table(entries: Sequence[Entry]) -> Table:
    def rubric(e: Entry) -> str:
        why = unavailable(e.result)
        return f"n/a ({why})" if why else shown(e.result, e.scorer, "rubric") + rater_spread(e.result)

    def tier_average(e: Entry) -> Any:  # Table 3's Avg is undefined when a tier's mean is not a score
        tiers = ((e.result.get("by") or {}).get("duration_tier") or {}).values()
        return None if unavailable(e.result) or any(unavailable(t) for t in tiers) else e.result.get("rubric_avg")

    rows = [
        [
            e.label,
            rubric(e),
            display(tier_average(e), e.scorer, "rubric_avg", e.result),
            display(e.result.get("semantic"), e.scorer, "semantic", e.result),
            display(e.result.get("temporal"), e.scorer, "temporal", e.result),
            _count(e.result.get("n")),
            _count(e.result.get("n_scored")),
            _count(e.result.get("n_failed")),
            judges_cell(e.result) or "verdicts given",
        ]
        for e in entries
    ]
    notes = unique(w for e in entries for w in e.result.get("warnings") or [])
    notes += [
        f"{e.label}: tier average n/a: no item of tier {name} was judged (every one failed)"
        for e in entries
        for name, t in ((e.result.get("by") or {}).get("duration_tier") or {}).items()
        if unavailable(t) and not unavailable(e.result)
    ]
    return Table(
        "audiospan_rubric",
        "AudioSpan Rubric (AudioSpan Eq. 2, Eq. 4)",
        ["set", "Rubric", "tier average", "semantic", "temporal", "n", "scored", "failed", "judge"],
        rows,
        notes,
    )


def anchor_chain_table(entries: Sequence[Entry]) -> Table:
    rows = []
    for e in entries:
        chain, mcq = e.result.get("chain"), e.result.get("native_mcq")
        if isinstance(chain, dict):
            rows.append(
                [
                    e.label,
                    "Chain (Eq. 3)",
                    shown(chain, e.scorer, "chain"),
                    display(chain.get("random_chain"), e.scorer, "random_chain", chain),
                    *(display(chain.get(k), e.scorer, k, chain) for k in ("P", "U", "R")),
                    _count(chain.get("n")),
                    _count(chain.get("unparsed")),
                ]
            )
        if isinstance(mcq, dict):
            rows.append(
                [
                    e.label,
                    "native MCQ Accuracy (Eq. 1)",
                    shown(mcq, e.scorer, "accuracy"),
                    display(mcq.get("random_accuracy"), e.scorer, "random_accuracy", mcq),
                    "",
                    "",
                    "",
                    _count(mcq.get("n")),
                    _count(mcq.get("unparsed")),
                ]
            )
    return Table(
        "anchor_chain",
        "AudioSpan multiple-choice scores (random baseline beside each)",
        ["set", "score", "value", "random", "P", "U", "R", "n", "unparsed"],
        rows,
    )


def text_prior_table(entries: Sequence[Entry]) -> Table:
    rows, ns = [], ("2", "3", "4", "5")
    for e in entries:
        r = e.result
        per_model = (r.get("text_prior") or {}).get("per_model") or {}
        for model, tp in per_model.items():
            retention = ((r.get("retention") or {}).get("per_model") or {}).get(model) or {}
            decomposition = ((r.get("decomposition") or {}).get("per_model") or {}).get(model) or {}
            # A run is one model: its R_TP interval (over the items with Full and None) is the text_prior entry's.
            r_tp = display(tp.get("R_TP"), e.scorer, "R_TP", r)
            source = (
                tp
                if isinstance(tp.get("uncertainty"), dict)
                else (r.get("text_prior") or {})
                if len(per_model) == 1
                else {}
            )
            if r_tp != "n/a":
                r_tp += interval(source, "R_TP")
            rows.append(
                [
                    f"{model} [{e.template}]" if e.template else model,
                    *(display(tp.get(k), e.scorer, k, r) for k in ("full", "none", "tb")),
                    r_tp,
                    *(display((retention.get(n) or {}).get("R_N"), e.scorer, "R_N", r) for n in ns),
                    display(decomposition.get("XS_over_AN"), e.scorer, "XS_over_AN", r),
                ]
            )
    return Table(
        "text_prior",
        "Text prior and audio reliance (All That Glitters Is Not Audio, Tables 1 and 3)",
        ["model [template]", "Full", "None", "TB", "R_TP", *(f"R_{n}" for n in ns), "XS/AN"],
        rows,
    )


def judge_card_table(entries: Sequence[Entry]) -> Table:
    """Each judged set's judge card (``evaluation.judge_card``): who judged, as the server reported itself, how,
    and what it cost. Sets scored before the card existed are left out."""
    rows = []
    for e in entries:
        card = e.result.get("judge_card")
        if not isinstance(card, Mapping):
            continue
        served = ", ".join(f"{name} x{count}" for name, count in (card.get("served_models") or {}).items())
        if card.get("served_not_reported"):
            served = (served + "; " if served else "") + f"not reported x{card['served_not_reported']}"
        model = card.get("model")
        tokens = card.get("tokens") or {}
        cost = card.get("cost")
        cost_cell = (
            f"{cost['total']} {cost['currency']}"
            if isinstance(cost, Mapping)
            else f"n/a ({card.get('cost_unavailable')})"
        )
        spread = rater_spread(card).removeprefix("; ") or "-"
        rows.append(
            [
                e.label,
                ", ".join(map(str, model)) if isinstance(model, list) else str(model),
                served or "-",
                str(card.get("endpoint")),
                str(card.get("temperature")),
                str(card.get("seed")),
                f"{card.get('raters')}; {spread}",
                _count(card.get("requests")),
                _count(card.get("reasks")),
                _count(card.get("invalid")),
                _count(card.get("call_failed")),
                f"{_count(tokens.get('prompt'))} / {_count(tokens.get('completion'))}"
                + (
                    f" ({tokens['replies_without_usage']} replies without counts)"
                    if tokens.get("replies_without_usage")
                    else ""
                ),
                cost_cell,
            ]
        )
    return Table(
        f"judge_card_{entries[0].scorer}" if entries else "judge_card",
        f"Judge card: {entries[0].scorer if entries else ''} (who judged, how, what it cost)",
        [
            "set",
            "judge",
            "served as",
            "endpoint",
            "temperature",
            "seed",
            "raters",
            "requests",
            "re-asks",
            "invalid",
            "failed",
            "tokens (prompt / completion)",
            "cost",
        ],
        rows,
    )


# The scorers' tables, by the name a declaration gives them (``scorers.declare.Results.tables``).
RENDERERS: dict[str, Callable[[Sequence[Entry]], Table]] = {
    make.__name__: make
    for make in (
        aria_table,
        perturbations_table,
        mmar_rubrics_table,
        mmar_groups_table,
        audiospan_rubric_table,
        anchor_chain_table,
        text_prior_table,
        judge_card_table,
    )
}


def rows_table(section: Any) -> Callable[[Sequence[Entry]], Table]:
    """The table of a results section whose declaration names none of its own (``scorers.declare.Results``):
    its printed rows (those `audioreason score` prints), one per headline number of each entry."""

    def make(entries: Sequence[Entry]) -> Table:
        rows = [
            [
                e.label,
                row.scorer,
                "n/a" if row.value is None else f"{row.value:.4f}",
                interval_text(row.interval),
                _count(row.n),
                row.backbone,
            ]
            for e in entries
            for row in section.rows(e.result, lambda name: name)
        ]
        return Table(section.name, section.title, ["set", "number", "value", "95% CI", "n", "note"], rows)

    return make


# (results section, table) in report order: accuracy's, then each section's as its declaration lists them (its
# printed rows when it lists none).
TABLES: list[tuple[str, Callable[[Sequence[Entry]], Table]]] = [
    (ACCURACY, accuracy_table),
    *(
        (section.name, RENDERERS[name] if section.tables else rows_table(section))
        for declaration in DECLARATIONS
        for section in declaration.results
        for name in section.tables or ("",)
    ),
]


INTERVAL_NOTE = (
    "[lo, hi] beside a headline: its 95% interval over the items, as `audioreason score` recorded it "
    "(Wilson for an accuracy, a seeded percentile bootstrap otherwise; resamples and seed in "
    "results.json); rater sd: the mean over items of the raters' standard deviation"
)


def _has_intervals(table: Table) -> bool:
    return any("[" in cell and "]" in cell and ", " in cell for row in table.rows for cell in row[1:])


def all_tables(results: Results) -> list[tuple[str, Table]]:
    """(scorer, table) for every scorer with results, in report order; tables without rows left out. A table
    showing intervals says what they are."""
    tables = [(scorer, make(results.of(scorer))) for scorer, make in TABLES if results.of(scorer)]
    for _, table in tables:
        if _has_intervals(table):
            table.notes.append(INTERVAL_NOTE)
    return [(scorer, t) for scorer, t in tables if t.rows]


# ---------------------------------------------------------------------------------------------
# Comparison of runs (audioreason compare, for every pair of scored runs in the report)
# ---------------------------------------------------------------------------------------------

ALPHA = 0.05


def _benchmark_accuracy(entry: Entry) -> Optional[tuple[str, str]]:
    """(field, compare headline) of an accuracy entry when it holds its benchmark's own accuracy."""
    # The benchmark's own rule (load.BENCHMARK_ACCURACY, as the explorer's leaderboard); else the entry's.
    rule, field_name, _ = BENCHMARK_ACCURACY.get(
        benchmark_key(entry.benchmark), (entry.result.get("rule"), "accuracy", "")
    )
    if (rule is not None and entry.result.get("rule") != rule) or number(entry.result.get(field_name)) is None:
        return None
    return field_name, (
        "official_scorer_accuracy"
        if field_name == "official_scorer_accuracy"
        else f"accuracy ({entry.result.get('rule')})"
    )


def comparison_tables(results: Results, compare: Callable[[str, str], dict]) -> tuple[list[Table], list[str]]:
    """With two or more scored runs: a leaderboard by the benchmark's accuracy, each row marked when it is not
    significantly different from the row above it (McNemar exact p >= 0.05 on the items both share; with no
    shared item, 95% Wilson intervals that overlap), and a table per pair of runs from ``compare(a, b)``
    (``audioreason.analysis.compare.compare_runs`` on their results.json). Notes say what could not be
    compared and why."""
    sources = [r["source"] for r in results.runs if r.get("items_file")]
    if len(sources) < 2:
        return [], []
    cache: dict[tuple[str, str], Any] = {}

    def pair(a: str, b: str) -> Any:
        if (a, b) not in cache:
            try:
                cache[(a, b)] = compare(a, b)
            except ValueError as err:
                cache[(a, b)] = str(err)
        return cache[(a, b)]

    notes, tables = [], []
    board = []
    for e in results.of("accuracy"):
        chosen = _benchmark_accuracy(e) if e.source in sources else None
        if chosen:
            board.append((e, *chosen))
    board.sort(
        key=lambda x: (str(x[0].benchmark), str(x[0].condition), str(x[0].template), -float(number(x[0].result[x[1]])))
    )
    rows, above = [], None
    for e, field_name, headline in board:
        mark = ""
        if above is not None and (above[0].benchmark, above[0].condition, above[0].template) == (
            e.benchmark,
            e.condition,
            e.template,
        ):
            mark = _neighbour_mark(above, (e, field_name, headline), pair)
        interval = (e.result.get("uncertainty") or {}).get(field_name)
        rows.append(
            [
                str(e.benchmark),
                e.label,
                field_name.replace("_", " ") + ("" if field_name != "accuracy" else f" ({e.result.get('rule')})"),
                display(e.result.get(field_name), "accuracy", "accuracy", e.result),
                interval_text(interval),
                _count(e.result.get("n")),
                mark,
            ]
        )
        above = (e, field_name, headline)
    if rows:
        tables.append(
            Table(
                "leaderboard",
                "Leaderboard (the benchmark's own accuracy, best first per set)",
                ["benchmark", "set", "accuracy rule", "accuracy", "95% CI", "n", "vs the row above"],
                rows,
                [
                    f"not significant: McNemar's exact test on the items both runs share gives p >= {ALPHA}; "
                    "with no shared item, the two 95% Wilson intervals overlap (said so in the row)"
                ],
            )
        )
    for i, a in enumerate(sources):
        for b in sources[i + 1 :]:
            found = pair(a, b)
            if isinstance(found, str):
                notes.append(f"{a} vs {b}: not compared: {found}")
                continue
            tables.append(_pair_table(found, len(tables)))
    return tables, notes


def _neighbour_mark(above: tuple, below: tuple, pair: Callable[[str, str], Any]) -> str:
    (ea, _, headline), (eb, field_name, _) = above, below
    found = pair(ea.source, eb.source)
    if not isinstance(found, str):
        for c in found["comparisons"]:
            if (c["condition"], c["template"], c["headline"]) == (eb.condition, eb.template, headline):
                p = c["mcnemar"]["p_value"]
                verdict = "not significantly different" if p >= ALPHA else "significantly different"
                return f"{verdict} (McNemar exact p = {p:.4g}, {c['n_shared']} shared items)"
    ia = ((ea.result.get("uncertainty") or {}).get(field_name) or {}).get("ci95")
    ib = ((eb.result.get("uncertainty") or {}).get(field_name) or {}).get("ci95")
    if not ia or not ib:
        return "n/a (no shared items and no intervals)"
    overlap = ia[0] <= ib[1] and ib[0] <= ia[1]
    return (
        ("not significantly different" if overlap else "different")
        + " (no shared items: 95% intervals "
        + ("overlap)" if overlap else "do not overlap)")
    )


def _pair_table(comparison: dict, index: int) -> Table:
    rows = []
    for c in comparison["comparisons"]:
        m, flips = c.get("mcnemar"), c.get("flips")
        flipped = (
            "-"
            if flips is None
            else (
                f"{len(flips['right_to_wrong'])} right->wrong ({', '.join(flips['right_to_wrong'][:5])}"
                f"{', ...' if len(flips['right_to_wrong']) > 5 else ''}); {len(flips['wrong_to_right'])} wrong->right "
                f"({', '.join(flips['wrong_to_right'][:5])}{', ...' if len(flips['wrong_to_right']) > 5 else ''})"
            )
        )
        paired = c["paired"]
        rows.append(
            [
                f"{c['scorer']}: {c['headline']}",
                f"{c['condition']}/{c['template']}",
                str(c["n_shared"]),
                f"{c['a']:.4f}",
                f"{c['b']:.4f}",
                f"{paired['difference']:+.4f}",
                interval_text(paired) if paired.get("ci95") else f"- ({paired.get('unavailable')})",
                "-" if m is None else f"b={m['b']}, c={m['c']}, p={m['p_value']:.4g}",
                flipped,
            ]
        )
    a, b = comparison["a"], comparison["b"]
    return Table(
        f"comparison-{index}",
        f"Comparison: A = {a['model']} vs B = {b['model']} (shared items)",
        [
            "headline",
            "set",
            "n shared",
            "A",
            "B",
            "A - B",
            "95% CI (paired bootstrap)",
            "McNemar exact",
            "flipped items (A -> B)",
        ],
        rows,
        [
            f"A: {a['folder']}",
            f"B: {b['folder']}",
            "A - B: the mean difference over the items both runs answered; its interval is the paired "
            f"percentile bootstrap ({comparison['options']['resamples']} resamples, seed "
            f"{comparison['options']['seed']}); McNemar: b items right in A only, c right in B only",
        ]
        + [
            f"not compared: {n['scorer']} {n['headline']} {n['condition']}/{n['template']}: {n['reason']}"
            for n in comparison["not_compared"]
        ],
    )


def harness_table(results: Results) -> Optional[Table]:
    """Imported lmms-eval logs: lmms-eval's own accuracy beside the official scorer's on the same rows."""
    rows = []
    for run in results.runs:
        lmms = run.get("lmms_eval")
        if not isinstance(lmms, Mapping):
            continue
        rows.append(
            [
                str(run.get("model") or ""),
                str(lmms.get("metric")),
                str(lmms.get("rows")),
                display(lmms.get("lmms_eval_accuracy"), "accuracy", "accuracy", lmms),
                _of_n(lmms.get("random_guesses"), lmms.get("rows")),
                display(lmms.get("official_accuracy"), "accuracy", "accuracy", lmms),
                display(lmms.get("official_on_filtered_accuracy"), "accuracy", "accuracy", lmms),
                _of_n(lmms.get("verdicts_differ"), lmms.get("rows")),
            ]
        )
    if not rows:
        return None
    return Table(
        "harness",
        "lmms-eval beside the official scorer (imported logs)",
        [
            "model",
            "lmms-eval metric",
            "rows",
            "lmms-eval",
            "random guesses",
            "official (raw reply)",
            "official (filtered reply)",
            "verdicts differ",
        ],
        rows,
        [
            "lmms-eval: its own per-sample score (its letter parser on the filtered reply; a random letter where "
            "it finds none); official: the MMAR/MMAU string match, on the raw reply as the official scorer "
            "reads it and on lmms-eval's filtered reply"
        ],
    )


def not_run_table(results: Results) -> Optional[Table]:
    if not results.not_run:
        return None
    return Table(
        "not_run",
        "Scorers that did not run",
        ["source", "scorer", "status", "reason"],
        [[n["source"], n["scorer"], n["status"], n["reason"]] for n in results.not_run],
    )


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(table: Table, level: int = 2) -> str:
    lines = [
        f"{'#' * level} {table.title}",
        "",
        "| " + " | ".join(map(_cell, table.header)) + " |",
        "|" + "|".join("---" for _ in table.header) + "|",
    ]
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in table.rows]
    if table.notes:
        lines += [""] + [f"- {_cell(n)}" for n in table.notes]
    return "\n".join(lines) + "\n"


__all__ = [
    "RENDERERS",
    "TABLES",
    "rows_table",
    "Table",
    "all_tables",
    "comparison_tables",
    "harness_table",
    "markdown",
    "not_run_table",
]
