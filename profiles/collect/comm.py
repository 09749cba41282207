"""NCCL collectives by message size through torch.distributed, one process per
GPU started with torch.multiprocessing.spawn (needs torch + >= 2 GPUs).

message_size is in ELEMENTS of bf16 of the full tensor: the all-reduce buffer,
the all-gather output, the reduce-scatter input, the all-to-all send buffer
(the nccl-tests convention the imported nccl_perf table uses).
kernel time: n back-to-back collectives between two CUDA events after a barrier
(as nccl-tests times them), median of repeats; eager: barrier, one collective +
synchronize on the host clock. Each value is the maximum over ranks.
"""

import os
import socket
import time

from schema import summarize

# NVLink multicast (NVLS) stays off: a program using it can take the host's shared GPUs down.
SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def set_safe_env():
    os.environ.update(SAFE_ENV)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank, world, port, sizes, ops, reps, budget_s, result_path):
    set_safe_env()
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, device_id=dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(100 + rank)
    deadline = time.monotonic() + budget_s
    rows, skipped = [], []

    def sync_all():
        torch.cuda.synchronize()
        dist.barrier(device_ids=[rank])
        torch.cuda.synchronize()

    for op in ops:
        for size in sizes:
            stop = torch.tensor([1.0 if time.monotonic() > deadline else 0.0], device=dev)
            dist.all_reduce(stop, op=dist.ReduceOp.MAX)
            if stop.item() > 0:
                skipped.append(f"{op} {size}: time budget spent")
                continue
            x = torch.randn(size, device=dev, dtype=torch.bfloat16, generator=gen)
            part = size // world
            if op == "all_reduce":
                fn = lambda: dist.all_reduce(x)  # noqa: E731
            elif op == "all_gather":
                inp = x[:part].clone()
                fn = lambda: dist.all_gather_into_tensor(x, inp)  # noqa: E731
            elif op == "reduce_scatter":
                out = torch.empty(part, device=dev, dtype=torch.bfloat16)
                fn = lambda: dist.reduce_scatter_tensor(out, x)  # noqa: E731
            elif op == "alltoall":
                out = torch.empty_like(x)
                fn = lambda: dist.all_to_all_single(out, x)  # noqa: E731
            else:
                raise ValueError(op)
            for _ in range(3):
                fn()
            sync_all()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(3):
                fn()
            e.record()
            e.synchronize()
            est = torch.tensor([s.elapsed_time(e) / 3], device=dev)
            dist.all_reduce(est, op=dist.ReduceOp.MAX)
            n = int(min(200, max(5, 3.0 / max(est.item(), 1e-3))))
            kern = []
            for _ in range(reps):
                sync_all()
                s.record()
                for _ in range(n):
                    fn()
                e.record()
                e.synchronize()
                kern.append(s.elapsed_time(e) / n)
            eager = []
            for _ in range(reps):
                sync_all()
                t0 = time.perf_counter()
                fn()
                torch.cuda.synchronize()
                eager.append((time.perf_counter() - t0) * 1e3)
            stats = summarize(kern, eager)
            names = sorted(stats)
            vals = torch.tensor([stats[k] for k in names], device=dev, dtype=torch.float64)
            dist.all_reduce(vals, op=dist.ReduceOp.MAX)
            row = dict(op_name=op, backend="nccl", dtype="bfloat16", num_gpus=world, message_size=size)
            row.update({k: v for k, v in zip(names, vals.tolist())})
            rows.append(row)
            del x, fn
        if rank == 0:
            print(f"  comm {op} x{world}: {len([r for r in rows if r['op_name'] == op])} sizes", flush=True)
    if rank == 0:
        import json

        info = {"rows": rows, "skipped": skipped, "nccl_version": ".".join(map(str, torch.cuda.nccl.version()))}
        with open(result_path, "w") as f:
            json.dump(info, f)
    dist.barrier(device_ids=[rank])
    dist.destroy_process_group()


def measure_comm(num_gpus, sizes, ops, reps=10, budget_s=240, tmp_dir="/tmp"):
    """Spawns num_gpus workers; returns (rows, skipped, nccl_version)."""
    set_safe_env()
    import json

    import torch.multiprocessing as mp

    path = os.path.join(tmp_dir, f"comm_result_{os.getpid()}_{num_gpus}.json")
    mp.spawn(_worker, args=(num_gpus, _free_port(), sizes, ops, reps, budget_s, path),
             nprocs=num_gpus, join=True)
    with open(path) as f:
        info = json.load(f)
    os.remove(path)
    return info["rows"], info["skipped"], info["nccl_version"]
