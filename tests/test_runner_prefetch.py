"""The runner's inputs computed ahead (``inference.prefetch``) change no output: a run on a tiny Phi-4-multimodal
checkpoint (6 MMAR items x full, none x two templates, batches of 4) gives, record for record and byte for
byte outside the timings, what the same run gives one batch after the other with every clip decoded anew
and the processor called inside ``generate``. The processor ran on the prefetch thread on its own copy, and
each clip was decoded once for both templates."""

import json
import threading

import pytest
from inference_fixtures import mmar_raw, tiny_audio  # noqa: F401 (fixtures)

from audioreason.inference import DecodingParams
from audioreason.inference import runner as runner_module
from audioreason.inference.conditions import AudioPreparer
from audioreason.inference.prefetch import ClipCache
from audioreason.inference.runner import OUTPUTS_FILE, RunConfig, run
from audioreason.inference.transformers_audio import TransformersAudioAdapter


def one_after_the_other(runner, planned):
    """The loop as it was: each batch prepared and generated in this thread, no clip kept, no input ahead."""
    runner.clips = ClipCache(entries=0)
    for batch in planned:
        runner.run_batch(batch)
        yield batch


def lines(out):
    """outputs.jsonl's lines without the timings (wall-clock seconds differ between any two runs)."""
    out_lines = []
    for line in (out / OUTPUTS_FILE).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("timings")
        out_lines.append(json.dumps(record, ensure_ascii=False))
    return out_lines


@pytest.fixture(scope="module")
def both(tiny_audio, mmar_raw, tmp_path_factory):
    import torch

    adapter = TransformersAudioAdapter(str(tiny_audio["phi4-multimodal"]))
    calls = {"threads": [], "main processor": 0, "prepare": 0}
    ahead, main_call, prepare = (
        adapter.prefetch_processor.apply_chat_template,
        adapter.processor.apply_chat_template,
        AudioPreparer.prepare,
    )

    def on_prefetch(*a, **k):
        calls["threads"].append(threading.current_thread().name)
        return ahead(*a, **k)

    def on_main(*a, **k):
        calls["main processor"] += 1
        return main_call(*a, **k)

    def counted_prepare(self, condition, value):
        calls["prepare"] += 1
        return prepare(self, condition, value)

    adapter.prefetch_processor.apply_chat_template = on_prefetch
    adapter.processor.apply_chat_template = on_main
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    found = {}
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(AudioPreparer, "prepare", counted_prepare)
            for name in ("ahead", "one after the other"):
                if name != "ahead":
                    patch.setattr(runner_module, "prefetched", one_after_the_other)
                out = tmp_path_factory.mktemp(name.replace(" ", "-"))
                before = dict(calls, threads=list(calls["threads"]))
                run(
                    RunConfig(
                        model="tiny-phi4",
                        benchmark="mmar",
                        data=str(mmar_raw),
                        out=str(out),
                        conditions=["full", "none"],
                        templates=["plain", "aria_cot"],
                        limit=6,
                        batch_size=4,
                        decoding=DecodingParams(max_new_tokens=6),
                        progress=False,
                    ),
                    {"main": adapter},
                )
                found[name] = (
                    out,
                    {k: (v[len(before[k]) :] if k == "threads" else v - before[k]) for k, v in calls.items()},
                )
    finally:
        torch.set_num_threads(threads)
    return found


def test_inputs_computed_ahead_change_no_output(both):
    (ahead, _), (sequential, _) = both["ahead"], both["one after the other"]
    first, second = lines(ahead), lines(sequential)
    assert len(first) == 6 * 2 * 2 and first == second
    records = [json.loads(line) for line in first]
    assert all(r["error"] is None and r["output"] is not None for r in records)
    assert {r["timings"]["batch_size"] for r in map(json.loads, (ahead / OUTPUTS_FILE).read_text().splitlines())} == {4}


def test_the_processor_ran_ahead_and_each_clip_was_decoded_once(both):
    _, ahead = both["ahead"]
    _, sequential = both["one after the other"]
    # 24 units in 6 batches of 4 (audio and no-audio apart): every batch encoded on the prefetch thread.
    assert ahead["threads"] and set(ahead["threads"]) == {"audioreason-prefetch_0"}
    assert len(ahead["threads"]) == 6 and ahead["main processor"] == 0
    assert sequential["threads"] == [] and sequential["main processor"] == 6
    # One preparation per (item, condition) when the clips are kept for the second template; two without.
    assert ahead["prepare"] == 6 * 2 and sequential["prepare"] == 6 * 2 * 2
