"""Entity and keyphrase co-occurrence graph: extraction at write time, personalised PageRank
at query time.

**Extraction** (:func:`extract_entities`) is rule-based and offline, English and Chinese:

* names — runs of capitalised words (``Caroline``, ``New York``), minus function words and
  interjections, lower-cased (``"Yes, Caroline went to New York"`` → ``caroline``,
  ``new york``);
* keyphrases — other words of at least :data:`MIN_KEY` letters that are not stopwords,
  folded to their first :data:`KEY_PREFIX` letters (a crude stem: ``painting`` and
  ``paintings`` meet);
* Chinese (and Japanese) — character pairs of each CJK run (``数据库`` → ``数据``, ``据库``),
  as the keyword index and the feedback pass do.

**The graph** is bipartite: memories on one side, entities on the other, an edge for every
entity a memory mentions. :func:`personalized_pagerank` walks it from a personalisation
vector (the first-pass best hits and the question's own entities) and restarts with
probability ``alpha``: a memory scores high when it shares entities with the hits (or the
question) and those entities are rare (an edge from a memory to an entity is weighted by
the entity's idf). It reaches memories that share an entity with the best hits but no word
with the question.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping

from hermes_memory_chroma.text import CJK_RE, STOPWORDS, cjk_bigrams, word_runs

MIN_KEY = 4
"""Shortest word kept as a keyphrase."""
KEY_PREFIX = 6
"""Keyphrases are folded to this many leading letters."""
INTERJECTIONS = frozenset(
    [
        "yes",
        "yeah",
        "yep",
        "hey",
        "hi",
        "hello",
        "wow",
        "oh",
        "ah",
        "thanks",
        "thank",
        "sure",
        "okay",
        "ok",
        "great",
        "cool",
        "nice",
        "awesome",
        "really",
        "well",
        "hmm",
        "haha",
        "lol",
    ]
)
_NAME = re.compile(r"\b[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*)*")


def _plain(word: str) -> bool:
    low = word.lower()
    return low not in STOPWORDS and low not in INTERJECTIONS


def extract_entities(text: str) -> set[str]:
    """Names, keyphrases and CJK character pairs of ``text``, lower-cased (see module)."""
    out: set[str] = set()
    for match in _NAME.finditer(text):
        parts = [p for p in match.group(0).split() if _plain(p) and not CJK_RE.search(p)]
        if parts:
            out.add(" ".join(parts).lower())
    for run in word_runs(text):
        if CJK_RE.match(run):
            out.update(cjk_bigrams(run))
        elif len(run) >= MIN_KEY and not run.isdigit() and _plain(run):
            out.add(run.lower()[:KEY_PREFIX])
    return out


def personalized_pagerank(
    links: Mapping[str, Iterable[str]],
    seeds: Mapping[str, float],
    entity_seeds: Mapping[str, float] | None = None,
    *,
    alpha: float = 0.3,
    iterations: int = 15,
    idf: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Personalised PageRank over the bipartite memory–entity graph ``links`` (memory id →
    its entities). ``seeds`` (memory id → weight) and ``entity_seeds`` (entity → weight)
    form the restart distribution (normalised to sum 1); each step a walker restarts with
    probability ``alpha``, else moves memory → entity (weighted by ``idf``, 1 without it)
    or entity → memory (uniformly). Mass of a memory without entities stays on it. Returns
    the memories' scores (their share of the stationary mass; entities left out). Empty
    seeds give an empty result."""
    members: dict[str, list[str]] = defaultdict(list)
    edges: dict[str, list[tuple[str, float]]] = {}
    for mem, ents in links.items():
        weighted = [(e, (idf or {}).get(e, 1.0)) for e in dict.fromkeys(ents)]
        total = sum(w for _, w in weighted)
        edges[mem] = [(e, w / total) for e, w in weighted] if total > 0 else []
        for e, _ in weighted:
            members[e].append(mem)
    restart: dict[tuple[bool, str], float] = defaultdict(float)
    for mem, w in seeds.items():
        if w > 0:
            restart[(False, mem)] += w
    for ent, w in (entity_seeds or {}).items():
        if w > 0 and ent in members:
            restart[(True, ent)] += w
    norm = sum(restart.values())
    if norm <= 0:
        return {}
    restart = defaultdict(float, {node: w / norm for node, w in restart.items()})
    mass: dict[tuple[bool, str], float] = dict(restart)
    for _ in range(iterations):
        nxt: dict[tuple[bool, str], float] = defaultdict(float)
        for (is_entity, node), m in mass.items():
            move = m * (1.0 - alpha)
            if is_entity:
                share = move / len(members[node])
                for mem in members[node]:
                    nxt[(False, mem)] += share
            elif edges.get(node):
                for ent, w in edges[node]:
                    nxt[(True, ent)] += move * w
            else:
                nxt[(False, node)] += move
        for node, w in restart.items():
            nxt[node] += alpha * w
        mass = nxt
    return {node: m for (is_entity, node), m in mass.items() if not is_entity}


def entity_idf(links: Mapping[str, Iterable[str]]) -> dict[str, float]:
    """``log(1 + N / df)`` of every entity over the ``N`` memories of ``links``."""
    df: dict[str, int] = defaultdict(int)
    for ents in links.values():
        for e in set(ents):
            df[e] += 1
    n = max(1, len(links))
    return {e: math.log(1 + n / d) for e, d in df.items()}


__all__ = ["entity_idf", "extract_entities", "personalized_pagerank"]
