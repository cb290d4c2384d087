"""The text-prior result's sections, from the scored outcomes of each model (``_ModelTable``): accuracy per
condition, the text-prior rate, the retention curve, the item decomposition (Tables 1, 4), the per-category
table (Table 5) and the per-item rows. The formulas are ``audioreason.scorers.text_prior.formulas``'s; the
entry point that builds the tables and calls these is ``audioreason.scorers.text_prior.scorer.score_text_prior``."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Hashable, Iterable, Mapping, Optional

from audioreason.scorers.text_prior import formulas as tp
from audioreason.scorers.text_prior.records import CORRECT, ERROR, ERROR_METHODS, Outcome
from audioreason.text.conditions import Condition
from audioreason.text.timestamps import as_fraction

TABLE5_N = 2  # Table 5 reports retention at N = 2


@dataclass
class _ModelTable:
    """One model's outcomes: condition -> item -> Outcome."""

    name: str
    by_condition: dict[Condition, dict[Hashable, Outcome]]

    def items(self, condition: Condition) -> dict[Hashable, Outcome]:
        return self.by_condition.get(condition, {})

    @property
    def fragment_conditions(self) -> list[Condition]:
        return sorted(c for c in self.by_condition if c.kind == "frag")

    @property
    def fragment_ns(self) -> list[int]:
        return sorted({c.n for c in self.fragment_conditions})


def _is_correct(outcome: Optional[Outcome]) -> bool:
    return outcome is not None and outcome.status == CORRECT


def _condition_summary(outcomes: Mapping[Hashable, Outcome], universe: int) -> dict[str, Any]:
    statuses = Counter(o.status for o in outcomes.values())
    methods = Counter(o.method for o in outcomes.values())
    return {
        "accuracy": tp.accuracy([o.status == CORRECT for o in outcomes.values()]),
        "n": len(outcomes),
        "correct": statuses[CORRECT],
        "errors": statuses[ERROR],
        "error_reasons": {m: c for m, c in methods.items() if m in ERROR_METHODS or m == "no_prediction"},
        "methods": dict(methods),
        "missing": universe - len(outcomes),
    }


def _accuracy_section(tables: list[_ModelTable], universe: int) -> dict[str, Any]:
    per_model: dict[str, dict[str, Any]] = {}
    for table in tables:
        entry = {
            str(c): _condition_summary(table.items(c), universe)
            for c in sorted(table.by_condition, key=_condition_order)
        }
        for n in table.fragment_ns:  # all fragments of one N pooled: mean over items and k
            pooled = {
                (c.k, item): o for c in table.fragment_conditions if c.n == n for item, o in table.items(c).items()
            }
            entry[f"frag:{n}"] = _condition_summary(pooled, universe * n)
        per_model[table.name] = entry
    conditions = sorted({c for entry in per_model.values() for c in entry}, key=_condition_key_order)
    across = {}
    for condition in conditions:
        values = [
            per_model[m][condition]["accuracy"]
            for m in per_model
            if condition in per_model[m] and per_model[m][condition]["accuracy"] is not None
        ]
        across[condition] = {**tp.stats(values), "models": [m for m in per_model if condition in per_model[m]]}
    return {"per_model": per_model, "across_models": across}


def _condition_order(c: Condition) -> tuple:
    return ({"full": 0, "none": 1, "tb": 2, "frag": 3}[c.kind], c.n or 0, c.k or 0)


def _condition_key_order(key: str) -> tuple:
    parts = key.split(":")
    base = {"full": 0, "none": 1, "tb": 2, "frag": 3}[parts[0]]
    return (base, int(parts[1]) if len(parts) > 1 else 0, int(parts[2]) if len(parts) > 2 else -1)


def _chance_for(
    items: Iterable[Hashable], n_choices: Mapping[Hashable, int], chance: Optional[float]
) -> tuple[Optional[float], str]:
    """The TB chance level: ``chance`` when given (the paper's flat 25 % for MMAU and MMAR), else the
    mean of 1 / (number of choices) over the TB items, when every one has its choices."""
    if chance is not None:
        return as_fraction(chance), "option"
    items = list(items)
    if items and all(i in n_choices for i in items):
        return tp.chance_level([n_choices[i] for i in items]), "choices"
    known = sum(i in n_choices for i in items)
    return None, f"unknown: choices known for {known} of {len(items)} TB items and no chance= option"


