"""Text prior and audio reliance: the pure formulas and the full scorer on hand-computed tables."""

import random
from collections import Counter
from fractions import Fraction

import pytest

from audioreason.scorers.text_prior import formulas as tp
from audioreason.scorers.text_prior.examples import demo_records, demo_rows
from audioreason.scorers.text_prior.inputs import records_from_columns, records_from_jsonl, records_from_nested
from audioreason.scorers.text_prior.records import TEXT_PRIOR_KINDS
from audioreason.scorers.text_prior.scorer import score_text_prior
from audioreason.scorers.text_prior.tables import summary_tables
from audioreason.text.conditions import Condition, parse_condition

CHOICES = ["Dog barking", "Rain", "Piano", "Wind"]
CATEGORY = {"a": "sound", "b": "sound", "c": "sound", "d": "speech", "e": "speech", "f": "speech"}
T, F, E = True, False, None  # correct, wrong, errored

# model -> item -> (full, none, tb, {condition: correct}); a missing key is a missing prediction.
# m1: every condition for N = 2, 3; f's frag:3:2 errored.      a..f: TS FS XS AH UN XS(unverified, errored)
# m2: N = 2, 3 but frag:3:2 never run (a model with a fragment missing), c lacks frag:2:1,
#     f has no None row, no TB at all.                          a..e: TS FS XS(unverified, missing) XS FS
# m3: no fragment condition at all.                             a..f: TS AN AH UN AN AN
TABLE = {
    "m1": {
        "a": (T, T, T, {"frag:2:0": T, "frag:2:1": T, "frag:3:0": T, "frag:3:1": T, "frag:3:2": T}),
        "b": (T, F, T, {"frag:2:0": F, "frag:2:1": T, "frag:3:0": F, "frag:3:1": F, "frag:3:2": F}),
        "c": (T, F, F, {"frag:2:0": F, "frag:2:1": F, "frag:3:0": F, "frag:3:1": F, "frag:3:2": F}),
        "d": (F, T, T, {"frag:2:0": T, "frag:2:1": F, "frag:3:0": F, "frag:3:1": F, "frag:3:2": F}),
        "e": (F, F, F, {"frag:2:0": F, "frag:2:1": F, "frag:3:0": F, "frag:3:1": F, "frag:3:2": F}),
        "f": (T, F, F, {"frag:2:0": F, "frag:2:1": F, "frag:3:0": F, "frag:3:1": F, "frag:3:2": E}),
    },
    "m2": {
        "a": (T, T, None, {"frag:2:0": T, "frag:2:1": T, "frag:3:0": T, "frag:3:1": F}),
        "b": (T, F, None, {"frag:2:0": T, "frag:2:1": F, "frag:3:0": F, "frag:3:1": F}),
        "c": (T, F, None, {"frag:2:0": F, "frag:3:0": F, "frag:3:1": F}),
        "d": (T, F, None, {"frag:2:0": F, "frag:2:1": F, "frag:3:0": F, "frag:3:1": F}),
        "e": (T, F, None, {"frag:2:0": F, "frag:2:1": F, "frag:3:0": F, "frag:3:1": T}),
        "f": (T, "missing", None, {"frag:2:0": F, "frag:2:1": T, "frag:3:0": F, "frag:3:1": F}),
    },
    "m3": {
        "a": (T, T, T, {}),
        "b": (T, F, F, {}),
        "c": (F, T, F, {}),
        "d": (F, F, F, {}),
        "e": (T, F, F, {}),
        "f": (T, F, F, {}),
    },
}


def table_records(table=TABLE, with_choices=True):
    records = []
    for model, items in table.items():
        for item, (full, none, tb, fragments) in items.items():
            conditions = {"full": full, "none": none, "tb": tb, **fragments}
            for condition, value in conditions.items():
                if value is None and condition == "tb" or value == "missing":
                    continue  # not run
                records.append(
                    {
                        "model": model,
                        "item_id": item,
                        "condition": condition,
                        "prediction": value,
                        "category": CATEGORY[item],
                        "choices": CHOICES if with_choices else None,
                    }
                )
    return records


@pytest.fixture(scope="module")
def result():
    return score_text_prior(table_records(), return_items=True)


# ---------------------------------------------------------------------------------------------
# Pure formulas
# ---------------------------------------------------------------------------------------------


