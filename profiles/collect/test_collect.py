"""Tests of the collector's pure-Python parts (no torch, no GPU):
python3 -m unittest discover -s profiles/collect
"""

import csv
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import collect  # noqa: E402
import compare  # noqa: E402
import grids  # noqa: E402
import schema  # noqa: E402

MODELS = os.path.join(HERE, "models")


def model(name, tp):
    return grids.load_model(os.path.join(MODELS, name, "config.json"), tp)


def gemm(m, label):
    return {g.label: (g.n, g.k) for g in m.gemms}[label]


class ImportWithoutTorch(unittest.TestCase):
    def test_pure_modules_do_not_import_torch(self):
        # collect, grids, schema and compare were imported above; none may pull torch in.
        if "torch" in sys.modules and getattr(sys.modules["torch"], "__file__", None):
            self.skipTest("torch is installed here and imported by another test")
        self.assertNotIn("torch", sys.modules)


class ModelShapesTest(unittest.TestCase):
    def test_llama2_7b_tp2(self):
        m = model("llama-2-7b-hf", 2)
        self.assertEqual(m.name, "llama-2-7b-hf")
        self.assertEqual(gemm(m, "qkv"), (6144, 4096))  # 3 * 4096 / 2
        self.assertEqual(gemm(m, "o"), (4096, 2048))
        self.assertEqual(gemm(m, "gate_up"), (11008, 4096))  # 2 * 11008 / 2
        self.assertEqual(gemm(m, "down"), (4096, 5504))
        self.assertEqual(gemm(m, "lm_head"), (16000, 4096))
        self.assertEqual(m.attention, (16, 16, 128))
        self.assertEqual(m.rotary_width, 32 * 128)
        self.assertEqual(m.act_width, 5504)
        self.assertFalse(m.is_moe)

    def test_llama2_7b_tp1(self):
        m = model("llama-2-7b-hf", 1)
        self.assertEqual([(g.label, g.n, g.k) for g in m.gemms], [
            ("qkv", 12288, 4096), ("o", 4096, 4096), ("gate_up", 22016, 4096),
            ("down", 4096, 11008), ("lm_head", 32000, 4096)])

    def test_llama31_8b_gqa(self):
        m1, m2 = model("llama-3.1-8b-instruct", 1), model("llama-3.1-8b-instruct", 2)
        self.assertEqual(gemm(m1, "qkv"), (6144, 4096))  # (32 + 2*8) * 128
        self.assertEqual(gemm(m2, "qkv"), (3072, 4096))  # (16 + 2*4) * 128
        self.assertEqual(gemm(m1, "gate_up"), (28672, 4096))
        self.assertEqual(gemm(m2, "down"), (4096, 7168))
        self.assertEqual(gemm(m1, "lm_head"), (128256, 4096))
        self.assertEqual(gemm(m2, "lm_head"), (64128, 4096))
        self.assertEqual(m1.attention, (32, 8, 128))
        self.assertEqual(m2.attention, (16, 4, 128))
        self.assertEqual(m2.rotary_width, (16 + 4) * 128)

    def test_mixtral_moe(self):
        m = model("mixtral-8x7b-v0.1", 2)
        self.assertTrue(m.is_moe)
        self.assertEqual([g.label for g in m.gemms], ["qkv", "o", "router", "lm_head"])
        self.assertEqual(gemm(m, "router"), (8, 4096))  # replicated
        self.assertEqual(gemm(m, "qkv"), (3072, 4096))
        self.assertEqual(m.moe, grids.MoESpec(4096, 14336, 8, 2, 2))
        self.assertEqual(m.moe.inter_per_rank, 7168)

    def test_kv_heads_replicated_when_tp_exceeds_them(self):
        cfg = {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
               "intermediate_size": 14336, "vocab_size": 32000}
        m = grids.model_shapes(cfg, 16)
        self.assertEqual(m.attention, (2, 1, 128))
        self.assertEqual(gemm(m, "qkv"), ((2 + 2) * 128, 4096))

    def test_bad_tp(self):
        cfg = {"hidden_size": 4096, "num_attention_heads": 32, "intermediate_size": 11008,
               "vocab_size": 32000}
        with self.assertRaises(ValueError):
            grids.model_shapes(cfg, 3)
        with self.assertRaises(ValueError):
            grids.model_shapes(cfg, 0)


