"""A scripted model for every role of a construction (``audioreason construct``), played inside
``judge_server.py`` by the step ``{"play": "construct_player", "config": CONFIG}``: ``reply(request, config)``
reads the stage from ``response_format.json_schema.name`` (every construction request carries its stage's
schema), the role from the request's model (``play-<role>``) and answers from the ground truth of a recording
made by ``audioreason.construct.demo_audio.synthesize_recording``, within the schema's enums. Deterministic:
the same request always gets the same reply, and nothing is remembered between requests.

CONFIG::

    {"recordings": [{"wav": PATH, "truth": PATH}],      # the synthesized WAV and its ground truth (JSON)
     "native": {"perception": [PLAN, ...], ...},       # the plan of each level's k-th direction
     "anchor": {"understanding": PLAN, "reasoning": PLAN},
     "junk_roles": [ROLE, ...],                        # these roles answer prose, never JSON
     "hang": {"stage": STAGE, "tag": TAG, "while_file": PATH}}   # hold that request while the file exists

The roles:
  * asr: finds the clip inside a recording (the PCM is bit-exact: it is the file's own samples) and gives the
    true sentences that overlap it, times from the clip's start;
  * segmenter: segments at the true section boundaries; the dependency analysis merges the captioner's labels
    by voice and gives the true cross-segment links;
  * captioner: the clip's true speakers (labels S1, S2, ... by first appearance, voice = the speaker's
    description) and events;
  * generator: writes question k of a level with the plan of CONFIG in its direction and stem
    ("plan-keep [U2]: ..."); the correct option is always strictly the longest (a specificity bias that the
    scripted solver reads); for "badevidence" it also cites the segment's environment record;
  * verifier: refutes every environment record ("hears no environment"), confirms all else;
  * solver: finds the correct option as the longest and answers it right in rollout k (the request's seed)
    exactly when k < ``CORRECT[plan][level]``; the "unsolvable" plan's last full rollout answers prose;
  * critic: names "specificity bias" for a blind rejection, "transcript sufficiency" for a text-only one.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import time
import wave
from pathlib import Path
from typing import Any, Optional

import numpy as np

RATE = 16000
LEVEL_TAG = {"perception": "P", "understanding": "U", "reasoning": "R"}
# Rollouts (of 3) answered correctly per solver level: rollout k is right exactly when k < count.
CORRECT = {
    "keep": {"blind": 1, "text": 2, "full": 2},  # 1/3 and 2/3 sit exactly on the thresholds: kept
    "blind": {"blind": 2, "text": 0, "full": 3},  # 2/3 > 1/3: rejected at blind
    "text": {"blind": 1, "text": 3, "full": 3},  # 3/3 > 2/3: rejected at text
    "unsolvable": {"blind": 0, "text": 1, "full": 1},  # 1/3, not a majority: unsolvable
    "badevidence": {"blind": 3, "text": 3, "full": 3},  # never solved: its environment record is refuted
}
JUNK_ROLLOUT = {"unsolvable": ("full", 2)}  # (level, rollout) that answers prose, asked again and failed
REASK_ONCE = ("rubric", "P1")  # the rubric of this tag answers prose once, then JSON when re-asked
JUNK = "I am sorry, but I would rather describe this in my own words."
SHORTCUT = {"blind": "specificity bias", "text": "transcript sufficiency"}
DISTRACTORS = (
    "A dog barks in the studio",
    "The host reads the football results",
    "A train passes the station",
    "The speakers discuss a film",
    "Someone plays the piano",
    "A recipe for apple pie",
)
FOILS = ("Talk of a new bus timetable", "A quiz about local history", "The results of a chess match")
FILLER = " - heard clearly at that point of the recording, in the speaker's own words"
ENVIRONMENT = "a small radio studio, close microphones, a faint mains hum under the voices"

_recordings: dict[str, tuple[np.ndarray, dict]] = {}


# ---------------------------------------------------------------------------------------------- request
def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content or "")


def _first_user(messages: list[dict]) -> Any:
    """The stage's own prompt (a re-ask appends turns after it)."""
    return next((m.get("content") for m in messages if m.get("role") == "user"), "")


def _system(messages: list[dict]) -> str:
    return next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")


def _clips(content: Any) -> list[np.ndarray]:
    out = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and part.get("type") == "input_audio":
            with wave.open(io.BytesIO(base64.b64decode(part["input_audio"]["data"]))) as w:
                out.append(np.frombuffer(w.readframes(w.getnframes()), "<i2"))
    return out


def _tag(text: str) -> str:
    found = re.search(r"\[(\w+)\]", text)
    return found.group(1) if found else ""


def _plan(text: str) -> str:
    found = re.search(r"plan-(\w+)", text)
    return found.group(1) if found else "keep"


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _long(text: str, least: int, most: int) -> str:
    while len(text) < least:
        text += FILLER
    return text[:most].rstrip()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- the truth
