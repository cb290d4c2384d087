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
from .base import (MMAR_CLIENT_REQUESTS, MMAR_JUDGE_MODEL, MMAR_MAX_ATTEMPTS, MMAR_SEED, MMAR_TEMPERATURE,
                   MMAR_TIMEOUT_S, TRANSIENT_KINDS, Completion, Judge, JudgeCallError, JudgeUnavailable, SamplingParams,
                   TimeBudget, redact_url, scrub, url_secrets)
from .cache import VerdictCache, cache_key
from .client import (HTTP_LOGGERS, AdaptiveLimiter, OpenAICompatibleJudge, is_local_url, parse_retry_after,
                     redact_http_logs)
from .ensemble import (AGGREGATIONS, DEFAULT_ITEM_TIMEOUT_S, Aggregate, EnsembleItem, EnsembleResult, JudgeEnsemble,
                       Rater, aggregate)
from .local import OFFLINE_JUDGE, OFFLINE_JUDGE_FALLBACK, LocalJudge, offline_judge
from .runner import CALL_FAILED, INVALID, OK, JudgeRequest, JudgeResult, JudgeRunner, JudgeStats
from .verdicts import (Criterion, CriterionScore, JsonReplySchema, ParseOutcome, ReplySchema, Verdict,
                       VerdictSchema, extract_json_values, parse_mmar_official, parse_verdict, reask_messages,
                       validate_value)

__all__ = ["AGGREGATIONS", "DEFAULT_ITEM_TIMEOUT_S", "MMAR_CLIENT_REQUESTS", "MMAR_TIMEOUT_S", "TRANSIENT_KINDS",
           "TimeBudget", "parse_mmar_official", "AdaptiveLimiter", "Aggregate", "CALL_FAILED", "Completion", "Criterion",
           "CriterionScore", "EnsembleItem", "EnsembleResult", "INVALID", "Judge", "JudgeCallError",
           "JudgeUnavailable",
           "JsonReplySchema", "JudgeEnsemble", "JudgeRequest", "JudgeResult", "JudgeRunner", "JudgeStats", "LocalJudge",
           "MMAR_JUDGE_MODEL", "MMAR_MAX_ATTEMPTS", "MMAR_SEED", "MMAR_TEMPERATURE", "OK",
           "OpenAICompatibleJudge", "ParseOutcome", "Rater", "ReplySchema", "SamplingParams", "Verdict", "VerdictCache",
           "VerdictSchema", "aggregate", "cache_key", "extract_json_values", "is_local_url", "parse_verdict",
           "reask_messages", "scrub", "validate_value", "HTTP_LOGGERS", "redact_http_logs", "redact_url", "url_secrets",
           "OFFLINE_JUDGE", "OFFLINE_JUDGE_FALLBACK", "offline_judge"]
