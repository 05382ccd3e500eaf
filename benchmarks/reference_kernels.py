"""The contraction kernels of the reference's transformer (one decode token), with its hand-written layouts.

The reference (the public furiosa-opt repository, its Qwen3 example) writes each contraction of a
transformer layer by hand. These are the same layouts in tcpdsl, so the cost model can count them
and ``benchmarks/bench_search.py`` can compare them with the plans the layout search finds:

* the projections q (``h,qh->q``), p (k and v share it: ``h,ph->p``) and o (``q,hq->h``);
* the MLP's up and gate (``h,lh->l``, one layout for both) and down (``l,hl->h``);
* the attention score (``ngd,tnd->ngt``, per KV chunk of T = 512) and weighted sum;
* one lm_head tile (``h,wh->w``, W = 8192 of the padded vocabulary; the reference loops over 19).

The weighted sum spreads the summed chunk over slices (``T / 16``) and adds the partial sums
afterwards on the Vector Engine, which is no contraction stage. Here that split is written as two
axes, U = T / 16 (kept: one partial sum per slice) and S = T % 16 (summed), so the kernel is the
einsum ``ngus,usnd->nugd``. Only the contractions are modelled: casts, commits and the switch
network around them are not. Run ``tcpdsl run benchmarks/reference_kernels.py`` to check each
against the oracle.
"""

import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)
Q = tcp.axis("Q", 2048)
P = tcp.axis("P", 1024)
L = tcp.axis("L", 3072)
W = tcp.axis("W", 8192)
N = tcp.axis("N", 8)
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)
T = tcp.axis("T", 512)
U = tcp.axis("U", 32)
S = tcp.axis("S", 16)

Chip = m["1"]
Cluster = m["1 # 2"]
Interleaved = tcp.LaneMode.INTERLEAVED

# -- projection.rs: proj_q -----------------------------------------------------------------------
SliceQ = m["Q / 32, 1 # 4"]
QStream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceQ, m["H / 16"], m["H % 16"]]
QWeights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceQ, m["Q % 32, H / 16"], m["H % 16"]]
QOut = tcp.ContractTensor[tcp.f32, Chip, Cluster, SliceQ, m["Q % 4"], m["Q / 4 % 8"]]


@tcp.kernel
def proj_q(x: QStream, w: QWeights) -> QOut:
    trf = w.to_trf(lane=m["Q / 4 % 8"], element=m["Q % 4, H"])
    return (
        x.contract_outer(trf, out_time=m["H / 32, Q % 4"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["Q % 4"])
        .contract_lane(out_time=m["Q % 4"], out_packet=m["Q / 4 % 8"], mode=Interleaved)
    )


# -- projection.rs: proj_p (the k and v projections) ---------------------------------------------
SliceP = m["P / 32, 1 # 8"]
PStream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceP, m["H / 16"], m["H % 16"]]
PWeights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceP, m["P % 8, P / 8 % 4, H / 16"], m["H % 16"]]
POut = tcp.ContractTensor[tcp.f32, Chip, Cluster, SliceP, m["P / 8 % 4"], m["P % 8"]]


@tcp.kernel
def proj_p(x: PStream, w: PWeights) -> POut:
    trf = w.to_trf(lane=m["P % 8"], element=m["P / 8 % 4, H"])
    return (
        x.contract_outer(trf, out_time=m["H / 32, P / 8 % 4"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["P / 8 % 4"])
        .contract_lane(out_time=m["P / 8 % 4"], out_packet=m["P % 8"], mode=Interleaved)
    )


# -- projection.rs: proj_o -----------------------------------------------------------------------
SliceO = m["H / 16, 1 # 4"]
OStream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceO, m["Q / 16"], m["Q % 16"]]
OWeights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceO, m["H % 16, Q / 16"], m["Q % 16"]]
OOut = tcp.ContractTensor[tcp.f32, Chip, Cluster, SliceO, m["H % 4"], m["H / 4 % 4 # 8"]]


@tcp.kernel
def proj_o(x: OStream, w: OWeights) -> OOut:
    trf = w.to_trf(lane=m["H / 4 % 4"], element=m["H % 4, Q"])
    return (
        x.contract_outer(trf, out_time=m["Q / 32, H % 4"], out_packet=m["Q % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["H % 4"])
        .contract_lane(out_time=m["H % 4"], out_packet=m["H / 4 % 4 # 8"], mode=Interleaved)
    )


# -- mlp.rs: up and gate (one layout) ------------------------------------------------------------
SliceUG = m["L / 24, 1 # 2"]
UpStream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceUG, m["H / 16"], m["H % 16"]]
UpWeights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceUG, m["L % 8, L / 8 % 3, H / 16"], m["H % 16"]]
UpOut = tcp.ContractTensor[tcp.f32, Chip, Cluster, SliceUG, m["L / 8 % 3"], m["L % 8"]]


