"""Self-test of check_summary.py with hand-written summaries; needs no GPU:

    python3 tests/gpu/test_check_summary.py
"""

import copy
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_summary  # noqa: E402

GEMM_BIAS = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"
GEMM_UP = "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN"
GEMM_DOWN = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
GELU = ("_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKernelImplE"
        "RNS_18TensorIteratorBaseENS0_8GeluTypeEEUlvE_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_"
        "St5arrayIPcLm2EEEEviT0_T1_")
MUL = ("_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctorIN3c108BFloat16ES4_S4_"
       "NS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_")
TRITON = "triton_poi_fused_gelu_mul_0"
FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_"


def counts(launches, kernels, graph=0):
    return {"launches": launches, "graph_launches": graph, "kernels": kernels,
            "gpu_ns": 1000 * kernels, "launch_api_ns": 100 * launches}


def rng(path, instances, excl, incl, kernels):
    """excl/incl: (launches, kernels); kernels: {name: count} (exclusive)."""
    return {"path": path, "name": path.rsplit("/", 1)[-1], "depth": path.count("/") + 1,
            "instances": instances, "cpu_ns": 5000 * instances,
            "exclusive": counts(*excl), "inclusive": counts(*incl),
            "kernels_per_instance": incl[1] / instances if instances else None,
            "kernels": [{"name": n, "short": n[:40], "count": c, "gpu_ns": 1000 * c}
                        for n, c in kernels.items()]}


def summary(ranges, launches=None, kernels=None, **totals_over):
    t = {"launches": launches if launches is not None else 1000,
         "graph_launches": 0, "kernels": kernels if kernels is not None else 1000,
         "unmatched_kernels": 0, "launches_without_kernel": 0, "gpu_ns": 1,
         "dropped_host_records": 0, "dropped_activity_records": 0, "activity_buffers_refused": 0,
         "late_activity_records": 0, "nvtx_pop_underflow": 0}
    t.update(totals_over)
    root = rng("(no range)", 1, (3, 3), (t["launches"], t["kernels"]), {FILL: 3})
    root["depth"] = 0
    return {"logs": [{"path": "/tmp/x.kcount", "metadata": {"pid": "1"}, "complete": True,
                      "issues": [], "totals": t, "ranges": [root] + ranges}]}


def linear_summary(steps=20, warmup=5):
    return summary([
        rng("warmup", 1, (0, 0), (warmup, warmup), {}),
        rng("warmup/step", warmup, (0, 0), (warmup, warmup), {}),
        rng("warmup/step/linear", warmup, (warmup, warmup), (warmup, warmup), {GEMM_BIAS: warmup}),
        rng("step", steps, (0, 0), (steps, steps), {}),
        rng("step/linear", steps, (steps, steps), (steps, steps), {GEMM_BIAS: steps}),
    ])


def geglu_eager_summary(steps=20):
    s = steps
    return summary([
        rng("warmup", 1, (0, 0), (25, 25), {}),
        rng("warmup/step/gate", 5, (5, 5), (5, 5), {GEMM_UP: 5}),
        rng("step", s, (0, 0), (5 * s, 5 * s), {}),
        rng("step/gate", s, (s, s), (s, s), {GEMM_UP: s}),
        rng("step/up", s, (s, s), (s, s), {GEMM_UP: s}),
        rng("step/act", s, (2 * s, 2 * s), (2 * s, 2 * s), {GELU: s, MUL: s}),
        rng("step/down", s, (s, s), (s, s), {GEMM_DOWN: s}),
    ])


def geglu_compiled_summary(steps=20):
    s = steps
    return summary([
        rng("warmup", 1, (0, 0), (900, 900), {}),
        rng("warmup/step/mlp", 5, (900, 900), (900, 900), {FILL: 412, TRITON: 215, GEMM_UP: 182,
                                                          GEMM_DOWN: 91}),
        rng("step", s, (0, 0), (4 * s, 4 * s), {}),
        rng("step/mlp", s, (4 * s, 4 * s), (4 * s, 4 * s), {GEMM_UP: 2 * s, GEMM_DOWN: s, TRITON: s}),
    ])


def find(doc, path):
    for r in doc["logs"][0]["ranges"]:
        if r["path"] == path:
            return r
    raise KeyError(path)


class CheckSummaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, obj):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            if isinstance(obj, str):
                f.write(obj)
            else:
                json.dump(obj, f)
        return path

    def check(self, *argv):
        code, line = check_summary.run([str(a) for a in argv])
        self.assertIn(code, (0, 1))
        self.assertTrue(line.startswith("PASS" if code == 0 else "FAIL"), line)
        self.assertNotIn("\n", line)
        return code, line

    def assertPass(self, *argv):
        code, line = self.check(*argv)
        self.assertEqual(code, 0, line)
        return line

    def assertFail(self, *argv, contains=None):
        code, line = self.check(*argv)
        self.assertEqual(code, 1, line)
        if contains:
            self.assertIn(contains, line)
        return line

    # ---- linear
    def test_linear_pass(self):
        p = self.write("l.json", linear_summary())
        line = self.assertPass("linear", p, "--steps", 20)
        self.assertIn("step n=20 kernels=20 launches=20", line)

    def test_linear_missing_last_step(self):
        doc = linear_summary()
        step, lin = find(doc, "step"), find(doc, "step/linear")
        step["inclusive"] = counts(20, 19)
        lin["exclusive"] = lin["inclusive"] = counts(20, 19)
        lin["kernels"][0]["count"] = 19
        doc["logs"][0]["totals"]["launches_without_kernel"] = 1
        self.assertFail("linear", self.write("l.json", doc), "--steps", 20,
                        contains="step.inclusive.kernels=19 (want 20)")

    def test_linear_no_bias_name(self):
        doc = linear_summary()
        find(doc, "step/linear")["kernels"][0]["name"] = GEMM_DOWN
        find(doc, "step/linear")["kernels"][0]["short"] = GEMM_DOWN
        self.assertFail("linear", self.write("l.json", doc), "--steps", 20, contains="bias")

    def test_linear_unmatched_and_dropped(self):
        doc = linear_summary()
        doc["logs"][0]["totals"]["unmatched_kernels"] = 2
        doc["logs"][0]["totals"]["dropped_activity_records"] = 7
        line = self.assertFail("linear", self.write("l.json", doc), "--steps", 20)
        self.assertIn("totals.unmatched_kernels=2", line)
        self.assertIn("totals.dropped_activity_records=7", line)

    def test_linear_incomplete_and_error_issue(self):
        doc = linear_summary()
        doc["logs"][0]["complete"] = False
        doc["logs"][0]["issues"] = [{"severity": "error", "offset": 10, "chunk": 2,
                                     "message": "truncated chunk"}]
        line = self.assertFail("linear", self.write("l.json", doc), "--steps", 20)
        self.assertIn("complete=False", line)
        self.assertIn("truncated chunk", line)

    def test_linear_warning_issue_is_not_failure(self):
        doc = linear_summary()
        doc["logs"][0]["issues"] = [{"severity": "warning", "offset": 1, "chunk": 0, "message": "w"}]
        self.assertIn("warnings=1", self.assertPass("linear", self.write("l.json", doc), "--steps", 20))

    def test_linear_missing_range_and_bad_files(self):
        doc = linear_summary()
        doc["logs"][0]["ranges"] = [r for r in doc["logs"][0]["ranges"] if r["path"] != "step/linear"]
        self.assertFail("linear", self.write("l.json", doc), "--steps", 20,
                        contains="no range 'step/linear'")
        self.assertFail("linear", os.path.join(self.tmp.name, "absent.json"), "--steps", 20,
                        contains="cannot read")
        self.assertFail("linear", self.write("bad.json", "{not json"), "--steps", 20,
                        contains="cannot read")
        self.assertFail("linear", self.write("empty.json", {"logs": []}), "--steps", 20,
                        contains="no logs")
        doc = linear_summary()
        del doc["logs"][0]["totals"]["dropped_host_records"]
        self.assertFail("linear", self.write("l.json", doc), "--steps", 20,
                        contains="missing totals.dropped_host_records")

    def test_kernel_list_inconsistent(self):
        doc = linear_summary()
        find(doc, "step")["kernels"] = [{"name": FILL, "short": "fill", "count": 1, "gpu_ns": 1}]
        self.assertFail("linear", self.write("l.json", doc), "--steps", 20,
                        contains="sum of step-subtree kernel lists=21 (want 20)")

    # ---- geglu eager
    def test_geglu_eager_pass(self):
        line = self.assertPass("geglu-eager", self.write("g.json", geglu_eager_summary()), "--steps", 20)
        self.assertIn("step n=20 kernels=100 launches=100", line)

    def test_geglu_eager_act_one_name(self):
        doc = geglu_eager_summary()
        find(doc, "step/act")["kernels"] = [{"name": GELU, "short": "gelu", "count": 40, "gpu_ns": 1}]
        self.assertFail("geglu-eager", self.write("g.json", doc), "--steps", 20,
                        contains="step/act distinct kernel names=1 (want 2)")

    def test_geglu_eager_gate_not_gemm(self):
        doc = geglu_eager_summary()
        find(doc, "step/gate")["kernels"][0].update(name=MUL, short="mul")
        self.assertFail("geglu-eager", self.write("g.json", doc), "--steps", 20,
                        contains="is not a GEMM")

    def test_geglu_eager_two_names_in_down(self):
        doc = geglu_eager_summary()
        find(doc, "step/down")["kernels"] = [
            {"name": GEMM_DOWN, "short": "a", "count": 10, "gpu_ns": 1},
            {"name": GEMM_UP, "short": "b", "count": 10, "gpu_ns": 1}]
        self.assertFail("geglu-eager", self.write("g.json", doc), "--steps", 20,
                        contains="step/down: 2 distinct kernel names")

    def test_geglu_eager_launches_differ(self):
        doc = geglu_eager_summary()
        find(doc, "step")["inclusive"] = counts(99, 100)
        self.assertFail("geglu-eager", self.write("g.json", doc), "--steps", 20,
                        contains="step.inclusive.launches=99 (want 100)")

    # ---- geglu compiled
    def test_geglu_compiled_pass(self):
        e = self.write("e.json", geglu_eager_summary())
        c = self.write("c.json", geglu_compiled_summary())
        self.assertPass("geglu-compiled", c, "--eager", e, "--steps", 20)

    def test_geglu_compiled_other_steps_in_eager(self):
        e = self.write("e.json", geglu_eager_summary(steps=10))
        c = self.write("c.json", geglu_compiled_summary(steps=20))
        self.assertPass("geglu-compiled", c, "--eager", e, "--steps", 20)

    def test_geglu_compiled_different_gemm(self):
        doc = geglu_compiled_summary()
        other = GEMM_DOWN.replace("256x128", "128x256")
        find(doc, "step/mlp")["kernels"][1].update(name=other, short=other)
        e = self.write("e.json", geglu_eager_summary())
        line = self.assertFail("geglu-compiled", self.write("c.json", doc), "--eager", e, "--steps", 20)
        self.assertIn("GEMM names differ from eager", line)
        self.assertIn("neither eager GEMMs nor triton_", line)

    def test_geglu_compiled_two_triton(self):
        doc = geglu_compiled_summary()
        mlp = find(doc, "step/mlp")
        mlp["kernels"][2]["count"] = 10
        mlp["kernels"].append({"name": "triton_poi_fused_gelu_1", "short": "t", "count": 10,
                               "gpu_ns": 1})
        e = self.write("e.json", geglu_eager_summary())
        self.assertFail("geglu-compiled", self.write("c.json", doc), "--eager", e, "--steps", 20,
                        contains="distinct triton_ kernel names=2 (want 1)")

    def test_geglu_compiled_unmatched(self):
        doc = geglu_compiled_summary()
        doc["logs"][0]["totals"]["unmatched_kernels"] = 1
        e = self.write("e.json", geglu_eager_summary())
        self.assertFail("geglu-compiled", self.write("c.json", doc), "--eager", e, "--steps", 20,
                        contains="totals.unmatched_kernels=1")

    def test_geglu_compiled_autotune_leaked_into_steps(self):
        doc = geglu_compiled_summary()
        find(doc, "step")["inclusive"] = counts(83, 83)
        find(doc, "step")["kernels"] = [{"name": FILL, "short": "fill", "count": 3, "gpu_ns": 1}]
        e = self.write("e.json", geglu_eager_summary())
        line = self.assertFail("geglu-compiled", self.write("c.json", doc), "--eager", e,
                               "--steps", 20)
        self.assertIn("step.inclusive.kernels=83 (want 80)", line)
        self.assertIn("neither eager GEMMs nor triton_", line)

    # ---- last step
    def test_last_step(self):
        p = self.write("d.json", geglu_eager_summary(steps=1))
        self.assertPass("last-step", p, "--steps", 1, "--per-step", 5)
        doc = geglu_eager_summary(steps=1)
        find(doc, "step")["inclusive"] = counts(5, 3)
        doc["logs"][0]["totals"]["launches_without_kernel"] = 2
        line = self.assertFail("last-step", self.write("d2.json", doc), "--steps", 1, "--per-step", 5)
        self.assertIn("step.inclusive.kernels=3 (want 5)", line)
        self.assertIn("totals.launches_without_kernel=2 (want 0)", line)

    # ---- same subtree
    def test_same_subtree(self):
        a = self.write("a.json", geglu_eager_summary())
        b_doc = geglu_eager_summary()
        for r in b_doc["logs"][0]["ranges"]:  # timings and warm-up may differ
            r["cpu_ns"] += 7
            r["inclusive"]["gpu_ns"] += 3
        find(b_doc, "warmup")["inclusive"] = counts(30, 30)
        self.assertPass("same-subtree", a, self.write("b.json", b_doc))

        b_doc = geglu_eager_summary()
        find(b_doc, "step/act")["exclusive"] = counts(40, 39)
        line = self.assertFail("same-subtree", a, self.write("b.json", b_doc))
        self.assertIn("step/act exclusive.kernels: 40 vs 39", line)

        b_doc = geglu_eager_summary()
        b_doc["logs"][0]["ranges"].append(rng("step/extra", 1, (1, 1), (1, 1), {FILL: 1}))
        self.assertFail("same-subtree", a, self.write("b.json", b_doc),
                        contains="range 'step/extra' only in second")

        b_doc = geglu_eager_summary()
        find(b_doc, "step/down")["kernels"][0]["name"] = "other"
        self.assertFail("same-subtree", a, self.write("b.json", b_doc),
                        contains="step/down kernels: names vs other names")

    # ---- torch.profiler agreement
    def test_torch_agree(self):
        s = self.write("s.json", geglu_eager_summary())
        prof = {"steps": 20, "kernels": 100, "kernels_per_step": 5.0, "kernel_names": {},
                "kernels_chrome_trace": 100}
        self.assertPass("torch-agree", self.write("p.json", prof), s, "--expect", 5)
        self.assertFail("torch-agree", self.write("p.json", prof), s, "--expect", 4,
                        contains="want 4")
        prof.update(kernels=120, kernels_per_step=6.0)
        self.assertFail("torch-agree", self.write("p.json", prof), s,
                        contains="kcount 5 kernels/step vs torch.profiler 6")
        self.assertFail("torch-agree", os.path.join(self.tmp.name, "nope.json"), s,
                        contains="cannot read")

    # ---- maps probe
    def test_maps(self):
        one = "geglu: mode=eager\n" + json.dumps(
            {"libcupti_files": ["/x/nvidia/cu13/lib/libcupti.so.13"], "exit_code": 0}) + "\n"
        self.assertPass("maps", self.write("m.txt", one))
        two = json.dumps({"libcupti_files": ["/a/libcupti.so.13", "/b/libcupti.so.13"]})
        self.assertFail("maps", self.write("m.txt", two), contains="distinct libcupti files=2")
        self.assertFail("maps", self.write("m.txt", "no json here\n"), contains="no libcupti_files")
        bad_exit = json.dumps({"libcupti_files": ["/a/libcupti.so.13"], "exit_code": 3})
        self.assertFail("maps", self.write("m.txt", bad_exit), contains="exit code 3")


class MapsProbeTest(unittest.TestCase):
    def test_parse_maps(self):
        import maps_probe
        with tempfile.NamedTemporaryFile("w", suffix=".maps", delete=False) as f:
            f.write("7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/libc.so.6\n"
                    "7f01-7f02 r--p 00000000 08:01 2 /sp/nvidia/cu13/lib/libcupti.so.13\n"
                    "7f02-7f03 r-xp 00001000 08:01 2 /sp/nvidia/cu13/lib/libcupti.so.13\n"
                    "7f03-7f04 rw-p 00000000 00:00 0 \n"
                    "7f04-7f05 r-xp 00000000 08:01 3 /opt/my libcupti.so.12 (deleted)\n"
                    "7f05-7f06 rw-p 00000000 00:00 0 [heap]\n")
            path = f.name
        try:
            self.assertEqual(maps_probe.mapped_cupti_files(path),
                             ["/sp/nvidia/cu13/lib/libcupti.so.13", "/opt/my libcupti.so.12"])
        finally:
            os.unlink(path)
        self.assertEqual(maps_probe.mapped_cupti_files(), [])  # this process loads no CUPTI


if __name__ == "__main__":
    unittest.main()
