"""ARIA-Rubrics end to end: parse CoTs, run the backbones in batches, apply the formulas, aggregate.

``AriaScorer`` holds the configuration and the loaded backbones (each loaded once per process by the
registry), so scoring several models' outputs reuses models and caches. The formulas themselves live in
``scorers/aria/formulas.py``. ``batched=False`` runs the straightforward one-item-at-a-time loop over the same
models without caches: the benchmark's baseline and the tests' reference.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np

from audioreason.audio import AudioError
from audioreason.backends import BackendUnavailable, load_backend, resolve_backbones
from audioreason.backends.clap_audio import AUDIO_MODES
from audioreason.base.schema import CoTSlots
from audioreason.scorers.aria import formulas as F
from audioreason.text import answers
from audioreason.text.cot import parse_cot
from audioreason.text.lexicon import content_words, lemmatize, load_audio_vocabulary

METRIC_ROLE = {"M1": "clap", "M2": "embedder", "M3": "lm", "M4": "lm", "M5": "nli", "M6": "vectors"}

# M3: the paper's few-shot prompt (its Figure 6) is an image; this one is written from §3.3.3:
# 0 = empty or repetitive, 1 = specific and informative. Reproduced in metrics/aria/README.md.
M3_PREFIX = """You rate one step of a chain of thought about an audio clip for how substantive it is.
Reply with a single number between 0 and 1:
0 means empty, repetitive, or generic content that says nothing specific;
1 means highly specific and informative content (concrete sounds, acoustic properties, timing, evidence, or clear
inferences).

Step: The audio has sound. There is a sound in the audio. The sound is audio.
Score: 0.1

Step: A dog barks three times, each bark short and high-pitched, then a car horn sounds twice about two seconds later.
Score: 0.9

Step: N/A
Score: 0.0

Step: The rising pitch and the crowd's growing cheers suggest excitement building toward a goal being scored.
Score: 0.8

Step: It could be something. It is hard to say what it is. Maybe it is one of the options.
Score: 0.2

Step: A woman speaks calmly in English at a moderate pace while soft piano music plays in the background.
Score: 0.7

