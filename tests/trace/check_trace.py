#!/usr/bin/env python3
"""The launch trace's test: hgemm-launch-trace under the stand-in runtime
(fake_cudart.c) over every shape hgemm-bench knows (its default, --sweep,
--suite llm and each file of bench/shapes; without --bench, those files
alone), in every form, with and without
the workspace, every kernel and ablation at a few shapes, batches, padded
leading dimensions, empty and one-deep products, and bad arguments. It
asserts, call by call:

  - the runtime and driver refused nothing (no 'reject' line), no tensor
    map reaches past the operand it describes, and no call leaves a CUDA
    error pending;
  - a call that does anything launches a kernel; one with m, n or batch 0, a
    bad argument, or a form its kernel does not serve makes no CUDA call,
    except where only the runtime can tell (memory that is not the device's:
    a host C, an A whose allocation ends before its last byte or before its
    last entry, a batch entry in unmapped memory between two allocations),
    and then asks CUDA for no work: no tensor map, no launch, however many
    entries are checked before the bad one;
  - a c_in leading dimension of 2^39 is NOT_SUPPORTED before any CUDA call;
  - with nothing to multiply (k == 0) and beta != 0, a separate c_in reaches
    the scaling kernel: its parameters differ from the same call's without;
  - a persistent grid (V7, V8) within the options' sm_count_target, and a
    separate c_in served by V8 alone, without a k split, from its own map;
  - AUTO runs a batch in one launch of V8;
  - what ran is what hgemm__explain says runs: the kernel's version, and for
    V8 its one launch's cluster, tile width, seam, swap, grid and the split-K
    reduction's launch; for V9 the tile width, k-tiles a stage, stages,
    cluster and grid of each entry's launch.

--write FILE keeps the whole trace (with --calls-only, only the call list).

--deal-faults instead runs, in a fresh process each, two calls whose V8
deals its pairs by GPC while the stand-in fails one runtime call of the
deal's once-per-device probe (HGEMM_FAKE_FAIL, fake_cudart.c): each call
succeeds, launches its product and leaves no CUDA error pending; a failure
while the probe's stream, events and pinned memory are made gives back
those made; the device then goes without a map (no probe again), except
where the capture query failed: nothing was made or queued, and the next
call probes.

--grouped instead makes hgemm_grouped calls (both B layouts, both types,
one B for every group, n on either side of the narrow tile, k ragged and
k == 0, many groups): each must succeed with one launch, two tensor maps
(none for k == 0) inside their operands, nothing refused and no error left
pending.

--fresh-thread instead makes each of a few calls on a new host thread whose
first CUDA call it is (HGEMM_TRACE_THREAD=1): the stand-in then has no
context current there, as the runtime binds its primary context lazily, and
refuses a driver call made before one is (fake_cudart.c). Each call must
succeed and launch, with its tensor maps encoded and shared-memory limits
above the default set through the driver, both of which need a context: a
framework's worker thread (torch's autograd thread) is such a thread.
"""
import argparse
import os
import re
import subprocess
import sys

NOT_SUPPORTED = 3
SK_REDUCE_KERNEL = 0
V8_EXP_SEAM = 8
V8_EXP_TRANS = 512  # src/v8/kernel.cuh: C^T = B A^T, stored transposed (v8_swap)
V8_EXP_GPC = 64
FORMS = [(d, l) for d in ("f16", "bf16") for l in ("nt", "nn", "tn", "tt")]
FAULTS = ("lda", "align", "null", "host", "overlap")
# what each bad argument must return where the kernel serves the request
# (INVALID_VALUE 1, MISALIGNED 2, NOT_SUPPORTED 3), and those only the
# runtime can tell (CUDA calls allowed, no work)
FAULT_STATUS = {"lda": 1, "align": 2, "null": 1, "host": 1, "overlap": 1, "ldc_in": 3, "tail": 1, "short": 1,
                "gap": 1}
NEEDS_RUNTIME = ("host", "tail", "short", "gap")


def bench_shapes(bench, args):
    out = subprocess.run([bench, "--list-shapes"] + args, check=True, capture_output=True, text=True).stdout
    shapes = []
    for line in out.splitlines():
        f = line.split("#")[0].split()
        if len(f) == 3 and all(x.isdigit() for x in f):
            shapes.append(tuple(int(x) for x in f))
    if not shapes:
        sys.exit(f"check_trace: hgemm-bench --list-shapes {' '.join(args)} listed no shape")
    return shapes


def file_shapes(path):
    """A shapes file's "M N K" lines, read as hgemm-bench reads them ('#' starts a comment)."""
    shapes = []
    with open(path) as fh:
        for line in fh:
            f = line.split("#")[0].split()
            if len(f) == 3 and all(x.isdigit() for x in f):
                shapes.append(tuple(int(x) for x in f))
    return shapes


