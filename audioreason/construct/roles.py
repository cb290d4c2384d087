"""Who plays each role of the construction pipeline (AudioSpan, arXiv:2608.26431, §4 and App. C.4 Table 8).

Seven roles: ``asr`` (speech transcription), ``segmenter`` (semantic segmentation and dependency analysis),
``captioner`` (acoustic captioning, audio in), ``generator`` (directions, questions, anchor chains, rubrics),
``verifier`` (evidence verification, audio in), ``solver`` (the three-level solver) and ``critic``. Every
role is named in a ROLES.yaml file; none is filled in silently::

    defaults:                      # optional: keys every role gets unless it sets its own
      concurrency: 8
    roles:
      asr:       {local: "packaged:whisper-tiny.en"}
      segmenter: {model: qwen3.7-plus, base_url: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
                  api_key_env: DASHSCOPE_API_KEY}
      captioner: {model: gemini-3.1-pro, endpoint: gemini}     # an endpoint preset fills url, key, audio
      generator: {model: qwen3.7-plus, endpoint: dashscope}
      verifier:  {model: qwen3-omni-flash, endpoint: dashscope}
      solver:    {model: gpt-5.4}                              # no base_url: the OpenAI API
      critic:    {model: gpt-5.4}

A role is one of
  * an OpenAI-compatible endpoint: ``model`` with ``endpoint`` (a preset of ``audioreason.inference.endpoints``:
    server, key variable, audio container and rate) and/or ``base_url``, ``api_key_env``; options
    ``concurrency``, ``timeout_s``, ``max_attempts``, ``temperature``, ``max_tokens``, ``structured_outputs``
    (default true: the stage's JSON Schema goes as ``response_format``; false for a server without it);
  * ``local``: a causal LM in this process (``packaged:...``, a folder), decoding under each stage's JSON
    Schema (llguidance); for ``asr`` a faster-whisper model (``packaged:whisper-tiny.en`` or a folder);
  * ``offline: true``, only for the two audio roles (captioner, verifier) where no audio-language model runs
    here: signal measurements and ASR re-transcription stand in (``construct.offline_audio``), labelled as
    such in ``construction.json`` and in every item's provenance.

``--offline`` (no file) fills every role offline: the packaged Whisper for asr, the constrained offline
judge model (``judges.local.offline_judge``) for the text roles, and ``offline`` for the audio roles.
The solver samples its rollouts (temperature 1.0 by default, seed + rollout); every other role decodes
greedily (temperature 0, seed 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from audioreason.base.errors import UsageError

ROLES = ("asr", "segmenter", "captioner", "generator", "verifier", "solver", "critic")
AUDIO_ROLES = ("asr", "captioner", "verifier")  # the roles whose requests carry audio
OFFLINE_ALLOWED = ("captioner", "verifier")
TEXT_ROLES = ("segmenter", "generator", "solver", "critic")
OFFLINE_ASR = "packaged:whisper-tiny.en"
SOLVER_TEMPERATURE = 1.0
ENDPOINT_KEYS = (
    "model",
    "endpoint",
    "base_url",
    "api_key_env",
    "concurrency",
    "timeout_s",
    "max_attempts",
    "temperature",
    "max_tokens",
    "structured_outputs",
)
LOCAL_KEYS = ("local", "temperature", "max_tokens")


@dataclass(frozen=True)
class RoleSpec:
    """One role's model: ``kind`` "endpoint", "local" or "offline"; ``options`` as given (checked)."""

    role: str
    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def temperature(self) -> float:
        default = SOLVER_TEMPERATURE if self.role == "solver" else 0.0
        return float(self.options.get("temperature", default))

    def public(self) -> dict[str, Any]:
        """What construction.json records (no key values: only the variable's name)."""
        return {"kind": self.kind, **{k: v for k, v in self.options.items()}}


def _where(source: str, role: str) -> str:
    return f"{source}: roles.{role}"