class GridsTest(unittest.TestCase):
    def test_m_grid(self):
        self.assertEqual(grids.M_GRID, [1 << i for i in range(14)])

    def test_gemm_points_dedupe_and_aic(self):
        ms = [model("llama-2-7b-hf", 2), model("mixtral-8x7b-v0.1", 1)]
        pts = dict(grids.gemm_points(ms))
        for nk in [(4096, 4096), (4096, 8192), (8192, 4096), (8192, 8192)]:
            self.assertIn(nk, pts)
        self.assertIn("aic_grid", pts[(4096, 4096)])
        self.assertIn("mixtral-8x7b-v0.1/tp1/o", pts[(4096, 4096)])
        self.assertIn("llama-2-7b-hf/tp2/qkv", pts[(6144, 4096)])
        self.assertIn("mixtral-8x7b-v0.1/tp1/qkv", pts[(6144, 4096)])
        self.assertEqual(len(pts), len(set(pts)))
        self.assertNotIn((8192, 4096), dict(grids.gemm_points(ms, include_aic=False)))

    def test_attention_points(self):
        dec = grids.decode_points()
        self.assertIn((256, 4096), dec)
        self.assertNotIn((256, 8192), dec)  # 2 Mi tokens > cap
        self.assertIn((1, 16384), dec)
        self.assertTrue(all(b * c <= grids.DECODE_MAX_TOKENS for b, c in dec))
        pre = grids.prefill_points()
        self.assertIn((4, 16384, 0), pre)
        self.assertNotIn((8, 16384, 0), pre)
        self.assertEqual(len(pre), 9 + 9 + 8 + 7 + 6 + 5 + 4 + 3)
        pfx = grids.prefix_points()
        self.assertTrue(all(p > 0 for _, _, p in pfx))
        self.assertIn((16, 2048, 2048), pfx)
        self.assertNotIn((16, 2048, 8192), pfx)

    def test_attention_configs_unique(self):
        ms = [model(n, tp) for n in ("llama-3.1-8b-instruct", "llama-2-7b-hf", "mixtral-8x7b-v0.1")
              for tp in (1, 2)]
        self.assertEqual(grids.attention_configs(ms),
                         [(16, 4, 128), (16, 16, 128), (32, 8, 128), (32, 32, 128)])
        self.assertEqual(grids.moe_specs(ms), [grids.MoESpec(4096, 14336, 8, 2, 1),
                                               grids.MoESpec(4096, 14336, 8, 2, 2)])

    def test_ops_points(self):
        pts = grids.ops_points([model("llama-3.1-8b-instruct", 2)])
        d = {(op, w): e for op, w, e in pts}
        self.assertIn(("rmsnorm", 4096), d)
        self.assertEqual(d[("rotary", 2560)], (16, 4, 128))
        self.assertIn(("silu_and_mul", 7168), d)
        self.assertEqual(d[("embedding", 4096)], 64128)
        self.assertIn(("sampler", 128256), d)
        self.assertIn(("sampler_greedy", 128256), d)
        both = grids.ops_points([model("llama-2-7b-hf", 2), model("llama-3.1-8b-instruct", 1)])
        self.assertEqual([e for op, w, e in both if op == "embedding"], [128256])  # one row per key
        self.assertEqual(len({(op, w) for op, w, _ in both}), len(both))

    def test_rotation_count(self):
        self.assertEqual(grids.rotation_count(1 << 30), 1)
        self.assertEqual(grids.rotation_count(grids.ROTATE_TARGET_BYTES // 8), 8)
        self.assertEqual(grids.rotation_count(10), grids.MAX_ROTATE)
        self.assertEqual(grids.rotation_count(0), grids.MAX_ROTATE)

    def test_comm_sizes(self):
        self.assertEqual(grids.COMM_SIZES[0], 256)
        self.assertEqual(grids.COMM_SIZES[-1], 536870912)
        self.assertTrue(all(s % 8 == 0 for s in grids.COMM_SIZES))


class RoutingTest(unittest.TestCase):
    def check(self, T, E, k, dist):
        counts = grids.expert_counts(T, E, k, dist, seed=T)
        self.assertEqual(sum(counts), T * k)
        self.assertTrue(all(0 <= c <= T for c in counts), counts)
        routing = grids.routing_from_counts(counts, T, k)
        self.assertEqual(len(routing), T)
        for es in routing:
            self.assertEqual(len(set(es)), k)
        toks, slots, cnt = grids.sorted_layout(routing, E)
        self.assertEqual(sorted(cnt, reverse=True), sorted(counts, reverse=True))
        self.assertEqual(len(toks), T * k)
        self.assertEqual(sorted(toks), sorted(t for t in range(T) for _ in range(k)))
        return counts

    def test_balanced(self):
        for T in (1, 2, 3, 7, 64, 16384):
            c = self.check(T, 8, 2, "balanced")
            self.assertLessEqual(max(c) - min(c), 1)
        self.assertEqual(grids.expert_counts(4, 8, 2, "balanced"), [1] * 8)

    def test_power_law(self):
        for dist in ("power_law_1.01", "power_law_1.2"):
            for T in (1, 2, 5, 16, 1000, 16384):
                self.check(T, 8, 2, dist)
        c = grids.expert_counts(16384, 8, 2, "power_law_1.2", seed=3)
        self.assertGreater(max(c), 16384 * 2 // 8)  # skewed: heaviest above balanced
        self.assertEqual(c, grids.expert_counts(16384, 8, 2, "power_law_1.2", seed=3))  # seeded

    def test_bad_distribution(self):
        with self.assertRaises(ValueError):
            grids.expert_counts(4, 8, 2, "zipf")
        with self.assertRaises(ValueError):
            grids.expert_counts(4, 2, 3, "balanced")

    def test_sorted_layout_exact(self):
        toks, slots, cnt = grids.sorted_layout([[1, 0], [0, 2]], 3)
        self.assertEqual(toks, [0, 1, 0, 1])
        self.assertEqual(slots, [1, 0, 0, 1])
        self.assertEqual(cnt, [2, 1, 1])


class SchemaTest(unittest.TestCase):
    def test_columns(self):
        self.assertEqual(schema.columns("gemm")[:6], ["gemm_dtype", "m", "n", "k", "latency", "eager_latency"])
        self.assertEqual(schema.columns("comm")[:7], ["op_name", "backend", "dtype", "num_gpus",
                                                      "message_size", "latency", "eager_latency"])
        self.assertEqual(schema.columns("ops")[:6], ["op_name", "tokens", "width", "dtype", "latency",
                                                     "eager_latency"])
        for t in ("context_attention", "generation_attention"):
            self.assertEqual(schema.columns(t)[:11], [
                "batch_size", "isl", "step", "num_heads", "num_key_value_heads", "head_dim",
                "attn_dtype", "kv_cache_dtype", "window_size", "latency", "eager_latency"])
        self.assertEqual(schema.columns("moe")[:11], [
            "moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
            "moe_tp_size", "moe_ep_size", "distribution", "latency", "eager_latency"])

    def test_quantile_and_summarize(self):
        xs = [5.0, 1.0, 3.0, 2.0, 4.0]
        self.assertEqual(schema.quantile(xs, 0.5), 3.0)
        self.assertAlmostEqual(schema.quantile(xs, 0.1), 1.4)
        self.assertAlmostEqual(schema.quantile(xs, 0.9), 4.6)
        s = schema.summarize([1.0, 2.0, 3.0], [10.0])
        self.assertEqual((s["latency"], s["eager_latency"], s["eager_p90"]), (2.0, 10.0, 10.0))
        with self.assertRaises(ValueError):
            schema.quantile([], 0.5)

    def test_write_merges_by_key_and_sorts_numerically(self):
        with tempfile.TemporaryDirectory() as d:
            row = lambda m, lat: dict(gemm_dtype="bfloat16", m=m, n=4096, k=4096, latency=lat,  # noqa: E731
                                      eager_latency=lat * 2, kernel="cublas")
            self.assertEqual(schema.write_table(d, "gemm", [row(16, 0.01), row(8, 0.009)]), 2)
            self.assertEqual(schema.write_table(d, "gemm", [row(16, 0.02), row(1024, 0.1)]), 3)
            with open(os.path.join(d, "gemm_perf.csv")) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([r["m"] for r in rows], ["8", "16", "1024"])
            self.assertEqual(rows[1]["latency"], "0.02")  # replaced
            self.assertEqual(rows[1]["eager_latency"], "0.04")
            self.assertEqual(rows[0]["p10"], "")
            with open(os.path.join(d, "gemm_perf.csv")) as f:
                self.assertEqual(f.readline().strip(),
                                 "gemm_dtype,m,n,k,latency,eager_latency,p10,p90,eager_p10,eager_p90,kernel")

    def test_missing_key_rejected(self):
        with self.assertRaises(ValueError):
            schema.merge_rows("gemm", [], [dict(gemm_dtype="bfloat16", m=1, n=2, latency=1.0)])

    def test_format_value(self):
        self.assertEqual(schema.format_value(0.0123456789), "0.0123457")
        self.assertEqual(schema.format_value(float("nan")), "")
        self.assertEqual(schema.format_value(None), "")
        self.assertEqual(schema.format_value(7), "7")


class MetaTest(unittest.TestCase):
    def test_yaml_text(self):
        text = schema.meta_text({"hardware": "h200-sxm", "gpu_name": "NVIDIA H200"},
                                [{"date": "d1", "versions": {"torch": "2.11"}, "ops": ["gemm", "moe"],
                                  "kernels": {"m=1,n=4096": ["nvjet_x"]}, "empty": {}}])
        self.assertEqual(text, "\n".join([
            'hardware: "h200-sxm"',
            'gpu_name: "NVIDIA H200"',
            "runs:",
            '  - date: "d1"',
            "    versions:",
            '      torch: "2.11"',
            "    ops:",
            '      - "gemm"',
            '      - "moe"',
            "    kernels:",
            '      "m=1,n=4096":',
            '        - "nvjet_x"',
            "    empty: {}",
        ]) + "\n")

    def test_append_runs(self):
        with tempfile.TemporaryDirectory() as d:
            schema.write_meta(d, {"hardware": "h200-sxm"}, {"date": "a", "n": 1})
            schema.write_meta(d, {"hardware": "other"}, {"date": "b", "n": 2.5})
            with open(os.path.join(d, "meta.yaml")) as f:
                text = f.read()
            self.assertEqual(text, 'hardware: "h200-sxm"\nruns:\n  - date: "a"\n    n: 1\n'
                                   '  - date: "b"\n    n: 2.5\n')

    def test_merge_dirs(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b, \
                tempfile.TemporaryDirectory() as into:
            base = dict(op_name="all_reduce", backend="nccl", dtype="bfloat16", message_size=256,
                        latency=0.01, eager_latency=0.05)
            schema.write_table(a, "comm", [dict(base, num_gpus=2)])
            schema.write_table(b, "comm", [dict(base, num_gpus=4)])
            schema.write_meta(a, {"hardware": "h200-sxm"}, {"date": "a"})
            schema.write_meta(b, {"hardware": "h200-sxm"}, {"date": "b"})
            counts = schema.merge_dirs(into, [a, b])
            self.assertEqual(counts, {"comm": 2})
            rows = schema.read_table(os.path.join(into, "comm_perf.csv"))
            self.assertEqual([r["num_gpus"] for r in rows], ["2", "4"])
            with open(os.path.join(into, "meta.yaml")) as f:
                self.assertEqual(f.read().count("  - date:"), 2)


class CliTest(unittest.TestCase):
    def test_hardware_name(self):
        self.assertEqual(collect.hardware_name("NVIDIA H200"), "h200-sxm")
        self.assertEqual(collect.hardware_name("NVIDIA H100 80GB HBM3"), "h100-sxm")
        self.assertEqual(collect.hardware_name("NVIDIA A100-SXM4-80GB"), "nvidia-a100-sxm4-80gb")

    def test_models_from_args(self):
        args = collect.build_parser().parse_args([
            "--model", os.path.join(MODELS, "llama-2-7b-hf", "config.json"),
            "--model", os.path.join(MODELS, "mixtral-8x7b-v0.1", "config.json"),
            "--tp", "1", "--tp", "2", "--out", "x"])
        ms = collect.models_from_args(args)
        self.assertEqual([(m.name, m.tp) for m in ms], [("llama-2-7b-hf", 1), ("llama-2-7b-hf", 2),
                                                        ("mixtral-8x7b-v0.1", 1), ("mixtral-8x7b-v0.1", 2)])

    def test_parse_list_rejects_unknown(self):
        self.assertEqual(collect.parse_list("gemm, moe"), ["gemm", "moe"])
        with self.assertRaises(SystemExit):
            collect.parse_list("gemm,bogus", collect.ALL_OPS)

    def test_merge_cli(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as into:
            schema.write_table(a, "ops", [dict(op_name="rmsnorm", tokens=1, width=4096, dtype="bfloat16",
                                               latency=0.003)])
            self.assertEqual(collect.main(["--merge", a, "--out", into]), 0)
            self.assertEqual(len(schema.read_table(os.path.join(into, "ops_perf.csv"))), 1)


class CompareTest(unittest.TestCase):
    def test_ratio_stats(self):
        ours = [dict(gemm_dtype="bfloat16", m="1", n="4096", k="4096", latency="0.011"),
                dict(gemm_dtype="bfloat16", m="2", n="4096", k="4096", latency="0.02")]
        ref = [dict(gemm_dtype="bfloat16", m="1", n="4096", k="4096", latency="0.01"),
               dict(gemm_dtype="bfloat16", m="4", n="4096", k="4096", latency="0.02")]
        pairs = compare.match(ours, ref, ["gemm_dtype", "m", "n", "k"])
        self.assertEqual(len(pairs), 1)
        st = compare.ratio_stats(pairs)
        self.assertEqual(st["n"], 1)
        self.assertAlmostEqual(st["median"], 1.1)


if __name__ == "__main__":
    unittest.main()
