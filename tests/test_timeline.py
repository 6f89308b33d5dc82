"""A round's per-device timeline (fedlib.lab.split.timeline and its HASFL / DTFL adapters): the layout's end is the
latency model's round latency (the function the optimiser, the training clock and the simulations use), the
segments follow the model's order, each device's last wait is the round latency minus its own finish, small
cases equal segments worked out by hand, and bad inputs are refused naming the parameter."""
import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from fedlib.core.seeding import numpy_rng
from fedlib.split import EdgeDevices, LayerProfile, Servers
from fedlib.lab.split.timeline import KIND_LABELS, KINDS, Step, Timeline, build_timeline, timeline_figure


# --- HASFL --------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hasfl_problem():
    from tests.hasfl_instances import random_instance
    # mixed links: compute and rates log-uniform, so the stragglers differ between the phases
    return random_instance(3, num_devices=(6, 6), links="mixed")


@pytest.fixture(scope="module")
def hasfl_decisions(hasfl_problem):
    from fedlib.hasfl import bcd, strategy
    p = hasfl_problem
    out = {"HASFL": bcd(p)}
    for name in ("RBS+RMS", "RBS+HAMS", "RBS+RHAMS"):
        out[name] = strategy(p, name, numpy_rng(0, f"system/{name}"))
    rng = np.random.default_rng(7)            # a decision with unequal cuts (Λ_s > 0: the server's T_sU, T_sD)
    out["mixed"] = type(out["HASFL"])(rng.integers(1, 65, p.num_devices),
                                      rng.choice(p.allowed_cuts, p.num_devices), float("nan"))
    return out


def _hand_problem():
    """2 devices, 2 layers, numbers chosen so that every term is a short decimal (worked out in the test)."""
    from fedlib.hasfl import HasflConstants, Problem
    a = np.array
    prof = LayerProfile("hand", (1, 1, 1), "sgd", fwd_flops=a([1e9, 3e9]), bwd_flops=a([2e9, 6e9]),
                        act_bits=a([8e6, 4e6]), grad_bits=a([8e6, 4e6]), param_bits=a([1e6, 5e6]),
                        opt_state_bits=a([0.0, 0.0]), act_bits_cum=a([8e6, 12e6]), grad_bits_cum=a([8e6, 12e6]),
                        params_per_unit=a([1, 1]))
    dev = EdgeDevices(flops=a([1e9, 2e9]), rate_up=a([1e6, 2e6]), rate_down=a([4e6, 8e6]),
                      rate_up_fed=a([1e6, 1e6]), rate_down_fed=a([2e6, 2e6]), memory_bits=a([1e12, 1e12]))
    srv = Servers(flops=1e10, rate_to_fed=1e6, rate_from_fed=2e6)
    const = HasflConstants(beta=1.0, sigma2=np.zeros(2), G2=np.zeros(2), vartheta=1.0)
    return Problem(prof, dev, srv, const, gamma=1.0, eps=1.0, interval=1)


def _spans(row, skip_wait=False):
    return [(s.kind, round(s.start, 9), round(s.end, 9)) for s in row if not (skip_wait and s.kind == "wait")]