def _text_prior_section(
    tables: list[_ModelTable], n_choices: Mapping[Hashable, int], chance: Optional[float]
) -> dict[str, Any]:
    full, none, tb = Condition("full"), Condition("none"), Condition("tb")
    per_model = {}
    for table in tables:
        f, n, t = table.items(full), table.items(none), table.items(tb)
        matched = [i for i in f if i in n]
        acc_full_m = tp.accuracy([_is_correct(f[i]) for i in matched])
        acc_none_m = tp.accuracy([_is_correct(n[i]) for i in matched])
        acc_tb = tp.accuracy([_is_correct(o) for o in t.values()])
        chance_value, chance_source = _chance_for(t, n_choices, chance) if t else (None, "no TB predictions")
        per_model[table.name] = {
            "full": tp.accuracy([_is_correct(o) for o in f.values()]),
            "none": tp.accuracy([_is_correct(o) for o in n.values()]),
            "tb": acc_tb,
            "n_full": len(f),
            "n_none": len(n),
            "n_tb": len(t),
            "matched_items": len(matched),
            "full_matched": acc_full_m,
            "none_matched": acc_none_m,
            "R_TP": tp.text_prior_rate(acc_none_m, acc_full_m),
            "chance": chance_value,
            "chance_source": chance_source,
            "tb_minus_chance": (acc_tb - chance_value) if acc_tb is not None and chance_value is not None else None,
        }
    both = [m for m, e in per_model.items() if e["full_matched"] is not None and e["none_matched"] is not None]
    with_tb = [m for m, e in per_model.items() if e["tb_minus_chance"] is not None]
    ratios = [per_model[m]["R_TP"] for m in both if per_model[m]["R_TP"] is not None]
    return {
        "per_model": per_model,
        "R_TP": tp.pooled_text_prior_rate(
            [per_model[m]["none_matched"] for m in both], [per_model[m]["full_matched"] for m in both]
        ),
        "R_TP_models": both,
        "R_TP_mean_of_ratios": tp.mean_or_none(ratios),
        "full_mean": tp.mean_or_none([per_model[m]["full_matched"] for m in both]),
        "none_mean": tp.mean_or_none([per_model[m]["none_matched"] for m in both]),
        "tb_mean": tp.mean_or_none([per_model[m]["tb"] for m in per_model if per_model[m]["tb"] is not None]),
        "chance_mean": tp.mean_or_none([per_model[m]["chance"] for m in with_tb]),
        "tb_minus_chance_mean": tp.mean_or_none([per_model[m]["tb_minus_chance"] for m in with_tb]),
        "tb_minus_chance_models": with_tb,
    }


def _retention_for(table: _ModelTable, n: int, items: Optional[set] = None) -> dict[str, Any]:
    """R_N of one model over the items (optionally restricted) that have Full and all N fragments."""
    full = table.items(Condition("full"))
    frags = [table.items(Condition("frag", n, k)) for k in range(n)]
    missing_k = [k for k in range(n) if not frags[k]]
    candidates = [i for i in full if items is None or i in items]
    complete = [i for i in candidates if all(i in frag for frag in frags)]
    entry: dict[str, Any] = {
        "R_N": None,
        "fragment_accuracy": None,
        "full_accuracy": None,
        "n_items": len(complete),
        "items_without_all_fragments": len(candidates) - len(complete),
        "errored_fragment_predictions": sum(frag[i].status == ERROR for frag in frags for i in complete),
        "reason": None,
    }
    if not table.fragment_conditions:
        entry["reason"] = "no fragment predictions"
    elif len(missing_k) == n:
        entry["reason"] = f"no fragment predictions for N={n}"
    elif missing_k:
        entry["reason"] = f"fragment k={missing_k} of N={n} has no prediction"
    elif not complete:
        entry["reason"] = f"no item has Full and all {n} fragments"
    else:
        entry["fragment_accuracy"] = tp.fragment_accuracy([[_is_correct(frag[i]) for frag in frags] for i in complete])
        entry["full_accuracy"] = tp.accuracy([_is_correct(full[i]) for i in complete])
        entry["R_N"] = tp.retention_rate(
            [[_is_correct(frag[i]) for frag in frags] for i in complete], entry["full_accuracy"]
        )
        if entry["R_N"] is None:
            entry["reason"] = "Full accuracy is 0 on these items"
    return entry


