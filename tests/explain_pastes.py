"""The ways a message reaches explain besides a clean copy: a browser's spaces, HTML escaping, a structured log's
JSON lines, the prefixes of multi-process and containerised runs, Markdown quoting, hard wrapping.  Each is a function
of the text; tests/test_explain_pastes.py applies them to the development records explain reads right
(``python tests/explain_pastes.py`` prints the flips of every one)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable

Paste = Callable[[str], str]


def _per_line(prefix: str) -> Paste:
    return lambda text: "\n".join(prefix + line for line in text.split("\n"))


PASTES: dict[str, Paste] = {
    "no-break spaces": lambda t: t.replace(" ", "\u00a0"),
    "double spaces": lambda t: t.replace(" ", "  "),
    "HTML references": lambda t: t.replace("&", "&amp;").replace('"', "&quot;").replace("'", "&#39;")
    .replace("<", "&lt;").replace(">", "&gt;"),
    "a JSON log line": lambda t: json.dumps({"level": "error", "msg": t}),
    "torch.distributed ranks": _per_line("[rank0]: "),
    "kubelet CRI logs": _per_line("2024-05-01T10:00:00.123456789Z stderr F "),
    "Docker Compose": _per_line("app-1  | "),
    "Python logging": _per_line("ERROR:root:"),
    "Python logging's default format": _per_line("2024-05-01 10:00:00,123 - root - ERROR - "),
    "a bracketed level": _per_line("[2024-05-01 10:00:00] [ERROR] "),
    "journald": _per_line("May 01 10:00:00 gpu-host ollama[1234]: "),
    "pytest's failure lines": _per_line("E   "),
    "Ray workers": _per_line("(RayWorkerWrapper pid=1234, ip=10.0.0.1) "),
    "vLLM workers": _per_line("(VllmWorker rank=1 pid=4321) ERROR 08-30 07:32:02 [multiproc_executor.py:512] "),
    "a Markdown quote": _per_line("> "),
    "wrapped at 60 columns": lambda t: "\n".join(textwrap.fill(line, 60) for line in t.split("\n")),
    "escaped newlines": lambda t: t.replace("\n", "\\n"),
}


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from cudafit.explain import classify
    from explain_corpus import DEV, load, parts

    right = [r for r in parts(load())[DEV] if classify(r["text"])[0].category == r["label"]]
    print(f"development records explain reads right: {len(right)}")
    for name, paste in PASTES.items():
        flips = sum(classify(paste(r["text"]))[0].category != r["label"] for r in right)
        print(f"{name:26s} flips {flips}")
