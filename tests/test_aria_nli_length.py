"""ARIA M5's NLI backbone cuts each side to what the model keeps before building the pair: the probabilities
are those of tokenizing the whole pair (checked against that, computed here independently with the same tiny
random model), and a 1 MB slot is scored in flat memory (the whole-pair truncation grew with the square of
the slot's length: 30 KB took 250 MB, 1 MB past 6 GB)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from audioreason.backends.nli import NLIModel

SENTENCE = "a dog barks three times, then a car horn sounds twice. "


@pytest.fixture(scope="module")
def nli(tiny_backbones):
    return NLIModel.load(tiny_backbones["nli"], "tiny random NLI")


def whole_pair(model, pairs):
    """P(entailment) with the pair tokenized whole and truncated by the tokenizer (the old path)."""
    batch = model.tokenizer(
        [p for p, _ in pairs],
        [h for _, h in pairs],
        padding=True,
        truncation=True,
        max_length=model.max_tokens,
        return_tensors="pt",
    )
    with torch.inference_mode():
        probs = torch.softmax(model.model(**batch).logits.double(), dim=-1)[:, model.entailment_index]
    return probs.tolist()


def words(n, seed):
    vocabulary = ["rain", "thunder", "dog", "barks", "piano", "music", "woman", "speaks", "wind", "birds"]
    return " ".join(vocabulary[(seed * 7 + i * i) % len(vocabulary)] for i in range(n))


PAIRS = [
    ("Entities: rain, thunder. Steady rain then a low rumble.", "The rumble is thunder."),
    ("A woman speaks softly over piano music.", "Answer: Piano"),
    (words(3000, 1), "A storm is near."),  # a long premise (over 512 tokens), a short hypothesis
    ("The dog barks.", words(2500, 2)),  # the other way round
    (words(3000, 3), words(2000, 4)),  # both long, of different lengths
    (words(1500, 5), words(1500, 6)),  # both long, equal in characters
    ("x" * 9000, "a" * 5000),  # no whitespace at all
]


def test_the_probabilities_are_those_of_the_whole_pair(nli):
    for premise, hypothesis in PAIRS:  # the model sees the same tokens
        assert (
            nli.tokenizer(*nli._cut(premise, hypothesis), truncation=True, max_length=512)["input_ids"]
            == nli.tokenizer(premise, hypothesis, truncation=True, max_length=512)["input_ids"]
        )
    nli.clear_caches()
    got = nli.entailment(PAIRS, batch_size=3)
    expected = [p for i in range(0, len(PAIRS), 3) for p in whole_pair(nli, PAIRS[i : i + 3])]  # same batches
    assert got.tolist() == expected  # identical, not merely close


def test_short_slots_are_not_touched(nli):
    premise, hypothesis = PAIRS[0]
    assert nli._cut(premise, hypothesis) == (premise, hypothesis)


def test_a_one_megabyte_slot_is_scored_in_flat_memory(tiny_backbones, tmp_path):
    script = textwrap.dedent(f"""
        import resource, sys, threading, time, torch
        torch.set_num_threads(1)
        from audioreason.backends.nli import NLIModel
        model = NLIModel.load({tiny_backbones["nli"]!r}, "tiny")
        model.entailment([("warm up", "the model")])
        start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        def guard():  # the old path would take gigabytes: stop it early
            while True:
                rss = int(open("/proc/self/statm").read().split()[1]) * 4096 // 1024
                if rss - start > 1024 * 1024:
                    print("killed at", rss - start, "KB over the start", flush=True)
                    import os; os._exit(3)
                time.sleep(0.01)
        threading.Thread(target=guard, daemon=True).start()
        slot = ({SENTENCE!r} * (10**6 // {len(SENTENCE)} + 1))[:10**6]
        (short,) = model.entailment([(slot[:4000], slot[:4000])])
        (long,) = model.entailment([(slot, slot)])  # both slots long: the case that grew with the square
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start
        print(grew, long == short)
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    grew_kb, same = done.stdout.split()[-2:]
    # Only the first tokens matter: 1 MB slots score as their first 4 KB do.
    assert same == "True"
    assert int(grew_kb) < 200 * 1024  # measured: about 11 MB
