"""The transformers adapters on tiny random checkpoints of every preset: a real processor call and generate,
batches equal to one-at-a-time, token counts and text equal to an independent generate call, no audio
sent for the none condition, the audio limit per preset, errors kept per request; the text-LM adapter."""

import numpy as np
import pytest
import torch
from inference_fixtures import one_thread, tiny_audio  # noqa: F401 (fixtures)
from tiny_audio_models import BUILDERS

from audioreason.inference import AudioInput, DecodingParams, GenerationRequest
from audioreason.inference.text_lm import TextLMAdapter
from audioreason.inference.transformers_audio import PRESETS, TransformersAudioAdapter, resolve_preset

RATE = 16000
DECODING = DecodingParams(max_new_tokens=6)


def clip(seed, seconds, rate=RATE):
    samples = np.random.default_rng(seed).uniform(-0.3, 0.3, int(seconds * rate)).astype(np.float32)
    return AudioInput(samples, rate, seconds)


def request(i, seconds=None, rate=RATE):
    text = f"Question {i}: which sound comes first?" + " Think about it." * i
    return GenerationRequest(
        f"k{i}", [{"role": "user", "content": text}], clip(i, seconds, rate) if seconds is not None else None
    )


REQUESTS = [request(0, 1.0), request(1, 2.5), request(2), request(3, 0.5)]


@pytest.fixture(scope="module")
def adapters(tiny_audio):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield {name: TransformersAudioAdapter(str(folder)) for name, folder in tiny_audio.items()}
    torch.set_num_threads(threads)


@pytest.mark.parametrize("preset", list(BUILDERS))
def test_batch_equals_one_at_a_time(adapters, preset, one_thread):
    adapter = adapters[preset]
    batch = adapter.generate(REQUESTS, DECODING)
    singles = [adapter.generate([r], DECODING)[0] for r in REQUESTS]
    assert all(g.ok for g in batch)
    assert [(g.text, g.prompt_tokens, g.completion_tokens, g.finish_reason) for g in batch] == [
        (g.text, g.prompt_tokens, g.completion_tokens, g.finish_reason) for g in singles
    ]


@pytest.mark.parametrize("preset", list(BUILDERS))
def test_output_and_token_counts_match_an_independent_generate(adapters, preset, one_thread):
    adapter = adapters[preset]
    question = REQUESTS[1].messages[0]["content"]
    conversation = [
        {
            "role": "user",
            "content": [{"type": "audio", "audio": REQUESTS[1].audio.array}, {"type": "text", "text": question}],
        }
    ]
    inputs = adapter.processor.apply_chat_template(
        [conversation], tokenize=True, return_dict=True, add_generation_prompt=True, return_tensors="pt"
    )
    end = adapter.tokenizer.convert_tokens_to_ids("<|end|>" if preset == "phi4-multimodal" else "<|im_end|>")
    with torch.inference_mode():
        out = adapter.model.generate(
            **inputs, max_new_tokens=6, do_sample=False, eos_token_id=end, pad_token_id=adapter.tokenizer.pad_token_id
        )
    new = out[0, inputs["input_ids"].shape[1] :].tolist()
    used = new[: new.index(end) + 1] if end in new else new
    generation = adapter.generate([REQUESTS[1]], DECODING)[0]
    assert generation.prompt_tokens == inputs["input_ids"].shape[1]
    assert generation.completion_tokens == len(used)
    assert generation.finish_reason == ("stop" if end in new else "length")
    assert generation.text == adapter.tokenizer.decode(used, skip_special_tokens=True)


@pytest.mark.parametrize("preset", list(BUILDERS))
def test_none_condition_sends_no_audio(adapters, preset, one_thread, monkeypatch):
    adapter = adapters[preset]
    seen = []
    real = adapter.model.generate

    def spy(**kwargs):
        seen.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(adapter.model, "generate", spy)
    adapter.generate([REQUESTS[2], REQUESTS[0]], DECODING)
    with_audio, text_only = seen  # audio and no-audio requests go in separate batches, audio first
    audio_id = adapter.processor.audio_token_id
    audio_keys = {"input_features", "audio_input_features"}
    assert not audio_keys & set(text_only) and audio_id not in text_only["input_ids"].tolist()[0]
    assert audio_keys & set(with_audio) and audio_id in with_audio["input_ids"].tolist()[0]