def test_hasfl_hand_computed_two_devices():
    from fedlib.lab.hasfl.figures.timeline import round_timeline
    # device 0 (b 2, cut 1): T_F = 2·1e9/1e9 = 2, T_aU = 2·8e6/1e6 = 16, T_gD = 2·8e6/4e6 = 4, T_B = 2·2e9/1e9 = 4,
    #   T_cU = 1e6/1e6 = 1, T_cD = 1e6/2e6 = 0.5
    # device 1 (b 1, cut 2): T_F = 3e9/2e9 = 1.5, T_aU = 4e6/2e6 = 2, T_gD = 4e6/8e6 = 0.5, T_B = 6e9/2e9 = 3,
    #   T_cU = 5e6/1e6 = 5, T_cD = 5e6/2e6 = 2.5
    # server: T_sF = 2·(3e9 − 1e9)/1e10 = 0.4, T_sB = 2·(6e9 − 2e9)/1e10 = 0.8; Λ_s = 2·5e6 − 6e6 = 4e6,
    #   T_sU = 4e6/1e6 = 4, T_sD = 4e6/2e6 = 2
    # T_S = max(18, 3.5) + 1.2 + max(8, 3.5) = 27.2; T_A = max(1, 5, 4) + max(0.5, 2.5, 2) = 7.5
    p = _hand_problem()
    tl = round_timeline(p, [2, 1], [1, 2])
    assert tl.latency == pytest.approx(27.2, abs=1e-12)
    assert _spans(tl.segments[0]) == [("compute", 0, 2), ("uplink", 2, 18), ("server", 18, 18.4),
                                      ("server", 18.4, 19.2), ("downlink", 19.2, 23.2), ("compute", 23.2, 27.2)]
    assert _spans(tl.segments[1]) == [("compute", 0, 1.5), ("uplink", 1.5, 3.5), ("wait", 3.5, 18),
                                      ("server", 18, 18.4), ("server", 18.4, 19.2), ("downlink", 19.2, 19.7),
                                      ("compute", 19.7, 22.7), ("wait", 22.7, 27.2)]
    assert _spans(tl.segments[2]) == [("server", 18, 18.4), ("server", 18.4, 19.2)]   # the edge server
    tl = round_timeline(p, [2, 1], [1, 2], aggregated=True)
    assert tl.latency == pytest.approx(34.7, abs=1e-12)
    assert _spans(tl.segments[0])[-4:] == [("uplink", 27.2, 28.2), ("wait", 28.2, 32.2), ("downlink", 32.2, 32.7),
                                           ("wait", 32.7, 34.7)]
    assert _spans(tl.segments[1])[-2:] == [("uplink", 27.2, 32.2), ("downlink", 32.2, 34.7)]
    assert _spans(tl.segments[2])[-4:] == [("uplink", 27.2, 31.2), ("wait", 31.2, 32.2), ("downlink", 32.2, 34.2),
                                           ("wait", 34.2, 34.7)]
    assert tl.marks == ((pytest.approx(27.2), "split round ends, T_S (38)"),)
    assert tl.names[:2] == ("device 0 · b 2 · cut 1", "device 1 · b 1 · cut 2")


@pytest.mark.parametrize("name", ["HASFL", "RBS+RMS", "RBS+HAMS", "RBS+RHAMS", "mixed"])
@pytest.mark.parametrize("aggregated", [False, True])
def test_hasfl_timeline_ends_at_the_models_round_latency(hasfl_problem, hasfl_decisions, name, aggregated):
    from fedlib.hasfl import aux_variables, round_latency
    from fedlib.lab.hasfl.runs.train_config import hasfl_clock
    from fedlib.lab.hasfl.figures.timeline import round_timeline
    p, d = hasfl_problem, hasfl_decisions[name]
    tl = round_timeline(p, d.b, d.cuts, aggregated)
    lat = round_latency(p.profile, d.b, d.cuts, p.devices, p.servers)
    model = lat["T_S"] + (lat["T_A"] if aggregated else 0.0)
    assert tl.latency == pytest.approx(model, rel=1e-12, abs=0)
    assert tl.latency == pytest.approx(hasfl_clock(p)(0, d.b, d.cuts, aggregated), rel=1e-12, abs=0)  # training clock
    # the slowest device of each phase plus the server terms: the optimiser's T3 + T_sF + T_sB + T4 (+ T5 + T6)
    aux = aux_variables(p, d.b, d.cuts)
    n = p.num_devices
    slowest = [max(tl.busy(i, ph) for i in range(n + 1)) for ph in range(len(tl.phases))]
    expect = [aux["T3"], float(lat["T_sF"] + lat["T_sB"]), aux["T4"]] + ([aux["T5"], aux["T6"]] if aggregated else [])
    assert slowest == pytest.approx(expect, rel=1e-12, abs=1e-12 * model)   # a phase's length is end − start
    assert sum(slowest) == pytest.approx(model, rel=1e-12, abs=0)
    # the device that sets a phase's barrier: its segments there are the model's terms of that device
    i1 = int(np.argmax(lat["T_F"] + lat["T_aU"]))
    assert [s.duration for s in tl.segments[i1][:2]] == pytest.approx([lat["T_F"][i1], lat["T_aU"][i1]], rel=1e-12)


