"""The text-prior result as display tables (the Space's and the demo's), values on the 0-1 scale."""

from __future__ import annotations

from typing import Any, Mapping

from audioreason.base.scale import rounded
from audioreason.scorers.text_prior import formulas as tp
from audioreason.scorers.text_prior.sections import TABLE5_N


def summary_tables(result: Mapping[str, Any]) -> dict[str, tuple[list[str], list[list[Any]]]]:
    """The result as display tables, name -> (headers, rows): values on the 0-1 scale, rounded to 4 decimals
    (``audioreason.base.scale.rounded``)."""
    text_prior = result["text_prior"]
    tp_rows = [
        [
            m,
            e["full"],
            e["none"],
            e["R_TP"],
            e["tb"],
            e["chance"],
            e["tb_minus_chance"],
            e["n_full"],
            e["n_none"],
            e["n_tb"],
        ]
        for m, e in text_prior["per_model"].items()
    ]
    tp_rows.append(
        [
            "(models)",
            text_prior["full_mean"],
            text_prior["none_mean"],
            text_prior["R_TP"],
            text_prior["tb_mean"],
            text_prior["chance_mean"],
            text_prior["tb_minus_chance_mean"],
            None,
            None,
            None,
        ]
    )
    retention_rows = [
        [
            p["N"],
            p["mean"],
            p["min"],
            p["max"],
            p["n"],
            ", ".join(p["models"]),
            "; ".join(f"{m}: {why}" for m, why in p["excluded"].items()),
        ]
        for p in result["retention"]["curve"]
    ]
    decomposition = result["decomposition"]
    labels = tp.LABELS
    dec_rows = [
        [m, e["n_items"], *(e["counts"][c] for c in labels), e["XS_unverified"], e["XS_over_AN"], e["AN_share"]]
        for m, e in decomposition["per_model"].items()
    ]
    dec_rows.append(
        [
            "(mean share)",
            None,
            *(decomposition["mean_shares"][c] for c in labels),
            None,
            decomposition["XS_over_AN"]["mean"],
            decomposition["AN_share"]["mean"],
        ]
    )
    tables = {
        "text_prior": (
            ["model", "Full", "None", "R_TP", "TB", "chance", "TB - chance", "n Full", "n None", "n TB"],
            tp_rows,
        ),
        "retention": (["N", "R_N mean", "min", "max", "models", "used", "excluded"], retention_rows),
        "decomposition": (["model", "items", *labels, "XS unverified", "XS/AN", "AN share"], dec_rows),
    }
    if result.get("by_category"):
        tables["by_category"] = (
            [
                "category",
                "items",
                "share",
                "Full",
                "None",
                "Full - None",
                f"N={TABLE5_N} acc",
                f"R_{TABLE5_N}",
                "models",
            ],
            [
                [
                    r["category"],
                    r["n_items"],
                    r["share"],
                    r["full"],
                    r["none"],
                    r["gap"],
                    r[f"frag{TABLE5_N}_accuracy"],
                    r[f"R_{TABLE5_N}"],
                    r["n_models"],
                ]
                for r in result["by_category"]
            ],
        )
    return {name: (headers, rounded(rows)) for name, (headers, rows) in tables.items()}
