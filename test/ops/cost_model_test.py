#!/usr/bin/env python3
"""scripts/gpu/cost_model.py (the GPU cost model of a fast cycle, docs/gpu.md "Cost model"):
its byte counts against sizes computed here, its kernel list against the __global__ functions
of brain/ops/cuda, and its JSON. Standard library only; runs in well under a second."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "gpu", "cost_model.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import cost_model  # noqa: E402


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)


def row(rows, name):
    found = [r for r in rows if r["kernel"] == name]
    if not found:
        raise AssertionError(f"no row {name}")
    return found[0]


class CostModelTest(unittest.TestCase):
    def test_the_field_copy_moves_two_fields_of_float32(self):
        # Without a pulling slot the pull kernel is step 7.10's copy F = next: it reads next,
        # the slot table (B x A x 2 float32) and the shadow's steps (B x A x 64 float32) and
        # writes F.
        for R in (16, 32, 48):
            for B in (1, 7, 256):
                field_bytes = B * 64 * R * R * R * 4  # [B,64,R,R,R] float32
                table_bytes = B * 8 * 2 * 4 + B * 8 * 64 * 4
                rows = cost_model.kernels(B, R)
                self.assertEqual(row(rows, "pull_kernel")["bytes"], 2 * field_bytes + table_bytes, (R, B))
                # the kernels that read the whole field once and write little
                self.assertEqual(row(rows, "channel_means_kernel")["read_bytes"], field_bytes)
                self.assertEqual(row(rows, "diffuse_kernel")["written_bytes"], field_bytes)

    def test_field_sized_traffic_grows_linearly_with_the_batch(self):
        one, many = cost_model.kernels(1, 32), cost_model.kernels(16, 32)
        for name in ("x2_kernel", "x3_kernel", "x4_coupling_kernel", "imprint_maps_kernel"):
            self.assertEqual(row(many, name)["bytes"], 16 * row(one, name)["bytes"], name)

    def test_every_cuda_kernel_is_modelled_or_excused(self):
        result = run("--check-sources")
        self.assertEqual(result.returncode, 0, result.stderr)
        names = cost_model.global_kernels(os.path.join(ROOT, "brain", "ops", "cuda"))
        self.assertIn("ef_stats_partial_kernel", names)  # the scan itself finds kernels
        self.assertGreaterEqual(len(names), 20)

    def test_a_kernel_missing_from_the_model_fails_the_check(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "extra_kernel.cu"), "w") as f:
                f.write("__global__ void brand_new_kernel(float* x) { x[0] = 1.f; }\n"
                        "__global__ void __launch_bounds__(256) x2_kernel(float* x) {}\n")
            result = run("--check-sources", "--cuda-dir", d)
            self.assertEqual(result.returncode, 1)
            self.assertIn("brand_new_kernel", result.stderr)
            self.assertNotIn("x2_kernel", result.stderr)

    def test_a_rewarded_model_shows_no_plain_cycle_measurement_beside_its_attractor_rows(self):
        # The ncu figures are of a cycle without reward (the pull kernel was the copy F = next):
        # beside a model with pulling slots they would compare a copy with a pull.
        plain = cost_model.model(32, [1], 0.0, 0, 24, 4, 8)["batches"][0]["kernels"]
        rewarded = cost_model.model(32, [1], 0.86, 8, 24, 4, 8)["batches"][0]["kernels"]
        self.assertIsNotNone(row(plain, "pull_kernel")["measured_ncu_h200_us"])
        for name in ("record_kernel", "shadow_kernel", "sums_kernel", "pull_kernel"):
            self.assertIsNone(row(rewarded, name)["measured_ncu_h200_us"], name)
        self.assertEqual(row(rewarded, "x3_kernel")["measured_ncu_h200_us"],
                         row(plain, "x3_kernel")["measured_ncu_h200_us"])
        # a pulling slot's 16-bit shadow is read twice: by the sums, then by the move
        slot = 64 * 32 ** 3
        self.assertEqual(row(rewarded, "pull_kernel")["read_bytes"] - row(plain, "pull_kernel")["read_bytes"],
                         8 * slot * 2)
        self.assertEqual(row(rewarded, "sums_kernel")["read_bytes"] - row(plain, "sums_kernel")["read_bytes"],
                         slot * 4 + 8 * slot * 2)

    def test_the_json_sums_its_kernels_and_no_floor_beats_the_bandwidth(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cost.json")
            result = run("--R", "24", "--B", "1", "5", "--json", path)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("| **cycle**", result.stdout)
            with open(path) as f:
                model = json.load(f)
        self.assertEqual([b["cycle"]["B"] for b in model["batches"]], [1, 5])
        for batch in model["batches"]:
            rows, cycle = batch["kernels"], batch["cycle"]
            self.assertEqual(cycle["bytes"], sum(r["bytes"] for r in rows))
            names = [r["kernel"] for r in rows]
            self.assertIn("ef_stats_partial_kernel", names)
            for r in rows:
                for gpu, bandwidth in (("H100", 3.35e12), ("H200", 4.8e12)):
                    self.assertGreaterEqual(r["floor_us"][gpu]["floor"] * 1e-6 * bandwidth,
                                            r["bytes"] * (1 - 1e-9), (r["kernel"], gpu))
            self.assertEqual(cycle["copy_bytes"], 2 * cycle["B"] * 64 * 24 ** 3 * 4)


if __name__ == "__main__":
    unittest.main()