@pytest.mark.parametrize("aggregated", [False, True])
def test_hasfl_segments_follow_the_models_order_and_waits_fill_to_the_round_latency(hasfl_problem, hasfl_decisions,
                                                                                   aggregated):
    from fedlib.lab.hasfl.figures.timeline import round_timeline
    p = hasfl_problem
    order = ["compute", "uplink", "server", "server", "downlink", "compute"] + (["uplink", "downlink"] if aggregated
                                                                                else [])
    for d in hasfl_decisions.values():
        tl = round_timeline(p, d.b, d.cuts, aggregated)
        fin, wait = tl.finish(), tl.final_wait()
        for i in range(p.num_devices):
            row = tl.segments[i]
            assert [s.kind for s in row if s.kind != "wait"] == order
            assert row[0].start == 0 and row[-1].end == pytest.approx(tl.latency, rel=1e-12)
            for a, b in zip(row, row[1:]):              # one after another, no gap, no overlap
                assert b.start == pytest.approx(a.end, rel=1e-12, abs=1e-15) and a.end > a.start
            assert wait[i] == pytest.approx(tl.latency - fin[i], rel=1e-12, abs=1e-12)
            assert all(s.duration >= 0 for s in row)
        assert min(wait) == 0                           # someone (a device or the server) sets the end
        assert tl.device_order() == sorted(range(p.num_devices), key=lambda i: (fin[i], i))


# --- DTFL ---------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dtfl_system():
    from fedlib.dtfl import case_profiles
    from fedlib.lab.dtfl import experiments as dx
    from fedlib.lab.dtfl.compare import costs_of
    tm = dx.time_model("resnet20", 0.25, "fashion-mnist", 4, 3.0, 5.0)
    profiles = case_profiles("all")
    k = 7
    idx = np.arange(k) % len(profiles)
    samples = np.random.default_rng(1).integers(20, 200, k)
    fedavg = costs_of("fedavg", "resnet20", 0.25, "fashion-mnist")
    return {"tm": tm, "profiles": profiles, "idx": idx, "samples": samples, "fedavg": fedavg,
            "cpus": np.array([profiles[i].cpus for i in idx]), "mbps": np.array([profiles[i].mbps for i in idx])}


def _hand_time_model():
    from fedlib.dtfl import TimeModel
    from fedlib.dtfl.timing import TierCosts
    a = np.array
    prof = LayerProfile("hand", (1, 1, 1), "adam", fwd_flops=a([1e9, 2e9]), bwd_flops=a([2e9, 4e9]),
                        act_bits=a([8e6, 1.6e6]), grad_bits=a([8e6, 1.6e6]), param_bits=a([1e6, 2e6]),
                        opt_state_bits=a([0.0, 0.0]), act_bits_cum=a([8e6, 9.6e6]), grad_bits_cum=a([8e6, 9.6e6]),
                        params_per_unit=a([1, 1]))
    costs = TierCosts(2, a([1, 2]), prof, aux_flops=a([1e9, 0.0]), client_flops=a([4e9, 6e9]),
                      server_flops=a([3e9, 1e9]), smashed_bytes=a([1e6, 2e5]), label_bytes=8,
                      model_bytes=a([1e5, 5e5]))
    return TimeModel(costs, core_flops=1e9, server_flops=2e9)