def test_formulas_by_hand():
    assert tp.accuracy([True, False, True, True]) == 0.75 and tp.accuracy([]) is None
    assert tp.text_prior_rate(0.3, 0.6) == 0.5
    assert tp.text_prior_rate(0.3, 0.0) is None and tp.text_prior_rate(None, 0.5) is None
    # ratio of sums, not mean of ratios: (0.2 + 0.3) / (0.4 + 0.9) = 0.5 / 1.3
    assert tp.pooled_text_prior_rate([0.2, 0.3], [0.4, 0.9]) == pytest.approx(0.5 / 1.3)
    assert tp.pooled_text_prior_rate([], []) is None
    assert tp.chance_level([4, 4, 2]) == pytest.approx((0.25 + 0.25 + 0.5) / 3)
    # Eq. 1: per-item means 0.5, 1, 0 -> 0.5; / Acc_full 0.75 -> 66.67 %
    frag = [[True, False], [True, True], [False, False]]
    assert tp.fragment_accuracy(frag) == 0.5
    assert tp.retention_rate(frag, 0.75) == pytest.approx(0.5 / 0.75)
    assert tp.retention_rate(frag, 0.0) is None and tp.retention_rate([], 0.5) is None
    assert tp.global_dependency(3, 1) == 0.25 and tp.global_dependency(0, 0) is None
    # FS 2, XS 2 of which 1 unverified: 1/4 if it turned out FS, 2/4 as counted
    assert tp.global_dependency_bounds(2, 2, 1) == (0.25, 0.5) and tp.global_dependency_bounds(0, 0, 0) is None
    with pytest.raises(ValueError, match="xs_unverified"):
        tp.global_dependency_bounds(2, 1, 2)
    assert tp.stats([1.0, 3.0, 2.0]) == {"mean": 2.0, "min": 1.0, "max": 3.0, "n": 3}
    with pytest.raises(ValueError):
        tp.pooled_text_prior_rate([0.1], [0.2, 0.3])


@pytest.mark.parametrize(
    "full, none, fragments, missing, mode, label, reason",
    [
        (True, True, [False], 0, "separate", "TS", None),
        (False, True, [True], 0, "separate", "AH", None),
        (False, False, [True], 0, "separate", "UN", None),
        (False, False, [None], 1, "separate", "UN", None),  # incomplete fragments matter only for AN items
        (True, False, [False, True], 0, "separate", "FS", None),
        (True, False, [False, False], 0, "separate", "XS", None),
        (True, False, [False, False], 0, "sufficient", "XS", None),
        (True, False, None, 0, "separate", "AN", None),  # model without fragments: not split
        (True, False, [False, None], 0, "separate", "XS", "errored"),
        (True, False, [False, None], 0, "sufficient", "FS", None),  # public analysis code
        (True, False, [True, None], 0, "separate", "FS", None),  # a correct fragment decides in every mode
        (True, False, [False], 1, "separate", "XS", "missing"),
        (True, False, [False], 1, "sufficient", "XS", "missing"),  # a missing row is never counted correct
        (True, False, [], 2, "separate", "XS", "missing"),
        (True, False, [None], 1, "separate", "XS", "errored"),  # both: counted once, under errored
        (True, False, [None], 1, "sufficient", "FS", None),
        (True, False, [True], 1, "separate", "FS", None),
    ],
)
def test_categorize_item_table1(full, none, fragments, missing, mode, label, reason):
    got = tp.categorize_item(full, none, fragments, missing_fragments=missing, errored_fragments=mode)
    assert got == (label, reason)


def test_categorize_rejects_bad_options():
    assert tp.ERRORED_FRAGMENT_MODES == ("separate", "sufficient")
    for mode in ("ignore", "insufficient"):
        with pytest.raises(ValueError, match="errored_fragments"):
            tp.categorize_item(True, False, [], errored_fragments=mode)
    with pytest.raises(ValueError, match="unknown item category"):
        tp.count_labels(["TS", "AN_undetermined"])
    with pytest.raises(ValueError, match="unknown item category"):
        tp.count_labels(["TS", "XX"])


# ---------------------------------------------------------------------------------------------
# The hand-computed table
# ---------------------------------------------------------------------------------------------


def test_accuracy_per_condition(result):
    m1 = result["accuracy"]["per_model"]["m1"]
    assert m1["full"]["accuracy"] == pytest.approx(4 / 6) and m1["none"]["accuracy"] == pytest.approx(2 / 6)
    assert m1["frag:2"]["accuracy"] == pytest.approx(4 / 12)  # a: 2, b: 1, d: 1 of 12 predictions
    assert m1["frag:3:2"]["errors"] == 1 and m1["frag:3:2"]["error_reasons"] == {"no_prediction": 1}
    m2 = result["accuracy"]["per_model"]["m2"]
    assert m2["none"]["n"] == 5 and m2["none"]["missing"] == 1 and m2["frag:2:1"]["missing"] == 1
    assert "tb" not in m2 and "frag:3:2" not in m2
    assert result["counts"]["errored_predictions"]["m1"]["frag:3:2"] == 1
    assert result["counts"]["missing_predictions"]["m2"]["frag:2:1"] == 1
    assert result["counts"]["absent_conditions"] == {"m1": [], "m2": ["tb"], "m3": ["fragments"]}
    assert result["accuracy"]["across_models"]["full"]["mean"] == pytest.approx((4 / 6 + 1 + 4 / 6) / 3)