def _load(config: dict) -> list[tuple[np.ndarray, dict]]:
    out = []
    for entry in config.get("recordings", []):
        key = str(entry["wav"])
        if key not in _recordings:
            with wave.open(key) as w:
                pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2")
            _recordings[key] = (pcm, json.loads(Path(entry["truth"]).read_text(encoding="utf-8")))
        out.append(_recordings[key])
    return out


def locate(config: dict, clip: np.ndarray) -> tuple[float, dict]:
    """(where the clip starts in its recording, s; that recording's truth)."""
    head = clip[: min(len(clip), 4096)]
    pivot = int(np.argmax(np.abs(head)))
    for pcm, truth in _load(config):
        for at in np.flatnonzero(pcm == head[pivot]):
            start = int(at) - pivot
            if start >= 0 and start + len(clip) <= len(pcm) and np.array_equal(pcm[start : start + len(head)], head):
                return start / RATE, truth
    raise ValueError("the clip is not part of any configured recording")


def _truth(config: dict) -> dict:
    return _load(config)[0][1]


def _speaker_of(truth: dict, text: str) -> Optional[dict]:
    ids = {s["text"]: s["speaker"] for s in truth["sentences"]}
    return next((p for p in truth["speakers"] if p["id"] == ids.get(text)), None)


# ---------------------------------------------------------------------------------------------- the roles
def transcript(request: dict, config: dict) -> dict:
    clip = _clips(_first_user(request["messages"]))[0]
    offset, truth = locate(config, clip)
    length = len(clip) / RATE
    sentences = [
        {
            "start": round(max(0.0, s["start"] - offset), 3),
            "end": round(min(length, s["end"] - offset), 3),
            "text": s["text"],
        }
        for s in truth["sentences"]
        if s["end"] > offset and s["start"] < offset + length
    ]
    return {"sentences": sentences}


def segments(request: dict, config: dict, schema: dict) -> dict:
    truth = _truth(config)
    section = {s["text"]: s["segment"] for s in truth["sentences"]}
    lines = re.findall(r"^(\d+)\. \[[^\]]*\] (.*)$", _text(_first_user(request["messages"])), re.MULTILINE)
    out, current = [], None
    for number, text in lines:
        seg = section.get(text, current)
        if not out or seg != current:
            title = truth["segments"][seg]["title"] if seg is not None else "Untitled"
            out.append(
                {
                    "first_line": int(number),
                    "title": title,
                    "summary": f"The part of the programme titled '{title}'.",
                    "key_topics": [_short(title.lower(), 32)],
                }
            )
        current = seg
    return {"segments": out}


def acoustic(request: dict, config: dict) -> dict:
    content = _first_user(request["messages"])
    clip = _clips(content)[0]
    offset, truth = locate(config, clip)
    length = len(clip) / RATE
    labels: dict[str, str] = {}
    speakers, sentences = [], []
    for number, text in re.findall(r"^(\d+)\. \[[^\]]*\] (.*)$", _text(content), re.MULTILINE):
        person = _speaker_of(truth, text)
        if person is None:
            continue
        if person["id"] not in labels:
            labels[person["id"]] = f"S{len(labels) + 1}"
            speakers.append({"label": labels[person["id"]], "voice": person["description"]})
        sentences.append({"line": int(number), "speaker": labels[person["id"]], "paralinguistic": "steady"})
    events = [
        {
            "start": round(max(0.0, e["start"] - offset), 3),
            "end": round(min(length, e["end"] - offset), 3),
            "label": e["label"],
            "description": e["description"],
        }
        for e in truth["events"]
        if e["end"] > offset and e["start"] < offset + length
    ]
    return {"environment": ENVIRONMENT, "speakers": speakers, "sentences": sentences, "events": events}


def dependencies(request: dict, config: dict, schema: dict) -> dict:
    truth = _truth(config)
    voices: dict[str, list[str]] = {}
    for label, voice in re.findall(
        r"^\s+speaker (\S+): (.*?)(?:; says .*)?$", _text(_first_user(request["messages"])), re.MULTILINE
    ):
        voices.setdefault(voice, []).append(label)
    roles = {p["description"]: p["role"] for p in truth["speakers"]}
    pairs = schema["properties"]["dependencies"]["items"]["properties"]["segments"]["enum"]
    links = []
    for d in truth["dependencies"]:
        a, b = sorted((d["from_segment"], d["to_segment"]))
        if f"{a} -> {b}" in pairs:
            links.append({"kind": d["kind"], "segments": f"{a} -> {b}", "description": d["description"]})
    return {
        "topic": "A community radio programme for the town of Millbrook",
        "genre": "community radio",
        "narrative_arc": "Weather, a bakery visit, announcements, then a closing that refers back.",
        "tone": "friendly and informative",
        "speakers": [
            {"description": voice, "role": roles.get(voice, "speaker"), "labels": labels}
            for voice, labels in voices.items()
        ],
        "dependencies": links,
    }


