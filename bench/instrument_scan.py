#!/usr/bin/env python3
"""Writes a copy of a kernels folder whose single-pass scan records, per tile, when it passed
each phase (NVIDIA only: the %globaltimer register through inline PTX), for bench/scan-trace.

  bench/instrument_scan.py kernels /tmp/kernels-traced

The kernel gains a last argument `__global ulong* trace`: 8 words per tile, t0 after the
ticket, t1 after load and per-work-item reduction, t2 after the work-group scan, t3 once the
tile's prefix is known (publish, look-back, broadcast), t4 after scan and store, then the SM.
Every insertion point is matched exactly: if the kernel changed, this fails and says where.
"""
import shutil
import sys

TIMER = '  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t{}));\n'
# (text in Scan.cl, what it becomes): the trace argument, then a timestamp after each phase.
EDITS = [
    ("uint gen) {\n  __local T scratch",
     "uint gen, __global ulong* trace) {\n  ulong t0, t1, t2, t3, t4;\n  __local T scratch"),
    ("  const uint tile = lTile;\n", "  const uint tile = lTile;\n" + TIMER.format(0)),
    ("  const T mine = SpThreadReduce(x);\n",
     "  const T mine = SpThreadReduce(x);\n" + TIMER.format(1)),
    ("  const T inTile = SpWorkGroupScan(scratch, mine, &tileAggregate);\n",
     "  const T inTile = SpWorkGroupScan(scratch, mine, &tileAggregate);\n" + TIMER.format(2)),
    ("  const T tilePrefix = lPrefix;\n", "  const T tilePrefix = lPrefix;\n" + TIMER.format(3)),
    ("  SpStoreTile(dst, n, tile * SP_TILE, buf, x);\n#endif\n",
     "  SpStoreTile(dst, n, tile * SP_TILE, buf, x);\n#endif\n" + TIMER.format(4) +
     '  uint smid;\n  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));\n'
     "  if (lid == 0) {\n    __global ulong* r = trace + 8 * tile;\n"
     "    r[0] = t0; r[1] = t1; r[2] = t2; r[3] = t3; r[4] = t4; r[5] = smid;\n  }\n"),
]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    shutil.copytree(src, dst, dirs_exist_ok=True)
    text = open(f"{src}/Scan.cl").read()
    for anchor, replacement in EDITS:
        if text.count(anchor) != 1:
            sys.exit(f"instrument_scan.py: expected exactly one {anchor!r} in {src}/Scan.cl, "
                     f"found {text.count(anchor)}: update the insertion points")
        text = text.replace(anchor, replacement)
    open(f"{dst}/Scan.cl", "w").write(text)


if __name__ == "__main__":
    main()
