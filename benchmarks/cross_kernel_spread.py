"""How far tiny_model's results move when only the CPU kernels change, against the shipped files.

    python benchmarks/cross_kernel_spread.py [--parts step0,slice,live,probe,warmup] [--quick]

torch picks its CPU kernels at run time: ATen by ``ATEN_CPU_CAPABILITY``
(``default``, ``avx2``, ``avx512``: as high as the CPU allows), matrix products by
MKL and oneDNN. Another CPU therefore rounds differently in the last float32 bit,
and the shipped files (``tiny_model/checkpoints/warm.pt``,
``tiny_model/results/train_seeds.json``) were built on one machine. This script
reruns each part in a fresh subprocess per kernel setting and prints how far
each lands from the shipped value and from the other settings. The tolerances
of the tests that compare with the shipped files (tests/test_tiny_model*.py,
notebook 06's live run) are set from these figures with a margin; rerun it on a
new CPU or torch version before changing them.

``SPREAD_METHODS`` (e.g. ``multi/thr_explore,course/grpo``) limits the ``methods`` part to those
runs (the report compares the runs both settings made).

Settings: every capability this CPU supports (``lscpu`` flags avx2 / avx512f), and
on top of the CPU's own one: oneDNN off (``torch.backends.mkldnn.enabled =
False``), ``MKL_CBWR=COMPATIBLE`` (MKL's reproducible code path), and 2 threads
instead of 1 (training and the probe pin one thread themselves: expect no change).

Parts (each compared with the shipped file):
  step0   the warm model's logits on all 1000 problems (max |diff|, in float32 ulps at 1)
  slice   GRPO, seed 0, the first 50 of the shipped study's 800 steps: the values
          tests/test_tiny_model_training.py compares (max relative diff per metric)
  live    NTHR, seed 0, 100 steps with evaluations every 25: notebook 06's live run
  probe   the pooled Adam probe (5 seeds x 60 groups): the three paired CIs, LLD rates
  warmup  the 310-step warm-up from scratch: max |diff| of the weights against warm.pt,
          sampled accuracy at step 310, and the mean over the checks at 250..400
  study07 every method of tiny_model/results/train_07.json (the course task, 50 steps), seed 0:
          each held-out metric at step 50 against the shipped run (max |diff|)
  multi   every method of tiny_model/results/train_multi.json (the multi-answer task, notebook
          07's study), seed 0, its steps: each held-out metric at the end against the shipped run
          (all ten seeds, and the per-method bands study.compare_study holds a rerun to:
          benchmarks/multi_study.py --bands, from its per-seed commands rerun per setting)
  methods every training method on both tasks (course, multi), seed 0, a slice of METHOD_STEPS
          steps (the shipped studies' schedules, 8 Pass@K draws): against the first setting, the
          largest relative difference of each method's continuous metrics (kl_ref,
          correct_logp_change, correct_logp, heldout_answer_logp) and how many sampled
          responses moved (heldout_accuracy, reward_mean): the band tests use per method
  live07  notebook 07's live run: thr_explore on the multi-answer task, seed 0, the shipped
          study's 40 steps (8 Pass@K draws): held-out accuracy and ln π(correct) at step 40,
          against the first setting and the shipped run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("step0", "slice", "live", "probe", "warmup", "study07", "multi", "methods", "live07")
METHOD_STEPS = 10  # the "methods" part's slice: steps per run (evaluations at 5 and 10)


def cpu_capabilities() -> list[str]:
    """The ATEN_CPU_CAPABILITY values this CPU can run, lowest first."""
    flags = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    caps = ["default"]
    if "avx2" in flags:
        caps.append("avx2")
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        caps.append("avx512")
    return caps


def settings(quick: bool) -> list[tuple[str, dict[str, str]]]:
    caps = cpu_capabilities()
    out = [(f"capability {c}", {"ATEN_CPU_CAPABILITY": c}) for c in caps]
    if not quick:
        own = {"ATEN_CPU_CAPABILITY": caps[-1]}
        out += [
            (f"{caps[-1]} + oneDNN off", {**own, "SPREAD_MKLDNN": "0"}),
            (f"{caps[-1]} + MKL_CBWR=COMPATIBLE", {**own, "MKL_CBWR": "COMPATIBLE"}),
            (f"{caps[-1]} + 2 threads", {**own, "SPREAD_THREADS": "2"}),
        ]
    return out


# ----------------------------------------------------------------------------- the worker


def work(parts: list[str], out: Path) -> None:
    """Run ``parts`` under this process's kernel settings; write results.json (+ tensors)."""
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import torch

    if os.environ.get("SPREAD_MKLDNN") == "0":
        torch.backends.mkldnn.enabled = False
    threads = int(os.environ.get("SPREAD_THREADS", "1"))

    from tiny_model import experiment, grpo, task
    from tiny_model.pooled import run_probe_seeds
    from tiny_model.seam import Functions
    from tiny_model.study import load_shipped, run_summary

    fns = Functions.from_solutions()
    res: dict[str, object] = {"capability": torch.backends.cpu.get_cpu_capability()}
    shipped = load_shipped()
    study_keys = ("lr", "lr_warmup", "lr_schedule", "prompts_per_step")
    settings_ = {f: getattr(shipped.config, f) for f in study_keys}
    t0 = time.perf_counter()
    with experiment.deterministic(threads=threads):
        if "step0" in parts:
            problems = task.all_problems()
            target = task.correct_responses(problems).unsqueeze(1)
            with torch.no_grad():
                logits, _ = grpo.response_forward(experiment.load_warm(), problems, target)
            torch.save(logits, out / "step0.pt")
        if "slice" in parts:
            k = shipped.config.eval_every
            r = experiment.train(
                fns, "grpo", steps=shipped.config.steps, seed=0, stop_after=k, eval_every=k,
                **settings_,
            )  # fmt: skip
            res["slice"] = run_summary(r)
        if "live" in parts:
            r = experiment.train(
                fns, "nthr", steps=shipped.config.steps, seed=0, stop_after=100, eval_every=25,
                **settings_,
            )  # fmt: skip
            h = r.history
            res["live"] = {
                k: h[k] for k in ("eval_step", "heldout_accuracy", "heldout_answer_logp")
            }
        if "probe" in parts:
            p = run_probe_seeds(experiment.load_warm(), fns, range(5), optimizer="adam")
            res["probe"] = {"paired": p.paired, "summary": p.summary()}
            s = run_probe_seeds(
                experiment.load_warm(), fns, range(5), optimizer="sgd", methods=("grpo", "pos_only")
            )
            # notebook 05's "the negative gradient hurt on every group" (Δ GRPO − Δ positive-only)
            res["gaps"] = {
                rule: (r.changes["grpo"] - r.changes["pos_only"]).tolist()
                for rule, r in (("adam", p), ("sgd", s))
            }
            res["sgd_paired"] = s.paired
        if "warmup" in parts:
            cfg = experiment.WarmupConfig(steps=400, target_accuracy=2.0, check_every=10)
            # checks every 10 steps sample with their own generator: the path is the recipe's
            model, hist = experiment.warmup(cfg)
            steps = [int(s) for s in hist["check_step"]]
            acc = dict(zip(steps, hist["check_accuracy"]))
            res["warmup_curve"] = acc
            res["warmup_window_mean"] = float(np.mean([a for s, a in acc.items() if s >= 250]))
            m310, _ = experiment.warmup(experiment.WarmupConfig())
            torch.save(m310.state_dict(), out / "warm310.pt")
            res["warmup_sampled_accuracy"] = experiment.sampled_accuracy(m310)
            res["warmup_greedy_accuracy"] = experiment.greedy_accuracy(m310)
            res["warmup_first_step_damage"] = experiment.first_step_damage(m310, lr=3e-4)
            old = experiment.WarmupConfig(steps=225, lr=5e-3, schedule="cosine")
            m_old, _ = experiment.warmup(old)  # the first recipe, which the damage check catches
            res["cosine_first_step_damage"] = experiment.first_step_damage(m_old, lr=3e-4)
        for part, path in (("study07", "SHIPPED_07"), ("multi", "SHIPPED_MULTI")):
            if part not in parts:
                continue
            import tiny_model.study as study_mod
            from tiny_model.training import TrainConfig, train

            st = load_shipped(getattr(study_mod, path))
            warm = experiment.WarmupConfig() if part == "study07" else _multi_warm()
            res[part] = {}
            for m in st.methods:
                cfg = TrainConfig.from_dict(
                    {**st.to_dict()["config"], "method": m, "seed": st.seeds[0]}
                )
                r = train(fns, experiment.load_warm("cpu", warm).train(), cfg)
                res[part][m] = {k: v for k, v in r.history.items() if k.startswith("heldout_")}
                res[part][m]["eval_step"] = r.history["eval_step"]
        if "methods" in parts:
            from tiny_model.grpo import ALL_METHODS
            from tiny_model.training import TrainConfig, train
            from tiny_model.warm import MULTI_WARMUP

            res["methods"] = {}
            for name, warm, base in (
                ("course", experiment.WarmupConfig(), shipped.config),
                ("multi", MULTI_WARMUP, TrainConfig(task=MULTI_WARMUP.task, steps=150)),
            ):
                only = os.environ.get("SPREAD_METHODS")  # e.g. "multi/thr_explore,course/grpo"
                for m in ALL_METHODS:
                    if only and f"{name}/{m}" not in only.split(","):
                        continue
                    cfg = TrainConfig.from_dict(
                        {
                            **base.to_dict(),
                            "method": m,
                            "seed": 0,
                            "stop_after": METHOD_STEPS,
                            "eval_every": METHOD_STEPS // 2,
                            "pass_samples": 8,
                            "thr_dominance": "thr",
                        }
                    )
                    r = train(fns, experiment.load_warm("cpu", warm).train(), cfg)
                    res["methods"][f"{name}/{m}"] = run_summary(r)
        if "live07" in parts:
            from tiny_model.study import SHIPPED_MULTI
            from tiny_model.training import TrainConfig, train
            from tiny_model.warm import MULTI_WARMUP

            if SHIPPED_MULTI.is_file():
                base = load_shipped(SHIPPED_MULTI).config.to_dict()
            else:  # the study's settings (benchmarks/multi_study.py), before the file exists
                base = TrainConfig(task=MULTI_WARMUP.task, steps=150, stop_after=40).to_dict()
            base["eval_every"] = base["stop_after"]
            cfg = TrainConfig.from_dict(
                {**base, "method": "thr_explore", "seed": 0, "pass_samples": 8}
            )
            cpu0 = time.process_time()
            r = train(fns, experiment.load_warm("cpu", MULTI_WARMUP).train(), cfg)
            res["live07_cpu_seconds"] = time.process_time() - cpu0
            res["live07"] = {k: v for k, v in r.history.items() if k.startswith("heldout_")}
            res["live07"]["eval_step"] = r.history["eval_step"]
    res["seconds"] = time.perf_counter() - t0
    (out / "results.json").write_text(json.dumps(res))