def directions(request: dict, config: dict, schema: dict) -> dict:
    level = re.search(r"For the (\w+) level", _system(request["messages"])).group(1)
    listing = schema["properties"]["directions"]
    item = listing["items"]["properties"]
    dims, indices = item["dimension"]["enum"], item["segments"]["items"]["enum"]
    plans = config["native"][level]
    out = []
    for k in range(listing["minItems"]):
        first = indices[(1 + list(LEVEL_TAG).index(level) + k) % len(indices)]
        chosen = (
            [first] if level != "reasoning" else sorted({first, indices[(indices.index(first) + 2) % len(indices)]})
        )
        out.append(
            {
                "dimension": dims[k % len(dims)],
                "direction": f"plan-{plans[k]} [{LEVEL_TAG[level]}{k + 1}]: ask about segment {chosen[0]}",
                "segments": chosen,
            }
        )
    return {"directions": out}


def _record_lines(text: str) -> dict[str, str]:
    """Evidence id -> the record's content, from the prompt's caption lines."""
    return dict(re.findall(r"^\s*\[([\w.]+)\] \S+ \(\w[\w-]*\) (.*)$", text, re.MULTILINE))


def question(request: dict, config: dict, schema: dict) -> dict:
    text = _text(_first_user(request["messages"]))
    direction = re.search(r"^Direction: (.*)$", text, re.MULTILINE).group(1)
    plan, tag = _plan(direction), _tag(direction)
    allowed = schema["properties"]["evidence"]["items"]["enum"]
    speech = [i for i in allowed if ".speech." in i]
    cited = speech[:1] + ([i for i in allowed if i.endswith(".env")][:1] if plan == "badevidence" else [])
    correct = _long(_record_lines(text)[cited[0]], 60, 118)
    seed = int(hashlib.sha256(tag.encode()).hexdigest(), 16)
    pool = list(DISTRACTORS)
    others = [pool.pop((seed >> (8 * n)) % len(pool)) for n in range(3)]
    at = seed % 4
    options = others[:at] + [correct] + others[at:]
    stem = f"plan-{plan} [{tag}]: Which of these is heard in this part of the programme?"
    return {"evidence": cited, "question": stem, "options": options, "answer_index": at}


def _options(text: str) -> tuple[str, list[str]]:
    stem = re.search(r"^Question: (.*)$", text, re.MULTILINE).group(1)
    return stem, [o for _, o in re.findall(r"^([A-D])\. (.*)$", text, re.MULTILINE)]


def solve(request: dict, config: dict, level: str) -> Any:
    stem, options = _options(_text(_first_user(request["messages"])))
    plan, rollout = _plan(stem), int(request.get("seed") or 0)
    if JUNK_ROLLOUT.get(plan) == (level, rollout):
        return JUNK
    lengths = [len(o) for o in options]
    right = lengths.index(max(lengths))
    if lengths.count(max(lengths)) != 1:
        raise ValueError(f"no single longest option in {options}")
    if rollout < CORRECT[plan][level]:
        return {
            "reasoning": f"Option {'ABCD'[right]} is the most detailed, so it is the answer.",
            "answer": "ABCD"[right],
        }
    wrong = next(k for k in range(4) if k != right)
    return {"reasoning": "Nothing singles out an option; a guess.", "answer": "ABCD"[wrong]}


def critic(request: dict, config: dict) -> dict:
    gate = "blind" if "without any access to the recording" in _system(request["messages"]) else "text"
    stem, _ = _options(_text(_first_user(request["messages"])))
    lesson = f"Keep the correct option as short and plain as the others (question {_tag(stem)}, {gate} level)."
    return {"shortcut": SHORTCUT[gate], "lesson": lesson}


def verify(request: dict) -> dict:
    if "The record (environment)" in _text(_first_user(request["messages"])):
        return {"verdict": "refuted", "reason": "No such environment is heard in the clip."}
    return {"verdict": "confirmed", "reason": "The clip holds what the record says."}


def rubric(request: dict, schema: dict) -> Any:
    text = _text(_first_user(request["messages"]))
    if _tag(text) == REASK_ONCE[1] and not any(m.get("role") == "assistant" for m in request["messages"]):
        return JUNK
    stem = re.search(r"^Question: (.*)$", text, re.MULTILINE).group(1)
    answer = re.search(r"^Correct answer: (.*)$", text, re.MULTILINE).group(1)
    cited = schema["properties"]["criteria"]["items"]["properties"]["evidence"]["items"]["enum"]
    return {
        "open_question": stem.replace("Which of these is", "What is"),
        "reference_answer": f"{answer} (as the cited records place it).",
        "criteria": [
            {
                "text": "States what is heard there",
                "importance": "essential",
                "evidence": cited[:1],
                "localization": False,
            },
            {
                "text": "Gives the time it is heard",
                "importance": "supporting",
                "evidence": cited[:1],
                "localization": True,
            },
        ],
    }