def test_text_prior_rate_and_tb_above_chance(result):
    text_prior = result["text_prior"]
    per = text_prior["per_model"]
    assert per["m1"]["R_TP"] == pytest.approx(0.5)
    # m2 over the 5 items with both Full and None: 5/5 and 1/5
    assert (per["m2"]["matched_items"], per["m2"]["full_matched"], per["m2"]["none_matched"]) == (5, 1.0, 0.2)
    assert per["m2"]["R_TP"] == pytest.approx(0.2) and per["m2"]["full"] == 1.0
    assert per["m3"]["R_TP"] == pytest.approx(0.5)
    # sum None / sum Full = (1/3 + 1/5 + 1/3) / (2/3 + 1 + 2/3) = 13/35
    assert text_prior["R_TP"] == pytest.approx(13 / 35)
    assert text_prior["R_TP_mean_of_ratios"] == pytest.approx(0.4)
    assert per["m1"]["chance"] == 0.25 and per["m1"]["chance_source"] == "choices"
    assert per["m1"]["tb_minus_chance"] == pytest.approx(0.25)
    assert per["m3"]["tb_minus_chance"] == pytest.approx(1 / 6 - 1 / 4)
    assert per["m2"]["tb"] is None and per["m2"]["chance_source"] == "no TB predictions"
    assert text_prior["tb_minus_chance_models"] == ["m1", "m3"]
    assert text_prior["tb_minus_chance_mean"] == pytest.approx(1 / 12)


def test_retention_curve(result):
    per = result["retention"]["per_model"]
    # m1 N=2: items (1,1) (0,1) (0,0) (1,0) (0,0) (0,0) -> 2/6; / Acc_full 4/6 -> 50 %
    assert per["m1"][2]["fragment_accuracy"] == pytest.approx(1 / 3) and per["m1"][2]["R_N"] == pytest.approx(0.5)
    # m1 N=3: only a -> 1/6 (f's errored fragment counts as not correct); / 4/6 -> 25 %
    assert per["m1"][3]["R_N"] == pytest.approx(0.25) and per["m1"][3]["errored_fragment_predictions"] == 1
    # m2 N=2 without c (no frag:2:1): a 1, b .5, d 0, e 0, f .5 -> 0.4; Full 5/5 -> 40 %
    assert per["m2"][2]["R_N"] == pytest.approx(0.4)
    assert (per["m2"][2]["n_items"], per["m2"][2]["items_without_all_fragments"]) == (5, 1)
    assert per["m2"][3]["R_N"] is None and "k=[2]" in per["m2"][3]["reason"]
    assert per["m3"][2]["R_N"] is None and per["m3"][2]["reason"] == "no fragment predictions"
    curve = {p["N"]: p for p in result["retention"]["curve"]}
    assert curve[2]["mean"] == pytest.approx(0.45) and curve[2]["models"] == ["m1", "m2"]
    assert (curve[2]["min"], curve[2]["max"]) == (pytest.approx(0.4), pytest.approx(0.5))
    assert curve[3]["mean"] == pytest.approx(0.25) and curve[3]["models"] == ["m1"]
    assert set(curve[3]["excluded"]) == {"m2", "m3"}


def test_decomposition(result):
    dec = result["decomposition"]
    m1, m2, m3 = (dec["per_model"][m] for m in ("m1", "m2", "m3"))
    five = ("TS", "FS", "XS", "AH", "UN")
    assert tp.LABELS == five + ("AN",)
    # m1: f has no correct fragment and frag:3:2 errored -> XS, unverified
    assert [m1["counts"][c] for c in five] == [1, 1, 2, 1, 1] and m1["counts"]["AN"] == 0
    assert m1["XS_unverified"] == 1 and m1["unverified_reasons"] == {"errored": 1, "missing": 0}
    assert m1["XS_over_AN"] == pytest.approx(2 / 3)
    assert m1["XS_over_AN_bounds"] == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert m1["AN_share"] == 0.5 and m1["counts"]["AN_total"] == 3
    # m2: f has no None row, so Q = a..e; c lacks frag:2:1 and nothing else is correct -> XS, unverified
    assert m2["n_items"] == 5 and m2["missing_none"] == 1
    assert [m2["counts"][c] for c in five] == [1, 2, 2, 0, 0] and m2["counts"]["AN"] == 0
    assert m2["XS_unverified"] == 1 and m2["unverified_reasons"] == {"errored": 0, "missing": 1}
    assert m2["XS_over_AN"] == 0.5 and m2["XS_over_AN_bounds"] == (0.25, 0.5)
    # m3: no fragments -> TS / AN / AH / UN, FS and XS empty, excluded from XS/AN
    assert [m3["counts"][c] for c in ("TS", "AN", "AH", "UN")] == [1, 3, 1, 1]
    assert m3["counts"]["FS"] == m3["counts"]["XS"] == 0 and m3["counts"]["AN_total"] == 3
    assert m3["XS_over_AN"] is None and m3["XS_over_AN_bounds"] is None and m3["fragments_evaluated"] is False
    assert m3["XS_unverified"] == 0
    assert dec["models_without_fragments"] == ["m3"]
    assert dec["XS_over_AN"] == {
        "mean": pytest.approx(7 / 12),
        "min": 0.5,
        "max": pytest.approx(2 / 3),
        "n": 2,
        "models": ["m1", "m2"],
        "excluded": {"m3": "no fragment predictions"},
        "models_with_zero_AN": [],
        "zero_an_models": "as_zero",
    }
    assert dec["mean_shares"]["TS"] == pytest.approx((1 / 6 + 1 / 5 + 1 / 6) / 3)
    assert dec["mean_shares"]["XS"] == pytest.approx((2 / 6 + 2 / 5 + 0) / 3)
    assert sum(dec["mean_shares"][c] for c in tp.LABELS) == pytest.approx(1)
    for entry in (m1, m2):  # the five categories partition Q
        assert sum(entry["counts"][c] for c in five) == entry["n_items"]
    assert sum(m3["counts"][c] for c in ("TS", "AN", "AH", "UN")) == m3["n_items"]


