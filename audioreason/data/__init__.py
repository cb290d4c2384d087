"""Benchmark loaders: MMAR, MMAU test-mini and AudioSpan as ``datasets`` in one schema.
Layer 5 (ARCHITECTURE.md): it may import layers 0-4 (base, text, audio, backends, judges).

- ``load_benchmark(name, path_or_hub_id, split="test", ...)``: one line from a raw folder, a Hub-ready
  folder or a Hub id (``load``);
- the builders (``MMARBuilder``, ``MMAUTestMiniBuilder``, ``AudioSpanBuilder``): ``datasets``
  GeneratorBasedBuilder subclasses that read a raw folder and validate it (``builder.report``);
- ``build_benchmark`` / ``export_benchmark``: raw folder -> Dataset + report -> Hub-ready folder;
- ``decode_audio``: samples from any audio value; it is ``audioreason.audio.load_audio``, the one decoder
  (torchcodec, soundfile fallback).

Every audio path a builder, an export or a Hub-folder load meets is resolved inside its folder (symlinks
followed); one that leads out is refused and never read (``audio_files``).

Modules, one job each: ``features`` (the common schema), ``validation`` (the report), ``fields`` (raw
records into the schema), ``audio_files`` (audio paths resolved inside the folder, headers checked),
``builder`` (the builder base and its policies), ``mmar`` / ``mmau_test_mini`` /
``audiospan`` (the benchmarks), ``hub_export`` and ``hub_load`` (Hub-ready folders), ``load`` (one-line
loading and the build scripts).
"""
from ..audio.io import load_audio as decode_audio
from ..audio.io import resolve_audio_backend, torchcodec_status
from audioreason.text.audiospan_fields import FIELD_ALIASES
from .audiospan import AudioSpanBuilder
from .builder import BenchmarkBuilder, BenchmarkConfig
from .features import CORE_FEATURES, TEST_SPLIT, audio_paths
from .hub_export import push_folder
from .hub_load import is_hub_folder, load_hub_folder
from .load import (BENCHMARKS, BenchmarkNotFoundError, benchmark_spec, build_benchmark, export_benchmark,
                   is_raw_folder, load_benchmark)
from .mmar import MMARBuilder, build_demo_dataset
from .mmau_test_mini import MMAUTestMiniBuilder
from .validation import BenchmarkValidationError, Issue, ValidationReport

__all__ = [
    "load_benchmark", "build_benchmark", "export_benchmark", "BENCHMARKS", "benchmark_spec", "is_raw_folder",
    "MMARBuilder", "MMAUTestMiniBuilder", "AudioSpanBuilder", "BenchmarkBuilder", "BenchmarkConfig",
    "FIELD_ALIASES", "CORE_FEATURES", "TEST_SPLIT", "ValidationReport", "Issue", "BenchmarkValidationError",
    "BenchmarkNotFoundError", "decode_audio", "audio_paths", "is_hub_folder", "load_hub_folder", "push_folder",
    "resolve_audio_backend", "torchcodec_status", "build_demo_dataset",
]