def test_dtfl_hand_computed_two_clients():
    from fedlib.lab.dtfl.timeline import tier_timeline
    # client 0 (tier 1, 1 CPU, 8 Mbps, 10 samples): T_c = 10·3e9/1e9 + 10·1e9/1e9 = 40, T_s = 10·3e9/2e9 = 15,
    #   download 8·1e5/8e6 = 0.1, T_com = 10·8e6/8e6 + 8·(10·8 + 2·1e5)/8e6 = 10.20008 -> uplink 10.10008;
    #   T = 50.20008
    # client 1 (tier 2, 2 CPU, 16 Mbps, 5 samples): T_c = 5·6e9/2e9 = 15, T_s = 5·1e9/2e9 = 2.5,
    #   download 8·5e5/16e6 = 0.25, T_com = 5·1.6e6/16e6 + 8·(5·8 + 2·5e5)/16e6 = 1.00002; T = 16.00002
    tl = tier_timeline(_hand_time_model(), [1, 2], [1, 2], [8, 16], [10, 5])
    assert tl.latency == pytest.approx(50.20008, abs=1e-12)
    seg = [(s.kind, round(s.start, 9), round(s.end, 9), s.lane) for s in tl.segments[0]]
    assert seg == [("downlink", 0, 0.1, None), ("compute", 0.1, 40.1, 0), ("server", 0.1, 15.1, 1),
                   ("uplink", 40.1, 50.20008, None)]
    seg = [(s.kind, round(s.start, 9), round(s.end, 9), s.lane) for s in tl.segments[1]]
    assert seg == [("downlink", 0, 0.25, None), ("compute", 0.25, 15.25, 0), ("server", 0.25, 2.75, 1),
                   ("uplink", 15.25, 16.00002, None), ("wait", 16.00002, 50.20008, None)]
    assert tl.final_wait() == pytest.approx([0, 50.20008 - 16.00002], abs=1e-12)


@pytest.mark.parametrize("assignment", ["tier1", "tier2", "tier3", "tier4", "mixed", "scheduled"])
def test_dtfl_timeline_ends_at_the_simulated_round(dtfl_system, assignment):
    from fedlib.dtfl import simulate
    from fedlib.lab.dtfl.timeline import scheduled_tiers, tier_timeline
    s = dtfl_system
    tm, k = s["tm"], len(s["idx"])
    args = (s["cpus"], s["mbps"], s["samples"])
    if assignment.startswith("tier"):
        m = int(assignment[4:])
        tiers = np.full(k, m)
        sim = simulate(tm, s["profiles"], s["idx"][None, :], s["samples"], np.random.default_rng(0), fixed_tier=m,
                       noise=0.0)
        model = sim["round_s"][0]
    elif assignment == "mixed":
        tiers = np.random.default_rng(3).integers(1, 5, k)
        model = float(np.max(tm.times(tiers, *args)["T"]))
    else:   # the scheduler's second round, noise-free: the tiers it picks after observing tier M
        tiers = scheduled_tiers(tm, *args)
        sim = simulate(tm, s["profiles"], np.stack([s["idx"]] * 2), s["samples"], np.random.default_rng(0), noise=0.0)
        assert sim["tiers"][1] == tiers.tolist()
        model = sim["round_s"][1]
    tl = tier_timeline(tm, tiers, *args)
    assert tl.latency == pytest.approx(model, rel=1e-12, abs=0)
    t = tm.times(tiers, *args)
    strag = int(np.argmax(t["T"]))
    busy = sum(max(seg.duration for seg in tl.segments[strag] if seg.start == start)
               for start in sorted({seg.start for seg in tl.segments[strag] if seg.kind != "wait"}))
    assert busy == pytest.approx(t["T_com"][strag] + max(t["T_c"][strag], t["T_s"][strag]), rel=1e-12)
    fin, wait = tl.finish(), tl.final_wait()
    for i in range(k):
        row = tl.segments[i]
        kinds = [seg.kind for seg in row]
        assert kinds[:4] == ["downlink", "compute", "server", "uplink"] and set(kinds[4:]) <= {"wait"}
        down, comp, serv, up = row[:4]
        assert comp.start == serv.start == down.end and up.start == pytest.approx(max(comp.end, serv.end))
        assert (comp.lane, serv.lane) == (0, 1)
        assert fin[i] == pytest.approx(t["T"][i], rel=1e-12)
        assert wait[i] == pytest.approx(tl.latency - fin[i], rel=1e-12, abs=1e-12)
        assert down.duration + up.duration == pytest.approx(t["T_com"][i], rel=1e-12)