def test_errored_fragment_modes_move_only_that_item():
    records = table_records()
    runs = {
        mode: score_text_prior(records, errored_fragments=mode, return_items=True)
        for mode in ("separate", "sufficient")
    }
    m1 = {mode: r["decomposition"]["per_model"]["m1"] for mode, r in runs.items()}
    split = {mode: (e["counts"]["FS"], e["counts"]["XS"], e["XS_unverified"]) for mode, e in m1.items()}
    assert split == {"separate": (1, 2, 1), "sufficient": (2, 1, 0)}
    assert m1["sufficient"]["XS_over_AN"] == pytest.approx(1 / 3)
    assert m1["sufficient"]["XS_over_AN_bounds"] == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    # m2's unverified item is missing a row, not errored: the same in both modes
    m2 = {mode: r["decomposition"]["per_model"]["m2"] for mode, r in runs.items()}
    assert m2["sufficient"] == m2["separate"]
    changed = [
        (a["model"], a["item_id"], a["label"], b["label"])
        for a, b in zip(runs["separate"]["items"], runs["sufficient"]["items"])
        if a != b
    ]
    assert changed == [("m1", "f", "XS", "FS")]


def test_unverified_reasons_and_modes():
    """Audio-needed items with fragments 2:0, 2:1 (T correct, F wrong, E errored, - missing row):
    p T F, q F F, r F E, s F -, t E - (errored and missing: counted once, under errored), u - T."""
    fragments = {"p": (T, F), "q": (F, F), "r": (F, E), "s": (F, "-"), "t": (E, "-"), "u": ("-", T)}
    records = [
        {"model": "m", "item_id": i, "condition": c, "prediction": v}
        for i, frag in fragments.items()
        for c, v in (("full", T), ("none", F), ("frag:2:0", frag[0]), ("frag:2:1", frag[1]))
        if v != "-"
    ]
    want = {  # mode -> labels of p..u, XS_unverified, reasons, bounds
        "separate": ("FS XS XS XS XS FS", 3, {"errored": 2, "missing": 1}, (1 / 6, 4 / 6)),
        "sufficient": ("FS XS FS XS FS FS", 1, {"errored": 0, "missing": 1}, (1 / 6, 2 / 6)),
    }
    reasons = {
        "separate": [None, None, "errored", "missing", "errored", None],
        "sufficient": [None, None, None, "missing", None, None],
    }
    for mode, (labels, unverified, why, bounds) in want.items():
        result = score_text_prior(records, errored_fragments=mode, return_items=True)
        entry = result["decomposition"]["per_model"]["m"]
        assert [r["label"] for r in result["items"]] == labels.split()
        assert [r["unverified_reason"] for r in result["items"]] == reasons[mode]
        assert (entry["XS_unverified"], entry["unverified_reasons"]) == (unverified, why)
        assert entry["XS_over_AN_bounds"] == (pytest.approx(bounds[0]), pytest.approx(bounds[1]))
        assert entry["XS_over_AN"] == pytest.approx(bounds[1])
        assert sum(entry["counts"][c] for c in tp.CATEGORIES) == entry["n_items"] == 6