def anchor_segments(schema: dict) -> dict:
    entry = schema["properties"]["anchors"]["items"]["properties"]
    eligible, indices = entry["segment"]["enum"], entry["related_segments"]["items"]["enum"]
    chosen = eligible[: min(2, len(eligible))]
    return {
        "anchors": [
            {
                "segment": s,
                "related_segments": [next(i for i in indices if i != s)],
                "reason": f"Segment {s} holds a key point that another segment comes back to.",
            }
            for s in chosen
        ]
    }


def chain(request: dict, config: dict, schema: dict) -> dict:
    text = _text(_first_user(request["messages"]))
    k = int(re.search(r"the questions ask about occurrence (\d+)", text).group(1))
    positions: list[tuple[int, list[str]]] = []
    for line in text.splitlines():
        head = re.match(r"Occurrence (\d+): segment (\d+),", line)
        if head:
            positions.append((int(head.group(2)), []))
        elif positions and line.startswith("  [") and len(positions[-1][1]) < 20:
            positions[-1][1].append(re.match(r"\s+\[([\w.]+)\]", line).group(1))
    ids = schema["properties"]["understanding"]["properties"]["options"]["items"]["properties"]["evidence"]["items"][
        "enum"
    ]
    records = _record_lines(text)
    plans = config.get("anchor", {})
    out = {}
    for level, written in (("understanding", 4), ("reasoning", 3)):
        options = []
        for number, (segment, local) in enumerate(positions, start=1):
            if level == "understanding":
                cite = local[0]
            else:
                elsewhere = [i for i in ids if ".speech." in i and not i.startswith(f"s{segment:02d}.")]
                cite = (elsewhere or [i for i in ids if i.startswith("x.")])[0]
            base = records.get(cite, cite)
            if number == k:
                words = "What is said there" if level == "understanding" else "It connects to another part"
                body = _long(f"{words}: {base}", 100, 190)
            else:
                body = _short(f"Occurrence-{number} talk: {base}")
            options.append({"text": body, "position": number, "evidence": [cite]})
        for n in range(written - len(positions)):
            options.append({"text": FOILS[n], "position": 0, "evidence": []})
        plan = plans.get(level, "keep")
        stem = (
            f"plan-{plan} [a{LEVEL_TAG[level]}]: What is being discussed at occurrence {k} of the anchor?"
            if level == "understanding"
            else f"plan-{plan} [a{LEVEL_TAG[level]}]: How does what is said at occurrence {k} relate to the rest?"
        )
        out[level] = {"question": stem, "options": options}
    return out


# ---------------------------------------------------------------------------------------------- entry point
def _hold(request: dict, config: dict, stage: str) -> None:
    hang = config.get("hang")
    if not hang or hang.get("stage") != stage:
        return
    if hang.get("tag") and f"[{hang['tag']}]" not in _text(_first_user(request["messages"])):
        return
    flag, deadline = Path(hang["while_file"]), time.monotonic() + 30.0
    while flag.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def reply(request: dict, config: dict) -> Any:
    """The reply text for ``request`` (see the module docstring), or a step the server serves."""
    role = str(request.get("model", "")).removeprefix("play-")
    if role in config.get("junk_roles", ()):
        return JUNK
    fmt = (request.get("response_format") or {}).get("json_schema") or {}
    stage, schema = fmt.get("name"), fmt.get("schema") or {}
    _hold(request, config, stage)
    if stage == "transcript":
        value = transcript(request, config)
    elif stage == "segments":
        value = segments(request, config, schema)
    elif stage == "acoustic":
        value = acoustic(request, config)
    elif stage == "dependencies":
        value = dependencies(request, config, schema)
    elif stage == "directions":
        value = directions(request, config, schema)
    elif stage == "question":
        value = question(request, config, schema)
    elif stage == "verify":
        value = verify(request)
    elif stage and stage.startswith("solve_"):
        value = solve(request, config, stage.removeprefix("solve_"))
    elif stage == "critic":
        value = critic(request, config)
    elif stage == "rubric":
        value = rubric(request, schema)
    elif stage == "anchor_segments":
        value = anchor_segments(schema)
    elif stage == "chain_questions":
        value = chain(request, config, schema)
    else:
        return {"status": 400, "body": {"error": {"message": f"the player has no stage {stage!r}"}}}
    return value if isinstance(value, str) else _json(value)