def all_shapes(bench, shapes_dir):
    shapes = set()
    if bench:
        shapes |= set(bench_shapes(bench, []))
        shapes |= set(bench_shapes(bench, ["--sweep"]))
        shapes |= set(bench_shapes(bench, ["--suite", "llm"]))
    for name in sorted(os.listdir(shapes_dir)):
        if name.endswith(".txt"):
            path = os.path.join(shapes_dir, name)
            shapes |= set(bench_shapes(bench, ["--shapes", path]) if bench else file_shapes(path))
    if not shapes:
        sys.exit(f"check_trace: no shapes in {shapes_dir}")
    return sorted(shapes)


def call_list(rows, shapes):
    """(KERNEL, DTYPE, LAYOUT, M, N, K, BATCH, WS, BETA, PAD, FAULT[, TARGET, CIN]) tuples."""
    calls = []
    for m, n, k in shapes:
        calls.append(("auto", "f16", "nt", m, n, k, 1, 1, 0, 0, "none"))
        calls.append(("auto", "f16", "nt", m, n, k, 1, 0, 0, 0, "none"))
        calls.append(("v8", "f16", "nt", m, n, k, 1, 1, 0, 0, "none"))
        calls.append(("v9", "f16", "nt", m, n, k, 1, 1, 0, 0, "none"))
        for dtype, layout in FORMS:
            calls.append(("auto", dtype, layout, m, n, k, 1, 1, 0.5, 8, "none"))
    few = [(1000, 1000, 1000), (777, 1032, 520), (4096, 4096, 4096), (1, 4096, 4096), (8191, 8193, 8190),
           (64, 14336, 4096), (4096, 14336, 4096), (256, 256, 65536)]
    for row in rows:
        for m, n, k in few:
            calls.append((row, "f16", "nt", m, n, k, 1, 1, 0, 0, "none"))
            calls.append((row, "bf16", "tn", m, n, k, 1, 1, 1, 8, "none"))
    for m, n, k, batch in [(512, 512, 512, 4), (100, 200, 300, 3), (8, 4096, 4096, 3), (4096, 8, 4096, 2),
                           (1000, 1000, 64, 7), (2048, 2048, 2048, 2), (4096, 4096, 4096, 0)]:
        for dtype, layout in FORMS:
            calls.append(("auto", dtype, layout, m, n, k, batch, 1, 0, 0, "none"))
            calls.append(("v8", dtype, layout, m, n, k, batch, 0, 1, 8, "none"))
    for m, n, k in [(0, 64, 64), (64, 0, 64), (64, 64, 0), (1, 1, 1), (1, 8, 1), (17, 9, 1), (4096, 4096, 1),
                    (4096, 4096, 0)]:
        for row in ("auto", "v8", "v9", "v5", "v7"):
            calls.append((row, "f16", "nt", m, n, k, 1, 1, 1, 0, "none"))
    for m in list(range(1, 65)) + [65, 96, 127, 128, 129, 255, 256, 257]:
        calls.append(("auto", "f16", "nt", m, 4096, 4096, 1, 1, 0, 0, "none"))
        calls.append(("auto", "bf16", "nn", m, 14336, 4096, 1, 1, 0, 8, "none"))
        calls.append(("auto", "f16", "tt", 4096, m, 4096, 1, 0, 0, 0, "none"))
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (512, 4096, 14336), (256, 256, 65536), (1, 4096, 4096),
                    (1000, 1000, 1000), (777, 1032, 520), (4096, 14336, 4096)]:
        for target in (1, 2, 66, 100, 131):
            for row in ("auto", "v7", "v8"):
                calls.append((row, "f16", "nt", m, n, k, 1, 1, 0, 0, "none", target, 0))
        # v8-320 (the 320 tile at every shape) where the lab is built in
        for row in ("auto", "auto-f16acc", "v8", "v9", "v5") + (("v8-320",) if "v8-320" in rows else ()):
            calls.append((row, "f16", "nt", m, n, k, 1, 1, 0.5, 0, "none", 0, 1))
            calls.append((row, "bf16", "tn", m, n, k, 2, 1, 1, 8, "none", 0, 1))
    for fault in FAULTS:
        for row in ("auto", "v8", "v9", "v5"):
            calls.append((row, "f16", "nt", 512, 512, 512, 1, 1, 0, 0, fault))
            calls.append((row, "bf16", "nn", 4096, 4096, 4096, 2, 1, 0, 0, fault))
    # device memory at both ends of every matrix, every entry checked before
    # the first launch (include/hgemm.h)
    for row in ("auto", "v8", "v9", "v5", "v0"):
        calls.append((row, "f16", "nt", 512, 512, 512, 1, 1, 0.5, 0, "tail"))
        calls.append((row, "f16", "nt", 256, 512, 512, 3, 1, 0.5, 0, "tail"))
        calls.append((row, "f16", "nt", 256, 512, 512, 3, 1, 0.5, 0, "short"))
    for row in ("v9", "v5", "v0", "v7"):
        calls.append((row, "f16", "nt", 256, 512, 512, 3, 1, 0.5, 0, "gap"))
    for row in ("auto", "v8", "auto-f16acc"):
        calls.append((row, "f16", "nt", 512, 512, 512, 1, 1, 0.5, 0, "ldc_in", 0, 1))
        calls.append((row, "bf16", "tn", 512, 512, 512, 2, 1, 0.5, 8, "ldc_in", 0, 1))
    # nothing to multiply with a separate c_in: C = beta * c_in
    for row in ("auto", "v8", "auto-f16acc"):
        for cin in (0, 1):
            calls.append((row, "f16", "nt", 512, 512, 0, 1, 1, 0.5, 0, "none", 0, cin))
            calls.append((row, "bf16", "tn", 300, 256, 0, 3, 0, -2, 8, "none", 0, cin))
    return calls