def test_five_categories_always_sum_to_the_item_count():
    """Random tables in three regimes: every fragment present and answered; errored fragments but none
    missing; errored and missing (weighted towards wrong fragments). In every mode, for every model with
    fragments, TS + FS + XS + AH + UN = |Q|; for the model without fragments, TS + AN + AH + UN = |Q|.
    Unverified XS items are a subset of XS, and the public code's XS/AN lies within the default's bounds."""
    rng = random.Random(7)
    checked = Counter()
    for trial in range(36):
        errors, missing = trial % 3 >= 1, trial % 3 == 2
        records = []
        for m in range(3):
            ns = [] if m == 2 else rng.sample([2, 3, 4, 5], rng.randint(1, 4))
            for i in range(rng.randint(1, 12)):
                for condition in ["full", "none"] + [f"frag:{n}:{k}" for n in ns for k in range(n)]:
                    if missing and rng.random() < 0.1:
                        continue
                    # fragments mostly wrong, so that audio-needed items often lack a correct one
                    weights = (0.1, 0.75, 0.15 * errors) if condition.startswith("frag") else (0.5, 0.5, 0)
                    records.append(
                        {
                            "model": f"m{m}",
                            "item_id": i,
                            "condition": condition,
                            "prediction": rng.choices([True, False, None], weights)[0],
                        }
                    )
        runs = {
            mode: score_text_prior(records, errored_fragments=mode, return_items=True)
            for mode in tp.ERRORED_FRAGMENT_MODES
        }
        for mode, result in runs.items():
            for name, entry in result["decomposition"]["per_model"].items():
                counts, n_items = entry["counts"], entry["n_items"]
                if entry["fragments_evaluated"]:
                    assert sum(counts[c] for c in tp.CATEGORIES) == n_items and counts["AN"] == 0
                    checked[mode] += 1
                else:
                    assert sum(counts[c] for c in ("TS", "AN", "AH", "UN")) == n_items
                    assert counts["FS"] == counts["XS"] == 0 and entry["XS_over_AN"] is None
                assert counts["AN_total"] == counts["FS"] + counts["XS"] + counts["AN"]
                flagged = [r for r in result["items"] if r["model"] == name and r["unverified_reason"]]
                assert all(r["label"] == "XS" for r in flagged)
                assert entry["XS_unverified"] == len(flagged) == sum(entry["unverified_reasons"].values())
                assert entry["XS_unverified"] <= counts["XS"]
                if mode == "sufficient":
                    assert entry["unverified_reasons"]["errored"] == 0
                if not errors and not missing:
                    assert entry["XS_unverified"] == 0
        for name, entry in runs["separate"]["decomposition"]["per_model"].items():
            if entry["XS_over_AN"] is not None:
                low, high = entry["XS_over_AN_bounds"]
                public = runs["sufficient"]["decomposition"]["per_model"][name]["XS_over_AN"]
                assert low - 1e-12 <= public <= high + 1e-12
                checked["unverified"] += entry["XS_unverified"] > 0
    assert checked["separate"] == checked["sufficient"] >= 60 and checked["unverified"] >= 12


def test_by_category_table5(result):
    rows = result["by_category"]
    assert [r["category"] for r in rows] == ["speech", "sound"]  # ordered by Full - None gap
    speech, sound = rows
    # speech: Full (1/3, 1, 2/3), None (1/3, 0, 0), gaps (0, 1, 2/3)
    assert speech["full"] == pytest.approx(2 / 3) and speech["none"] == pytest.approx(1 / 9)
    assert speech["gap"] == pytest.approx(5 / 9) and speech["n_models"] == 3
    # N=2: m1 (d .5, e 0, f 0) = 1/6 over Full 1/3 -> 50; m2 (d 0, e 0, f .5) = 1/6 over Full 1 -> 16.7
    assert speech["frag2_accuracy"] == pytest.approx(1 / 6) and speech["R_2"] == pytest.approx((0.5 + 1 / 6) / 2)
    assert sound["gap"] == pytest.approx(4 / 9) and sound["full"] == pytest.approx(8 / 9)
    # sound N=2: m1 (a 1, b .5, c 0) = .5 -> 50; m2 without c (a 1, b .5) = .75 -> 75
    assert sound["R_2"] == pytest.approx(0.625) and sound["R_2_models"] == 2
    assert (sound["n_items"], sound["share"]) == (3, 0.5)


def test_per_item_categories(result):
    items = {(r["model"], r["item_id"]): r for r in result["items"]}
    assert items[("m1", "f")]["label"] == "XS" and items[("m1", "f")]["unverified_reason"] == "errored"
    assert items[("m1", "f")]["fragments"]["frag:3:2"] == "error"
    assert items[("m2", "c")]["label"] == "XS" and items[("m2", "c")]["unverified_reason"] == "missing"
    assert items[("m2", "c")]["missing_fragments"] == ["frag:2:1"]
    assert items[("m2", "d")]["label"] == "XS" and items[("m2", "d")]["unverified_reason"] is None
    assert items[("m2", "f")]["label"] is None and items[("m2", "f")]["none"] is None  # not in Q
    assert items[("m3", "b")]["label"] == "AN" and items[("m3", "b")]["category"] == "sound"
    assert items[("m1", "c")]["label"] == "XS" and items[("m1", "c")]["unverified_reason"] is None
    assert items[("m1", "d")]["label"] == "AH" and "undetermined_reason" not in items[("m1", "d")]
    assert "items" not in score_text_prior(table_records())


