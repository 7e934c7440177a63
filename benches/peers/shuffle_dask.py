"""dask#3872's all-to-all shuffle as a plain dict graph on dask.distributed, the peer of
`ares bench shuffle`: I mappers draw R int64 each (seed = mapper index), split them by
value % O; O reducers concatenate, sort and return (count, sum, sum(i * sorted[i]) mod 2^61).
Usage: python3 shuffle_dask.py I O R [workers]. Prints one JSON line (graph build, compute,
end to end seconds, tasks)."""
import json
import operator
import sys
import time

import numpy as np
from dask.distributed import Client, LocalCluster


def gen(i, rows, parts):
    v = np.random.default_rng(i).integers(0, 2**31, rows, dtype=np.int64)
    m = v % parts
    return [v[m == r] for r in range(parts)]


def reduce(*pieces):
    s = np.sort(np.concatenate(pieces))
    weighted = sum(i * int(x) for i, x in enumerate(s)) % (1 << 61)
    return (len(s), int(s.sum()), weighted)


def main():
    i_parts, o_parts, rows = (int(a) for a in sys.argv[1:4])
    workers = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    start = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        ready = time.perf_counter()
        dsk = {}
        for i in range(i_parts):
            dsk[("gen", i)] = (gen, i, rows, o_parts)
            for r in range(o_parts):
                dsk[("get", i, r)] = (operator.getitem, ("gen", i), r)
        for r in range(o_parts):
            dsk[("red", r)] = (reduce,) + tuple(("get", i, r) for i in range(i_parts))
        built = time.perf_counter()
        out = client.get(dsk, [("red", r) for r in range(o_parts)])
        done = time.perf_counter()
    assert sum(o[0] for o in out) == i_parts * rows
    print(json.dumps({"tasks": len(dsk), "cluster_start_s": ready - start,
                      "build_s": built - ready, "compute_s": done - built,
                      "seconds": done - ready}))


if __name__ == "__main__":
    main()
