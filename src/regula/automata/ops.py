"""Operations on DFAs: products, complement, concatenation, minimisation, equivalence with a
shortest witness, emptiness with a shortest word, and a language diff.

AALpy has none of products, complement or concatenation for DFAs, hence these.
"""
from __future__ import annotations

from collections import deque

from .dfa import DFA, AlphabetError


def _same_alphabet(a: DFA, b: DFA) -> None:
    if set(a.alphabet) != set(b.alphabet):
        only_a = sorted(set(a.alphabet) - set(b.alphabet), key=str)
        only_b = sorted(set(b.alphabet) - set(a.alphabet), key=str)
        raise AlphabetError("the automata have different alphabets: "
                            + "; ".join(x for x in (f"only in the first: {', '.join(map(str, only_a))}" if only_a else "",
                                                    f"only in the second: {', '.join(map(str, only_b))}" if only_b else "")
                                        if x))


def _explore(alphabet: tuple, start, successor, accepting) -> DFA:
    """The DFA of the nodes reachable from `start` under `successor(node, symbol index)`."""
    index, order, delta = {start: 0}, [start], []
    for node in order:  # grows while we walk it: breadth first
        row = []
        for k in range(len(alphabet)):
            nxt = successor(node, k)
            if nxt not in index:
                index[nxt] = len(order)
                order.append(nxt)
            row.append(index[nxt])
        delta.append(tuple(row))
    return DFA(alphabet, tuple(delta), 0, frozenset(i for i, node in enumerate(order) if accepting(node)))


def _product(a: DFA, b: DFA, accept) -> DFA:
    _same_alphabet(a, b)
    b_index = [b.alphabet.index(x) for x in a.alphabet]
    return _explore(a.alphabet, (a.initial, b.initial),
                    lambda pq, k: (a.delta[pq[0]][k], b.delta[pq[1]][b_index[k]]),
                    lambda pq: accept(pq[0] in a.accepting, pq[1] in b.accepting))


def intersection(a: DFA, b: DFA) -> DFA:
    return _product(a, b, lambda x, y: x and y)


def union(a: DFA, b: DFA) -> DFA:
    return _product(a, b, lambda x, y: x or y)


def difference(a: DFA, b: DFA) -> DFA:
    return _product(a, b, lambda x, y: x and not y)


def symmetric_difference(a: DFA, b: DFA) -> DFA:
    return _product(a, b, lambda x, y: x != y)


def complement(a: DFA) -> DFA:
    return DFA(a.alphabet, a.delta, a.initial, frozenset(range(a.size)) - a.accepting, a.names)


def concatenate(a: DFA, b: DFA) -> DFA:
    """L(a)·L(b), by the subset construction over (state of a, set of states of b).

    Merging a's accepting states into b's initial state is only right in special cases
    (it breaks when b's initial state is re-entered or a's accepting states have exits);
    this is the NFA-then-determinise construction done in one pass.
    """
    _same_alphabet(a, b)
    b_index = [b.alphabet.index(x) for x in a.alphabet]

    def enter(pa, qs):
        return (pa, frozenset(qs | {b.initial}) if pa in a.accepting else frozenset(qs))

    return _explore(a.alphabet, enter(a.initial, set()),
                    lambda node, k: enter(a.delta[node[0]][k], {b.delta[q][b_index[k]] for q in node[1]}),
                    lambda node: bool(node[1] & b.accepting))


def reachable(a: DFA) -> list[int]:
    seen, order = {a.initial}, [a.initial]
    for s in order:
        for t in a.delta[s]:
            if t not in seen:
                seen.add(t)
                order.append(t)
    return order


def minimize(a: DFA) -> DFA:
    """The minimal complete DFA (Moore's partition refinement over the reachable states)."""
    states = reachable(a)
    block = {s: int(s in a.accepting) for s in states}
    while True:
        signature = {s: (block[s],) + tuple(block[t] for t in a.delta[s]) for s in states}
        ids: dict = {}
        new = {}
        for s in states:  # number blocks by first appearance in BFS order: canonical output
            new[s] = ids.setdefault(signature[s], len(ids))
        if len(ids) == len(set(block.values())):
            block = new
            break
        block = new
    n = len(set(block.values()))
    delta = [None] * n
    for s in states:
        delta[block[s]] = tuple(block[t] for t in a.delta[s])
    acc = frozenset(block[s] for s in states if s in a.accepting)
    return DFA(a.alphabet, tuple(delta), block[a.initial], acc)


def shortest_accepted(a: DFA) -> tuple | None:
    """A shortest accepted word (BFS, symbols in alphabet order), or None if the language is empty."""
    parent = {a.initial: None}
    queue = deque([a.initial])
    while queue:
        s = queue.popleft()
        if s in a.accepting:
            word = []
            while parent[s] is not None:
                s, sym = parent[s]
                word.append(sym)
            return tuple(reversed(word))
        for sym, t in zip(a.alphabet, a.delta[s]):
            if t not in parent:
                parent[t] = (s, sym)
                queue.append(t)
    return None


def is_empty(a: DFA) -> bool:
    return shortest_accepted(a) is None


def equivalent(a: DFA, b: DFA) -> tuple[bool, tuple | None]:
    """(equal?, a shortest word accepted by exactly one of them)."""
    witness = shortest_accepted(symmetric_difference(a, b))
    return witness is None, witness


def count_words(a: DFA, max_len: int) -> list[int]:
    """Accepted words of each length 0..max_len (dynamic programming over states)."""
    counts = [0] * a.size
    counts[a.initial] = 1
    out = []
    for _ in range(max_len + 1):
        out.append(sum(counts[s] for s in a.accepting))
        nxt = [0] * a.size
        for s, c in enumerate(counts):
            if c:
                for t in a.delta[s]:
                    nxt[t] += c
        counts = nxt
    return out


def language_diff(a: DFA, b: DFA, max_len: int = 8) -> dict:
    """Whether L(a) = L(b); if not, a shortest word in each difference and the number of
    words of length <= max_len on which they disagree."""
    only_a, only_b = difference(a, b), difference(b, a)
    wa, wb = shortest_accepted(only_a), shortest_accepted(only_b)
    return {"equal": wa is None and wb is None,
            "only_in_first": list(wa) if wa is not None else None,
            "only_in_second": list(wb) if wb is not None else None,
            "differing_words": sum(count_words(only_a, max_len)) + sum(count_words(only_b, max_len)),
            "up_to_length": max_len}