def call_line(c):
    return " ".join(str(x) for x in c) + "\n"


def template_args(name):
    """The integer and bool template arguments of a mangled kernel name, in order
    (a type argument reads as None)."""
    m = re.search(r"I(.*E)Ev", name)
    if not m:
        return []
    s, out, i = m.group(1), [], 0
    while i < len(s):
        t = re.match(r"L[ib](n?\d+)E", s[i:])
        if t:
            v = t.group(1)
            out.append(-int(v[1:]) if v.startswith("n") else int(v))
            i += t.end()
            continue
        t = re.match(r"(\d+)", s[i:])
        if t:
            out.append(None)
            i += t.end() + int(t.group(1))
            continue
        return out
    return out


def kernel_version(name):
    m = re.match(r"_Z\d+(v\d)_kernel", name)
    return m.group(1) if m else None


def parse(text):
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith("call "):
            cur = {"call": line, "lines": [], "launches": [], "plan": None, "status": None, "calls": None}
            blocks.append(cur)
            continue
        if cur is None:
            continue
        cur["lines"].append(line)
        if line.startswith("plan "):
            cur["plan"] = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            cur["plan_kind"] = "v8" if " v8 " in line else "v9" if " v9 " in line else None
        elif line.startswith("launch "):
            f = line.split()
            kv = dict(x.split("=", 1) for x in f[2:])
            cur["launches"].append({"name": f[1], "grid": [int(x) for x in kv["grid"].split(",")],
                                    "cluster": int(kv["cluster"]), "smem": int(kv["smem"]),
                                    "stream": kv["stream"],
                                    "params": kv["params"].split(",")})
        elif line.startswith("status "):
            f = line.split()
            cur["status"] = int(f[1])
            cur["calls"] = int(f[2].split("=")[1])
            cur["pending"] = int(f[3].split("=")[1])
    return blocks