@tcp.kernel
def mlp_up(x: UpStream, w: UpWeights) -> UpOut:
    trf = w.to_trf(lane=m["L % 8"], element=m["L / 8 % 3, H"])
    return (
        x.contract_outer(trf, out_time=m["H / 32, L / 8 % 3"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["L / 8 % 3"])
        .contract_lane(out_time=m["L / 8 % 3"], out_packet=m["L % 8"], mode=Interleaved)
    )


# -- mlp.rs: down --------------------------------------------------------------------------------
SliceD = m["H / 8, 1 # 2"]
DownStream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceD, m["L / 16"], m["L % 16"]]
DownWeights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceD, m["H % 8, L / 16"], m["L % 16"]]
DownOut = tcp.ContractTensor[tcp.f32, Chip, Cluster, SliceD, m["1"], m["H % 8"]]


@tcp.kernel
def mlp_down(x: DownStream, w: DownWeights) -> DownOut:
    trf = w.to_trf(lane=m["H % 8"], element=m["L"])
    return (
        x.contract_outer(trf, out_time=m["L / 32"], out_packet=m["L % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["1"])
        .contract_lane(out_time=m["1"], out_packet=m["H % 8"], mode=Interleaved)
    )


# -- attention.rs: qk_scaled (the score) ---------------------------------------------------------
SliceQK = m["T / 8, 1 # 4"]
ScoreStream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceQK, m["N, G, D / 16"], m["D % 16"]]
ScoreWeights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceQK, m["T % 8, N, D / 16"], m["D % 16"]]
ScoreOut = tcp.ContractTensor[tcp.f32, Chip, Cluster, SliceQK, m["N, G"], m["T % 8"]]


@tcp.kernel
def attention_score(x: ScoreStream, w: ScoreWeights) -> ScoreOut:
    trf = w.to_trf(lane=m["T % 8"], element=m["N, D"])
    return (
        x.contract_outer(trf, out_time=m["N, G, D / 32"], out_packet=m["D % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["N, G"])
        .contract_lane(out_time=m["N, G"], out_packet=m["T % 8"], mode=Interleaved)
    )


# -- attention.rs: weighted_sum (partial sums per slice; T / 16 is U, T % 16 is S) ---------------
SliceQV = m["N, U"]
SumStream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceQV, m["G"], m["S"]]
SumWeights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, SliceQV, m["D % 8, D / 8"], m["S"]]
SumOut = tcp.ContractTensor[tcp.f32, Chip, Cluster, SliceQV, m["G, D / 8"], m["D % 8"]]


@tcp.kernel
def attention_weighted_sum(x: SumStream, w: SumWeights) -> SumOut:
    trf = w.to_trf(lane=m["D % 8"], element=m["D / 8, S"])
    return (
        x.contract_outer(trf, out_time=m["G, D / 8"], out_packet=m["S"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["G, D / 8"])
        .contract_lane(out_time=m["G, D / 8"], out_packet=m["D % 8"], mode=Interleaved)
    )


# -- lm_head.rs: one tile of 8192 vocabulary rows --------------------------------------------------
HeadCluster = m["W / 4096"]
HeadSlice = m["W / 16 % 256"]
HeadStream = tcp.CollectTensor[tcp.bf16, Chip, HeadCluster, HeadSlice, m["H / 16"], m["H % 16"]]
HeadWeights = tcp.CollectTensor[tcp.bf16, Chip, HeadCluster, HeadSlice, m["W % 8, W / 8 % 2, H / 16"], m["H % 16"]]
HeadOut = tcp.ContractTensor[tcp.f32, Chip, HeadCluster, HeadSlice, m["W / 8 % 2"], m["W % 8"]]


@tcp.kernel
def lm_head_tile(x: HeadStream, w: HeadWeights) -> HeadOut:
    trf = w.to_trf(lane=m["W % 8"], element=m["W / 8 % 2, H"])
    return (
        x.contract_outer(trf, out_time=m["H / 32, W / 8 % 2"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["W / 8 % 2"])
        .contract_lane(out_time=m["W / 8 % 2"], out_packet=m["W % 8"], mode=Interleaved)
    )
