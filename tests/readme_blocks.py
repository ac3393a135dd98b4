"""The README's code blocks, read for tests that run them as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def block(heading: str, language: str) -> str:
    """The first ``language`` code block after ``heading`` in the README."""
    text = README.read_text(encoding="utf-8")
    assert heading in text, f"the README lost its section {heading!r}"
    after = text.split(heading, 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", after, re.DOTALL)
    assert match is not None, f"no {language} block under {heading!r}"
    return match.group(1)


def shell_commands(heading: str) -> list[list[str]]:
    """The commands of the shell block under ``heading``: continuation lines joined,
    comments dropped, ``&&`` chains split, each command as its words."""
    joined = block(heading, "sh").replace("\\\n", " ")
    commands: list[list[str]] = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        current: list[str] = []
        for word in [*words, "&&"]:
            if word == "&&":
                if current:
                    commands.append(current)
                current = []
            else:
                current.append(word)
    return commands
