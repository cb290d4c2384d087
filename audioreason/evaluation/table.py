"""The table `audioreason score`, `evaluate` and the demo print: one row per headline number of a results dict
(``audioreason.evaluation.score``), with its interval, unanswered count, n and backbone."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

@dataclass
class Row:
    scorer: str
    value: Optional[float]  # on the one scale of every scorer, 0-1 (audioreason.base.scale); None: unavailable
    n: int
    backbone: str
    unanswered: Optional[int] = None
    source: str = ""        # where the scored outputs came from (the demo: its model, or "fixture")
    interval: Optional[Mapping[str, Any]] = None  # the value's uncertainty entry (results.json's schema)


def interval_text(interval: Optional[Mapping[str, Any]]) -> str:
    """"[lo, hi]" to 4 decimals, or "-" when there is no interval (none computed, or unavailable)."""
    ci = (interval or {}).get("ci95")
    return "-" if not ci or any(v is None for v in ci) else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def format_table(rows: Sequence[Row], confidence: float = 0.95) -> str:
    """A plain-text table: scorer, value (0-1, 4 decimals), its interval, unanswered (count of n), n,
    [outputs,] backbone. The outputs column appears when a row names its source."""
    sources = any(r.source for r in rows)
    header = ("scorer", "value", f"{confidence * 100:g}% CI", "unanswered", "n") + \
        (("outputs",) if sources else ()) + ("backbone",)
    body = []
    for r in rows:
        value = "n/a" if r.value is None else f"{r.value:.4f}"
        unanswered = "-" if r.unanswered is None else f"{r.unanswered} of {r.n}"
        body.append((r.scorer, value, interval_text(r.interval), unanswered, str(r.n)) +
                    ((r.source,) if sources else ()) + (r.backbone,))
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    fmt = lambda line: "  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(header), fmt(tuple("-" * w for w in widths)), *map(fmt, body)])


def result_rows(results: Mapping[str, Any]) -> list[Row]:
    """The headline numbers of a results dict as table rows (set label in brackets when a run has several)."""
    several = len(results.get("sets", [])) > 1
    rows: list[Row] = []

    def label(name: str, entry: Mapping[str, Any]) -> str:
        if not several or "condition" not in entry:
            return name
        return f"{name} [{entry['condition']}/{entry['template']}]"

    for name, section in results["scorers"].items():
        if section["status"] != "ok":
            rows.append(Row(name, None, 0, f"{section['status'].replace('_', ' ')}: {section['reason']}"))
            continue
        builder = _ROW_BUILDERS[name]
        official_shown = set()  # accuracy: the official scorer's row once per set, before its rules' rows
        for entry in section["results"]:
            if name == "accuracy" and "official_scorer_accuracy" in entry:
                key = (entry["model"], entry["condition"], entry["template"], entry["template_hash"])
                if key not in official_shown:
                    official_shown.add(key)
                    rows.append(_official_scorer_row(entry, lambda n, e=entry: label(n, e)))
            rows += builder(entry, lambda n, e=entry: label(n, e))
    return rows + reliance_rows(results)


def reliance_rows(results: Mapping[str, Any]) -> list[Row]:
    """The audio-reliance check's rows (``evaluation.reliance``): the share of outputs that changed under
    silence or shuffled audio, with the verdict beside it, and the accuracy under each condition."""
    section = results.get("audio_reliance") or {}
    entries = section.get("results", []) if section.get("status") == "ok" else []
    rows = []
    for e in entries:
        suffix = f" [{e['template']}]" if len(entries) > 1 else ""
        changed = e["changed"]["either"]
        rows.append(Row(f"audio reliance: outputs changed (silence or shuffled){suffix}", changed["share"], e["n"],
                        f"verdict: {e['verdict']}: {e['reason']}", interval=changed["uncertainty"]))
        for condition, acc in (e.get("accuracy") or {}).items():
            rows.append(Row(f"audio reliance: accuracy under {condition}{suffix}", acc["accuracy"], acc["n"],
                            f"rule {e['rule']}; the {e['checked_items']} checked items",
                            interval=acc["uncertainty"]))
    return rows


def _outputs_note(entry: Mapping[str, Any]) -> str:
    missing = f", missing {entry['missing']}" if entry.get("missing") else ""
    return f"failed outputs {entry.get('failed', entry.get('failed_outputs', 0))}{missing}"


def _accuracy_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    note = f"{entry['rule_description']}; {_outputs_note(entry)}"
    return [Row(label(f"answers: {entry['rule']}"), entry["accuracy"], entry["n"], note, entry["unanswered"],
                interval=_interval(entry, "accuracy"))]


def _interval(entry: Mapping[str, Any], name: str) -> Optional[Mapping[str, Any]]:
    return (entry.get("uncertainty") or {}).get(name)


def _official_scorer_row(entry: Mapping[str, Any], label: Callable[[str], str]) -> Row:
    return Row(label("accuracy: official MMAR/MMAU scorer"), entry["official_scorer_accuracy"], entry["n"],
               "the official string match on the whole raw reply, as MMAU evaluation.py and MMAR "
               f"code/evaluation.py read it (rule-based, no model); {_outputs_note(entry)}",
               interval=_interval(entry, "official_scorer_accuracy"))


def _aria_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    from audioreason.scorers.aria.formulas import METRIC_NAMES, METRICS

    rows = [Row(label(f"aria: {m} {METRIC_NAMES[m]}"), entry.get(m), entry["n"], entry["backbones"][m],
                interval=_interval(entry, m)) for m in METRICS]
    covered = "+".join(entry.get("aria_metrics") or []) or "none"
    mode = _mode(entry)
    rows.append(Row(label(f"aria: ARIA (mean of {covered})"), entry.get("aria"), entry["n"],
                    f"reasoning mode: {mode}; {_outputs_note(entry)}", interval=_interval(entry, "aria")))
    return rows


def _mode(result: Mapping[str, Any]) -> str:
    """The reasoning mode ARIA assigned, or why there is none."""
    if result.get("reasoning_mode"):
        return result["reasoning_mode"]
    return "none (the profile matches none of the paper's modes)" if result.get("aria_complete") else \
        "not assigned (ARIA incomplete)"


def _perturbation_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    rows = []
    for p in entry["perturbations"]:
        mode = _mode(p)
        delta = p["delta"]["aria"]
        note = (f"{p['paper_name']}: accuracy {p['accuracy']:.4f}, answers changed "
                f"{p['answer_change_rate']:.4f}, ARIA delta "
                f"{'n/a' if delta is None else f'{delta:+.4f}'}; mode {mode}")
        rows.append(Row(label(f"perturbation: {p['perturbation']}"), p.get("aria"), entry["n"], note,
                        round(p["unanswered_rate"] * entry["n"])))
    return rows


def _judge_note(entry: Mapping[str, Any], judged: int) -> str:
    if entry.get("headline_unavailable"):
        return f"unavailable: {entry['headline_unavailable']}"
    spread = (entry.get("rater_spread") or {}).get("sd")
    from audioreason.judges.base import offline_judge_label

    # An in-process judge is named by its label (weights and constraint), any other by its model name.
    who = offline_judge_label(entry) or f"judge {', '.join(entry.get('judges') or [])}"
    return (f"{who}, {entry.get('raters')} rater(s); judged {judged}, "
            f"failed {entry.get('n_failed')}; rater spread (mean SD across raters) "
            f"{'n/a' if spread is None else f'{spread:.4f}'}")


LISTED_IDS = 10  # item ids a table note names before it points to results.json for the rest


def _left_out_note(entry: Mapping[str, Any]) -> str:
    """"; N item(s) without rubric criteria left out: ids" when the set had any (results.json lists them all)."""
    ids = entry.get("no_rubric_ids") or []
    if not ids:
        return ""
    more = f" and {len(ids) - LISTED_IDS} more (results.json lists all)" if len(ids) > LISTED_IDS else ""
    return f"; {len(ids)} item(s) without rubric criteria left out: {', '.join(ids[:LISTED_IDS])}{more}"


def _mmar_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    value = None if entry.get("headline_unavailable") else entry.get("rubrics")
    left_out = _left_out_note(entry)
    return [Row(label("mmar_rubrics: Accuracy (official gate)"), entry.get("accuracy"), entry["n"],
                "rule-based (no model)" + left_out, interval=_interval(entry, "accuracy")),
            Row(label("mmar_rubrics: Rubrics"), value, entry["n"], _judge_note(entry, entry.get("n_judged")) + left_out,
                interval=_interval(entry, "rubrics"))]


def _audiospan_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    value = None if entry.get("headline_unavailable") else entry.get("rubric")
    return [Row(label("audiospan_rubric: Rubric (Eq. 2)"), value, entry["n"],
                _judge_note(entry, entry.get("n_scored")) + _left_out_note(entry), interval=_interval(entry, "rubric"))]


def _anchor_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    rows = []
    if "chain" in entry:
        chain = entry["chain"]
        rows.append(Row(label("anchor_chain: Chain (Eq. 3)"), chain["chain"], chain["n"],
                        f"{entry['parse']} parsing; random {chain['random_chain']:.4f}; unparsed "
                        f"{chain['unparsed']}; incomplete chains left out {entry['chains_incomplete']}",
                        interval=_interval(chain, "chain")))
    if "native_mcq" in entry:
        mcq = entry["native_mcq"]
        rows.append(Row(label("audiospan: native MCQ Accuracy (Eq. 1)"), mcq["accuracy"], mcq["n"],
                        f"{entry['parse']} parsing; random {mcq['random_accuracy']:.4f}", mcq["unparsed"],
                        interval=_interval(mcq, "accuracy")))
    return rows


def _text_prior_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    tp, decomposition = entry["text_prior"], entry["decomposition"]
    n = entry["counts"]["items"]
    note = f"{entry['model']}, conditions {', '.join(entry['conditions'])}"
    suffix = f" [{entry['template']}]"
    values = [("text prior: Full accuracy", "full_mean"), ("text prior: None accuracy", "none_mean"),
              ("text prior: R_TP = sum None / sum Full", "R_TP"), ("text prior: TB - chance", "tb_minus_chance_mean")]
    rows = [Row(name + suffix, tp.get(key), n, note, interval=_interval(tp, key))
            for name, key in values if tp.get(key) is not None]
    xs_an = decomposition["XS_over_AN"].get("mean")
    return rows + ([Row("decomposition: XS / AN" + suffix, xs_an, n, note)] if xs_an is not None else [])


_ROW_BUILDERS = {"accuracy": _accuracy_rows, "aria": _aria_rows, "perturbations": _perturbation_rows,
                 "mmar_rubrics": _mmar_rows, "audiospan_rubric": _audiospan_rows, "anchor_chain": _anchor_rows,
                 "text_prior_decomposition": _text_prior_rows}


__all__ = ["Row", "format_table", "interval_text", "reliance_rows", "result_rows"]