def _check_role(role: str, entry: Any, source: str) -> RoleSpec:
    where = _where(source, role)
    if not isinstance(entry, Mapping) or not entry:
        raise UsageError(f"{where} must be a mapping such as {{model: NAME, endpoint: PRESET}} or {{local: SPEC}}")
    entry = dict(entry)
    if entry.get("offline") is not None:
        if role not in OFFLINE_ALLOWED:
            raise UsageError(
                f"{where}: offline stands in only for the audio roles {', '.join(OFFLINE_ALLOWED)} "
                f"(give {role} a model or a local spec)"
            )
        if entry != {"offline": True}:
            raise UsageError(f"{where}: write offline: true alone (got {sorted(entry)})")
        return RoleSpec(role, "offline", {})
    if "local" in entry:
        unknown = sorted(set(entry) - set(LOCAL_KEYS))
        if unknown:
            raise UsageError(
                f"{where}: {', '.join(unknown)} not allowed beside local (allowed: {', '.join(LOCAL_KEYS)})"
            )
        if not isinstance(entry["local"], str) or not entry["local"].strip():
            raise UsageError(f"{where}.local must be a model spec such as packaged:SmolLM2-135M-Instruct or a folder")
        if role in ("captioner", "verifier"):
            raise UsageError(f"{where}: no local audio-language model is supported; use an endpoint or offline: true")
        _check_numbers(entry, where)
        return RoleSpec(role, "local", entry)
    unknown = sorted(set(entry) - set(ENDPOINT_KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown keys {', '.join(unknown)} (allowed: {', '.join(ENDPOINT_KEYS)})")
    if not isinstance(entry.get("model"), str) or not entry["model"].strip():
        raise UsageError(f"{where}: model (the name the server knows) is required")
    if entry.get("endpoint") is not None:
        from audioreason.inference.endpoints import endpoint_preset

        try:
            endpoint_preset(entry["endpoint"])
        except ValueError as err:
            raise UsageError(f"{where}.endpoint: {err}") from None
    if entry.get("base_url") is not None:
        from audioreason.judges.client import check_base_url

        try:
            check_base_url(entry["base_url"], f"{where}.base_url")
        except ValueError as err:
            raise UsageError(str(err)) from None
    if "structured_outputs" in entry and not isinstance(entry["structured_outputs"], bool):
        raise UsageError(f"{where}.structured_outputs must be true or false")
    _check_numbers(entry, where)
    return RoleSpec(role, "endpoint", entry)


def _check_numbers(entry: Mapping[str, Any], where: str) -> None:
    for key in ("concurrency", "max_attempts", "max_tokens"):
        value = entry.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise UsageError(f"{where}.{key} must be a whole number of at least 1, got {value!r}")
    for key in ("timeout_s", "temperature"):
        value = entry.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            raise UsageError(f"{where}.{key} must be a number >= 0, got {value!r}")


def parse_roles(content: Any, source: str = "ROLES.yaml") -> dict[str, RoleSpec]:
    """Every role's spec from a parsed ROLES.yaml (``UsageError`` naming the file and key on a mistake)."""
    if not isinstance(content, Mapping) or not isinstance(content.get("roles"), Mapping):
        raise UsageError(f"{source}: expected a mapping with a 'roles' mapping naming {', '.join(ROLES)}")
    unknown = sorted(set(content) - {"roles", "defaults"})
    if unknown:
        raise UsageError(f"{source}: unknown top-level keys {', '.join(unknown)} (roles, defaults)")
    defaults = content.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        raise UsageError(f"{source}: defaults must be a mapping")
    roles = content["roles"]
    extra = sorted(set(roles) - set(ROLES))
    if extra:
        raise UsageError(f"{source}: unknown roles {', '.join(map(str, extra))} (the roles: {', '.join(ROLES)})")
    missing = [r for r in ROLES if r not in roles]
    if missing:
        raise UsageError(f"{source}: no model named for {', '.join(missing)} (every role must be named)")
    specs = {}
    for role in ROLES:
        entry = roles[role]
        if isinstance(entry, Mapping) and "local" not in entry and "offline" not in entry:
            entry = {**defaults, **entry}
        specs[role] = _check_role(role, entry, source)
    if specs["asr"].kind == "local" and not specs["asr"].options["local"]:
        raise UsageError(f"{_where(source, 'asr')}.local is empty")
    return specs


def load_roles(path: str) -> dict[str, RoleSpec]:
    file = Path(path).expanduser()
    if not file.is_file():
        raise UsageError(f"--roles {path!r} is not a file")
    import yaml

    try:
        content = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise UsageError(f"{file}: not valid YAML ({str(err).splitlines()[0]})") from None
    return parse_roles(content, str(file))


def offline_roles(text_model: Optional[str] = None) -> dict[str, RoleSpec]:
    """``--offline``: the packaged Whisper, one constrained local model for the text roles (``text_model``,
    default: the offline judge's choice), and the offline stand-ins for the audio roles."""
    specs = {"asr": RoleSpec("asr", "local", {"local": OFFLINE_ASR})}
    for role in TEXT_ROLES:
        specs[role] = RoleSpec(role, "local", {"local": text_model} if text_model else {"local": None})
    for role in OFFLINE_ALLOWED:
        specs[role] = RoleSpec(role, "offline", {})
    return {role: specs[role] for role in ROLES}


__all__ = ["AUDIO_ROLES", "ROLES", "RoleSpec", "load_roles", "offline_roles", "parse_roles"]
