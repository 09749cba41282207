"""Timing harness (needs torch and a CUDA GPU; imported only when measuring).

Every operator is timed two ways:
- kernel time: N launches captured in one CUDA graph (cycling through rotated
  input sets), the graph replayed R times, each replay timed with CUDA events;
  per-launch time = replay time / N. Falls back to N back-to-back eager launches
  between two events when capture fails. Median and p10/p90 over the R repeats.
- eager time: one launch followed by a device synchronize, timed with the host
  clock (time.perf_counter), so it includes the Python/dispatch/launch cost and
  the sync round trip. Median and p10/p90 over repeats.
"""

import math
import time

from schema import summarize


class Timer:
    def __init__(self, kernel_reps=10, eager_reps=10, target_graph_ms=2.0, max_launches=256,
                 use_graph=True):
        self.kernel_reps = kernel_reps
        self.eager_reps = eager_reps
        self.target_graph_ms = target_graph_ms
        self.max_launches = max_launches
        self.use_graph = use_graph
        self.methods = {}  # method name -> count, for meta.yaml
        self.failures = []

    def measure(self, fns):
        import torch

        if callable(fns):
            fns = [fns]
        for f in fns:
            f()
        for f in fns:
            f()
        torch.cuda.synchronize()
        est = self._estimate(fns)
        n = int(min(self.max_launches, max(1, math.ceil(self.target_graph_ms / max(est, 1e-4)))))
        kernel, method = None, "cuda_graph"
        if self.use_graph:
            try:
                kernel = self._graph_times(fns, n)
            except Exception as ex:  # capture not possible for this op: use events
                self.failures.append(f"graph capture failed ({type(ex).__name__}: {ex})"[:300])
                torch.cuda.synchronize()
                kernel = None
        if kernel is None:
            method = "events_back_to_back"
            kernel = self._b2b_times(fns, n)
        eager = self._eager_times(fns)
        self.methods[method] = self.methods.get(method, 0) + 1
        out = summarize(kernel, eager)
        out["_launches"] = n
        out["_method"] = method
        return out

    def _estimate(self, fns):
        import torch

        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        k = max(3, len(fns))
        s.record()
        for i in range(k):
            fns[i % len(fns)]()
        e.record()
        e.synchronize()
        return s.elapsed_time(e) / k

    def _graph_times(self, fns, n):
        import torch

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for f in fns:
                f()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(n):
                fns[i % len(fns)]()
        g.replay()
        g.replay()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.kernel_reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.kernel_reps)]
        for s, e in zip(starts, ends):
            s.record()
            g.replay()
            e.record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) / n for s, e in zip(starts, ends)]
        del g
        return times

    def _b2b_times(self, fns, n):
        import torch

        times = []
        for _ in range(self.kernel_reps):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            for i in range(n):
                fns[i % len(fns)]()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) / n)
        return times

    def _eager_times(self, fns):
        import torch

        times = []
        for r in range(self.eager_reps + 1):
            f = fns[r % len(fns)]
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            f()
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            if r > 0:
                times.append((t1 - t0) * 1e3)
        return times


def kernel_names(fn, limit=6):
    """CUDA kernel names one call of fn launches (torch.profiler), for meta.yaml."""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile

        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        names = []
        for ev in prof.events():
            dt = str(getattr(ev, "device_type", ""))
            if "CUDA" in dt and ev.name not in names:
                names.append(ev.name)
        return [n[:160] for n in names[:limit]] or ["(none recorded)"]
    except Exception as ex:  # profiler unavailable: say so rather than fail the run
        return [f"(profiler failed: {type(ex).__name__}: {str(ex)[:120]})"]