def _multi_warm():
    from tiny_model.warm import MULTI_WARMUP

    return MULTI_WARMUP


# ----------------------------------------------------------------------------- the parent


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--quick", action="store_true", help="capabilities only, no other knobs")
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help="also write every figure to this file")
    ap.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="print the figures of an earlier run's folder (spread-*/ under the temp dir; its "
        "first setting is the reference) instead of running again",
    )
    args = ap.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    if bad := set(parts) - set(PARTS):
        ap.error(f"unknown parts {sorted(bad)}: {', '.join(PARTS)}")
    if args.worker:
        work(parts, args.worker)
        return 0

    sys.path.insert(0, str(ROOT))
    import numpy as np
    import torch

    from tiny_model.study import load_shipped
    from tiny_model.warm import CHECKPOINT

    shipped = load_shipped()
    runs: dict[str, tuple[dict, Path]] = {}
    if args.report:
        for d in sorted(p for p in args.report.iterdir() if (p / "results.json").is_file()):
            r = json.loads((d / "results.json").read_text())
            done = {"step0": (d / "step0.pt").is_file(), "warmup": "warmup_curve" in r}
            if not all(done.get(k, k in r) for k in parts):
                continue
            runs[d.name.replace("_", " ").replace("-", "=")] = (r, d)
        if not runs:
            ap.error(f"no finished setting in {args.report} has all of {parts}")
    tmp = Path(tempfile.mkdtemp(prefix="spread-"))
    for name, env in [] if args.report else settings(args.quick):
        d = tmp / name.replace(" ", "_").replace("=", "-")
        d.mkdir()
        t0 = time.perf_counter()
        cmd = [sys.executable, __file__, "--worker", str(d), "--parts", ",".join(parts)]
        proc = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
        if proc.returncode:
            print(f"{name}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
            return 1
        runs[name] = (json.loads((d / "results.json").read_text()), d)
        print(
            f"ran {name} (torch reports {runs[name][0]['capability']}) in {time.perf_counter() - t0:.0f} s"
        )
    print(f"settings' folders: {tmp if not args.report else args.report}")
    names = list(runs)
    figures: dict[str, dict[str, float]] = {n: {} for n in names}

    print(f"\ntorch {torch.__version__}; each row: this setting against the shipped file")
    if "step0" in parts:
        base = torch.load(runs[names[0]][1] / "step0.pt")
        for n in names:
            x = torch.load(runs[n][1] / "step0.pt")
            diff = float((x - base).abs().max())
            ulp = float(torch.finfo(torch.float32).eps)
            figures[n]["step0_max_abs_vs_first"] = diff
            print(
                f"  step0   {n:<34} logits max |diff| vs {names[0]}: {diff:.2e} ({diff / ulp:.1f} ulp at 1)"
            )
    if "slice" in parts:
        want = {k: v[:2] for k, v in shipped.runs["grpo"][0].items()}
        for n in names:
            got = runs[n][0]["slice"]
            worst = {
                k: max(
                    (
                        rel(a, b)
                        for a, b in zip(got[k], want[k])
                        if not (np.isnan(a) and np.isnan(b))
                    ),
                    default=0.0,
                )
                for k in want
            }
            figures[n].update({f"slice_rel_{k}": v for k, v in worst.items()})
            top = sorted(worst.items(), key=lambda kv: -kv[1])[:3]
            same = all(got[k][1] == want[k][1] or np.isnan(want[k][1]) for k in want)
            print(
                f"  slice   {n:<34} identical: {same}; worst relative: "
                + ", ".join(f"{k} {v:.1e}" for k, v in top)
            )
    if "live" in parts:
        want = shipped.runs["nthr"][0]
        for n in names:
            got = runs[n][0]["live"]
            cells = []
            for s in (50, 100):
                i, j = got["eval_step"].index(s), want["eval_step"].index(s)
                da = got["heldout_accuracy"][i] - want["heldout_accuracy"][j]
                dl = got["heldout_answer_logp"][i] - want["heldout_answer_logp"][j]
                figures[n][f"live_acc_diff_{s}"] = da
                figures[n][f"live_logp_diff_{s}"] = dl
                cells.append(f"step {s}: accuracy {da:+.4f}, ln π {dl:+.2e}")
            print(f"  live    {n:<34} " + "; ".join(cells))
    if "probe" in parts:
        ref = runs[names[0]][0]["probe"]  # no probe file is shipped: against the first setting
        for n in names:
            got = runs[n][0]["probe"]
            worst = max(
                rel(got["paired"][p][f], ref["paired"][p][f])
                for p in got["paired"]
                for f in ("mean", "ci_low", "ci_high")
            )
            figures[n]["probe_rel_vs_first"] = worst
            ci = "; ".join(
                f"{p} {got['paired'][p]['mean']:+.3e} [{got['paired'][p]['ci_low']:+.2e}, {got['paired'][p]['ci_high']:+.2e}]"
                for p in got["paired"]
            )
            print(
                f"  probe   {n:<34} worst relative vs {names[0]}: {worst:.1e}; {ci}; GRPO LLD {got['summary']['grpo']['lld_rate']:.3f}"
            )
        with_gaps = [n for n in names if "gaps" in runs[n][0]]
        if with_gaps:
            first = runs[with_gaps[0]][0]["gaps"]
            for rule in ("adam", "sgd"):
                g0 = np.asarray(first[rule])
                for n in with_gaps:
                    g = np.asarray(runs[n][0]["gaps"][rule])
                    dev = float(np.abs(g - g0).max())
                    figures[n][f"gap_{rule}_max_abs_vs_first"] = dev
                    figures[n][f"gap_{rule}_hurt"] = int((g < 0).sum())
                    print(
                        f"  gap     {n:<34} {rule}: negative gradient hurt on {int((g < 0).sum())}/{g.size} "
                        f"groups; smallest |gap| {np.abs(g).min():.2e}; max |diff| vs {with_gaps[0]} {dev:.1e}"
                    )
    if "warmup" in parts:
        blob = torch.load(CHECKPOINT, weights_only=True)
        for n in names:
            r, d = runs[n]
            state = torch.load(d / "warm310.pt")
            diff = max(float((state[k] - blob["state"][k]).abs().max()) for k in state)
            figures[n]["warmup_max_abs_weight_diff"] = diff
            figures[n]["warmup_sampled_accuracy"] = r["warmup_sampled_accuracy"]
            figures[n]["warmup_window_mean"] = r["warmup_window_mean"]
            # the stopping rule of tests/test_tiny_model.py: the first check >= 0.45, every 20 steps
            curve = {int(k): v for k, v in r["warmup_curve"].items()}
            stop = next((k for k in sorted(curve) if k % 20 == 0 and curve[k] >= 0.45), None)
            figures[n]["warmup_stop_at_045_every_20"] = stop
            print(
                f"  warmup  {n:<34} weights max |diff| {diff:.2e}; sampled accuracy at 310 "
                f"{r['warmup_sampled_accuracy']:.3f} (shipped {blob['info']['sampled_accuracy']:.3f}); "
                f"mean of checks 250..400 {r['warmup_window_mean']:.3f}; first check every 20 "
                f"steps at >= 0.45: step {stop}"
            )
            if "cosine_first_step_damage" in r:
                print(
                    f"          {'':<34} greedy accuracy {r['warmup_greedy_accuracy']:.3f}; first-step damage "
                    f"{r['warmup_first_step_damage']:+.3f} (the cosine recipe's {r['cosine_first_step_damage']:+.3f})"
                )
    import tiny_model.study as study_mod

    for part, path in (("study07", "SHIPPED_07"), ("multi", "SHIPPED_MULTI")):
        if part not in parts:
            continue
        st = load_shipped(getattr(study_mod, path))
        for n in names:
            got = runs[n][0][part]
            cells = []
            for m in st.methods:
                want = st.runs[m][st.seeds[0]]
                worst = {
                    k: abs(got[m][k][-1] - want[k][-1])
                    for k in want
                    if k.startswith("heldout_") and k in got[m]
                }
                for k, v in worst.items():
                    figures[n][f"{part}_{m}_{k}"] = v
                acc = worst.get("heldout_accuracy", float("nan"))
                greedy = worst.get("heldout_greedy_accuracy", float("nan"))
                lp = worst.get("heldout_answer_logp", float("nan"))
                cells.append(f"{m} acc {acc:.4f} greedy {greedy:.3f} ln π {lp:.1e}")
            print(f"  {part:<7} {n:<34} |diff| at the end: " + "; ".join(cells))
    if "methods" in parts:
        ref = runs[names[0]][0]["methods"]
        continuous = ("kl_ref", "correct_logp_change", "correct_logp", "heldout_answer_logp")
        counts = {"heldout_accuracy": 800, "reward_mean": 128 * (METHOD_STEPS // 2)}
        for n in names[1:]:
            got = runs[n][0]["methods"]
            for key in ref:
                if key not in got:  # a setting run with fewer methods (SPREAD_METHODS)
                    continue
                worst = max(
                    (
                        rel(a, b)
                        for k in continuous
                        for a, b in zip(got[key][k], ref[key][k])
                        if not (np.isnan(a) and np.isnan(b))
                    ),
                    default=0.0,
                )
                moved = max(
                    round(abs(a - b) * per)
                    for k, per in counts.items()
                    for a, b in zip(got[key][k], ref[key][k])
                    if not (np.isnan(a) and np.isnan(b))
                )
                figures[n][f"methods_rel_{key}"] = worst
                figures[n][f"methods_moved_{key}"] = moved
                print(
                    f"  methods {n:<34} {key:<20} vs {names[0]}: worst relative {worst:.1e}, "
                    f"samples moved {moved}"
                )
    if "live07" in parts:
        from tiny_model.study import SHIPPED_MULTI

        want = load_shipped(SHIPPED_MULTI).runs["thr_explore"][0]
        first = runs[names[0]][0]["live07"]
        for n in names:
            got = runs[n][0]["live07"]
            cells = []
            for label, ref in (("shipped", want), (names[0], first)):
                da = got["heldout_accuracy"][-1] - ref["heldout_accuracy"][-1]
                dl = got["heldout_answer_logp"][-1] - ref["heldout_answer_logp"][-1]
                figures[n][f"live07_acc_diff_{label}"] = da
                figures[n][f"live07_logp_diff_{label}"] = dl
                cells.append(f"vs {label}: accuracy {da:+.4f}, ln π {dl:+.2e}")
            cpu = runs[n][0].get("live07_cpu_seconds", float("nan"))
            print(
                f"  live07  {n:<34} step {int(got['eval_step'][-1])} ({cpu:.0f} CPU s) "
                + "; ".join(cells)
            )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "torch": torch.__version__,
                    "figures": figures,
                    "runs": {n: r for n, (r, _) in runs.items()},
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
