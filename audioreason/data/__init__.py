"""Benchmark loaders: MMAR, MMAU test-mini and AudioSpan as ``datasets`` in one schema.

- ``load_benchmark(name, path_or_hub_id, split="test", ...)``: one line from a raw folder, a Hub-ready
  folder or a Hub id;
- the builders (``MMARBuilder``, ``MMAUTestMiniBuilder``, ``AudioSpanBuilder``): ``datasets``
  GeneratorBasedBuilder subclasses that read a raw folder and validate it (``builder.report``);
- ``build_benchmark`` / ``export_benchmark``: raw folder -> Dataset + report -> Hub-ready folder;
- ``decode_audio``: samples from any audio value (torchcodec decoder or soundfile fallback).
"""
from .audiospan import FIELD_ALIASES, AudioSpanBuilder
from .common import (CORE_FEATURES, TEST_SPLIT, BenchmarkBuilder, BenchmarkConfig, BenchmarkValidationError,
                     Issue, ValidationReport, audio_paths, decode_audio, is_hub_folder, load_hub_folder,
                     push_folder, resolve_audio_backend, torchcodec_status)
from .load import (BENCHMARKS, BenchmarkNotFoundError, benchmark_spec, build_benchmark, export_benchmark,
                   is_raw_folder, load_benchmark)
from .mmar import MMARBuilder, build_demo_dataset
from .mmau_test_mini import MMAUTestMiniBuilder

__all__ = [
    "load_benchmark", "build_benchmark", "export_benchmark", "BENCHMARKS", "benchmark_spec", "is_raw_folder",
    "MMARBuilder", "MMAUTestMiniBuilder", "AudioSpanBuilder", "BenchmarkBuilder", "BenchmarkConfig",
    "FIELD_ALIASES", "CORE_FEATURES", "TEST_SPLIT", "ValidationReport", "Issue", "BenchmarkValidationError",
    "BenchmarkNotFoundError", "decode_audio", "audio_paths", "is_hub_folder", "load_hub_folder", "push_folder",
    "resolve_audio_backend", "torchcodec_status", "build_demo_dataset",
]
