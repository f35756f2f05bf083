"""CUDA-event timing shared by the scripts beside it (torch_e2e, llama_e2e,
moe_e2e, grouped_bench, bench_torch, fp8_bench): torch is passed in, so that a script
without it can still print its usage."""
import statistics


def each_ms(torch, fn, warmup, repeats):
    """Milliseconds of each of `repeats` calls of fn, after `warmup` calls,
    the GPU idle before each (a list)."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(stop))
    return out


def mean_ms(torch, fn, warmup, iters):
    """Mean milliseconds of `iters` calls of fn back to back, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / iters


def graph_ms(torch, fns, warmup, iters):
    """Milliseconds per call of `iters` calls, fns[i % len(fns)] for call i,
    captured in one CUDA graph and replayed (the GPU's time alone, no host
    time between calls): the median of `warmup` + 3 replays' last 3."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for fn in fns:  # first calls outside the capture (allocations, a workspace)
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(iters):
            fns[i % len(fns)]()
    out = []
    for _ in range(warmup + 3):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        out.append(start.elapsed_time(stop) / iters)
    del graph
    return statistics.median(out[-3:])


def not_ready(torch, hgemm=None):
    """Why a script cannot measure here (no sm_90 GPU; with hgemm given, its
    native torch operators not loaded), or None."""
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        return "needs an sm_90 GPU"
    if hgemm is not None:
        path, why = hgemm.native_ops()
        if path is None:
            return f"hgemm's native torch operators are not loaded: {why}"
    return None