def check_block(b, problems):
    f = b["call"].split()
    row, m, n, k, batch = f[1], int(f[4]), int(f[5]), int(f[6]), int(f[7])
    kv = dict(x.split("=", 1) for x in f if "=" in x)
    fault, target, cin = kv["fault"], int(kv["target"]), int(kv["cin"])
    where = b["call"]

    def bad(why):
        problems.append(f"{where}: {why}")

    if b["status"] is None:
        return bad("no status line (the driver stopped)")
    for line in b["lines"]:
        if line.startswith("reject "):
            bad(line)
        if "past-allocation" in line:
            bad("a tensor map past its operand: " + line)
    if b["pending"]:
        bad(f"CUDA error {b['pending']} left pending")
    work = [line for line in b["lines"] if line.split(" ", 1)[0] in ("tmap", "attr", "launch", "to-symbol")]
    if fault != "none":
        if b["status"] == 0:
            bad(f"a bad argument ({fault}) accepted")
        elif fault not in FAULTS and b["status"] != FAULT_STATUS[fault]:
            bad(f"a bad argument ({fault}) gave status {b['status']}, not {FAULT_STATUS[fault]}")
        if work:
            bad(f"a bad argument ({fault}) refused after asking CUDA for work: {work[0]}")
        elif b["calls"] and fault not in NEEDS_RUNTIME:  # only where the pointer is, needs CUDA to tell
            bad(f"a bad argument ({fault}) refused after {b['calls']} CUDA calls, not before any")
        return
    plan = b["plan"]
    if plan is None:
        return bad("no plan line")
    if int(plan["status"]) != b["status"] and b["status"] in (0, NOT_SUPPORTED):
        bad(f"hgemm__explain says status {plan['status']}, the call returned {b['status']}")
    if cin and b["status"] == 0 and not (row.startswith("v8") or row.startswith("auto")):
        bad(f"a separate c_in is V8's alone, yet {row} took it")
    if b["status"] == NOT_SUPPORTED:
        if b["calls"]:
            bad(f"NOT_SUPPORTED after {b['calls']} CUDA calls, not before any")
        return
    if b["status"] != 0:
        return bad(f"status {b['status']}")
    launches = b["launches"]
    if m == 0 or n == 0 or batch == 0:
        if b["calls"]:
            bad(f"nothing to do, yet {b['calls']} CUDA calls")
        return
    if not launches:
        return bad("nothing launched")
    if int(plan["scale_only"]):
        if any(not l["name"].startswith("_Z12scale_kernel") for l in launches):
            bad("k == 0 launched more than the scaling kernel")
        return
    ran = plan["row"]
    for l in launches:
        # at most `target` blocks; V8's pairs whole (hgemm.h: an odd target rounded down, 1 runs one pair)
        allowed = max(l["cluster"], target // l["cluster"] * l["cluster"])
        if target and kernel_version(l["name"]) in ("v7", "v8") and l["grid"][0] > allowed:
            bad(f"sm_count_target {target}, yet a persistent grid of {l['grid'][0]} blocks")
    if cin:
        if not ran.startswith("v8"):
            return bad(f"a separate c_in ran on {ran}, not V8")
        if int(plan.get("slices", 0)) or any("v8_split_reduce" in l["name"] for l in launches):
            bad("k split with a separate c_in")
        for l in launches:
            if kernel_version(l["name"]) == "v8" and l["params"][2] == l["params"][3]:
                bad("c_in's tensor map is C's")
    mains = [l for l in launches if kernel_version(l["name"])]
    versions = {kernel_version(l["name"]) for l in mains}
    if versions != {ran[:2]}:
        return bad(f"the plan's row is {ran}, the launches ran {sorted(versions)}")
    if row.startswith("auto") and batch > 1 and ran != "v8":
        bad(f"AUTO ran a batch of {batch} on {ran}, not in one launch of V8 (include/hgemm.h)")
    if b.get("plan_kind") == "v8":
        if len(mains) != 1:
            return bad(f"V8 serves a call in one launch; {len(mains)} here")
        l, t = mains[0], template_args(mains[0]["name"])
        cluster, bn, seam = int(plan["cluster"]), int(plan["bn"]), int(plan["seam"])
        if len(t) < 10 or t[0] != cluster or t[5] != bn:
            bad(f"launched template {t}, the plan's cluster {cluster} and width {bn}")
        elif bool(t[9] & V8_EXP_SEAM) != bool(seam):
            bad(f"the plan's seam is {seam}, the launched build's EXP is {t[9]}")
        elif bool(t[9] & V8_EXP_GPC) != bool(int(plan["deal"])):
            bad(f"the plan's deal is {plan['deal']}, the launched build's EXP is {t[9]}")
        elif bool(t[9] & V8_EXP_TRANS) != bool(int(plan["swapped"])):
            bad(f"the plan's swapped is {plan['swapped']}, the launched build's EXP is {t[9]}")
        if l["cluster"] != cluster:
            bad(f"launched in clusters of {l['cluster']}, the plan's {cluster}")
        if l["grid"] != [int(plan["clusters"]) * cluster, 1, 1]:
            bad(f"grid {l['grid']}, the plan's {plan['clusters']} clusters of {cluster}")
        # the deal's probes (src/kernels/v8_deal.cu): only where the build
        # deals by GPC, before the product, on a stream of their own that
        # waits for an event recorded on the caller's, which then waits for
        # theirs
        probes = [i for i, x in enumerate(launches) if "v8_where" in x["name"]]
        if probes:
            main = launches.index(l)
            if not t[9] & V8_EXP_GPC:
                bad(f"the deal's probe ran before a build without the deal (EXP {t[9]})")
            elif probes[-1] > main:
                bad("the deal's probe ran after the product")
            elif any(launches[i]["stream"] == l["stream"] for i in probes):
                bad("the deal's probe ran on the caller's stream")
            elif not any(x.startswith("event record ") and x.endswith("stream=" + l["stream"]) for x in b["lines"]):
                bad("the deal's probe ran without an event recorded on the caller's stream")
            elif not any(x.startswith(f"stream {l['stream']} waits for event ") for x in b["lines"]):
                bad("the caller's stream does not wait for the deal's probes")
        reduces = [x for x in launches if "v8_split_reduce" in x["name"]]
        want = 1 if int(plan["slices"]) >= 2 and int(plan["reduce"]) == SK_REDUCE_KERNEL else 0
        if len(reduces) != want:
            bad(f"{len(reduces)} reduction launches; the plan ({plan['slices']} slices, reduce "
                f"{plan['reduce']}) wants {want}")
    elif b.get("plan_kind") == "v9":
        if len(mains) != batch:
            return bad(f"V9 launches once an entry: {len(mains)} launches for {batch}")
        split = int(plan["split"])
        tiles = int(plan["long_tiles"]) * int(plan["short_tiles"])
        for l in mains:
            t = template_args(l["name"])
            if t[:3] != [int(plan["bn"]), int(plan["kb"]), int(plan["stages"])]:
                bad(f"launched template {t}, the plan's bn {plan['bn']}, kb {plan['kb']}, stages {plan['stages']}")
            if l["cluster"] != split or l["grid"] != [tiles * split, 1, 1]:
                bad(f"grid {l['grid']} in clusters of {l['cluster']}; the plan's {tiles} tiles, split {split}")
    elif ran in ("v8", "v9"):
        bad(f"the table's {ran} ran without a plan")


def check_scale_c_in(blocks, problems):
    """A call with nothing to multiply and beta != 0 reads its separate c_in:
    the scaling kernel's parameters with cin=1 are not those of the same call
    with cin=0 (which scales C itself; the stand-in hands both calls the same
    addresses for A, B, C and the workspace)."""
    scaled = {}
    for b in blocks:
        if b["status"] != 0 or not b["plan"] or not int(b["plan"]["scale_only"]) or len(b["launches"]) != 1:
            continue
        f = b["call"].split()
        kv = dict(x.split("=", 1) for x in f if "=" in x)
        if float(kv["beta"]) == 0 or kv["fault"] != "none":
            continue
        scaled.setdefault(b["call"].replace(" cin=1 ", " cin=0 "), {})[int(kv["cin"])] = b
    for key, by_cin in scaled.items():
        if 0 in by_cin and 1 in by_cin and by_cin[0]["launches"][0]["params"] == by_cin[1]["launches"][0]["params"]:
            problems.append(f"{by_cin[1]['call']}: C = beta * C launched as without the c_in (the scaling kernel "
                            f"never sees it)")


# A call whose V8 deals by GPC (its plan says deal=1), made twice.
DEAL_CALL = ("v8", "f16", "nt", 1, 8192, 28672, 1, 1, 0, 0, "none")
# The deal's runtime calls to fail, in the order it makes them: the first
# four make its stream, events and pinned memory.
DEAL_SETUP = ("cudaStreamCreateWithFlags:1", "cudaEventCreateWithFlags:1", "cudaEventCreateWithFlags:2",
              "cudaHostAlloc:1")
DEAL_RETRIED = ("cudaStreamIsCapturing:1",)  # before the probe starts: the next call probes
DEAL_LATER = DEAL_RETRIED + ("cudaThreadExchangeStreamCaptureMode:1", "cudaEventRecord:1",
              "cudaStreamWaitEvent:1", "cudaGetFuncBySymbol:2", "cudaMemcpyFromSymbolAsync:1",
              "cudaMemcpyFromSymbolAsync:5", "cudaEventRecord:2", "cudaStreamWaitEvent:2")


def deal_faults(a):
    problems = []
    for spec in DEAL_SETUP + DEAL_LATER:
        env = dict(os.environ, LD_PRELOAD=os.path.abspath(a.fake), LD_BIND_NOW="1", HGEMM_FAKE_SMS=str(a.sms),
                   HGEMM_FAKE_FAIL=spec)
        r = subprocess.run([a.driver], input=call_line(DEAL_CALL) * 2, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            sys.exit(f"check_trace: hgemm-launch-trace exited {r.returncode} under HGEMM_FAKE_FAIL={spec}")
        lines = r.stdout.splitlines()
        blocks = parse(r.stdout)

        def bad(why):
            problems.append(f"HGEMM_FAKE_FAIL={spec}: {why}")

        if not any(x.startswith("inject ") for x in lines):
            bad("the call was never made (no 'inject' line): the probe's calls have changed")
        if len(blocks) != 2 or not blocks[0]["plan"] or blocks[0]["plan"].get("deal") != "1":
            bad("the call does not deal by GPC here")
            continue
        for i, b in enumerate(blocks):
            if b["status"] != 0:
                bad(f"call {i + 1} returned {b['status']}")
            if b["pending"]:
                bad(f"call {i + 1} left CUDA error {b['pending']} pending")
            if not any(kernel_version(x["name"]) == "v8" for x in b["launches"]):
                bad(f"call {i + 1} did not launch its product")
        if spec not in DEAL_RETRIED and any("v8_where" in x["name"] for x in blocks[1]["launches"]):
            bad("the second call probed again")
        count = {w: sum(1 for x in lines if x.startswith(w)) for w in
                 ("stream create", "stream destroy", "event create", "event destroy")}
        if spec in DEAL_SETUP and (count["stream create"] != count["stream destroy"] or
                                   count["event create"] != count["event destroy"]):
            bad(f"the partly made state is not given back: {count}")
        if count["stream create"] > 1:
            bad(f"{count['stream create']} streams made")
    for p in problems:
        print("FAIL", p)
    print(f"check_trace: {len(DEAL_SETUP + DEAL_LATER)} failed steps of the deal's probe, {len(problems)} problems")
    return 1 if problems else 0


# A kernel beyond 48 KB of shared memory in each family, one per form.
FRESH_THREAD_CALLS = (("auto", "f16", "nn", 120, 136, 264, 1, 1, 0, 0, "none"),   # V9, k split in a cluster
                      ("auto", "f16", "tn", 264, 136, 120, 1, 1, 0, 0, "none"),   # V8's 128-wide tile
                      ("auto", "bf16", "nt", 4096, 4096, 4096, 1, 1, 0, 0, "none"),
                      ("v8", "f16", "nt", 1, 8192, 28672, 1, 0, 0, 0, "none"),
                      ("v6", "f16", "nt", 512, 512, 512, 1, 0, 0, 0, "none"))


def fresh_thread(a):
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(a.fake), LD_BIND_NOW="1", HGEMM_FAKE_SMS=str(a.sms),
               HGEMM_TRACE_THREAD="1")
    r = subprocess.run([a.driver], input="".join(call_line(c) for c in FRESH_THREAD_CALLS), capture_output=True,
                       text=True, env=env)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"check_trace: hgemm-launch-trace exited {r.returncode} under HGEMM_TRACE_THREAD=1")
    problems = []
    blocks = parse(r.stdout)
    if len(blocks) != len(FRESH_THREAD_CALLS):
        problems.append(f"{len(blocks)} calls traced of {len(FRESH_THREAD_CALLS)}")
    for b in blocks:
        if b["status"] != 0 or not b["launches"] or b["pending"]:
            problems.append(f"{b['call']}: status {b['status']}, {len(b['launches'])} launches, "
                            f"pending {b['pending']}")
    if not any(x.startswith(("reject cuFuncSetAttribute: no context", "reject cuTensorMapEncodeTiled: no context"))
               for x in r.stdout.splitlines()):
        problems.append("no call met a thread without a context: the stand-in's model or the calls changed")
    for p in problems:
        print("FAIL " + p)
    print(f"check_trace --fresh-thread: {len(blocks)} calls, {len(problems)} problems")
    return 1 if problems else 0


