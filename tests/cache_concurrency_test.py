"""Many processes, one kernel cache (ctest CacheConcurrency).

Takes the polyred CLI and the source tree; runs `polyred compile FILE... -o DIR`,
whose CUBINs come through the on-disk kernel cache (runtime/kernel_cache) with or
without a GPU, as torchrun's ranks do: 8 processes at once over one POLYRED_CACHE_DIR,
each compiling the same three graphs in a different order (so the same keys and
different ones are written at the same moment), a process that compiles one graph
again and again meanwhile (reading entries while they are written), and, before they
start, one entry truncated mid-file. Passes when every process exits 0 with the
artifacts of a run with the cache disabled, no entry was ever seen partial while they
ran, and afterwards every file in the cache directory is a valid entry (the truncated
one rebuilt, no temporary file left). The entry format is checked here independently:
"polyred-cubin-1\\n", the SHA-256 of the payload, the payload.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MAGIC = b"polyred-cubin-1\n"
ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.cubin")
GRAPHS = ["sg04_mul_sum.json", "sg09_sum_sum.json", "sg02_cast_sum.json"]
WRITERS = 8
TARGET = ["--arch=sm_90", "--sms=132"]


def is_valid_entry(data):
    header = len(MAGIC) + 32
    return (len(data) > header and data.startswith(MAGIC)
            and hashlib.sha256(data[header:]).digest() == data[len(MAGIC):header])


def read_bytes(path):
    try:
        return path.read_bytes()
    except FileNotFoundError:  # renamed over or removed between listing and reading
        return None


def tree(directory):
    """Every file under `directory`: relative path -> bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def compile_command(polyred, files, out):
    return [polyred, "compile", *map(str, files), "-o", str(out), *TARGET]


def run(polyred, files, out, env):
    r = subprocess.run(compile_command(polyred, files, out), env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(compile_command(polyred, files, out))} exited {r.returncode}:\n{r.stderr}")


class EntryWatcher(threading.Thread):
    """Reads every entry in the cache directory over and over while the writers run:
    any entry seen invalid (other than the planted damaged one, unchanged) is a
    partial write made visible."""

    def __init__(self, cache, planted_name, planted_bytes):
        super().__init__(daemon=True)
        self.cache, self.planted_name, self.planted_bytes = cache, planted_name, planted_bytes
        self.stop, self.bad, self.reads = threading.Event(), [], 0

    def run(self):
        while not self.stop.is_set():
            for p in self.cache.iterdir():
                if not ENTRY_NAME.fullmatch(p.name):
                    continue
                data = read_bytes(p)
                if data is None or is_valid_entry(data):
                    self.reads += data is not None
                    continue
                if p.name == self.planted_name and data == self.planted_bytes:
                    continue
                self.bad.append(f"{p.name}: {len(data)} bytes, invalid")


def main():
    polyred, source = sys.argv[1], Path(sys.argv[2])
    graphs = [source / "examples" / "table2" / g for g in GRAPHS]
    work = Path(tempfile.mkdtemp(prefix="polyred-cache-concurrency-"))
    try:
        cache = work / "cache"
        env = dict(os.environ, POLYRED_CACHE_DIR=str(cache))
        env.pop("POLYRED_DISABLE_CACHE", None)
        uncached = dict(env, POLYRED_DISABLE_CACHE="1")
        started = time.monotonic()

        # What every process must produce: the artifacts compiled with no cache at all.
        run(polyred, graphs, work / "expected", uncached)
        if cache.exists() and any(cache.iterdir()):
            sys.exit("FAIL: POLYRED_DISABLE_CACHE=1 wrote into the cache directory")
        expected = tree(work / "expected")
        if not any(name.endswith(".cubin") for name in expected):
            sys.exit("FAIL: compile -o wrote no CUBIN")

        # One graph's entries in the cache, the largest truncated mid-file.
        run(polyred, graphs[:1], work / "prime", env)
        entries = sorted(cache.iterdir(), key=lambda p: p.stat().st_size)
        if not entries:
            sys.exit("FAIL: compile -o stored nothing in the cache")
        damaged = entries[-1]
        valid = damaged.read_bytes()
        damaged.write_bytes(valid[: len(valid) // 2])
        watcher = EntryWatcher(cache, damaged.name, damaged.read_bytes())
        watcher.start()

        writers = []
        for i in range(WRITERS):
            order = graphs[i % 3:] + graphs[:i % 3]
            out = work / f"writer{i}"
            writers.append((out, subprocess.Popen(compile_command(polyred, order, out), env=env,
                                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        rereads = 0
        while rereads == 0 or any(p.poll() is None for _, p in writers):  # a reader of the damaged graph
            out = work / f"reader{rereads}"
            run(polyred, graphs[:1], out, env)
            if tree(out) != tree(work / "expected" / graphs[0].stem):
                sys.exit(f"FAIL: reader run {rereads} gave other artifacts than the uncached run")
            rereads += 1
        watcher.stop.set()
        watcher.join()

        for i, (out, p) in enumerate(writers):
            stdout, stderr = p.communicate()
            if p.returncode != 0:
                sys.exit(f"FAIL: writer {i} exited {p.returncode}:\n{stderr}")
            if tree(out) != expected:
                sys.exit(f"FAIL: writer {i} gave other artifacts than the uncached run")
        if watcher.bad:
            sys.exit("FAIL: partial entries were visible while the writers ran:\n" + "\n".join(watcher.bad[:10]))

        leftovers = [p.name for p in cache.iterdir() if not ENTRY_NAME.fullmatch(p.name)]
        invalid = [p.name for p in cache.iterdir() if ENTRY_NAME.fullmatch(p.name) and not is_valid_entry(p.read_bytes())]
        if leftovers or invalid:
            sys.exit(f"FAIL: cache directory holds non-entries {leftovers} and invalid entries {invalid}")
        if damaged.read_bytes() != valid:
            sys.exit("FAIL: the truncated entry was not rebuilt as it was")
        print(f"ok: {WRITERS} writers and {rereads} reader runs over {len(list(cache.iterdir()))} entries, "
              f"{watcher.reads} entry reads while writing, {time.monotonic() - started:.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