def _retention_section(tables: list[_ModelTable]) -> dict[str, Any]:
    ns = sorted({n for t in tables for n in t.fragment_ns})
    per_model = {t.name: {n: _retention_for(t, n) for n in ns} for t in tables}
    curve = []
    for n in ns:
        used = [m for m in per_model if per_model[m][n]["R_N"] is not None]
        curve.append(
            {
                "N": n,
                **tp.stats([per_model[m][n]["R_N"] for m in used]),
                "models": used,
                "excluded": {m: per_model[m][n]["reason"] for m in per_model if m not in used},
            }
        )
    return {"per_model": per_model, "curve": curve, "unit": "fraction of Full accuracy"}


def _fragment_evidence(outcome: Outcome, errored_fragments: str) -> Optional[bool]:
    """A fragment outcome as ``categorize_item`` reads it: True, False or None (errored). Under
    "sufficient" only a run that errored (no prediction) is errored, as in the public analysis code; an
    output that could not be read or judged is a wrong answer there. Under "separate" both are errored."""
    if outcome.status != ERROR:
        return outcome.status == CORRECT
    if errored_fragments == "sufficient" and outcome.method != "no_prediction":
        return False
    return None


def _categorize(table: _ModelTable, item: Hashable, errored_fragments: str) -> tuple[str, Optional[str]]:
    """(label, why an XS label is unverified) of one item present in Full and None."""
    full, none = table.items(Condition("full"))[item], table.items(Condition("none"))[item]
    outcomes, missing = None, 0
    if table.fragment_conditions:
        outcomes = []
        for c in table.fragment_conditions:
            o = table.items(c).get(item)
            if o is None:
                missing += 1
            else:
                outcomes.append(_fragment_evidence(o, errored_fragments))
    return tp.categorize_item(
        _is_correct(full), _is_correct(none), outcomes, missing_fragments=missing, errored_fragments=errored_fragments
    )


def _decomposition_section(
    tables: list[_ModelTable], errored_fragments: str, zero_an_models: str
) -> tuple[dict[str, Any], dict]:
    per_model, labels_by_model = {}, {}
    for table in tables:
        full, none = table.items(Condition("full")), table.items(Condition("none"))
        q = [i for i in full if i in none]
        labelled = {i: _categorize(table, i, errored_fragments) for i in q}
        labels_by_model[table.name] = labelled
        counts = tp.count_labels(label for label, _ in labelled.values())
        has_fragments = bool(table.fragment_conditions)
        # With fragments the five categories partition Q; without, TS / AN / AH / UN do.
        partition = tp.CATEGORIES if has_fragments else (tp.TS, tp.AN_UNSPLIT, tp.AH, tp.UN)
        assert sum(counts[c] for c in partition) == len(q), (table.name, counts, len(q))
        reasons = Counter(r for _, r in labelled.values() if r)
        unverified = reasons["errored"] + reasons["missing"]
        per_model[table.name] = {
            "n_items": len(q),
            "fragments_evaluated": has_fragments,
            "counts": counts,
            "shares": tp.shares(counts, len(q)),
            "AN_share": Fraction(counts["AN_total"], len(q)) if q else None,
            "XS_unverified": unverified,
            "unverified_reasons": {"errored": reasons["errored"], "missing": reasons["missing"]},
            "XS_over_AN": tp.global_dependency(counts[tp.FS], counts[tp.XS]) if has_fragments else None,
            "XS_over_AN_bounds": (
                tp.global_dependency_bounds(counts[tp.FS], counts[tp.XS], unverified) if has_fragments else None
            ),
            "errored_full_or_none": sum(full[i].status == ERROR or none[i].status == ERROR for i in q),
            "missing_full": sum(i not in full for i in none),
            "missing_none": sum(i not in none for i in full),
        }
    # XS/AN across models (Table 4): the models with fragments and at least one item in Q. A model without
    # any item in Q has no decomposition and is left out, never averaged in as 0 (the public code's
    # decompose_model returns None for it); one with items but |AN| = 0 follows zero_an_models.
    excluded = {}
    for m, e in per_model.items():
        if not e["fragments_evaluated"]:
            excluded[m] = "no fragment predictions"
        elif not e["n_items"]:
            excluded[m] = "no item with both a Full and a None prediction"
    decomposed = [m for m in per_model if m not in excluded]
    xs_terms = {
        m: tp.xs_over_an_for_mean(per_model[m]["counts"][tp.FS], per_model[m]["counts"][tp.XS], zero_an_models)
        for m in decomposed
    }
    with_xs = [m for m in decomposed if xs_terms[m] is not None]
    zero_an = [m for m in decomposed if per_model[m]["XS_over_AN"] is None]
    excluded.update({m: "no audio-needed item (zero_an_models='exclude')" for m in zero_an if m not in with_xs})
    with_items = [m for m, e in per_model.items() if e["n_items"]]
    mean_shares = {
        c: tp.mean_or_none([per_model[m]["shares"][c] for m in with_items]) for c in tp.LABELS + ("AN_total",)
    }
    section = {
        "per_model": per_model,
        "XS_over_AN": {
            **tp.stats([xs_terms[m] for m in with_xs]),
            "models": with_xs,
            "excluded": {m: excluded[m] for m in per_model if m in excluded},
            "models_with_zero_AN": zero_an,
            "zero_an_models": zero_an_models,
        },
        "AN_share": {**tp.stats([per_model[m]["AN_share"] for m in with_items]), "models": with_items},
        "mean_shares": mean_shares,
        "models_without_fragments": [m for m, e in per_model.items() if not e["fragments_evaluated"]],
        "errored_fragments": errored_fragments,
    }
    return section, labels_by_model


