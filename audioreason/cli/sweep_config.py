"""A sweep file (`audioreason evaluate --config sweep.yaml`, run by ``audioreason.cli.sweep``): read and
checked whole before any model or data loads (``load_sweep``): an unknown key, benchmark, adapter, adapter
option, condition, template or scorer, a value of the wrong type or out of range, a name the sweep's own files
take, is a one-line error naming its key path; YAML aliases that expand the file past ``MAX_VALUES`` values
are refused before the document is built. See docs/sweeps.md for the file's keys."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from audioreason.inference.base import DecodingParams

TOP_KEYS = {
    "out",
    "models",
    "benchmarks",
    "conditions",
    "templates",
    "batch_size",
    "decoding",
    "score",
    "fragment_cache",
    "audio_check",
    "audio_check_seed",
}
DEFAULT_AUDIO_CHECK = 24  # items of the audio-reliance check per run (all when fewer), when full is run
MODEL_KEYS = {"name", "adapter", "model", "options", "tb"}
TB_KEYS = {"adapter", "model", "options"}
BENCHMARK_KEYS = {"name", "benchmark", "data", "config", "limit", "templates", "on_missing_audio"}
DECODING_KEYS = {"max_new_tokens", "temperature", "top_p", "seed"}
# The `score` mapping: `audioreason score`'s options by their long names (dashes or underscores).
SCORE_KEYS = {
    "scorers",
    "extraction",
    "aria_backbones",
    "perturbations",
    "seed",
    "confidence",
    "resamples",
    "judge_model",
    "judge_base_url",
    "judge_api_key_env",
    "judge_cache",
    "compat",
    "official_scorer",
}
# A sweep file holds a few hundred values; YAML aliases (&a ... *a) can make a short file expand to billions
# ("billion laughs"), which the checks' own messages would then print. Counted on the composed nodes, where an
# alias is one shared node, before any value is built.
MAX_VALUES = 100_000
SWEEP_FILE = "sweep.json"  # the sweep's record in its out folder (cli.sweep writes it)


class SweepError(ValueError):
    """A mistake in the sweep file: one line, starting with the file and the key path."""


@dataclass
class ModelSpec:
    label: str  # the run folders' name
    adapter: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)
    tb_adapter: str = "text-lm"
    tb_model: Optional[str] = None
    tb_options: dict[str, Any] = field(default_factory=dict)


@dataclass
class BenchmarkSpec:
    label: str
    benchmark: str
    data: str
    config: Optional[str] = None
    limit: Optional[int] = None
    templates: Optional[list[str]] = None
    on_missing_audio: str = "raise"


@dataclass
class Sweep:
    path: Path
    out: Path
    models: list[ModelSpec]
    benchmarks: list[BenchmarkSpec]
    conditions: list[str]
    batch_size: int
    decoding: DecodingParams
    score: Any  # inference.score.ScoreOptions
    fragment_cache: Optional[str] = None
    audio_check: int = 0  # silence and shuffled on this many seeded items per run (0: off)
    audio_check_seed: int = 0

    def folder(self, model: ModelSpec, benchmark: BenchmarkSpec) -> Path:
        return self.out / model.label / benchmark.label


# ------------------------------------------------------------------------------------------------
# The file and its checks
# ------------------------------------------------------------------------------------------------


def load_sweep(path: str, out: Optional[str] = None, *, check_paths: bool = True) -> Sweep:
    """The sweep file read and checked whole; ``out`` (--out) replaces its ``out``. ``check_paths``: local
    model and data paths must exist (relative paths are read from the file's folder)."""
    import yaml

    where = Path(path).expanduser()
    try:
        content = _read_yaml(where.read_text(encoding="utf-8"), path)
    except OSError as err:
        raise SweepError(f"{path}: cannot read the sweep file ({err.strerror or err})") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise SweepError(f"{path}:{line} not valid YAML ({getattr(err, 'problem', None) or err})") from None
    except RecursionError:  # the YAML reader recurses once per nesting level
        raise SweepError(f"{path}: nested too deeply to read") from None
    return parse_sweep(content, where, out, check_paths=check_paths)


def _read_yaml(text: str, path: str) -> Any:
    """``yaml.safe_load``, with the document's expanded size counted on its nodes before any value is built."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, path)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_expansion(root: Any, path: str) -> None:
    """Refuse a document whose aliases expand it past MAX_VALUES values, or make a value contain itself. Each
    node's expanded size is computed once (an alias is the same node object), so this costs what the text does."""
    import yaml

    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        line = node.start_mark.line + 1
        if id(node) in open_nodes:
            raise SweepError(f"{path}: line {line}: an alias inside its own anchor (a value that contains itself)")
        open_nodes.add(id(node))
        children = (
            []
            if isinstance(node, yaml.ScalarNode)
            else node.value
            if isinstance(node, yaml.SequenceNode)
            else [part for pair in node.value for part in pair]
        )
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_VALUES:
                raise SweepError(
                    f"{path}: line {line}: this value holds more than {MAX_VALUES} values once its "
                    "YAML aliases are expanded; a sweep file needs far fewer"
                )
        open_nodes.discard(id(node))
        sizes[id(node)] = total
        return total

    size(root)


def parse_sweep(content: Any, path: Path, out: Optional[str] = None, *, check_paths: bool = True) -> Sweep:
    from audioreason.data import benchmark_spec
    from audioreason.inference.conditions import parse_conditions
    from audioreason.inference.prompts import parse_templates

    def fail(key: str, message: str) -> SweepError:
        return SweepError(f"{path}: {key}: {message}")

    def mapping(value: Any, key: str, allowed: set[str], required: Sequence[str] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise fail(key, f"expected a mapping, got {type(value).__name__}")
        value = {str(k).replace("-", "_"): v for k, v in value.items()}
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise fail(f"{key}.{unknown[0]}", f"unknown key (known: {', '.join(sorted(allowed))})")
        for name in required:
            if value.get(name) in (None, ""):
                raise fail(f"{key}.{name}", "required")
        return value

    def names(value: Any, key: str) -> list[str]:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list) or not value or not all(isinstance(v, (str, int)) for v in value):
            raise fail(key, "expected a list of names")
        return [str(v) for v in value]

    def local(value: str, key: str) -> str:
        # A path-looking value (./, ../, /, ~) is read from the file's folder and must exist.
        if not value.startswith((".", "/", "~")):
            return value
        resolved = (path.parent / Path(value).expanduser()).resolve()
        if check_paths and not resolved.exists():
            raise fail(key, f"{value!r} does not exist")
        return str(resolved)

    def positive_int(value: Any, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise fail(key, f"must be a positive integer, got {_shown(value)}")
        return value

    top = mapping(content if content is not None else {}, "(top level)", TOP_KEYS, ("models", "benchmarks"))
    conditions = names(top.get("conditions", ["full"]), "conditions")  # a SweepError of its own
    try:
        parsed_conditions = parse_conditions(conditions)
    except ValueError as err:
        raise fail("conditions", str(err)) from None
    audio_check, audio_check_seed = _audio_check(top, parsed_conditions, fail)
    needs_tb = any(c.kind == "tb" for c in parsed_conditions)
    templates = names(top["templates"], "templates") if top.get("templates") is not None else None
    models = [
        _model(m, f"models[{i}]", needs_tb, mapping, fail, local)
        for i, m in enumerate(_list(top["models"], "models", fail))
    ]
    benchmarks: list[BenchmarkSpec] = []
    for i, entry in enumerate(_list(top["benchmarks"], "benchmarks", fail)):
        key = f"benchmarks[{i}]"
        entry = {"benchmark": entry} if isinstance(entry, str) else entry
        b = mapping(entry, key, BENCHMARK_KEYS, ("benchmark", "data"))
        try:
            name = benchmark_spec(_text(b["benchmark"], f"{key}.benchmark", fail)).name
        except ValueError as err:
            raise fail(f"{key}.benchmark", str(err)) from None
        own = names(b["templates"], f"{key}.templates") if b.get("templates") is not None else templates
        if own is not None:
            try:
                parse_templates(own)
            except ValueError as err:
                raise fail(f"{key}.templates" if b.get("templates") is not None else "templates", str(err)) from None
        if _text(b.get("on_missing_audio", "raise"), f"{key}.on_missing_audio", fail) not in ("raise", "skip", "keep"):
            raise fail(f"{key}.on_missing_audio", f"{b['on_missing_audio']!r} is not raise, skip or keep")
        limit = positive_int(b["limit"], f"{key}.limit") if b.get("limit") is not None else None
        config = None if b.get("config") is None else _text(b["config"], f"{key}.config", fail)
        given = str(b["benchmark"]).strip().lower()  # the folder takes the name as written (mmau-test-mini)
        label = (
            _text(b["name"], f"{key}.name", fail)
            if b.get("name") not in (None, "")
            else given
            if config is None
            else f"{given}-{config}"
        )
        benchmarks.append(
            BenchmarkSpec(
                _label(label, f"{key}.name", fail),
                name,
                local(_text(b["data"], f"{key}.data", fail), f"{key}.data"),
                config,
                limit,
                own,
                b.get("on_missing_audio", "raise"),
            )
        )
    for what, specs in (("models", models), ("benchmarks", benchmarks)):
        labels = [s.label for s in specs]
        twice = next((x for x in labels if labels.count(x) > 1), None)
        if twice is not None:
            raise fail(
                f"{what}[{labels.index(twice, labels.index(twice) + 1)}].name",
                f"{twice!r} names two entries; give each its own name (its run folders' name)",
            )
    decoding_keys = mapping(top.get("decoding") or {}, "decoding", DECODING_KEYS)
    try:
        decoding = DecodingParams(**decoding_keys)
    except (TypeError, ValueError) as err:
        raise fail("decoding", str(err)) from None
    batch_size = positive_int(top.get("batch_size", 1), "batch_size")
    score = _score_options(mapping(top.get("score") or {}, "score", SCORE_KEYS), fail)
    where = out or top.get("out")
    if not where:
        raise fail("out", "required (or give --out)")
    folder = Path(where).expanduser() if out else (path.parent / Path(_text(where, "out", fail)).expanduser())
    if folder.exists() and not folder.is_dir():
        raise fail("out", f"{str(folder)!r} is a file; give a folder")
    fragment_cache = (
        local(_text(top["fragment_cache"], "fragment_cache", fail), "fragment_cache")
        if top.get("fragment_cache")
        else None
    )
    return Sweep(
        path,
        folder.resolve(),
        models,
        benchmarks,
        conditions,
        batch_size,
        decoding,
        score,
        fragment_cache,
        audio_check,
        audio_check_seed,
    )


def _audio_check(
    top: dict[str, Any], conditions: Sequence[Any], fail: Callable[[str, str], SweepError]
) -> tuple[int, int]:
    """(audio_check, audio_check_seed): given, or 24 items (all when fewer) when the sweep runs full, else off."""
    from audioreason.inference.conditions import with_audio_check
    from audioreason.text.conditions import Condition

    default = DEFAULT_AUDIO_CHECK if Condition("full") in conditions else 0
    n, seed = top.get("audio_check", default), top.get("audio_check_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise fail("audio_check_seed", f"must be a whole number >= 0, got {seed!r}")
    try:
        with_audio_check(conditions, n)
    except ValueError as err:
        raise fail("audio_check", str(err)) from None
    return n, seed


def _list(value: Any, key: str, fail: Callable[[str, str], SweepError]) -> list:
    if not isinstance(value, list) or not value:
        raise fail(key, "expected a non-empty list")
    return value


def _text(value: Any, key: str, fail: Callable[[str, str], SweepError]) -> str:
    """A name, path or choice: a string (a bare number reads as one), never a list or mapping turned to text."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise fail(key, f"expected a string, got {type(value).__name__}")
    return str(value)


def _shown(value: Any) -> str:
    """A scalar as written; a list or mapping by its kind (its text may be long)."""
    return type(value).__name__ if isinstance(value, (list, dict)) else repr(value)


def _label(text: str, key: str, fail: Callable[[str, str], SweepError]) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", text):
        raise fail(key, f"{text!r}: a folder name of letters, digits, '.', '_', '+', '-' (set `name`)")
    own = _sweep_files()
    if text.lower() in own:  # lower: a case-insensitive file system makes Sweep.JSON the same name
        raise fail(
            key,
            f"{text!r} is the name of one of the files a sweep writes ({', '.join(sorted(own))}); set another `name`",
        )
    return text


def _sweep_files() -> set[str]:
    """The files a sweep writes beside its run folders, in its out folder."""
    from audioreason.evaluation.leaderboard import LEADERBOARD_JSON, LEADERBOARD_MD
    from audioreason.inference.processes import LOCK_FILE

    return {SWEEP_FILE, SWEEP_FILE + ".tmp", LEADERBOARD_JSON, LEADERBOARD_MD, LOCK_FILE}


def _model(entry: Any, key: str, needs_tb: bool, mapping: Callable, fail: Callable, local: Callable) -> ModelSpec:
    entry = {"model": entry} if isinstance(entry, str) else entry
    m = mapping(entry, key, MODEL_KEYS, ("model",))
    adapter = _text(m.get("adapter") or "transformers", f"{key}.adapter", fail)
    options = check_adapter_options(adapter, m.get("options") or {}, key, fail)
    model = _text(m["model"], f"{key}.model", fail)
    if adapter in ("transformers", "text-lm"):  # these take a checkpoint; others a served model's name
        model = local(model, f"{key}.model")
    tb = m.get("tb")
    if needs_tb and not tb:
        raise fail(f"{key}.tb", "the tb condition needs a text backbone here (tb: {model: ...})")
    label = _text(m["name"], f"{key}.name", fail) if m.get("name") not in (None, "") else _default_label(model)
    spec = ModelSpec(_label(label, f"{key}.name", fail), adapter, model, options)
    if tb:
        t = mapping({"model": tb} if isinstance(tb, str) else tb, f"{key}.tb", TB_KEYS, ("model",))
        spec.tb_adapter = _text(t.get("adapter") or "text-lm", f"{key}.tb.adapter", fail)
        spec.tb_options = check_adapter_options(spec.tb_adapter, t.get("options") or {}, f"{key}.tb", fail)
        spec.tb_model = _text(t["model"], f"{key}.tb.model", fail)
        if spec.tb_adapter in ("transformers", "text-lm"):
            spec.tb_model = local(spec.tb_model, f"{key}.tb.model")
    return spec


def _default_label(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", Path(model.rstrip("/")).name).strip("-.") or "model"


def check_adapter_options(kind: str, options: Any, key: str, fail: Callable[[str, str], SweepError]) -> dict:
    """The adapter is one of ``runner.ADAPTERS`` and takes every option named (read from its constructor's
    signature, without building it: the same rule ``make_adapter`` applies when it builds it), each of the type
    the constructor declares; ``max_audio_s`` and ``sampling_rate`` in range (every adapter's shared check)."""
    from audioreason.inference.adapter_inputs import check_audio_options
    from audioreason.inference.option_types import type_mismatch
    from audioreason.inference.runner import ADAPTERS, adapter_option_types, adapter_signature, unknown_options
    from audioreason.judges.client import check_base_url

    if kind not in ADAPTERS:
        raise fail(f"{key}.adapter", f"{kind!r} is not one of {', '.join(ADAPTERS)}")
    if not isinstance(options, dict):
        raise fail(f"{key}.options", f"expected a mapping, got {type(options).__name__}")
    if "device" in options:
        raise fail(
            f"{key}.options.device",
            f"the {kind} adapter takes no option 'device' (the runner sets each process's device)",
        )
    unknown = unknown_options(adapter_signature(kind)[1], options)
    if unknown:
        raise fail(f"{key}.options.{unknown[0]}", f"the {kind} adapter takes no option {unknown[0]!r}")
    declared = adapter_option_types(kind)
    for name, value in options.items():
        # None is the adapter's default; the value itself is never printed (a header may hold a key)
        expected = None if value is None or name not in declared else type_mismatch(value, declared[name])
        if expected:
            raise fail(f"{key}.options.{name}", f"expected {expected}, got {type(value).__name__}")
    for name, value in options.items():
        if name.endswith("base_url") and value is not None:
            try:
                check_base_url(value, name)
            except ValueError as err:
                raise fail(f"{key}.options.{name}", str(err)) from None
    for name, checked in (
        ("max_audio_s", (options.get("max_audio_s"), 16000)),
        ("sampling_rate", (None, options.get("sampling_rate", 16000))),
    ):
        try:
            check_audio_options(*checked)
        except ValueError as err:
            raise fail(f"{key}.options.{name}", str(err)) from None
    return dict(options)


def _score_options(given: dict[str, Any], fail: Callable[[str, str], SweepError]) -> Any:
    """ScoreOptions from the `score` mapping, through `audioreason score`'s own defaults and checks."""
    from audioreason.cli.score_args import add_score_arguments, score_options
    from audioreason.inference.option_types import type_mismatch

    parser = argparse.ArgumentParser(add_help=False)
    add_score_arguments(parser)
    args = parser.parse_args([])
    actions = {action.dest: action for action in parser._actions}
    for key, value in given.items():
        if value is None:  # null: the option's default
            continue
        if key in ("scorers", "perturbations") and isinstance(value, list):
            value = ",".join(map(str, value))
        dest = "perturbation_seed" if key == "seed" else key
        # the value as the option's argparse type would have made it (a bool for a flag)
        kind = bool if actions[dest].nargs == 0 else actions[dest].type or str
        expected = type_mismatch(value, kind)
        if expected:
            raise fail(f"score.{key}", f"expected {expected}, got {type(value).__name__}")
        setattr(args, dest, value)
    args.no_progress = False
    try:
        options = score_options(args)
        options.uncertainty()  # confidence, resamples and seed in range
        return options
    except ValueError as err:
        raise fail("score", str(err)) from None


__all__ = ["BenchmarkSpec", "ModelSpec", "Sweep", "SweepError", "check_adapter_options", "load_sweep", "parse_sweep"]
