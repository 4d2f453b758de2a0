"""Planners that train nothing, the rows every table of the e2cl stage sets beside the trained models.

- Retrieval: the plan is the script of the training program whose task text (name and description,
  what the planning sample shows the model) is the most similar to the test task's, then the end
  action. Similarity: the cosine of all-MiniLM-L6-v2 embeddings (the shipped weights, `regula.rag.embed`;
  rounded as RAG rounds them) or of TF-IDF vectors (scikit-learn's default TfidfVectorizer written out:
  scikit-learn is not a dependency). Ties go to the first training program in the split's order.
- Remapped retrieval: the same script with each object id the test program's initial graph does not
  hold under that class replaced by the graph's lowest id of the class (one choice per copied id),
  so the copy names this scene's objects; a class the graph lacks keeps its id (and fails).
- Grounded retrieval: remapped, and a class the graph lacks replaced by the graph's class of the
  nearest name (`grounding.ground`, MiniLM): the scene grounding a planner can use, on a copy.
- Fixed: one "Turn on light" program (the most frequent script of that task) for every task.
- Ceiling: per test program the best LCS any training program's script reaches as a copy: what
  retrieval could score at most with a perfect similarity.
A plan runs step by step in the test program's initial state, as a model's does, cut at the step cap.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import Callable, Sequence

from .explore import task_of
from .grounding import ground
from .inference import StepRecord, TaskRun
from .metrics import lcs_ratio

# The commonest script of "Turn on light" (3 of its 34 programs, as many as one in the bedroom)
FIXED_PLAN = ("[WALK] <home_office> (319)", "[WALK] <light> (411)", "[FIND] <light> (411)",
              "[SWITCHON] <light> (411)")
RETRIEVERS = ("minilm", "tfidf")
# evaluation name -> (retriever or None for the fixed plan, how the copy is made to name the scene's
# objects: None (as copied), "remap" (ids), "ground" (ids and missing classes))
BASELINES = {"retrieval_minilm": ("minilm", None), "retrieval_minilm_remap": ("minilm", "remap"),
             "retrieval_minilm_grounded": ("minilm", "ground"),
             "retrieval_tfidf": ("tfidf", None), "retrieval_tfidf_remap": ("tfidf", "remap"),
             "fixed_light": (None, None)}
_TOKEN = re.compile(r"(?u)\b\w\w+\b")  # TfidfVectorizer's default token_pattern


def task_text(program) -> str:
    return f"{program.task}. {program.description}"


def _argmax(row: Sequence[float]) -> int:
    best = 0
    for i, x in enumerate(row):
        if x > row[best]:
            best = i
    return best


def minilm_nearest(queries: Sequence[str], documents: Sequence[str]) -> list[int]:
    from regula.rag import embed
    model = embed.model()
    q, d = model.encode(queries), model.encode(documents)
    return [_argmax([embed.rounded(x) for x in row]) for row in q @ d.T]


def _tfidf(texts: Sequence[str], idf: dict[str, float]) -> list[dict[str, float]]:
    out = []
    for text in texts:
        counts = Counter(t for t in _TOKEN.findall(text.lower()) if t in idf)
        vec = {t: c * idf[t] for t, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        out.append({t: v / norm for t, v in vec.items()})
    return out


def tfidf_nearest(queries: Sequence[str], documents: Sequence[str]) -> list[int]:
    """Fitted on the documents: idf = ln((1 + n) / (1 + df)) + 1, raw counts, L2 norm (sklearn's defaults)."""
    df = Counter(t for text in documents for t in set(_TOKEN.findall(text.lower())))
    idf = {t: math.log((1 + len(documents)) / (1 + k)) + 1 for t, k in df.items()}
    docs = _tfidf(documents, idf)
    return [_argmax([sum(w * d.get(t, 0.0) for t, w in q.items()) for d in docs]) for q in _tfidf(queries, idf)]


NEAREST = {"minilm": minilm_nearest, "tfidf": tfidf_nearest}


def play(program, lines: Sequence[str], make_episode: Callable, max_steps: int) -> TaskRun:
    """A fixed script planned as an agent would: each line run in turn, then the end action; a
    script longer than `max_steps` is cut there and does not end."""
    run = TaskRun(task_of(program), make_episode(program), tuple(program.lines))
    for line in lines[:max_steps]:
        step = run.episode.run_skill(line)
        run.records.append(StepRecord(line, line, bool(step.success),
                                      None if step.success else (step.cause or {}).get("error_type")))
        run.history.append(line)
    run.ended = len(lines) <= max_steps
    return run


def scripts(name: str, tests: Sequence, train: Sequence) -> list[tuple[str, ...]]:
    """Each test program's script under baseline `name` (before the step cap)."""
    retriever, named = BASELINES[name]
    if retriever is None:
        return [FIXED_PLAN] * len(tests)
    picked = NEAREST[retriever]([task_text(p) for p in tests], [task_text(p) for p in train])
    return [tuple(ground(train[i].lines, p.graphs()["init_graph"]["nodes"], similar=named == "ground")
                  if named else train[i].lines) for p, i in zip(tests, picked)]


def plan(name: str, tests: Sequence, train: Sequence, make_episode: Callable, max_steps: int) -> list[TaskRun]:
    return [play(p, lines, make_episode, max_steps) for p, lines in zip(tests, scripts(name, tests, train))]


def ceiling(tests: Sequence, train: Sequence, max_steps: int) -> float | None:
    """The mean over `tests` of the best LCS a copied training script (cut at the cap) reaches."""
    copies = {tuple(p.lines[:max_steps]) for p in train}
    best = [max((lcs_ratio(c, p.lines) for c in copies), default=0.0) for p in tests]
    return sum(best) / len(best) if best else None