def test_nested_and_column_inputs_match_records(result):
    nested = {}
    for r in table_records():
        nested.setdefault(r["model"], {}).setdefault(r["item_id"], {})[r["condition"]] = r["prediction"]
    got = score_text_prior(
        records_from_nested(nested, categories=CATEGORY, choices={i: CHOICES for i in CATEGORY}), return_items=True
    )
    assert got == result
    records = table_records()
    columns = records_from_columns(
        [r["prediction"] for r in records],
        None,
        model=[r["model"] for r in records],
        item_id=[r["item_id"] for r in records],
        condition=[r["condition"] for r in records],
        choices=[r["choices"] for r in records],
        category=[r["category"] for r in records],
    )
    assert score_text_prior(columns, return_items=True) == result
    plain = score_text_prior(nested)  # the nested mapping directly; no categories, no choices
    assert plain["by_category"] is None and plain["text_prior"]["per_model"]["m1"]["chance"] is None
    assert plain["decomposition"] == result["decomposition"]


def test_chance_level_sources():
    records = [{"model": "m", "item_id": i, "condition": "tb", "prediction": i == 0} for i in range(4)]
    option = score_text_prior(records, chance=0.2)["text_prior"]["per_model"]["m"]
    assert option["tb_minus_chance"] == pytest.approx(0.05) and option["chance_source"] == "option"
    unknown = score_text_prior(records)["text_prior"]["per_model"]["m"]
    assert unknown["chance"] is None and unknown["chance_source"].startswith("unknown: choices known for 0 of 4")
    with_choices = [dict(r, choices=["x", "y"] if r["item_id"] < 2 else ["x", "y", "z", "w"]) for r in records]
    entry = score_text_prior(with_choices)["text_prior"]["per_model"]["m"]
    assert entry["chance"] == pytest.approx((0.5 + 0.5 + 0.25 + 0.25) / 4) and entry["chance_source"] == "choices"
    entry = score_text_prior(with_choices, chance=0.9)["text_prior"]["per_model"]["m"]  # the argument wins
    assert entry["chance"] == 0.9 and entry["chance_source"] == "option"


# ---------------------------------------------------------------------------------------------
# Raw outputs through the hybrid extractor
# ---------------------------------------------------------------------------------------------


def _raw(condition, output, item="q"):
    return {
        "model": "m",
        "item_id": item,
        "condition": condition,
        "prediction": output,
        "reference": "Dog barking",
        "choices": CHOICES,
        "question": "What is it?",
    }


def test_raw_outputs_are_scored_with_the_hybrid_extractor():
    records = [
        _raw("full", "[ANSWER] (A) Dog barking", "q1"),
        _raw("full", "It is rain.", "q2"),
        _raw("full", "I cannot tell.", "q3"),
        _raw("full", "", "q4"),
        _raw("full", None, "q5"),
        _raw("none", "The answer is A.", "q1"),
    ]
    entry = score_text_prior(records)["accuracy"]["per_model"]["m"]["full"]
    assert (entry["correct"], entry["n"], entry["errors"]) == (1, 5, 3)
    assert entry["error_reasons"] == {"unanswered": 2, "no_prediction": 1}
    assert entry["methods"] == {"letter_regex": 1, "content": 1, "unanswered": 2, "no_prediction": 1}


def test_judge_outcomes():
    outputs = {"q1": 0, "q2": None, "q3": 9, "q4": "raise"}

    def judge(text, question, choices):
        assert question == "What is it?" and choices == CHOICES
        verdict = outputs[text.split()[-1]]
        if verdict == "raise":
            raise TimeoutError("judge timed out")
        return verdict

    records = [_raw("full", f"Hmm, hard to say for {item}", item) for item in outputs]
    entry = score_text_prior(records, judge=judge)["accuracy"]["per_model"]["m"]["full"]
    assert entry["methods"] == {"judge": 1, "judge_unanswered": 1, "judge_invalid": 1, "judge_error": 1}
    assert (entry["correct"], entry["errors"]) == (1, 2)  # judge_unanswered is a wrong answer, not an error


def test_unanswered_fragment_output_is_errored_by_default_and_wrong_under_sufficient():
    records = [_raw("full", "A"), _raw("none", "B"), _raw("frag:2:0", "Rain"), _raw("frag:2:1", "no idea")]
    dec = score_text_prior(records)["decomposition"]["per_model"]["m"]
    assert dec["counts"]["XS"] == 1 and dec["unverified_reasons"] == {"errored": 1, "missing": 0}
    sufficient = score_text_prior(records, errored_fragments="sufficient")["decomposition"]["per_model"]["m"]
    assert (sufficient["counts"]["FS"], sufficient["counts"]["XS"], sufficient["XS_unverified"]) == (0, 1, 0)


