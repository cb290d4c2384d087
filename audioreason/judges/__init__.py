"""LLM-as-judge layer shared by every judged scorer (``mmar_rubrics``, ``audiospan_rubric``).
Layer 4 (ARCHITECTURE.md): it may import layers 0-3 (base, text, audio, backends).

    from audioreason.judges import (OpenAICompatibleJudge, JudgeRunner, JudgeRequest, VerdictSchema,
                                    SamplingParams)
    judge = OpenAICompatibleJudge("gpt-4o-2024-11-20", concurrency=16)        # key from OPENAI_API_KEY
    runner = JudgeRunner(judge, sampling=SamplingParams(temperature=0, seed=42), cache="judge-cache.sqlite")
    schema = VerdictSchema.from_criteria(item["rubric"])                       # MMAR rubric dicts
    results = runner.run([JudgeRequest(item["id"], messages, schema, rater=r) for r in range(5)])
    # each result: .status "ok" | "invalid" | "call_failed", .verdict, .raw_reply, .replies, counters
    runner.stats                    # requests, ok/invalid/failed, calls, retries, re-asks, cache hits, tokens

Modules: ``client`` (OpenAI-compatible HTTP judge), ``local`` (in-process transformers judge),
``verdicts`` (schemas, JSON extraction, validation, re-ask message), ``cache`` (SQLite verdict cache),
``runner`` (requests -> results), ``ensemble`` (raters and aggregations), ``base`` (sampling parameters,
completions, call errors, credential scrubbing of texts and URLs).
"""

from .base import (
    MMAR_CLIENT_REQUESTS,
    MMAR_JUDGE_MODEL,
    MMAR_MAX_ATTEMPTS,
    MMAR_SEED,
    MMAR_TEMPERATURE,
    MMAR_TIMEOUT_S,
    TRANSIENT_KINDS,
    Completion,
    Judge,
    JudgeCallError,
    JudgeUnavailable,
    SamplingParams,
    TimeBudget,
)
from .cache import VerdictCache
from .client import AdaptiveLimiter, OpenAICompatibleJudge
from .ensemble import (
    AGGREGATIONS,
    DEFAULT_ITEM_TIMEOUT_S,
    Aggregate,
    EnsembleItem,
    EnsembleResult,
    JudgeEnsemble,
    Rater,
    aggregate,
)
from .local import OFFLINE_JUDGE, OFFLINE_JUDGE_FALLBACK, LocalJudge, offline_judge
from .runner import CALL_FAILED, INVALID, OK, JudgeRequest, JudgeResult, JudgeRunner, JudgeStats
from .verdicts import (
    Criterion,
    CriterionScore,
    JsonReplySchema,
    ParseOutcome,
    ReplySchema,
    Verdict,
    VerdictSchema,
    extract_json_values,
    parse_mmar_official,
    parse_verdict,
    reask_messages,
    validate_value,
)

# The judging API. Plumbing (credential scrubbing, Retry-After parsing, the cache key, local-URL detection,
# the HTTP loggers) stays in its module: ``judges.base``, ``judges.client``, ``judges.cache``.
__all__ = [
    "AGGREGATIONS",
    "CALL_FAILED",
    "DEFAULT_ITEM_TIMEOUT_S",
    "INVALID",
    "MMAR_CLIENT_REQUESTS",
    "MMAR_JUDGE_MODEL",
    "MMAR_MAX_ATTEMPTS",
    "MMAR_SEED",
    "MMAR_TEMPERATURE",
    "MMAR_TIMEOUT_S",
    "OFFLINE_JUDGE",
    "OFFLINE_JUDGE_FALLBACK",
    "OK",
    "TRANSIENT_KINDS",
    "AdaptiveLimiter",
    "Aggregate",
    "Completion",
    "Criterion",
    "CriterionScore",
    "EnsembleItem",
    "EnsembleResult",
    "JsonReplySchema",
    "Judge",
    "JudgeCallError",
    "JudgeEnsemble",
    "JudgeRequest",
    "JudgeResult",
    "JudgeRunner",
    "JudgeStats",
    "JudgeUnavailable",
    "LocalJudge",
    "OpenAICompatibleJudge",
    "ParseOutcome",
    "Rater",
    "ReplySchema",
    "SamplingParams",
    "TimeBudget",
    "Verdict",
    "VerdictCache",
    "VerdictSchema",
    "aggregate",
    "extract_json_values",
    "offline_judge",
    "parse_mmar_official",
    "parse_verdict",
    "reask_messages",
    "validate_value",
]