def test_fedavg_timeline_ends_at_the_simulated_round(dtfl_system):
    from fedlib.dtfl.baseline_time import simulate_method
    from fedlib.lab.dtfl.timeline import method_timeline
    s = dtfl_system
    tl = method_timeline(s["fedavg"], s["cpus"], s["mbps"], s["samples"], s["tm"].core_flops, s["tm"].server_flops)
    sim = simulate_method(s["fedavg"], s["profiles"], s["idx"][None, :], s["samples"], np.random.default_rng(0),
                          noise=0.0, core_flops=s["tm"].core_flops, server_flops=s["tm"].server_flops)
    assert tl.latency == pytest.approx(sim["round_s"][0], rel=1e-12, abs=0)
    fin, wait = tl.finish(), tl.final_wait()
    for i, row in enumerate(tl.segments):
        assert [seg.kind for seg in row if seg.kind != "wait"] == ["downlink", "compute", "uplink"]
        assert row[1].start == row[0].end and row[2].start == row[1].end
        assert wait[i] == pytest.approx(tl.latency - fin[i], rel=1e-12, abs=1e-12)
        assert row[0].duration == pytest.approx(row[2].duration, rel=1e-12)   # the whole model down, then up
    assert min(wait) == 0


# --- bad inputs ---------------------------------------------------------------------------------------------------

def test_hasfl_bad_inputs_are_refused_naming_the_parameter(hasfl_problem):
    from fedlib.lab.hasfl.figures.timeline import round_timeline
    p = hasfl_problem
    n = p.num_devices
    b, cuts = np.full(n, 8), np.full(n, p.allowed_cuts[0])
    for kw, match in (({"b": b[:-1]}, r"b must hold one entry per client: N = "),
                      ({"cuts": np.append(cuts, 1)}, r"cuts must hold one entry per client: N = "),
                      ({"b": np.where(np.arange(n) == 0, np.nan, b)}, r"^b must"),
                      ({"b": np.where(np.arange(n) == 0, 0.5, b)}, r"^b must"),
                      ({"b": np.where(np.arange(n) == 0, np.inf, b)}, r"^b must"),
                      ({"cuts": np.where(np.arange(n) == 0, p.profile.num_layers + 1, cuts)}, r"^cuts must"),
                      ({"cuts": cuts.astype(float)}, r"^cuts must"),
                      ({"aggregated": 1}, r"^aggregated must"),
                      ({"problem": "vgg16"}, r"^problem must")):
        args = {"problem": p, "b": b, "cuts": cuts, "aggregated": False, **kw}
        with pytest.raises(ValueError, match=match):
            round_timeline(**args)
    with pytest.raises(ValueError, match="rate_up must be finite and > 0"):      # a system with a negative rate
        EdgeDevices(flops=np.ones(2), rate_up=np.array([1.0, -1.0]), rate_down=np.ones(2), rate_up_fed=np.ones(2),
                    rate_down_fed=np.ones(2), memory_bits=np.ones(2))


def test_dtfl_bad_inputs_are_refused_naming_the_parameter(dtfl_system):
    from fedlib.lab.dtfl.compare import costs_of
    from fedlib.lab.dtfl.timeline import method_timeline, scheduled_tiers, tier_timeline
    s = dtfl_system
    tm, k = s["tm"], len(s["idx"])
    good = {"tiers": np.ones(k, dtype=int), "cpus": s["cpus"], "mbps": s["mbps"], "samples": s["samples"]}
    bad = [({"mbps": -s["mbps"]}, r"^mbps must"), ({"mbps": np.where(np.arange(k) == 0, np.nan, s["mbps"])}, r"^mbps"),
           ({"cpus": np.where(np.arange(k) == 0, np.nan, s["cpus"])}, r"^cpus must"), ({"cpus": 0.0}, r"^cpus must"),
           ({"samples": s["samples"][:-1]}, r"samples must hold one entry per client: K = "),
           ({"samples": np.zeros(k)}, r"^samples must"),
           ({"tiers": np.full(k, 5)}, r"^tiers must"), ({"tiers": np.full(k, 1.0)}, r"^tiers must"),
           ({"tiers": np.ones((2, k), dtype=int)}, r"^tiers must be a 1-D")]
    for kw, match in bad:
        with pytest.raises(ValueError, match=match):
            tier_timeline(tm, **{**good, **kw})
    with pytest.raises(ValueError, match="^time_model must"):
        tier_timeline("tm", **good)
    with pytest.raises(ValueError, match="^mbps must"):
        scheduled_tiers(tm, s["cpus"], -s["mbps"], s["samples"])
    args = (s["cpus"], s["mbps"], s["samples"])
    with pytest.raises(ValueError, match="^mbps must"):
        method_timeline(s["fedavg"], s["cpus"], np.append(s["mbps"][:-1], -1.0), s["samples"])
    with pytest.raises(ValueError, match="^costs.method must be 'fedavg' or 'fedyogi'"):
        method_timeline(costs_of("splitfed", "resnet20", 0.25, "fashion-mnist"), *args)
    with pytest.raises(ValueError, match="^core_flops must"):
        method_timeline(s["fedavg"], *args, core_flops=-1.0)


