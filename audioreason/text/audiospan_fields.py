"""AudioSpan's record vocabulary: the released field names mapped to ours, per record kind, and the accepted
spellings of its enumerated values. One table read by both the benchmark loader and the anchor manifests, so
the two read a release alike (AudioSpan, App. B-C)."""
from __future__ import annotations

# Released name -> our name, per record kind. The one place to edit when the release renames a field.
FIELD_ALIASES: dict[str, dict[str, str]] = {
    "item": {
        "qid": "id", "question_id": "id", "item_id": "id", "uid": "id",
        "audio_id": "recording_id", "sample_id": "recording_id", "source_id": "recording_id",
        "recording": "recording_id", "audio_name": "recording_id",
        "question_format": "format", "qa_format": "format", "question_type": "format",
        "level": "cognitive_level", "cog_level": "cognitive_level", "cognitive": "cognitive_level",
        "task_level": "cognitive_level",
        "dim": "dimension", "sub_dimension": "dimension",
        "query": "question", "stem": "question",
        "options": "choices", "candidates": "choices",
        "gt": "answer", "ground_truth": "answer", "correct_answer": "answer", "label": "answer",
        "answer_key": "answer",
        "reference": "reference_answer", "ref_answer": "reference_answer", "gold_answer": "reference_answer",
        "criteria": "rubric", "rubrics": "rubric", "rubric_criteria": "rubric",
        "pair": "pair_id", "paired_id": "pair_id", "source_question_id": "pair_id",
        "chain": "chain_id", "anchor_chain_id": "chain_id", "anchor_id": "chain_id",
        "position": "link_position", "link": "link_position", "chain_position": "link_position",
        "step": "link_position", "link_index": "link_position",
        "anchor_operation": "operation", "op": "operation", "anchor_type": "operation", "anchor_op": "operation",
        "manifest": "edit_manifest", "edits": "edit_manifest", "anchor_manifest": "edit_manifest",
        "edit": "edit_manifest",
        "lang": "language",
        "tier": "duration_tier", "duration_level": "duration_tier", "length_tier": "duration_tier",
        "duration": "duration_seconds", "audio_duration": "duration_seconds", "duration_s": "duration_seconds",
        "audio_path": "audio_file",
    },
    "recording": {
        "audio_id": "recording_id", "sample_id": "recording_id", "source_id": "recording_id", "id": "recording_id",
        "lang": "language",
        "tier": "duration_tier", "duration_level": "duration_tier", "length_tier": "duration_tier",
        "duration": "duration_seconds", "audio_duration": "duration_seconds", "duration_s": "duration_seconds",
        "audio_path": "audio_file", "anchored_audio_path": "anchored_audio_file",
        "anchor_operation": "operation", "op": "operation",
        "manifest": "edit_manifest", "edits": "edit_manifest", "anchor_manifest": "edit_manifest",
    },
    "criterion": {
        "criterion": "text", "description": "text", "content": "text", "requirement": "text",
        "weight": "importance", "level": "importance", "priority": "importance",
        "time_span": "time_range", "timestamp": "time_range", "span": "time_range", "time": "time_range",
        "is_localization": "localization", "localisation": "localization", "temporal": "localization",
    },
    "manifest": {
        "audio_id": "recording_id", "sample_id": "recording_id",
        "op": "operation", "type": "operation", "anchor_operation": "operation",
        "spans": "positions", "windows": "positions", "anchors": "positions", "time_ranges": "positions",
        "event": "event_category", "sound_event": "event_category", "category": "event_category",
        "snr": "snr_db",
        "mode": "deletion_mode", "mask": "deletion_mode", "mask_type": "deletion_mode",
        "attr": "attribute", "modified_attribute": "attribute",
        "gain": "gain_db", "volume_db": "gain_db",
        "speed": "speed_factor", "factor": "speed_factor", "rate": "speed_factor",
    },
}

# Accepted spellings of enumerated values (lower-cased keys) -> stored value.
FORMATS = {"mcq": "MCQ", "multiple_choice": "MCQ", "multiple-choice": "MCQ", "choice": "MCQ",
           "oeq": "OEQ", "open": "OEQ", "open_ended": "OEQ", "open-ended": "OEQ", "openended": "OEQ"}
LEVELS = {"p": "perception", "perception": "perception", "u": "understanding",
          "understanding": "understanding", "r": "reasoning", "reasoning": "reasoning"}
LEVEL_BY_POSITION = {1: "perception", 2: "understanding", 3: "reasoning"}
TIERS = {"s": "S", "short": "S", "m": "M", "medium": "M", "l": "L", "long": "L"}
LANGUAGES = {"en": "en", "english": "en", "eng": "en", "zh": "zh", "chinese": "zh", "zh-cn": "zh",
             "cn": "zh", "mandarin": "zh"}
OPERATIONS = {"addition": "addition", "add": "addition", "insert": "addition", "insertion": "addition",
              "deletion": "deletion", "delete": "deletion", "mask": "deletion", "masking": "deletion",
              "modification": "modification", "modify": "modification", "modified": "modification"}
IMPORTANCE = {"essential": "essential", "supporting": "supporting", "support": "supporting"}
DELETION_MODES = {"silence": "silence", "silent": "silence", "mute": "silence", "noise": "noise",
                  "lowpass_noise": "noise", "low-pass+noise": "noise"}
ATTRIBUTES = {"loudness": "loudness", "volume": "loudness", "gain": "loudness", "speed": "speed",
              "tempo": "speed", "playback_speed": "speed"}
DIMENSIONS = ("recognition", "localization", "counting", "interpretation", "tracking", "summarization",
              "causal", "relational", "logical")
