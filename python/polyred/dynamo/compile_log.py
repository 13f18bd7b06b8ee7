"""The compile log: per graph the backend saw, the regions polyred took (their ops and
why), the regions it left and why, and the ops outside every region with the reason;
and, as they happen, the symbolic programs a region of symbolic sizes made or could not.

Kept in memory (`records()`, newest last; `clear()`), sent to the "polyred.backend"
logger at INFO (DEBUG: each region's ops), and printed to stderr with POLYRED_LOG=1.
"""
import logging
import os
import sys
from collections import Counter
from dataclasses import dataclass, field

logger = logging.getLogger("polyred.backend")
_records = []


@dataclass
class GraphRecord:
    graph: str                      # "forward 0", "backward 0", "inference 1"
    taken: list = field(default_factory=list)     # (ops, reason) per region polyred runs
    left: list = field(default_factory=list)      # (ops, reason) per region left to the rest
    ops_left_out: Counter = field(default_factory=Counter)  # (op, reason) -> count

    def summary(self):
        lines = [f"polyred: {self.graph} graph: {len(self.taken)} region(s) taken, {len(self.left)} left"]
        for ops, reason in self.taken:
            lines.append(f"  taken ({reason}): {_short(ops)}")
        for ops, reason in self.left:
            lines.append(f"  left ({reason}): {_short(ops)}")
        for (op, reason), count in sorted(self.ops_left_out.items(), key=lambda kv: -kv[1]):
            lines.append(f"  op left out x{count}: {op} ({reason})")
        return "\n".join(lines)


def _short(ops, limit=8):
    counts = Counter(ops)
    text = ", ".join(f"{op} x{n}" if n > 1 else op for op, n in counts.most_common(limit))
    return text + (", ..." if len(counts) > limit else "")


def record(graph_name, regions, refused):
    r = GraphRecord(graph_name)
    for region in regions:
        (r.taken if region.taken else r.left).append((region.ops(), region.reason))
    for node, reason in refused.items():
        r.ops_left_out[(str(node.target), reason)] += 1
    _records.append(r)
    note(r.summary())
    return r


def note(text):
    """A line of the log outside the graph records (a symbolic region's choices)."""
    logger.info(text)
    if os.environ.get("POLYRED_LOG", "") not in ("", "0"):
        print(text, file=sys.stderr)


def records():
    return list(_records)


def clear():
    _records.clear()