def test_build_timeline_bad_inputs_and_a_dropped_term():
    ok = [[[Step("compute", "T_a", np.array([1.0, 2.0]))]]]
    neg = [[[Step("compute", "T_a", np.array([1.0, -2.0]))]]]
    nan = [[[Step("compute", "T_a", np.array([1.0, np.nan]))]]]
    assert build_timeline(["a", "b"], ok, 2.0, "max").latency == 2.0
    for args, match in (((["a"], ok, 2.0, "max"), r"durations of T_a must hold one entry per row \(R = 1\)"),
                        ((["a", "b"], neg, 2.0, "m"), "durations of T_a"),
                        ((["a", "b"], nan, 2.0, "m"), "durations of T_a"),
                        ((["a", "b"], [[[Step("nap", "T_a", np.array([1.0, 2.0]))]]], 2.0, "m"), "kind must be one of"),
                        ((["a", "b"], [[[ok[0][0][0]] * 3]], 2.0, "m"), r"one or two steps"),
                        ((["a", "b"], [[]], 2.0, "m"), r"phases\[0\] must be a non-empty list of stages"),
                        ((["a", 2], ok, 2.0, "m"), "names must be strings"),
                        ((["a", "b"], ok, float("nan"), "m"), "^model_latency must"),
                        ((["a", "b"], ok, 2.0, "m", 3), "^devices must")):
        with pytest.raises(ValueError, match=match):
            build_timeline(*args)
    with pytest.raises(RuntimeError, match="a term is missing or counted twice"):
        build_timeline(["a", "b"], ok, 2.5, "max")


# --- the figure ---------------------------------------------------------------------------------------------------

def test_figure_rows_sorted_by_finish_with_waits_hatched_and_the_latency_line(hasfl_problem, hasfl_decisions):
    import matplotlib.pyplot as plt
    from fedlib.lab.hasfl.figures.timeline import round_timeline
    p = hasfl_problem
    tls = [round_timeline(p, d.b, d.cuts, True) for d in (hasfl_decisions["HASFL"], hasfl_decisions["RBS+RMS"])]
    fig = timeline_figure(tls, ["HASFL", "RBS+RMS"])
    try:
        for ax, tl in zip(fig.axes, tls):
            labels = [t.get_text() for t in ax.get_yticklabels()]
            assert labels == ["edge server"] + [tl.names[i] for i in tl.device_order()]
            waits = sum(seg.kind == "wait" for row in tl.segments for seg in row)
            hatched = [c for c in ax.collections if c.get_hatch()]                        # one collection per kind
            assert len(hatched) == 1 and len(hatched[0].get_paths()) == waits > 0     # the waits, hatched
            assert any(np.allclose(line.get_xdata(), tl.latency) for line in ax.lines)
            assert f"{tl.latency:.4g} s" in [t.get_text() for t in ax.texts]
            assert ax.get_xlim()[1] >= max(t.latency for t in tls)                   # one scale
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert {"wait for the slowest (hatched)", "split round ends, T_S (38)"} <= set(legend)
        assert set(legend) >= {KIND_LABELS[k] for k in KINDS}                       # every kind named
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match=r"timelines\[0\] must"):
        timeline_figure(["x"])
    with pytest.raises(ValueError, match="titles must be one string per timeline"):
        timeline_figure(tls, ["one"])
    assert isinstance(tls[0], Timeline)
