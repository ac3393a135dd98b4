"""The embedded default works with no network at all (issue 2, done-when 3)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SCRIPT = """
import json, sys
from ucma import Memory
with Memory(sys.argv[1], user_id="alice") as mem:
    related = mem.observe("The JWT token expired early because the servers' clocks disagree.")
    unrelated = mem.observe("I baked banana bread with walnuts on Sunday.")
    hits = mem.remember("authentication tokens expire too soon", include_graph_neighbors=False)
    scores = {h.id: h.channels.get("cosine", 0.0) for h in hits}
    print(json.dumps({"related": related.id, "unrelated": unrelated.id,
                      "order": [h.id for h in hits], "cosine": scores,
                      "model": mem.engine.embedder.model_id}))
"""


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="unshare -n is not permitted here")
def test_memory_observes_embeds_and_remembers_without_a_network(tmp_path: Path):
    result = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", SCRIPT, str(tmp_path / "offline.db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["model"] == "minilm-l6-v2-int8"
    assert data["order"][0] == data["related"]
    cosine = data["cosine"]
    assert cosine[data["related"]] > cosine.get(data["unrelated"], 0.0) + 0.2
