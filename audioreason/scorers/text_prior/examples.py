"""The text-prior demo: a small, deterministic multi-model table in which every category occurs
(``demo_records``) and the project demo's rows from it (``demo_rows``)."""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from audioreason.scorers.text_prior import formulas as tp
from audioreason.scorers.text_prior.scorer import score_text_prior


class DemoRow(NamedTuple):
    name: str
    value: Optional[float]  # on the 0-1 scale, as every score here
    n: int
    note: str


def demo_records() -> list[dict[str, Any]]:
    """Three models on eight four-choice items (sound/music/speech), written out by hand.

    model-a: every condition, N = 2..5, two Full answers as raw outputs; reaches TS, FS, XS, AH, UN.
    model-b: fragment frag:5:4 never run; q4 has no correct fragment and one errored (XS, unverified,
    by default; FS under "sufficient"); item q8 has no None row.
    model-c: no fragment conditions (its audio-needed items stay unsplit).
    """
    items = {
        f"q{i}": cat
        for i, cat in enumerate(["sound", "sound", "music", "music", "speech", "speech", "speech", "sound"], start=1)
    }
    choices = ["Dog barking", "Rain", "Piano", "A man speaking"]
    # item -> (full, none, tb, fragment rule), fragment rule: "all" correct, "none" correct, or (N, k) correct
    model_a = {
        "q1": (1, 1, 1, "all"),
        "q2": (1, 0, 0, (2, 1)),
        "q3": (1, 0, 0, "none"),
        "q4": (0, 1, 1, "none"),
        "q5": (0, 0, 0, "none"),
        "q6": (1, 0, 0, (5, 3)),
        "q7": (1, 1, 1, "all"),
        "q8": (1, 0, 1, (3, 0)),
    }
    model_b = {
        "q1": (1, 1, 1, "all"),
        "q2": (1, 0, 0, "none"),
        "q3": (1, 0, 0, (2, 0)),
        "q4": (1, 0, 0, "error"),
        "q5": (0, 0, 0, "none"),
        "q6": (0, 1, 1, "none"),
        "q7": (1, 0, 1, (4, 2)),
        "q8": (1, None, 0, "all"),
    }
    model_c = {
        "q1": (1, 1, 1, None),
        "q2": (1, 0, 0, None),
        "q3": (0, 0, 0, None),
        "q4": (1, 1, 1, None),
        "q5": (1, 0, 0, None),
        "q6": (0, 1, 1, None),
        "q7": (1, 0, 0, None),
        "q8": (0, 0, 0, None),
    }
    records: list[dict[str, Any]] = []

    def add(model: str, item: str, condition: str, prediction: Any) -> None:
        records.append(
            {
                "model": model,
                "item_id": item,
                "condition": condition,
                "prediction": prediction,
                "reference": choices[0],
                "choices": choices,
                "category": items[item],
            }
        )

    for model, table in (("model-a", model_a), ("model-b", model_b), ("model-c", model_c)):
        for item, (full, none, tb, fragments) in table.items():
            if model == "model-a" and item in ("q1", "q5"):  # raw outputs, scored by the hybrid extractor
                add(model, item, "full", "[ANSWER] (A) Dog barking" if full else "The answer is B.")
            else:
                add(model, item, "full", bool(full))
            if none is not None:
                add(model, item, "none", bool(none))
            add(model, item, "tb", bool(tb))
            if fragments is None:
                continue
            for n in (2, 3, 4, 5):
                for k in range(n):
                    if model == "model-b" and (n, k) == (5, 4):
                        continue  # never run
                    if fragments == "error":
                        value = None if (n, k) == (2, 0) else False
                    else:
                        value = fragments == "all" or fragments == (n, k)
                    add(model, item, f"frag:{n}:{k}", value)
    return records


def demo_rows() -> list[DemoRow]:
    """Rows for the project demo table, from ``demo_records()``."""
    result = score_text_prior(demo_records())
    note = "synthetic correctness table (3 models x 8 items)"
    text_prior, decomposition = result["text_prior"], result["decomposition"]
    n_items = result["counts"]["items"]
    rows = [
        DemoRow("text prior: Full accuracy (model mean)", text_prior["full_mean"], n_items, note),
        DemoRow("text prior: None accuracy (model mean)", text_prior["none_mean"], n_items, note),
        DemoRow("text prior: R_TP = sum None / sum Full", text_prior["R_TP"], n_items, note),
        DemoRow(
            "text prior: TB - chance (model mean)",
            text_prior["tb_minus_chance_mean"],
            n_items,
            f"{note}; chance from the choices",
        ),
    ]
    for point in result["retention"]["curve"]:
        excluded = ", ".join(point["excluded"]) or "none"
        rows.append(
            DemoRow(
                f"retention: R_{point['N']}",
                point["mean"],
                n_items,
                f"{note}; mean of {point['n']} model{'s' * (point['n'] != 1)} (excluded: {excluded})",
            )
        )
    for category in tp.CATEGORIES + ("AN_total",):
        rows.append(
            DemoRow(
                f"decomposition: {category} share (model mean)", decomposition["mean_shares"][category], n_items, note
            )
        )
    xs = decomposition["XS_over_AN"]
    spread = f"min {xs['min']:.2f}, max {xs['max']:.2f} over {xs['n']} models" if xs["n"] else "no model"
    spread += f" (excluded: {', '.join(xs['excluded']) or 'none'})"
    unverified = sum(e["XS_unverified"] for e in decomposition["per_model"].values())
    spread += f"; {unverified} XS item{'s' * (unverified != 1)} unverified (errored or missing fragments)"
    rows.append(DemoRow("decomposition: XS / AN (model mean)", xs["mean"], n_items, f"{note}; {spread}"))
    return rows
