"""Benchmark loaders: MMAR, MMAU test-mini and AudioSpan as ``datasets`` in one schema.
Layer 5 (ARCHITECTURE.md): it may import layers 0-4 (base, text, audio, backends, judges).

- ``load_benchmark(name, path_or_hub_id, split="test", ...)``: one line from a raw folder, a Hub-ready
  folder or a Hub id (``load``);
- ``text_items(name, raw_folder, ...)``: the same items of a raw MMAR or MMAU test-mini folder without
  ``datasets``, for reading their text (``catalog``; the records' normalisation is ``records``, the scan and
  the policies ``scan``);
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
loading; a whole benchmark built for export, the build scripts' work), ``review`` (human review decisions,
review.jsonl, applied by the AudioSpan builder).
"""

from audioreason.base.lazy import lazy_exports

# Each name's module is imported on first use: the benchmark catalog and the text-only read need no datasets.
_NAMES = {
    "load_benchmark": ".load",
    "build_benchmark": ".load",
    "export_benchmark": ".load",
    "BenchmarkNotFoundError": ".load",
    "BENCHMARKS": ".catalog",
    "benchmark_spec": ".catalog",
    "is_raw_folder": ".catalog",
    "text_items": ".catalog",
    "MMARBuilder": ".mmar",
    "build_demo_dataset": ".mmar",
    "MMAUTestMiniBuilder": ".mmau_test_mini",
    "AudioSpanBuilder": ".audiospan",
    "BenchmarkBuilder": ".builder",
    "BenchmarkConfig": ".builder",
    "FIELD_ALIASES": "audioreason.text.audiospan_fields",
    "CORE_FEATURES": ".features",
    "TEST_SPLIT": ".features",
    "audio_paths": ".features",
    "ValidationReport": ".validation",
    "Issue": ".validation",
    "BenchmarkValidationError": ".validation",
    "decode_audio": "audioreason.audio.io:load_audio",
    "resolve_audio_backend": "audioreason.audio.io",
    "torchcodec_status": "audioreason.audio.io",
    "is_hub_folder": ".hub_load",
    "load_hub_folder": ".hub_load",
    "push_folder": ".hub_export",
    "REVIEW_FILE": ".review",
    "apply_review": ".review",
    "read_review": ".review",
    "make_decision": ".review_log",
    "write_decision": ".review_log",
}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
__all__ = list(_NAMES)