GROUPED_CALLS = [
    ("f16", "t", 1100, 520, 1000, 8, 0), ("bf16", "n", 1100, 520, 1000, 8, 0), ("bf16", "t", 777, 72, 264, 5, 0),
    ("f16", "n", 600, 72, 264, 5, 0), ("f16", "t", 500, 264, 136, 4, 1), ("bf16", "t", 300, 136, 0, 3, 0),
    ("bf16", "t", 32768, 4096, 7168, 256, 0), ("bf16", "n", 64, 2048, 768, 128, 0), ("f16", "t", 1, 8, 8, 1, 0),
    ("bf16", "t", 4096, 28672, 4096, 1024, 1),
]

# grouped FP8: mode, C type, rows, n, k, groups, shared B
GROUPED_FP8_CALLS = [
    ("block", "bf16", 32768, 4096, 7168, 256, 0), ("row", "f16", 777, 200, 272, 5, 0),
    ("tensor", "f32", 500, 264, 1040, 4, 1), ("block", "bf16", 300, 136, 0, 3, 0),
    ("row", "bf16", 1, 128, 16, 1, 0),
]

# grouped along k: dtype, m, n, total_k, groups, fp32 C
GROUPED_K_CALLS = [
    ("bf16", 4096, 7168, 32768, 256, 1), ("f16", 264, 136, 1000, 6, 0), ("bf16", 136, 72, 0, 2, 0),
    ("f16", 1, 8, 1, 1, 0),
]