def _category_section(
    tables: list[_ModelTable], item_category: Mapping[Hashable, str], universe: set
) -> Optional[list[dict[str, Any]]]:
    if not item_category:
        return None
    groups: dict[str, set] = defaultdict(set)
    for item in universe:
        groups[item_category.get(item, "(uncategorized)")].add(item)
    rows = []
    for category, items in groups.items():
        per_model = {}
        for table in tables:
            f = {i: o for i, o in table.items(Condition("full")).items() if i in items}
            n = {i: o for i, o in table.items(Condition("none")).items() if i in items}
            if not f or not n:
                continue
            acc_full = tp.accuracy([_is_correct(o) for o in f.values()])
            acc_none = tp.accuracy([_is_correct(o) for o in n.values()])
            retention = _retention_for(table, TABLE5_N, items)  # R_N None (with a reason) without N=2
            per_model[table.name] = {
                "full": acc_full,
                "none": acc_none,
                "gap": acc_full - acc_none,
                "frag_accuracy": retention["fragment_accuracy"],
                "R_N": retention["R_N"],
            }
        with_r = [m for m, e in per_model.items() if e["R_N"] is not None]
        rows.append(
            {
                "category": category,
                "n_items": len(items),
                "share": Fraction(len(items), len(universe)),
                "n_models": len(per_model),
                "full": tp.mean_or_none([e["full"] for e in per_model.values()]),
                "none": tp.mean_or_none([e["none"] for e in per_model.values()]),
                "gap": tp.mean_or_none([e["gap"] for e in per_model.values()]),
                f"frag{TABLE5_N}_accuracy": tp.mean_or_none([per_model[m]["frag_accuracy"] for m in with_r]),
                f"R_{TABLE5_N}": tp.mean_or_none([per_model[m]["R_N"] for m in with_r]),
                f"R_{TABLE5_N}_models": len(with_r),
                "per_model": per_model,
            }
        )
    # Table 5's order: most audio-dependent (largest Full - None gap) first; categories no model covers last.
    rows.sort(key=lambda r: (r["gap"] is None, -(r["gap"] or 0.0), r["category"]))
    return rows


def _item_rows(
    tables: list[_ModelTable],
    labels: Mapping[str, Mapping[Hashable, tuple]],
    item_category: Mapping[Hashable, str],
    universe: set,
) -> list[dict[str, Any]]:
    rows = []
    ordered = sorted(universe, key=lambda i: (type(i).__name__, str(i)))
    for table in tables:
        for item in ordered:
            present = {c: table.items(c)[item] for c in table.by_condition if item in table.items(c)}
            if not present:
                continue
            label, unverified = labels[table.name].get(item, (None, None))
            status = lambda kind: present[Condition(kind)].status if Condition(kind) in present else None  # noqa: E731
            rows.append(
                {
                    "model": table.name,
                    "item_id": item,
                    "category": item_category.get(item),
                    "label": label,
                    "unverified_reason": unverified,  # "errored" / "missing" for an unverified XS item
                    "full": status("full"),
                    "none": status("none"),
                    "tb": status("tb"),
                    "fragments": {str(c): present[c].status for c in table.fragment_conditions if c in present},
                    "missing_fragments": [str(c) for c in table.fragment_conditions if c not in present],
                }
            )
    return rows