def test_audio_limits_per_preset(adapters):
    assert {name: a.max_audio_s for name, a in adapters.items()} == {
        "qwen2-audio": 30.0,  # model card; the Whisper extractor's 30 s window
        "qwen2.5-omni": 30.0,  # the (tiny) extractor's window: the processor pads or cuts to it
        "qwen3-omni": 4800.0,  # AudioSpan Table 6: 80 min
        "audioflamingo3": 600.0,  # model card and processor max_audio_len
        "phi4-multimodal": 1800.0,  # AudioSpan Table 6: 30 min
    }
    assert all(a.sampling_rate == RATE for a in adapters.values())
    assert "audio-only processor" in adapters["qwen2.5-omni"].description
    assert "generates with .thinker" in adapters["qwen3-omni"].description


def test_a_limit_above_what_the_processor_keeps_is_refused(tiny_audio):
    with pytest.raises(ValueError, match="exceeds the 30 s"):
        TransformersAudioAdapter(str(tiny_audio["qwen2-audio"]), max_audio_s=60)
    adapter = TransformersAudioAdapter(str(tiny_audio["qwen2-audio"]), max_audio_s=10)
    assert adapter.max_audio_s == 10.0 and "set by the user" in adapter.max_audio_basis


def test_an_error_stays_with_its_request(adapters, one_thread):
    adapter = adapters["phi4-multimodal"]
    bad = request(5, 1.0, rate=8000)  # delivered at the wrong rate: refused, never resampled silently
    out = adapter.generate([REQUESTS[0], bad, REQUESTS[3]], DECODING)
    assert out[1].text is None and "8000 Hz" in out[1].error
    good = adapter.generate([REQUESTS[0], REQUESTS[3]], DECODING)
    assert [g.text for g in (out[0], out[2])] == [g.text for g in good]


def test_a_checkpoint_of_another_format_is_refused(tiny_audio, tmp_path):
    import json
    import shutil

    folder = tmp_path / "phi4mm"
    shutil.copytree(tiny_audio["phi4-multimodal"], folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "phi4mm"}))
    with pytest.raises(ValueError, match="model_type 'phi4mm'; the phi4-multimodal preset loads"):
        TransformersAudioAdapter(str(folder), preset="phi4-multimodal")


def test_resolve_preset(tiny_audio):
    assert resolve_preset("qwen2-audio")[1] == "Qwen/Qwen2-Audio-7B-Instruct"
    assert resolve_preset("Qwen/Qwen2.5-Omni-7B")[0].name == "qwen2.5-omni"
    assert resolve_preset(str(tiny_audio["qwen3-omni"]))[0].name == "qwen3-omni"
    assert resolve_preset(str(tiny_audio["qwen3-omni"]), "qwen3-omni-thinking")[0].name == "qwen3-omni-thinking"
    with pytest.raises(ValueError, match="no preset"):
        resolve_preset("/nowhere/model")
    with pytest.raises(ValueError, match="unknown preset"):
        resolve_preset("x", "gemma3n")
    assert set(PRESETS) == {
        "qwen2-audio",
        "qwen2.5-omni",
        "qwen3-omni",
        "qwen3-omni-thinking",
        "audioflamingo3",
        "phi4-multimodal",
    }


# ------------------------------------------------------------------------------------------------
# Text backbone
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def text_lm(tmp_path_factory):
    from tiny_models import build_causal_lm

    return build_causal_lm(tmp_path_factory.mktemp("tb"))


def test_text_lm_without_chat_template_joins_messages(text_lm, one_thread):
    adapter = TextLMAdapter(str(text_lm))
    assert adapter.takes_audio is False and "no chat template" in adapter.description
    requests = [request(0), request(3), request(1)]
    assert adapter.prompt_text(requests[0]) == requests[0].messages[0]["content"] + "\n\n"
    batch = adapter.generate(requests, DECODING)
    singles = [adapter.generate([r], DECODING)[0] for r in requests]
    assert [(g.text, g.completion_tokens) for g in batch] == [(g.text, g.completion_tokens) for g in singles]
    ids = adapter.tokenizer(adapter.prompt_text(requests[1]), return_tensors="pt")
    with torch.inference_mode():
        out = adapter.model.generate(**ids, max_new_tokens=6, do_sample=False, eos_token_id=2, pad_token_id=1)
    new = out[0, ids["input_ids"].shape[1] :].tolist()
    used = new[: new.index(2) + 1] if 2 in new else new
    assert batch[1].prompt_tokens == ids["input_ids"].shape[1]
    assert batch[1].text == adapter.tokenizer.decode(used, skip_special_tokens=True)


def test_text_lm_uses_the_chat_template_and_refuses_audio(text_lm, one_thread):
    adapter = TextLMAdapter(str(text_lm))
    adapter.tokenizer.chat_template = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}>"
    assert adapter.prompt_text(request(0)) == f"[user] {request(0).messages[0]['content']}\n>"
    out = adapter.generate([request(0), request(1, 1.0)], DECODING)
    assert out[0].ok and out[1].text is None and "takes no audio" in out[1].error