def check_grouped_launch(call, launch, tmaps, kernel, grid, boxes, problems):
    """One grouped launch against its plan: the kernel by name, a persistent
    grid of `grid` blocks, the tensor maps' boxes in order."""
    name = launch.split()[1]
    lv = dict(x.split("=", 1) for x in launch.split()[2:] if "=" in x)
    if kernel not in name or int(lv["grid"].split(",")[0]) != grid:
        problems.append(f"{call}: launched {name} grid {lv['grid']}, not {kernel} on {grid} blocks")
    got = [dict(y.split("=", 1) for y in x.split()[2:] if "=" in y)["box"] for x in tmaps]
    if got != boxes:
        problems.append(f"{call}: tensor map boxes {got}, not {boxes}")


def grouped(a):
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(a.fake), LD_BIND_NOW="1", HGEMM_FAKE_SMS=str(a.sms))
    text_in = "".join("grouped %s %s %d %d %d %d %d\n" % c for c in GROUPED_CALLS)
    text_in += "".join("grouped-fp8 %s %s %d %d %d %d %d\n" % c for c in GROUPED_FP8_CALLS)
    text_in += "".join("grouped-k %s %d %d %d %d %d\n" % c for c in GROUPED_K_CALLS)
    r = subprocess.run([a.driver], input=text_in, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"check_trace: hgemm-launch-trace exited {r.returncode} on grouped calls")
    problems, block, blocks = [], None, []
    for line in r.stdout.splitlines():
        if line.startswith(("grouped-call ", "grouped-fp8-call ", "grouped-k-call ")):
            block = {"call": line, "lines": []}
            blocks.append(block)
        elif block is not None:
            block["lines"].append(line)
    calls = [("bf16",) + c for c in GROUPED_CALLS] + [("fp8",) + c for c in GROUPED_FP8_CALLS] + \
        [("k",) + c for c in GROUPED_K_CALLS]
    if len(blocks) != len(calls):
        problems.append(f"{len(blocks)} grouped calls traced of {len(calls)}")
    for b, (kind, *c) in zip(blocks, calls):
        lines = b["lines"]
        status = [x for x in lines if x.startswith("status ")]
        if not status:
            problems.append(f"{b['call']}: no status line")
            continue
        f = status[0].split()
        kv = dict(x.split("=", 1) for x in f if "=" in x)
        launches = [x for x in lines if x.startswith("launch ")]
        tmaps = [x for x in lines if x.startswith("tmap ")]
        for x in lines:
            if x.startswith("reject ") or "past-allocation" in x:
                problems.append(f"{b['call']}: {x}")
        if int(f[1]) != 0 or kv["pending"] != "0":
            problems.append(f"{b['call']}: status {f[1]}, pending {kv['pending']}")
        if len(launches) != 1:
            problems.append(f"{b['call']}: {len(launches)} launches, not one")
        k = c[3] if kind == "k" else c[4]
        want_maps = 0 if k == 0 else 2
        if len(tmaps) != want_maps:
            problems.append(f"{b['call']}: {len(tmaps)} tensor maps, not {want_maps}")
        if launches and kind != "bf16":
            if kind == "k":  # every group's m x n tiles (128 x 128); A and B MN-major in 64 x 64 boxes
                m, n, groups = c[1], c[2], c[4]
                kernel, most, boxes = "gk_kernel", -(-m // 128) * -(-n // 128) * groups, ["64,64,1", "64,64,1"]
            else:  # a tile per 128 rows of each group (each rounds up one); A and B's experts in 128 x 128-byte boxes
                rows, n, groups = c[2], c[3], c[5]
                kernel, most, boxes = "f8g_kernel", (-(-rows // 128) + groups) * -(-n // 128), ["128,128", "128,128,1"]
            check_grouped_launch(b["call"], launches[0], tmaps, kernel, min(most, a.sms), boxes if k else [],
                                 problems)
    for p in problems:
        print("FAIL " + p)
    print(f"check_trace --grouped: {len(blocks)} calls (bf16/fp16 and FP8), {len(problems)} problems")
    return 1 if problems else 0


# mode, C type, m, n, k, SM target, beta: narrow and wide tiles (beta 0: a 16-bit C by TMA), the splits of 2, 4
# and 8, k 0
FP8_CALLS = [
    ("block", "bf16", 4096, 7168, 16384, 0, 0.5), ("tensor", "bf16", 4096, 2112, 7168, 0, 0.0),
    ("block", "bf16", 64, 2112, 7168, 0, 0.5), ("row", "f16", 128, 7168, 2048, 0, 0.5),
    ("block", "f32", 256, 256, 16384, 0, 0.5), ("tensor", "bf16", 1, 4096, 4096, 0, 0.5),
    ("block", "bf16", 1152, 4100, 256, 0, 0.0), ("row", "f32", 300, 264, 1024, 4, 0.0),
    ("block", "bf16", 140, 136, 0, 0, 0.5), ("tensor", "bf16", 8192, 8192, 8192, 114, 0.5),
    ("row", "f16", 1100, 4360, 256, 0, 0.0),
]


def fp8_plan(m, n, k, sms):
    """What src/fp8/fp8.c plans: (wide, split log, tiles)."""
    wide = n > 128 and -(-m // 128) * -(-n // 256) >= sms
    tiles = -(-m // 128) * -(-n // (256 if wide else 128))
    k_tiles = -(-k // 128)
    lg = 0
    if not wide and k_tiles >= 8 and tiles * 2 <= sms:
        while lg < 3 and (tiles << (lg + 1)) <= sms and (4 << (lg + 1)) <= k_tiles:
            lg += 1
    return wide, lg, tiles


def fp8(a):
    """hgemm_gemm_fp8's launches against its plan: one launch of the narrow or
    the wide kernel, a grid of every tile (a cluster of 2^split blocks each)
    or of the SMs, the wide build in pairs (clusters of 2 over pairs of tile
    rows) wherever it has two tile rows, two maps with 128 x 128-byte boxes
    and, for the wide build's 16-bit C with beta 0, C's with 64 x 64."""
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(a.fake), LD_BIND_NOW="1", HGEMM_FAKE_SMS=str(a.sms))
    text_in = "".join("fp8 %s %s %d %d %d %d %g\n" % c for c in FP8_CALLS)
    r = subprocess.run([a.driver], input=text_in, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"check_trace: hgemm-launch-trace exited {r.returncode} on fp8 calls")
    problems, block, blocks = [], None, []
    for line in r.stdout.splitlines():
        if line.startswith("fp8-call "):
            block = {"call": line, "lines": []}
            blocks.append(block)
        elif block is not None:
            block["lines"].append(line)
    if len(blocks) != len(FP8_CALLS):
        problems.append(f"{len(blocks)} fp8 calls traced of {len(FP8_CALLS)}")
    for b, (mode, ct, m, n, k, target, beta) in zip(blocks, FP8_CALLS):
        lines = b["lines"]
        bad = lambda why: problems.append(f"{b['call']}: {why}")
        status = [x for x in lines if x.startswith("status ")]
        if not status:
            bad("no status line")
            continue
        f = status[0].split()
        kv = dict(x.split("=", 1) for x in f if "=" in x)
        if int(f[1]) != 0 or kv["pending"] != "0":
            bad(f"status {f[1]}, pending {kv['pending']}")
        for x in lines:
            if x.startswith("reject ") or "past-allocation" in x:
                bad(x)
        sms = min(a.sms, target) if target else a.sms
        wide, lg, tiles = fp8_plan(m, n, k, sms)
        launches = [x for x in lines if x.startswith("launch ")]
        if len(launches) != 1:
            bad(f"{len(launches)} launches, not one")
            continue
        lv = dict(x.split("=", 1) for x in launches[0].split()[2:] if "=" in x)
        name = launches[0].split()[1]
        if ("f8_wide_kernel" in name) != wide:
            bad(f"ran {name}, the plan says {'wide' if wide else 'narrow'}")
        grid = int(lv["grid"].split(",")[0])
        want_grid, want_cluster = (tiles << lg if lg else min(tiles, sms)), 1 << lg
        m_tiles = -(-m // 128)
        if wide and m_tiles >= 2 and sms >= 2:  # pairs: every pair of tile rows, or the pairs resident, or the target's
            units = -(-m_tiles // 2) * -(-n // 256)
            want_grid, want_cluster = min(2 * min(units, a.sms // 2), sms & ~1), 2
        if grid != want_grid or int(lv["cluster"]) != want_cluster:
            bad(f"grid {grid} cluster {lv['cluster']}, the plan: grid {want_grid} cluster {want_cluster}")
        tmaps = [x for x in lines if x.startswith("tmap ")]
        want_boxes = [] if k == 0 else ["128,128", "128,128"]
        if wide and ct != "f32" and beta == 0:  # C's map: 64 x 64 boxes
            want_boxes.append("64,64")
        boxes = [dict(y.split("=", 1) for y in x.split()[2:] if "=" in y)["box"] for x in tmaps]
        if boxes != want_boxes:
            bad(f"tensor map boxes {boxes}, not {want_boxes}")
    for p in problems:
        print("FAIL " + p)
    print(f"check_trace --fp8: {len(blocks)} calls, {len(problems)} problems")
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--driver", required=True, help="hgemm-launch-trace")
    ap.add_argument("--fake", required=True, help="the stand-in libcudart.so.<major>")
    ap.add_argument("--bench", help="hgemm-bench, for its shapes (without it: --shapes-dir's files alone)")
    ap.add_argument("--shapes-dir", required=True, help="bench/shapes")
    ap.add_argument("--sms", type=int, default=132, help="the stand-in's SMs (default 132)")
    ap.add_argument("--write", help="keep the trace (or, with --calls-only, the call list) here")
    ap.add_argument("--calls-only", action="store_true", help="write the call list and stop")
    ap.add_argument("--deal-faults", action="store_true", help="the deal's failed steps instead (see above)")
    ap.add_argument("--fresh-thread", action="store_true", help="calls on threads without a context (see above)")
    ap.add_argument("--grouped", action="store_true", help="hgemm_grouped calls instead (see above)")
    ap.add_argument("--fp8", action="store_true", help="hgemm_gemm_fp8 calls instead (see fp8())")
    a = ap.parse_args()
    if a.grouped:
        return grouped(a)
    if a.fp8:
        return fp8(a)
    if a.deal_faults:
        return deal_faults(a)
    if a.fresh_thread:
        return fresh_thread(a)
    rows = subprocess.run([a.driver, "--rows"], check=True, capture_output=True, text=True).stdout.split()
    calls = call_list(rows, all_shapes(a.bench, a.shapes_dir))
    text_in = "".join(call_line(c) for c in calls)
    if a.calls_only:
        with open(a.write, "w") as fh:
            fh.write(text_in)
        return 0
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(a.fake), LD_BIND_NOW="1", HGEMM_FAKE_SMS=str(a.sms))
    r = subprocess.run([a.driver], input=text_in, capture_output=True, text=True, env=env)
    if a.write:
        with open(a.write, "w") as fh:
            fh.write(r.stdout)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"check_trace: hgemm-launch-trace exited {r.returncode}")
    blocks = parse(r.stdout)
    if len(blocks) != len(calls):
        sys.exit(f"check_trace: {len(calls)} calls given, {len(blocks)} traced")
    problems = []
    for b in blocks:
        check_block(b, problems)
    check_scale_c_in(blocks, problems)
    launched = sum(len(b["launches"]) for b in blocks)
    for p in problems[:40]:
        print("FAIL", p)
    print(f"check_trace: {len(calls)} calls on {a.sms} SMs, {launched} launches, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
