"""`audioreason construct --demo`: the construction pipeline end to end on this machine, offline.

1. a few minutes of long-form audio are synthesized (``construct.demo_audio``: espeak-ng speech in several
   voices and topics, sound events, a room-noise floor);
2. the pipeline builds a small benchmark from it with every role offline (packaged Whisper, SmolLM2-135M-Instruct
   under each stage's JSON Schema, signal measurements and ASR re-transcription standing in for the audio
   roles), two native candidates per cognitive level and one anchor chain;
3. the offline cascade (Whisper, then SmolLM2-135M-Instruct) runs on the benchmark's items and the run is
   scored (accuracy on the MCQs, the anchor chain, the OEQ rubric with the constrained offline judge).

The numbers say the pipeline and its gates work, not how good a benchmark a 135M-parameter model writes:
the demo says so where it prints them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

DEMO_SEED = 0
DEMO_RECORDING = "demo_radio"
# The text roles' model: the smaller packaged model, so the demo finishes in minutes on two cores
# (``--offline-model packaged:Qwen2.5-Coder-0.5B-Instruct`` writes better questions, slower).
DEMO_TEXT_MODEL = "packaged:SmolLM2-135M-Instruct"


def demo_recording(workdir: Path) -> Path:
    """The synthesized recording (written once; the same bytes for the same seed)."""
    from audioreason.construct.demo_audio import synthesize_recording

    path = workdir / "recordings" / f"{DEMO_RECORDING}.wav"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        synthesize_recording(tmp, seed=DEMO_SEED)
        tmp.replace(path)
    return path


def score_benchmark(
    bench: Path, workdir: Path, progress: bool = False, *, adapter: Any = None, judge: Any = None
) -> dict[str, Any]:
    """The offline cascade (or ``adapter``) over the built benchmark, scored with the offline judge (or
    ``judge``); results.json's content. The run is ``workdir/cascade-run``."""
    from audioreason.apps.demo import demo_adapter
    from audioreason.evaluation.score import JudgeOptions, ScoreOptions, score_run
    from audioreason.inference import DecodingParams
    from audioreason.inference.runner import RunConfig, run
    from audioreason.judges.local import offline_judge

    config = RunConfig(
        model="cascade",
        benchmark="audiospan",
        data=str(bench),
        out=str(workdir / "cascade-run"),
        decoding=DecodingParams(max_new_tokens=96),
        progress=progress,
    )
    run(config, {"main": adapter if adapter is not None else demo_adapter()})
    options = ScoreOptions(judge=JudgeOptions(judge=judge if judge is not None else offline_judge()), progress=progress)
    return score_run(Path(config.out), options)


def run_construct_demo(workdir: Path, *, progress: bool = False, per_level: int = 2, rollouts: int = 3,
                       text_model: Optional[str] = None) -> dict[str, Any]:  # fmt: skip
    """Synthesize, construct, run, score; {"recording", "bench", "construction", "results"}."""
    import asyncio

    from audioreason.construct.pipeline import Construction, Settings
    from audioreason.construct.roles import offline_roles

    workdir = Path(workdir)
    recording = demo_recording(workdir)
    bench = workdir / "bench"
    construction = Construction(
        recording,
        bench,
        offline_roles(text_model or DEMO_TEXT_MODEL),
        Settings(per_level=per_level, rollouts=rollouts, language="en"),  # espeak-ng English voices
        progress=progress,
    )
    record = asyncio.run(construction.run())
    kept = sum(c["kept"] for c in record["counts"].values())
    results = score_benchmark(bench, workdir, progress) if kept else None
    return {"recording": str(recording), "bench": str(bench), "construction": record, "results": results}


__all__ = ["DEMO_RECORDING", "demo_recording", "run_construct_demo", "score_benchmark"]
