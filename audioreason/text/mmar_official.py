"""The official MMAR-Rubrics judge prompt, read at run time from the user's copy of the official scorer.

The official scorer is public (the MMAR repository, ``code/evaluation_rubrics.py``; "The Interspeech 2026
Audio Reasoning Challenge", arXiv:2602.14224, §3.2), but its wording is not ours to ship. A user who wants
the official wording, so that a real judge at temperature 0 answers as it does under the official scorer,
passes the path of their copy of that file:

    prompt = OfficialPrompt.load("MMAR/code/evaluation_rubrics.py")
    prompt.messages(item, reasoning, answer)   # [system, user], exactly as the official scorer sends them
    prompt.source                              # {"wording": "official", "path": ..., "sha256": ...}

The file is parsed, not imported (importing it needs an API key and its command-line dependencies): only
the string constant ``EVALUATE_SYS_PROMPT`` and the functions ``clean`` and
``create_evaluation_user_prompt`` are taken from it and executed, and the user prompt is built by calling
that function with the arguments the official scorer passes (question, answer, thinking, cue, predicted
reasoning, predicted answer, rubric).
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Union

SYSTEM_CONSTANT = "EVALUATE_SYS_PROMPT"
USER_FUNCTION = "create_evaluation_user_prompt"
HELPER_FUNCTIONS = ("clean",)


class OfficialScorerError(ValueError):
    """The file given as the official scorer does not provide the prompt it should."""


@dataclass(frozen=True)
class OfficialPrompt:
    system: str
    build_user: Callable[..., str] = field(repr=False)
    path: str
    sha256: str

    @classmethod
    def load(cls, path: Union[str, Path]) -> "OfficialPrompt":
        path = Path(path).expanduser()
        try:
            data = path.read_bytes()
        except OSError as err:
            raise OfficialScorerError(f"cannot read the official scorer {str(path)!r}: {err}") from None
        try:
            tree = ast.parse(data.decode("utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError) as err:
            raise OfficialScorerError(f"{str(path)!r} is not a Python file: {err}") from None
        system: Optional[str] = None
        functions: dict[str, ast.FunctionDef] = {}
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == SYSTEM_CONSTANT
            ):
                try:
                    system = ast.literal_eval(node.value)
                except ValueError:
                    system = None
            elif isinstance(node, ast.FunctionDef) and node.name in (USER_FUNCTION, *HELPER_FUNCTIONS):
                functions[node.name] = node
        missing = [name for name in (USER_FUNCTION, *HELPER_FUNCTIONS) if name not in functions]
        if not isinstance(system, str):
            missing.insert(0, f"{SYSTEM_CONSTANT} (a string constant)")
        if missing:
            raise OfficialScorerError(
                f"{str(path)!r} does not look like the official MMAR-Rubrics scorer "
                f"(code/evaluation_rubrics.py): it lacks {', '.join(missing)}"
            )
        namespace: dict[str, Any] = {"__name__": "mmar_official_prompt"}
        module = ast.Module(body=[functions[name] for name in (*HELPER_FUNCTIONS, USER_FUNCTION)], type_ignores=[])
        exec(compile(module, str(path), "exec"), namespace)  # noqa: S102 - the user's own copy of the scorer
        return cls(system, namespace[USER_FUNCTION], str(path.resolve()), hashlib.sha256(data).hexdigest())

    def user(self, item: Mapping[str, Any], reasoning: Optional[str], answer: Optional[str]) -> str:
        """The user turn, built by the official function from the same fields the official scorer passes."""
        try:
            text = self.build_user(
                item["question"],
                item["answer"],
                item.get("thinking") or "",
                list(item.get("cue") or []),
                "" if reasoning is None else str(reasoning),
                "" if answer is None else str(answer),
                item["rubric"],
            )
        except Exception as err:  # noqa: BLE001 - a changed signature or a helper we did not take: say which file
            raise OfficialScorerError(
                f"the official prompt function in {self.path!r} failed on item "
                f"{item.get('id')!r}: {type(err).__name__}: {err}"
            ) from None
        if not isinstance(text, str):
            raise OfficialScorerError(f"{USER_FUNCTION} in {self.path!r} returned {type(text).__name__}, not str")
        return text

    def messages(
        self, item: Mapping[str, Any], reasoning: Optional[str], answer: Optional[str]
    ) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user(item, reasoning, answer)},
        ]

    @property
    def source(self) -> dict[str, str]:
        return {"wording": "official", "path": self.path, "sha256": self.sha256}


__all__ = ["OfficialPrompt", "OfficialScorerError"]
