"""Python side of `fieldbrain-hrr bench`: the same bind / unbind / cleanup operations written
the natural PyTorch way (rfft/irfft, matmul + topk), timed like the C++ side (warm-up, then the
median of repeated calls until a time budget is spent).

usage: bench.py --dims 512,1024,4096 --batches 1,100,10000 --items 1000 --threads N [--quick]
                [--devices cpu|cuda|cpu,cuda,cuda]  (one device, or one per batch size)
On CUDA each call is followed by torch.cuda.synchronize(), as on the C++ side, so a time is
the work's, not its launch's. Prints one JSON object {"rows": [{"op", "D", "batch", "ms"}, ...]} on stdout; progress on stderr.
"""
import argparse
import json
import sys
import time

import torch

QUICK_ROWS = 1000


def bind(a, b):
    d = a.shape[-1]
    return torch.fft.irfft(torch.fft.rfft(a) * torch.fft.rfft(b), n=d)


def unbind(c, b):
    d = c.shape[-1]
    return torch.fft.irfft(torch.fft.rfft(c) * torch.fft.rfft(b).conj(), n=d)


class Cleanup:
    def __init__(self, keys, threshold):
        self.keys = keys
        self.key_norms = keys.norm(dim=-1)
        self.threshold = threshold
        self.tiny = torch.finfo(keys.dtype).tiny

    def __call__(self, queries):
        scores = (queries @ self.keys.T) / (
            queries.norm(dim=-1, keepdim=True) * self.key_norms).clamp_min(self.tiny)
        top, index = scores.topk(1, dim=-1)
        matched = top.squeeze(-1) >= self.threshold
        return top.squeeze(-1), torch.where(matched, index.squeeze(-1),
                                            torch.full_like(index.squeeze(-1), -1))


def synchronized(call, device):
    if device.type != "cuda":
        return call
    def run():
        call()
        torch.cuda.synchronize(device)
    return run


def median_call_ms(call, quick):
    warmup, min_calls, max_calls, budget = (1, 1, 200, 0.05) if quick else (1, 3, 1000, 0.5)
    for _ in range(warmup):
        start = time.perf_counter()
        call()
        seconds = time.perf_counter() - start
        if seconds > 4 * budget:  # same rule as hrr/call_timing.cpp
            return seconds * 1e3
    times = []
    total = 0.0
    while len(times) < max_calls and (len(times) < min_calls or total < budget):
        start = time.perf_counter()
        call()
        seconds = time.perf_counter() - start
        times.append(seconds * 1e3)
        total += seconds
    return sorted(times)[len(times) // 2]  # same definition as hrr/call_timing.cpp


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dims", default="512,1024,4096")
    parser.add_argument("--batches", default="1,100,10000")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--devices", default="cpu")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    dims = [int(x) for x in args.dims.split(",")]
    batches = [int(x) for x in args.batches.split(",")]
    devices = [torch.device(x) for x in args.devices.split(",")]
    if len(devices) == 1:
        devices = devices * len(batches)
    if len(devices) != len(batches):
        sys.exit("bench.py: --devices needs one device or one per batch size")
    gen = torch.Generator().manual_seed(1)
    rows = []
    total = len(dims) * len(batches)
    done = 0
    with torch.inference_mode():
        for d in dims:
            keys = torch.randn(args.items, d, generator=gen) / d ** 0.5
            cleanups = {}
            for batch, device in zip(batches, devices):
                if device not in cleanups:
                    cleanups[device] = Cleanup(keys.to(device), 0.1)
                cleanup = cleanups[device]
                a = (torch.randn(batch, d, generator=gen) / d ** 0.5).to(device)
                b = (torch.randn(batch, d, generator=gen) / d ** 0.5).to(device)
                c = bind(a, b)
                # Debian's torch uses the netlib reference BLAS, so one cleanup of 10,000
                # queries at D=4096 takes minutes; --quick times the first QUICK_ROWS queries
                # and scales linearly (a matmul's cost is linear in its rows), flagged in JSON.
                rows_used = min(batch, QUICK_ROWS) if args.quick else batch
                head = a[:rows_used]
                for op, call in (("bind", lambda: bind(a, b)),
                                 ("unbind", lambda: unbind(c, b)),
                                 ("cleanup", lambda: cleanup(head))):
                    row = {"op": op, "D": d, "batch": batch, "device": device.type,
                           "ms": median_call_ms(synchronized(call, device), args.quick)}
                    if op == "cleanup" and rows_used < batch:
                        row["ms"] *= batch / rows_used
                        row["extrapolated_from_rows"] = rows_used
                    rows.append(row)
                done += 1
                print("\r  python: %d/%d cases" % (done, total), end="", file=sys.stderr,
                      flush=True)
    print(file=sys.stderr)
    json.dump({"rows": rows, "threads": torch.get_num_threads(),
               "torch": torch.__version__}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