def test_numpy_correctness_values_and_models_run_at_other_ns():
    np = pytest.importorskip("numpy")
    records = [
        {"model": "x", "item_id": "q", "condition": c, "prediction": v}
        for c, v in (
            ("full", np.True_),
            ("none", np.int64(0)),
            ("frag:2:0", np.float64(1.0)),
            ("frag:2:1", np.bool_(False)),
        )
    ]
    records += [
        {"model": "y", "item_id": "q", "condition": c, "prediction": True}
        for c in ("full", "none", "frag:3:0", "frag:3:1", "frag:3:2")
    ]
    result = score_text_prior(records)
    assert result["retention"]["per_model"]["x"][2]["R_N"] == pytest.approx(0.5)
    assert result["retention"]["curve"][1]["excluded"] == {"x": "no fragment predictions for N=3"}
    assert result["decomposition"]["per_model"]["x"]["counts"]["FS"] == 1


def test_errored_full_counts_as_wrong_and_is_reported():
    records = [
        {"model": "m", "item_id": "q", "condition": "full", "prediction": None},
        {"model": "m", "item_id": "q", "condition": "none", "prediction": True},
    ]
    dec = score_text_prior(records)["decomposition"]["per_model"]["m"]
    assert dec["counts"]["AH"] == 1 and dec["errored_full_or_none"] == 1


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


