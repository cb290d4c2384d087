"""`audioreason score RUN_DIR`: every requested scorer that fits the benchmark, run on a run folder's outputs.

    audioreason score runs/q2a --scorers auto                       # every scorer that fits
    audioreason score runs/q2a --scorers aria,mmar_rubrics --judge-model gpt-4o-2024-11-20 --perturbations all

Reads ``run.json`` and ``outputs.jsonl`` (``audioreason run``) and the benchmark's items (from the run's
``--data``, or ``data=`` when the folder moved), groups the outputs into sets of one (model, condition,
template), and runs the accuracy section (``audioreason.evaluation.sections``) and the scorers of
``audioreason.scorers.registry``, each through its declaration's ``score(Scoring)``. Each output is scored
once: a record repeated verbatim is counted (``duplicates``) and skipped, two different records for one output
are refused naming both lines, and a malformed record or run.json is an error naming the file, line and field. A
scorer that does not fit the benchmark is named with the reason and not run; a judged scorer with no judge
it can reach (no API key, no server, a local model that does not load) is reported unavailable with the
reason, never as 0.

Writes, into the run folder (or ``out``):

    results.json   the run (model, adapter, description, benchmark, status and counts), the scoring options
                   (scorers asked, extraction rule, ARIA backbones, judge, perturbations and seed), the package
                   versions and commit, the duplicates skipped, and per scorer its status ("ok", "not_applicable",
                   "unavailable") with the reason, or its results: one entry per set with the scorer's
                   whole aggregate output (backbones, judge and its statistics, reasoning mode, extraction
                   rule, unanswered, failed; a judged one its ``judge_card``, ``evaluation.judge_card``), the
                   ``protocol`` that made the numbers (``evaluation.protocol``), and audio_reliance: the
                   audio-reliance check (``audioreason.evaluation.reliance``; the scorers leave its silence and
                   shuffled outputs out)
    items.jsonl    one row per output: key, id, model, condition, template, failed, and each scorer's values
                   for that output (the extracted choice per rule, ARIA metrics, rubric status and score with
                   each rater's verdict per criterion and its justification, text-prior label, each
                   perturbation's answer and ARIA; a silence or shuffled output's audio_reliance: changed,
                   correct)

A judge that cannot work (no API key; the first request refused with 401, 403 or 404, or no connection) is
found by the judge layer on the scorer's first real request (``audioreason.judges.JudgeUnavailable``; no
extra request is sent) and makes the scorer unavailable; busy replies (429, 5xx) are retried per item.
Verdicts are cached in ``<run>/judge-cache.sqlite`` unless ``JudgeOptions.cache`` says otherwise, so a rerun
pays for nothing twice.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from audioreason.base.checksums import file_sha256
from audioreason.base.jsonl import DataFileError, read_json_objects
from audioreason.base.scale import SCALE
from audioreason.base.schema import RunSummary, check_output_record
from audioreason.evaluation.judge_card import judge_card
from audioreason.evaluation.protocol import judge_protocol, scored_protocol, scoring_protocol
from audioreason.evaluation.reliance import audio_reliance_section, without_check_sets
from audioreason.evaluation.sections import (
    OutputSet,
    Section,
    accuracy_section,
    extraction_rules,
    not_applicable,
    unavailable,
)
from audioreason.inference.processes import LOCK_FILE
from audioreason.inference.runner import (
    OUTPUTS_FILE,
    RUN_FILE,
    SHARD_DIR,
    git_commit,
    load_items,
    package_versions,
    read_run_file,
)
from audioreason.scorers.registry import ACCURACY, DECLARATIONS, SCORERS, SECTIONS, declaration, fit_reason

RESULTS_FILE = "results.json"
ITEMS_FILE = "items.jsonl"
JUDGE_CACHE_FILE = "judge-cache.sqlite"
LOCAL_JUDGE_PREFIX = "local:"
# What a run folder's own machinery (the runner, its lock, score) reads and writes: another command's output
# (`audioreason compare --out`) never goes over one of them (``run_folder_file``).
RUN_FOLDER_FILES = (RUN_FILE, LOCK_FILE, OUTPUTS_FILE, RESULTS_FILE, ITEMS_FILE, JUDGE_CACHE_FILE)
RUN_FOLDER_DIRS = (SHARD_DIR, "fragments")
# The constrained offline judge (judges.local.offline_judge): "offline" picks Qwen2.5-Coder-0.5B where it fits,
# else SmolLM2-135M; "offline:SPEC" names the weights (e.g. offline:packaged:SmolLM2-135M-Instruct).
OFFLINE_JUDGE_SPEC = "offline"
NO_JUDGE = "none"  # --judge-model none: no judge for any scorer (never a model named "none")


def run_folder_file(path: Any, folder: Any) -> Optional[str]:
    """The run folder's own file ``path`` would be (links and ".." resolved): a path inside ``folder`` (or the
    folder of a results.json given for it), at any depth, named as one of ``RUN_FOLDER_FILES`` or inside a
    folder named as one of ``RUN_FOLDER_DIRS``; None for any other path."""
    folder = Path(folder).expanduser()
    folder = (folder.parent if folder.is_file() else folder).resolve()
    inside = Path(path).expanduser().resolve()
    if not inside.is_relative_to(folder) or inside == folder:
        return None
    parts = inside.relative_to(folder).parts
    if parts[-1] in RUN_FOLDER_FILES:
        return parts[-1]
    return next((f"{part}/" for part in parts[:-1] if part in RUN_FOLDER_DIRS), None)


@dataclass
class JudgeOptions:
    """The judge of the judged scorers. ``model``: an OpenAI-compatible model name (None: gpt-4o-2024-11-20 for
    MMAR-Rubrics, the official scorer's; the AudioSpan Rubric has no default) or ``local:SPEC`` for a
    transformers chat LM in this process (``packaged:SmolLM2-135M-Instruct``, a folder), decoding freely, or
    ``offline`` / ``offline:SPEC`` for the constrained offline judge (``judges.local.offline_judge``: every
    verdict parses, every score is an allowed option; Qwen2.5-Coder-0.5B by default). ``judge``: a ready
    ``audioreason.judges.Judge`` instead (Python use). ``cache``: the verdict cache (None: the run folder's
    judge-cache.sqlite). ``compat`` and ``official_scorer``: MMAR-Rubrics' official-scorer behaviour and
    wording. ``structured_outputs``: an OpenAI-compatible judge is sent each verdict's JSON schema as
    ``response_format`` (``audioreason.judges.structured``; never with ``compat``)."""

    model: Optional[str] = None
    base_url: Optional[str] = None
    api_key_env: str = "OPENAI_API_KEY"
    cache: Optional[str] = None
    compat: bool = False
    official_scorer: Optional[str] = None
    judge: Any = None
    structured_outputs: bool = False
    prices: Optional[str] = None  # a prices file (inference.hosted.load_prices): the judge card's cost

    def to_dict(self) -> dict[str, Any]:
        # Not asdict(self): it would deep-copy a ready judge (an in-process model) only to drop it.
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "judge"}
        out["judge"] = None if self.judge is None else getattr(self.judge, "name", type(self.judge).__name__)
        if self.base_url:  # a password or a key in the query string is never written or printed
            from audioreason.judges.base import redact_url

            out["base_url"] = redact_url(self.base_url)
        return out


@dataclass
class ScoreOptions:
    """``scorers``: names of ``scorers.registry.SCORERS`` or ["auto"] (every one that fits). ``extraction``:
    "auto" (each
    template's rule, ``evaluation.sections.DEFAULT_RULES``), "all" or a rule of ``evaluation.sections.RULES``.
    ``aria_backbones``: "paper", "offline" or {role: spec}. ``perturbations``: names of
    ``audioreason.text.perturbations.CHECKS``.
    ``scorer_options``: constructor options per scorer name (e.g. {"aria": {"m3_mode": "logprob"}}).
    ``data``: the benchmark's folder when it is no longer where the run read it. ``out``: where the results
    go (default: the run folder). ``confidence`` and ``resamples``: every headline's interval (a Wilson
    interval for a plain accuracy, else a percentile bootstrap over items seeded with ``seed``)."""

    scorers: Sequence[str] = ("auto",)
    extraction: str = "auto"
    aria_backbones: Any = "paper"
    perturbations: Sequence[str] = ()
    seed: int = 0
    judge: JudgeOptions = field(default_factory=JudgeOptions)
    scorer_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    data: Optional[str] = None
    out: Optional[str] = None
    progress: bool = True
    confidence: float = 0.95  # the headline intervals (audioreason.analysis.uncertainty), seeded by ``seed``
    resamples: int = 2000

    def uncertainty(self) -> Any:
        """The intervals' options; ValueError names a bad confidence, resamples or seed."""
        from audioreason.analysis.uncertainty import UncertaintyOptions

        return UncertaintyOptions(confidence=self.confidence, resamples=self.resamples, seed=self.seed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scorers": list(self.scorers),
            "extraction": self.extraction,
            "aria_backbones": self.aria_backbones,
            "perturbations": list(self.perturbations),
            "perturbation_seed": self.seed,
            "judge": self.judge.to_dict(),
            "scorer_options": {k: {n: repr(v) for n, v in o.items()} for k, o in self.scorer_options.items()},
            "data": self.data,
        }


def parse_scorers(names: Sequence[str]) -> list[str]:
    """["auto"] or scorer names (order kept, repeats dropped); ValueError names an unknown one."""
    names = [n.strip().lower() for n in names if n.strip()]
    if not names or names == ["auto"]:
        return ["auto"]
    unknown = [n for n in names if n not in SCORERS]
    if unknown:
        raise ValueError(f"unknown scorer(s) {unknown}: choose auto or from {', '.join(SCORERS)}")
    return list(dict.fromkeys(names))


def check_extraction(extraction: str) -> None:
    extraction_rules("", extraction)  # ValueError names an unknown (or renamed) rule


# ---------------------------------------------------------------------------------------------
# The run folder
# ---------------------------------------------------------------------------------------------


@dataclass
class RunFolder:
    folder: Path
    run: dict[str, Any]
    benchmark: str
    items: dict[str, dict[str, Any]]  # id -> item, in the benchmark's order
    sets: list[OutputSet]
    model: str  # the main model's name
    duplicates: int = 0  # records repeated verbatim in outputs.jsonl, each scored once
    outputs_sha256: str = ""  # of the outputs.jsonl read: results.json says which outputs it scored


def read_run(folder: Any, data: Optional[str] = None) -> RunFolder:
    """The run file, the benchmark's items and the outputs grouped into sets; ValueError says what is wrong."""
    from audioreason.data import benchmark_spec

    folder = Path(folder).expanduser()
    run_file, outputs_file = folder / RUN_FILE, folder / OUTPUTS_FILE
    if not run_file.is_file():
        raise ValueError(f"{folder} is not a run folder: no {RUN_FILE} (give the --out folder of `audioreason run`)")
    if not outputs_file.is_file():
        raise ValueError(f"{folder} has no {OUTPUTS_FILE}: the run never gathered its outputs (rerun it to resume)")
    run = read_run_file(run_file)
    summary = RunSummary.from_dict(run)
    config = summary.config or {}
    if not config.get("benchmark") or not (data or config.get("data")):
        raise ValueError(f"{run_file} names no benchmark or data folder")
    benchmark = benchmark_spec(config["benchmark"]).name
    source = data or config["data"]
    try:
        loaded = load_items(
            benchmark,
            source,
            config.get("benchmark_config"),
            config.get("limit"),
            config.get("on_missing_audio") or "raise",
        )  # the run's own load policy
    except (OSError, ValueError) as err:
        raise ValueError(
            f"cannot read the benchmark's items from {source!r} ({err}); pass the data folder with --data"
        ) from None
    items = {str(it["id"]): it for it in loaded}
    order = {item_id: n for n, item_id in enumerate(items)}
    sets: dict[tuple, OutputSet] = {}
    by_key: dict[str, tuple[int, dict]] = {}  # key -> (line, record)
    by_unit: dict[tuple, tuple[int, dict]] = {}  # (model, condition, template, hash, id) -> (line, record)
    duplicates = 0
    digest = file_sha256(outputs_file)
    for n, record in read_json_objects(outputs_file)[0]:
        where = f"{outputs_file}:{n}"
        check_output_record(record, where)
        record["id"] = str(record["id"])
        if record["id"] not in items:
            raise ValueError(
                f"{where}: item {record['id']!r} is not in the benchmark data at {source!r}; "
                "pass the run's data folder with --data"
            )
        template = record["template"]
        key = (record["model"], record["condition"], template["name"], template["hash"])
        # One output per key and per (model, condition, template, item): a record repeated verbatim (files
        # concatenated twice) is scored once and counted; two different records for one output are refused.
        earlier = by_key.get(record["key"]) or by_unit.get((*key, record["id"]))
        if earlier is not None:
            line, first = earlier
            if first == record:
                duplicates += 1
                continue
            same = (
                f"key {record['key']}"
                if first["key"] == record["key"]
                else f"output (item {record['id']!r}, model {record['model']!r}, {record['condition']}/"
                f"{template['name']})"
            )
            raise DataFileError(
                f"{where}: a second, different record for the {same} of line {line}; an outputs "
                "file holds one record per output (keep one of the two lines)"
            )
        by_key[record["key"]] = by_unit[(*key, record["id"])] = (n, record)
        sets.setdefault(key, OutputSet(*key)).records.append(record)
    check_ids = summary.audio_check.get("ids") if isinstance(summary.audio_check, dict) else None
    for output_set in sets.values():
        output_set.records.sort(key=lambda r: order[r["id"]])
        output_set.missing = len(_applicable(output_set, loaded, check_ids) - {r["id"] for r in output_set.records})
    models = summary.models or {}
    main = (models.get("main") or {}).get("name") or next((k[0] for k in sets), "")
    return RunFolder(folder, run, benchmark, items, list(sets.values()), main, duplicates, digest)


def _applicable(output_set: OutputSet, items: Sequence[Mapping[str, Any]], check_ids: Any = None) -> set[str]:
    """The ids of the items the runner gives a unit under this set's condition and template (silence and
    shuffled: the audio check's items, ``check_ids``)."""
    from audioreason.inference.conditions import checked, expand_condition
    from audioreason.inference.conditions import not_applicable as condition_not_applicable
    from audioreason.inference.prompts import EXTERNAL_TEMPLATE, TemplateMismatch, get_template

    try:
        (condition,) = expand_condition(output_set.condition)
        # imported outputs (`audioreason import`): a prompt made elsewhere fits every item
        template = None if output_set.template == EXTERNAL_TEMPLATE else get_template(output_set.template)
    except ValueError:  # a condition or template this version no longer knows: nothing to compare with
        return set()
    ids = set()
    for item in items:
        if checked(condition, str(item["id"]), check_ids) and condition_not_applicable(condition, item) is None:
            try:
                if template is not None:
                    template.messages(item)
            except TemplateMismatch:
                continue
            ids.add(str(item["id"]))
    return ids


# ---------------------------------------------------------------------------------------------
# Judges
# ---------------------------------------------------------------------------------------------


def build_judge(scorer: str, options: JudgeOptions) -> tuple[Any, Optional[str]]:
    """(judge, None) or (None, why it is unavailable) for the judged scorer ``scorer`` (its declaration's
    ``judged``: its default model and client)."""
    from audioreason.backends import BackendUnavailable
    from audioreason.judges import JudgeUnavailable, LocalJudge

    if options.judge is not None:
        return options.judge, None
    if (options.model or "").strip().lower() == NO_JUDGE:
        return None, f"no judge: --judge-model {NO_JUDGE} was given, so the judged scores are not computed"
    judged = declaration(scorer).judged
    model = options.model or judged.default_model
    if model is None:
        return None, judged.no_model
    if model == OFFLINE_JUDGE_SPEC or model.startswith(OFFLINE_JUDGE_SPEC + ":"):
        from audioreason.judges import offline_judge

        spec = model[len(OFFLINE_JUDGE_SPEC) + 1 :] or None
        try:
            return offline_judge(spec), None
        except (BackendUnavailable, ValueError) as err:
            return None, f"offline judge {spec or ''} cannot be loaded: {err}".replace("  ", " ")
    if model.startswith(LOCAL_JUDGE_PREFIX):
        try:
            return LocalJudge(model[len(LOCAL_JUDGE_PREFIX) :]), None
        except (BackendUnavailable, ValueError) as err:
            return None, f"local judge {model[len(LOCAL_JUDGE_PREFIX) :]} cannot be loaded: {err}"
    judge = judged.client(model, options)
    try:
        judge.check_key()  # no request: a refused or unreachable server shows on the first real one
    except JudgeUnavailable as err:
        return None, str(err)
    return judge, None


class ProgressJudge:
    """A judge that advances a progress bar by one per reply (cached verdicts make no call and do not count)."""

    def __init__(self, judge: Any, bar: Any = None):
        self._judge, self.bar = judge, bar
        self.name = judge.name

    async def complete(self, messages: Any, params: Any, budget: Any = None, **kwargs: Any) -> Any:
        try:
            return await self._judge.complete(messages, params, budget, **kwargs)
        finally:
            if self.bar is not None:
                self.bar.update(1)

    async def aclose(self) -> None:
        await self._judge.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


def _bar(total: int, description: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="item", dynamic_ncols=True, disable=not enabled)


def _judged_section(
    name: str,
    run: RunFolder,
    options: ScoreOptions,
    uncertainty: Any,
    judges: Optional[dict[str, Any]] = None,
    prices: Optional[Mapping[str, Any]] = None,
) -> Section:
    """A judged scorer's section (its declaration's ``judged``), each set's entry with its judge card
    (``evaluation.judge_card``, costed at ``prices``); ``judges`` gets its judge's protocol block
    (``evaluation.protocol``)."""
    judge, reason = build_judge(name, options.judge)
    if reason:
        return unavailable(reason)
    from audioreason.judges import JudgeUnavailable

    judged = declaration(name).judged
    cache = options.judge.cache or str(run.folder / JUDGE_CACHE_FILE)
    extra = options.scorer_options.get(name, {})
    to_judge = judged.to_judge(run)
    wrapped = ProgressJudge(judge)

    def make_scorer() -> Any:
        return judged.make_scorer(wrapped, options, cache, extra)

    probe = make_scorer()
    raters = len(probe.ensemble.raters)
    block = judge_protocol(name, probe)
    if judges is not None:
        judges[name] = block
    wrapped.bar = _bar(to_judge * raters, f"{name} (judge calls)", options.progress)
    try:
        section = judged.section(make_scorer, run.sets, run.items, uncertainty)
    except JudgeUnavailable as err:  # found on the first request, before any item was scored
        return unavailable(str(err))
    finally:
        wrapped.bar.close()
    for entry in section.results:
        entry["judge_card"] = judge_card(entry, block, prices)
        scored = entry.get("n_judged", entry.get("n_scored"))
        if entry.get("n_failed") and not scored:
            entry["headline_unavailable"] = (
                f"every one of the {entry['n_failed']} items sent to the judge failed "
                "(see judge_stats and the per-item table); the headline is not a score"
            )
            entry["uncertainty"][judged.headline] = unavailable_interval(
                entry["headline_unavailable"], entry["uncertainty"][judged.headline]
            )
    return section


def unavailable_interval(reason: str, interval: Mapping[str, Any]) -> dict[str, Any]:
    """An interval entry made unavailable (its method, n and resamples kept)."""
    return {**interval, "se": None, "ci95": None, "unavailable": reason}


@dataclass
class Scoring:
    """What every declaration's ``score`` is handed (``scorers.declare``): the run (its scorers' conditions
    only), the options, the intervals' options, the scorers asked that fit (``runnable``), why each scorer
    does not fit (``fits``), the judges' protocol blocks gathered so far and the judge card's prices."""

    run: RunFolder
    options: ScoreOptions
    uncertainty: Any
    runnable: Sequence[str]
    fits: Mapping[str, Optional[str]]
    judges: dict[str, Any] = field(default_factory=dict)
    prices: Optional[Mapping[str, Any]] = None

    def runs(self, name: str) -> bool:
        """Whether scorer ``name`` was asked and fits."""
        return name in self.runnable

    def bar(self, total: int, description: str) -> Any:
        """A progress bar (shown unless the options say otherwise)."""
        return _bar(total, description, self.options.progress)

    def judged(self, name: str) -> Section:
        """The section of the judged scorer ``name``: its judge built, every entry with its judge card."""
        return _judged_section(name, self.run, self.options, self.uncertainty, self.judges, self.prices)


def score_run(folder: Any, options: Optional[ScoreOptions] = None) -> dict[str, Any]:
    """Score a run folder; writes results.json and items.jsonl and returns the results as written."""
    options = options or ScoreOptions()
    asked = parse_scorers(options.scorers)
    check_extraction(options.extraction)
    uncertainty = options.uncertainty()  # a bad --confidence or --resamples fails before any work
    prices = None
    if options.judge.prices:  # a bad prices file fails before any work too
        from audioreason.inference.hosted import load_prices

        prices = load_prices(options.judge.prices)
    started = _now()
    whole = read_run(folder, options.data)
    reliance = audio_reliance_section(
        whole.sets, whole.items, whole.run.get("audio_check"), options.extraction, uncertainty
    )
    run = without_check_sets(whole)  # the scorers (and their judges) score the run's own conditions only
    items = list(run.items.values())
    fits = {name: fit_reason(name, run.benchmark, items, run.sets) for name in SCORERS}
    # With "auto" every scorer is named: the ones that fit run, the others say why they do not.
    chosen = list(SCORERS) if asked == ["auto"] else asked
    sections: dict[str, Section] = {}
    for name in chosen:
        if fits[name] is not None:
            sections[name] = not_applicable(fits[name])
    runnable = [n for n in chosen if n not in sections]
    if ACCURACY in runnable:
        sections[ACCURACY] = accuracy_section(run.sets, run.items, options.extraction, uncertainty)
    scoring = Scoring(run, options, uncertainty, runnable, fits, prices=prices)
    for scorer in DECLARATIONS:  # each writes the sections asked of it, {} when none
        sections.update(scorer.score(scoring))
    judges = scoring.judges
    # results.json's order: the scorers', then what is written beside them (the perturbation checks)
    order = [*SCORERS, *(s for s in SECTIONS if s not in SCORERS)]
    sections = {k: sections[k] for k in sorted(sections, key=order.index)}
    protocol = scored_protocol(run.run, scoring_protocol(run, options, sections, judges))
    results = json_safe(
        {
            **_results(run, options, sections, started, uncertainty),
            "audio_reliance": reliance.to_dict(),
            "protocol": protocol,
        }
    )  # as written: NaN is null
    _write(whole, options, {**sections, "audio_reliance": reliance}, results)
    return results


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _results(
    run: RunFolder, options: ScoreOptions, sections: dict[str, Section], started: str, uncertainty: Any
) -> dict[str, Any]:
    summary = RunSummary.from_dict(run.run)
    config = summary.config or {}
    main = (summary.models or {}).get("main") or {}
    return {
        "run": {
            "folder": str(run.folder),
            "model": run.model,
            "adapter": main.get("adapter"),
            "description": main.get("description"),
            "models": summary.models,
            "benchmark": run.benchmark,
            "benchmark_config": config.get("benchmark_config"),
            "limit": config.get("limit"),
            "decoding": config.get("decoding"),
            "status": summary.status,
            "counts": summary.counts,
            "speed": summary.speed,
            "git": summary.git,
            # an imported lmms-eval log: its own number beside the official rule's (inference.lmms_reconcile)
            "lmms_eval": (summary.source or {}).get("lmms_eval"),
            "outputs_sha256": run.outputs_sha256,
        },
        "sets": [{**s.describe(), "n": len(s.records), "failed": s.failed} for s in run.sets],
        "missing_outputs": sum(s.missing for s in run.sets),
        "duplicates": run.duplicates,  # records repeated verbatim in outputs.jsonl, each scored once
        "scale": SCALE,  # every score, rate and accuracy in this file (a reader never has to infer it)
        "options": options.to_dict(),
        "uncertainty_options": uncertainty.to_dict(),  # every headline's "uncertainty" entry
        "scorers": {name: section.to_dict() for name, section in sections.items()},
        "not_run": {name: {"status": s.status, "reason": s.reason} for name, s in sections.items() if s.status != "ok"},
        "scored": {"started": started, "finished": _now(), "versions": package_versions(), "git": git_commit()},
    }


def json_safe(value: Any) -> Any:
    """NaN and infinities as None (JSON has no NaN); tuples as lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def _write(run: RunFolder, options: ScoreOptions, sections: dict[str, Section], results: dict[str, Any]) -> None:
    out = Path(options.out).expanduser() if options.out else run.folder
    out.mkdir(parents=True, exist_ok=True)
    (out / RESULTS_FILE).write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    with open(out / ITEMS_FILE, "w", encoding="utf-8") as f:
        for output_set in run.sets:
            for record in output_set.records:
                row = {
                    "key": record["key"],
                    "id": record["id"],
                    "model": record["model"],
                    "condition": record["condition"],
                    "template": record["template"]["name"],
                    "failed": record.get("error") is not None,
                }
                row.update({name: s.items[record["key"]] for name, s in sections.items() if record["key"] in s.items})
                f.write(json.dumps(json_safe(row), ensure_ascii=False) + "\n")


__all__ = [
    "ITEMS_FILE",
    "JUDGE_CACHE_FILE",
    "RESULTS_FILE",
    "RUN_FOLDER_DIRS",
    "RUN_FOLDER_FILES",
    "JudgeOptions",
    "ProgressJudge",
    "RunFolder",
    "ScoreOptions",
    "Scoring",
    "build_judge",
    "check_extraction",
    "json_safe",
    "parse_scorers",
    "read_run",
    "run_folder_file",
    "score_run",
]