"""
M3_BODY = "Step: {text}"
M3_TAIL = "\nScore:"
_NUMBER = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?|\.\d+)")
# The first number is final once a character other than a digit or "." follows it: generation may stop.
_NUMBER_DONE = re.compile(r"^[^\d.]*(?:\d+(?:\.\d+)?|\.\d+)[^\d.]")

# M4: the contexts P; P,A; P,A,R are written as labelled lines, then the gold answer after the cue.
M4_SEGMENTS = {"perception": "Perception: {}\n", "analysis": "Analysis: {}\n", "reasoning": "Reasoning: {}\n"}
M4_CUE = "Answer:"


class AriaInputError(ValueError):
    """Input that cannot be scored, with the item it concerns."""


@dataclass
class AriaConfig:
    """Options of the ARIA scorer; defaults reproduce the paper. ``AriaScorer`` checks every value before
    any backbone loads (``OPTION_VALUES``, ``WHOLE_NUMBERS``): a bad one is a ValueError naming it."""

    backbones: Any = "paper"  # "paper", "offline", or {role: spec} overrides (see backends.registry)
    allow_download: bool = False  # let a hub id missing from the local cache be downloaded
    m3_mode: str = "generate"  # "generate" (paper: 10 new tokens, up to 3 retries) or "logprob" (one pass)
    m3_retries: int = 3
    m4_absent: str = "info_zero"  # the paper's "Info is 0" (an absent term is ½); or "term_zero" (it is 0)
    m4_max_segment_tokens: int = 512
    answer_tags: str = "bracket"  # ARIA Appendix E; "tolerant" accepts **Answer:** and the like
    answer_substring: str = "first"  # Appendix E; "longest" fixes "a woman" -> "Man"
    m1_audio: str = "whole"  # the paper's whole audio (windows averaged / CLAP fusion); or "random_crop" (10 s)
    on_audio_error: str = "raise"  # or "skip": M1 of that item is NaN and counted
    batched: bool = True  # False: one item at a time, no caches (the benchmark's baseline)
    batch_size: int = 16  # inputs per model call (M1: CLAP windows, crops or fused inputs): bounds M1's memory
    seed: int = 0  # M1's crop and a fused CLAP's crops (numpy: 0 .. 2**32 - 1); M3's sampled retries
    vocabulary: Optional[Sequence[str]] = None  # M6 audio vocabulary; default: the shipped list
    mode_rule: str = "paper"  # the profiles of §3.4; or "fitted" (ARIA + accuracy, fitted to Table 4)
    mode_thresholds: Union[F.ProfileThresholds, F.FittedThresholds, None] = None  # None: the rule's defaults


# The options with a fixed set of values (the first is the default).
OPTION_VALUES = {
    "m1_audio": AUDIO_MODES,
    "on_audio_error": ("raise", "skip"),
    "m3_mode": ("generate", "logprob"),
    "m4_absent": F.M4_ABSENT,
    "answer_tags": ("bracket", "tolerant"),
    "answer_substring": ("first", "longest"),
    "mode_rule": F.MODE_RULES,
}
# The whole-number options' (least, greatest) value; a seed seeds numpy (the M1 crops), which takes 0 .. 2**32 - 1.
WHOLE_NUMBERS = {
    "batch_size": (1, None),
    "m3_retries": (0, None),
    "m4_max_segment_tokens": (1, None),
    "seed": (0, 2**32 - 1),
}


def _check_config(c: AriaConfig) -> AriaConfig:
    """The config with whole numbers as ints, or a ValueError naming the first bad option, its value and
    what it may be; checked before any backbone loads or any item is read."""

    def refuse(name: str, allowed: str) -> None:
        raise ValueError(f"{name} must be {allowed}, got {getattr(c, name)!r}")

    for name, allowed in OPTION_VALUES.items():
        if not isinstance(getattr(c, name), str) or getattr(c, name) not in allowed:
            refuse(name, ", ".join(map(repr, allowed)))
    ints = {}
    for name, (least, greatest) in WHOLE_NUMBERS.items():
        value = getattr(c, name)
        if (
            isinstance(value, (bool, np.bool_))
            or not isinstance(value, (int, np.integer))
            or value < least
            or (greatest is not None and value > greatest)
        ):
            refuse(
                name, f"a whole number >= {least}" if greatest is None else f"a whole number from {least} to {greatest}"
            )
        ints[name] = int(value)
    for name in ("batched", "allow_download"):
        if not isinstance(getattr(c, name), (bool, np.bool_)):
            refuse(name, "True or False")
    words = c.vocabulary
    if words is not None:
        listed = list(words) if isinstance(words, Iterable) and not isinstance(words, str) else []
        if not listed or not all(isinstance(w, str) and w.strip() for w in listed):
            refuse("vocabulary", "a list of words (non-empty strings) or None for the shipped list")
        words = tuple(listed)
    wanted = F.RULE_THRESHOLDS[c.mode_rule]
    if c.mode_thresholds is not None and not isinstance(c.mode_thresholds, wanted):
        refuse("mode_thresholds", f"{wanted.__name__} for mode_rule={c.mode_rule!r} (or None for its defaults)")
    return replace(c, vocabulary=words, **ints)


def _validate(predictions, references, choices, audio) -> None:
    n = len(predictions)
    for name, values in (("references", references), ("choices", choices), ("audio", audio)):
        if values is not None and len(values) != n:
            raise AriaInputError(f"predictions has {n} items but {name} has {len(values)}")
    for i, (ref, ch) in enumerate(zip(references, choices)):
        if not isinstance(ref, str) or not ref.strip():
            raise AriaInputError(f"item {i}: the reference (gold answer text) is empty or not a string")
        if not isinstance(ch, (list, tuple)) or not ch or not all(isinstance(c, str) for c in ch):
            raise AriaInputError(f"item {i}: choices must be a non-empty list of strings, got {ch!r}")


def check_columns(choices: Optional[Sequence[Any]], model: Optional[Sequence[Any]]) -> None:
    """The evaluate module's (``metrics/aria``) columns: choices given (None: not given), one model's rows."""
    if choices is None:
        raise ValueError("aria needs choices=[[...], ...]: one list of choices per prediction")
    models = sorted({m for m in model or [] if m is not None})
    if len(models) > 1:
        raise ValueError(f"aria scores one model per compute(); the model column names {models}")


def check_one_condition(condition: Optional[Sequence[Any]]) -> None:
    """The evaluate module's rows, every one of them scored, hold one condition (ARIA's numbers are per
    condition)."""
    conditions = sorted({c for c in condition or [] if c is not None})
    if len(conditions) > 1:
        raise ValueError(
            f"the condition column holds {conditions}: aria scores one condition; rows='applicable' "
            f"scores the full-audio rows and counts the rest"
        )


def _present(slots: CoTSlots, name: str) -> bool:
    return name not in slots.missing


def _nanstats(values: Sequence[float]) -> tuple[Optional[float], Optional[float], int]:
    arr = np.asarray(values, dtype=np.float64)
    ok = arr[~np.isnan(arr)]
    if not len(ok):
        return None, None, int(len(arr))
    return float(ok.mean()), float(ok.std()), int(len(arr) - len(ok))


class AriaScorer:
    def __init__(self, config: Optional[AriaConfig] = None, **options: Any):
        known = [f.name for f in fields(AriaConfig)]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ValueError(f"unknown ARIA option {unknown[0]!r}; the options are {', '.join(known)}")
        self.config = _check_config(replace(config or AriaConfig(), **options))
        self.specs = resolve_backbones(self.config.backbones)
        self.vocabulary = list(self.config.vocabulary or load_audio_vocabulary())

    def backend(self, role: str):
        return load_backend(role, self.specs.get(role), self.config.allow_download)

    def clear_caches(self) -> None:
        """Forget every computed embedding, score and lemma (models stay loaded): the next call computes
        everything again, as a first call would, but without the one-time loads (for timing)."""
        lemmatize.cache_clear()
        for role, spec in self.specs.items():
            if spec is None:
                continue
            try:
                backend = self.backend(role)
            except BackendUnavailable:
                continue
            if hasattr(backend, "clear_caches"):  # the LM keeps no per-text results, only its prefix
                backend.clear_caches()

    # ------------------------------------------------------------------ metrics
    def _m1(self, parsed, audio, counts) -> list[float]:
        if audio is None:
            raise BackendUnavailable("no audio given")
        clap, c = self.backend("clap"), self.config
        if c.batched:
            audio_vecs = clap.embed_sources(list(audio), c.m1_audio, c.batch_size, seed=c.seed)
        else:
            audio_vecs = [clap.embed_sources([a], c.m1_audio, 1, use_cache=False, seed=c.seed)[0] for a in audio]
        entity_texts = sorted({e for p in parsed for e in p.entities})
        text_vecs = dict(zip(entity_texts, clap.embed_texts(entity_texts)) if c.batched and entity_texts else [])
        values = []
        for i, (slots, a) in enumerate(zip(parsed, audio_vecs)):
            if isinstance(a, AudioError):
                if c.on_audio_error == "raise":
                    raise AriaInputError(f"item {i}: {a}") from a
                counts["audio_errors"] += 1
                values.append(float("nan"))
                continue
            if not slots.entities:
                counts["m1_items_without_entities"] += 1
            cosines = [
                float((text_vecs[e] if c.batched else clap.embed_texts([e], use_cache=False)[0]) @ a)
                for e in slots.entities
            ]
            values.append(F.m1_acoustic_grounding(cosines))
        return values

    def _m2(self, parsed, counts) -> list[float]:
        embedder = self.backend("embedder")
        names = ("perception", "analysis", "reasoning")
        if self.config.batched:  # every distinct text of every item, in batches, once
            texts = sorted({getattr(p, n) for p in parsed for n in names if _present(p, n)})
            vecs = dict(zip(texts, embedder.encode(texts, self.config.batch_size))) if texts else {}
            embed_item = lambda p: [vecs[getattr(p, n)] for n in names]  # noqa: E731
        else:  # one item at a time: its P, A, R in one call
            embed_item = lambda p: embedder.encode([getattr(p, n) for n in names], 3, use_cache=False)  # noqa: E731
        values = []
        for p in parsed:
            if not all(_present(p, n) for n in names):
                counts["m2_items_missing_slot"] += 1
                values.append(F.m2_inter_step_coherence(None, None))
                continue
            vp, va, vr = embed_item(p)
            values.append(F.m2_inter_step_coherence(float(va @ vp), float(vr @ va)))
        return values

    def _sigmas(self, texts: list[str], counts) -> dict[str, float]:
        """Substantiveness σ in [0, 1] for each distinct text; NaN when no valid number came back."""
        lm, c = self.backend("lm"), self.config
        bodies = [M3_BODY.format(text=t) for t in texts]
        kwargs = dict(batch_size=c.batch_size if c.batched else 1, reuse_prefix=c.batched)
        if c.m3_mode == "logprob":
            return dict(zip(texts, lm.digit_scores(M3_PREFIX, bodies, M3_TAIL, **kwargs)))
        result: dict[str, float] = {}
        todo = list(range(len(texts)))
        for attempt in range(c.m3_retries + 1):
            if attempt == 0:  # greedy, batched
                replies = lm.generate(
                    M3_PREFIX, [bodies[i] for i in todo], M3_TAIL, max_new_tokens=10, stop=_NUMBER_DONE, **kwargs
                )
            else:  # greedy would repeat itself: retries sample, one prompt at a time so that the draw
                # depends on (seed, attempt) only, never on which prompts shared a batch
                replies = [
                    lm.generate(
                        M3_PREFIX,
                        [bodies[i]],
                        M3_TAIL,
                        max_new_tokens=10,
                        sample_seed=c.seed + attempt,
                        batch_size=1,
                        reuse_prefix=c.batched,
                    )[0]
                    for i in todo
                ]
            failed = []
            for i, reply in zip(todo, replies):
                m = _NUMBER.search(reply)
                value = float(m.group(1)) if m else math.nan
                if 0.0 <= value <= 1.0:
                    result[texts[i]] = value
                else:
                    failed.append(i)
            if attempt:
                counts["m3_retries"] += len(todo)
            todo = failed
            if not todo:
                break
        result.update({texts[i]: math.nan for i in todo})
        return result

    def _m3(self, parsed, counts) -> list[float]:
        names = ("perception", "analysis", "reasoning")
        wanted = [getattr(p, n) for p in parsed for n in names if _present(p, n)]
        if self.config.batched:  # each distinct slot text is scored once
            sigma = self._sigmas(sorted(set(wanted)), counts)
            lookup = sigma.__getitem__
        else:
            lookup = lambda t: self._sigmas([t], counts)[t]  # noqa: E731
        values = []
        for p in parsed:
            sigmas = [lookup(getattr(p, n)) if _present(p, n) else None for n in names]
            counts["m3_unparsed_slots"] += sum(s is not None and math.isnan(s) for s in sigmas)
            values.append(F.m3_chain_coverage(*sigmas, answer_present=_present(p, "answer")))
        return values

    def _m4(self, parsed, references, counts) -> list[float]:
        lm, c = self.backend("lm"), self.config
        requests, owners = [], []
        for i, (p, gold) in enumerate(zip(parsed, references)):
            has_a, has_r = _present(p, "analysis"), _present(p, "reasoning")
            if not (has_a or has_r):
                continue  # both terms absent: no perplexity is needed
            segments = [M4_SEGMENTS["perception"].format(p.perception) if _present(p, "perception") else ""]
            segments += [
                M4_SEGMENTS[n].format(getattr(p, n)) for n, has in (("analysis", has_a), ("reasoning", has_r)) if has
            ]
            requests.append((segments, M4_CUE, " " + gold.strip()))
            owners.append(i)
        step = c.batch_size if c.batched else 1
        scored = dict(
            zip(
                owners,
                lm.cumulative_perplexities(requests, c.m4_max_segment_tokens, step, reuse_prefix=c.batched)
                if requests
                else [],
            )
        )
        values = []
        for i, p in enumerate(parsed):
            if i not in scored:
                values.append(F.m4_step_causality(math.nan, None, None, c.m4_absent))
                continue
            ppl, truncated = scored[i]
            counts["m4_truncated_items"] += truncated
            has_a, has_r = _present(p, "analysis"), _present(p, "reasoning")
            values.append(
                F.m4_step_causality(ppl[0], ppl[1] if has_a else None, ppl[-1] if has_r else None, c.m4_absent)
            )
        return values

    def _m5(self, parsed, counts) -> list[float]:
        nli, c = self.backend("nli"), self.config
        steps = (("perception", "analysis"), ("analysis", "reasoning"), ("reasoning", "answer"))
        pairs = [(getattr(p, a), getattr(p, b)) for p in parsed for a, b in steps if _present(p, a) and _present(p, b)]
        if c.batched:
            probs = dict(zip(pairs, nli.entailment(pairs, c.batch_size))) if pairs else {}
            g = lambda pair: probs[pair]  # noqa: E731
        else:
            g = lambda pair: float(nli.entailment([pair], 1, use_cache=False)[0])  # noqa: E731
        return [
            F.m5_reasoning_progress(
                *[g((getattr(p, a), getattr(p, b))) if _present(p, a) and _present(p, b) else None for a, b in steps]
            )
            for p in parsed
        ]

    def _m6(self, predictions, counts) -> list[float]:
        vectors = self.backend("vectors")
        vectors.set_vocabulary(self.vocabulary)
        counts["m6_vocabulary_without_vector"] = len(vectors.vocabulary_missing)
        values = []
        word_lists = [content_words(p) for p in predictions]
        if self.config.batched:  # every distinct word once, in one matrix product
            vectors.max_similarity(sorted({w for words in word_lists for w in words}))
        for words in word_lists:
            sims = vectors.max_similarity(words, use_cache=self.config.batched)
            kept = [s for s in sims if s is not None]
            counts["m6_words"] += len(kept)
            counts["m6_words_without_vector"] += len(sims) - len(kept)
            counts["m6_items_without_words"] += not kept
            values.append(F.m6_audio_lexical_density(kept))
        return values

    # ------------------------------------------------------------------ scoring
    def score(
        self,
        predictions: Sequence[Any],
        references: Sequence[str],
        choices: Sequence[Sequence[str]],
        audio: Optional[Sequence[Any]] = None,
        return_items: bool = False,
    ) -> dict[str, Any]:
        """Score raw model outputs against gold answers. See metrics/aria/README.md for the output."""
        predictions = list(predictions)
        _validate(predictions, references, choices, audio)
        c = self.config
        parsed = [parse_cot(p) for p in predictions]
        extracted = [
            answers.extract_aria(p, ch, tags=c.answer_tags, substring=c.answer_substring)
            for p, ch in zip(predictions, choices)
        ]
        counts: dict[str, int] = {
            k: 0
            for k in (
                "audio_errors",
                "m1_items_without_entities",
                "m2_items_missing_slot",
                "m3_retries",
                "m3_unparsed_slots",
                "m4_truncated_items",
                "m6_words",
                "m6_words_without_vector",
                "m6_items_without_words",
            )
        }
        runners: dict[str, Callable[[], list[float]]] = {
            "M1": lambda: self._m1(parsed, audio, counts),
            "M2": lambda: self._m2(parsed, counts),
            "M3": lambda: self._m3(parsed, counts),
            "M4": lambda: self._m4(parsed, references, counts),
            "M5": lambda: self._m5(parsed, counts),
            "M6": lambda: self._m6(predictions, counts),
        }
        raw: dict[str, list[float]] = {}
        backbones: dict[str, str] = {}
        for metric, run in runners.items():
            try:
                raw[metric] = run()
                backbones[metric] = self.backend(METRIC_ROLE[metric]).description
            except BackendUnavailable as err:
                backbones[metric] = f"unavailable: {err}"
        return self._aggregate(predictions, references, parsed, extracted, raw, backbones, counts, return_items)

    def _aggregate(self, predictions, references, parsed, extracted, raw, backbones, counts, return_items):
        n = len(predictions)
        clipped = {m: [F.clip01(v) for v in vals] for m, vals in raw.items()}
        result: dict[str, Any] = {}
        means = {}
        for metric in F.METRICS:
            mean, std, nans = _nanstats(clipped[metric]) if metric in clipped else (None, None, 0)
            result[metric], result[f"{metric}_std"] = mean, std
            if metric in clipped:
                counts[f"{metric}_items_not_scored"] = nans
                if mean is not None:
                    means[metric] = mean
        item_aria = [F.aria_score({m: clipped[m][i] for m in clipped}) for i in range(n)]
        complete = len(means) == len(F.METRICS)
        correct = [answers.is_gold(e, ref) for e, ref in zip(extracted, references)]
        accuracy = sum(correct) / n if n else float("nan")
        result.update(
            {
                "aria": F.aria_score(means),  # the mean of the metric means, as the paper's Table 1
                "aria_std": _nanstats(item_aria)[1],
                "aria_metrics": sorted(means),
                "aria_complete": complete,
                "accuracy": accuracy,
                "unanswered_rate": sum(not e.answered for e in extracted) / n if n else float("nan"),
                "answer_methods": answers.summarize(extracted)["methods"],
                "backbones": backbones,
                "counts": {"items": n, **counts},
            }
        )
        result["reasoning_mode_rule"] = self.config.mode_rule
        if complete:
            profile = {**{m: means[m] for m in ("M2", "M3", "M4", "M5")}, "aria": result["aria"], "accuracy": accuracy}
            result["reasoning_mode"] = F.reasoning_mode(profile, self.config.mode_rule, self.config.mode_thresholds)
            if result["reasoning_mode"] is None:
                result["note"] = (
                    "the profile matches none of the paper's three modes (ARIA §3.4: low accuracy "
                    "without the Scaffolding pattern of low M2, M4, M5 and high M3)"
                )
        else:
            result["reasoning_mode"] = None
            missing = sorted(set(F.METRICS) - set(means))
            result["note"] = (
                f"ARIA covers only {', '.join(sorted(means))}: {', '.join(missing)} unavailable; "
                "it is not comparable to the paper's six-metric ARIA and no reasoning mode is given"
            )
        if return_items:
            result["items"] = [
                {
                    "index": i,
                    **{m: raw[m][i] for m in raw},
                    **{f"{m}_clipped": clipped[m][i] for m in clipped},
                    "aria": item_aria[i],
                    "extracted": extracted[i].to_dict(),
                    "correct": correct[i],
                    "slots": parsed[i].to_dict(),
                }
                for i in range(n)
            ]
        return result