def test_condition_grammar():
    assert parse_condition(" Full ", TEXT_PRIOR_KINDS) == Condition("full")
    assert str(parse_condition("FRAG:5:4", TEXT_PRIOR_KINDS)) == "frag:5:4"
    assert parse_condition("tb", TEXT_PRIOR_KINDS) == Condition("tb")
    assert parse_condition("none", TEXT_PRIOR_KINDS).kind == "none"
    for bad, message in [
        ("silence", "unknown condition"),
        ("frag:3", "unknown condition"),
        ("frag:3:3", "k=3 out of range 0..2"),
        ("frag:1:0", "N must be >= 2"),
        ("frag:-2:0", "unknown condition"),
        (3, "must be a string"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_condition(bad, TEXT_PRIOR_KINDS)


def _row(**overrides):
    return {"model": "m", "item_id": "q", "condition": "full", "prediction": True, **overrides}


@pytest.mark.parametrize(
    "records, message",
    [
        ([_row(condition="silence")], r"row 0 \(model 'm', item 'q'\): unknown condition 'silence'"),
        ([_row(), _row()], r"row 1 \(model 'm', item 'q', condition 'full'\) duplicates row 0"),
        ([_row(condition="frag:2:0"), _row(condition="FRAG:2:0")], "duplicates row 0"),
        ([_row(condition="frag:4:4")], "row 0 .*k=4 out of range 0..3"),
        ([_row(prediction=2)], r"row 0 .*True/False/0/1.*got int 2"),
        ([_row(prediction=0.5)], "got float 0.5"),
        ([_row(prediction=[True])], "got list"),
        ([_row(prediction="(A) Dog")], "row 0 .*needs the item's choices and its gold reference"),
        ([_row(prediction="(A)", choices=["x", "y"], reference="z")], "gold reference 'z' is not one of the choices"),
        ([_row(category="sound"), _row(condition="none", category="music")], "row 1 .*category 'music' differs"),
        ([_row(choices=["x", "y"]), _row(condition="none", choices=["x"])], "row 1 .*1 choices, but row 0 gives 2"),
        ([_row(model=None)], "row 0: 'model' is missing"),
        ([_row(model="")], "model must be a non-empty string"),
        ([_row(item_id=["q"])], "item_id must be a string or number"),
        ([_row(choices="x")], "choices must be a non-empty list"),
        ([_row(colour="red")], "unknown field"),
        ([], "no records"),
    ],
)
def test_bad_records_name_the_row(records, message):
    with pytest.raises(ValueError, match=message):
        score_text_prior(records)


def test_bad_options_and_shapes():
    for mode in ("correct", "insufficient"):
        with pytest.raises(ValueError, match="errored_fragments"):
            score_text_prior([_row()], errored_fragments=mode)
    for chance in (0, 1.5, "0.25", True):
        with pytest.raises(ValueError, match="chance"):
            score_text_prior([_row()], chance=chance)
    with pytest.raises(ValueError, match="judge must be a callable"):
        score_text_prior([_row()], judge="claude")
    with pytest.raises(ValueError, match="'condition' has 1 values but there are 2 predictions"):
        records_from_columns([True, False], model=["m", "m"], item_id=["a", "b"], condition=["full"])
    with pytest.raises(ValueError, match="'model' is required"):
        records_from_columns([True], item_id=["a"], condition=["full"], model=None)
    with pytest.raises(ValueError, match="nested form takes correctness"):
        records_from_nested({"m": {"q": {"full": "(A) Dog"}}})
    with pytest.raises(ValueError, match="list of records"):
        score_text_prior("full")


def test_jsonl_records():
    assert records_from_jsonl('{"model": "m", "item_id": 1, "condition": "full", "prediction": true}\n\n') == [
        {"model": "m", "item_id": 1, "condition": "full", "prediction": True}
    ]
    assert records_from_jsonl('[{"model": "m"}]') == [{"model": "m"}]
    with pytest.raises(ValueError, match="line 2 is not valid JSON"):
        records_from_jsonl('{"model": "m"}\n{oops')


# ---------------------------------------------------------------------------------------------
# Demo entry and display tables
# ---------------------------------------------------------------------------------------------


def test_demo_table_reaches_every_category_and_is_deterministic():
    result = score_text_prior(demo_records())
    per_model = result["decomposition"]["per_model"]
    counts = {m: [e["counts"][c] for c in tp.LABELS] for m, e in per_model.items()}  # TS FS XS AH UN AN
    assert counts == {"model-a": [2, 3, 1, 1, 1, 0], "model-b": [1, 2, 2, 1, 1, 0], "model-c": [2, 0, 0, 1, 2, 3]}
    # model-b's q4: no correct fragment, frag:2:0 errored -> XS, unverified; q8 has no None row
    assert per_model["model-b"]["XS_unverified"] == 1 and per_model["model-b"]["n_items"] == 7
    assert per_model["model-b"]["XS_over_AN_bounds"] == (0.25, 0.5)
    assert result["decomposition"]["models_without_fragments"] == ["model-c"]
    rows = demo_rows()
    assert rows == demo_rows() and len(rows) == 15
    by_name = {r.name: r for r in rows}
    assert by_name["text prior: TB - chance (model mean)"].value == pytest.approx(1 / 6)
    assert by_name["retention: R_5"].note.endswith("(excluded: model-b, model-c)")
    xs = by_name["decomposition: XS / AN (model mean)"]
    assert xs.value == pytest.approx((1 / 4 + 2 / 4) / 2) and xs.note.endswith(
        "; 1 XS item unverified (errored or missing fragments)"
    )
    assert by_name["decomposition: XS share (model mean)"].value == pytest.approx((1 / 8 + 2 / 7 + 0) / 3)
    assert all(r.value is not None and r.n == 8 for r in rows)


def test_summary_tables(result):
    tables = summary_tables(result)
    assert set(tables) == {"text_prior", "retention", "decomposition", "by_category"}
    headers, rows = tables["text_prior"]
    assert rows[0][:4] == ["m1", 0.6667, 0.3333, 0.5] and rows[-1][0] == "(models)"
    headers, rows = tables["retention"]
    assert rows[0][:5] == [2, 0.45, 0.4, 0.5, 2]
    headers, rows = tables["decomposition"]
    assert headers[2:9] == ["TS", "FS", "XS", "AH", "UN", "AN", "XS unverified"]
    assert rows[0][:10] == ["m1", 6, 1, 1, 2, 1, 1, 0, 1, 0.6667]
    assert rows[2][:10] == ["m3", 6, 1, 0, 0, 1, 1, 3, 0, None]


def test_rates_are_exact_fractions_on_the_0_to_1_scale():
    """Pooled R_TP = (0/3 + 3/3) / (2/3 + 3/3) is exactly 3/5; summing float accuracies gives
    0.6000000000000001. Accuracies, R_TP and R_N are fractions in [0, 1] (audioreason.base.scale)."""
    rows = [
        ("m1", "q1", 1, 0),
        ("m1", "q2", 1, 0),
        ("m1", "q3", 0, 0),
        ("m2", "q1", 1, 1),
        ("m2", "q2", 1, 1),
        ("m2", "q3", 1, 1),
    ]
    records = [
        {"model": m, "item_id": i, "condition": c, "prediction": bool(v)}
        for m, i, full, none in rows
        for c, v in (("full", full), ("none", none))
    ]
    records += [
        {"model": "m1", "item_id": i, "condition": f"frag:2:{k}", "prediction": k == 0}
        for i in ("q1", "q2", "q3")
        for k in (0, 1)
    ]
    result = score_text_prior(records)
    assert result["text_prior"]["R_TP"] == 0.6
    assert result["text_prior"]["per_model"]["m1"]["full"] == float(Fraction(2, 3))
    # R_2 of m1: mean fragment accuracy 1/2 over Full accuracy 2/3 = 3/4 (the paper's 75 %)
    assert result["retention"]["per_model"]["m1"][2]["R_N"] == 0.75
    assert result["retention"]["unit"] == "fraction of Full accuracy"
