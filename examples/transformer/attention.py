"""The transformer's attention over one KV-cache chunk, fetch to commit (examples/transformer/README.md).

One token's query ``q [N, G, D]`` against a chunk of ``T = 512`` cached keys and values ``[T, N, D]``,
with the online softmax kept in HBM between chunks: ``attention_forward_first`` starts the running max,
sum and unnormalised output from chunk 0, ``attention_forward`` folds a later chunk into them, and
``attention_norm`` divides the output by the sum once every chunk is in.

Every slice of both clusters holds the whole ``[N, G, T]`` scores (``Slice``). ``qk_scaled`` spreads the
keys over 64 groups of four slices, 8 keys a group, and chains the contraction straight into the vector
engine for the ``1 / sqrt(D)`` scale; ``weighted_sum`` gives each KV head 32 slices of 16 keys and adds
the 32 partial sums across slices with the inter-slice reduce.
"""

import tcpdsl as tcp
from tcpdsl import m

N = tcp.axis("N", 8)
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)
T = tcp.axis("T", 512)
Dummy64 = tcp.axis("Dummy64", 64)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
SliceP4 = m["Dummy64, 1 # 4"]
SliceQK = m["T / 8, 1 # 4"]
SliceQV = m["N, T / 16"]
SQRT_HEAD_DIM = 11.313708  # sqrt(D) in f32: the scores are divided by it
EPS = 6.25e-8  # added to every softmax denominator
MUL0 = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)
IL = tcp.LaneMode.INTERLEAVED
ZERO = tcp.TagMode.ZERO

Query = tcp.HbmTensor[tcp.bf16, Chip, m["N, G, D"]]
Cache = tcp.HbmTensor[tcp.bf16, Chip, m["T, N, D"]]
Mask = tcp.HbmTensor[tcp.f32, Chip, m["T"]]
RowsHbm = tcp.HbmTensor[tcp.f32, Chip, m["N, G"]]
OutHbm = tcp.HbmTensor[tcp.bf16, Chip, m["N, G, D"]]
Scores = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["N, G, T"]]
Weights = tcp.DmTensor[tcp.f32, Chip, Cluster, Slice, m["N, G, T"]]
Rows = tcp.DmTensor[tcp.f32, Chip, Cluster, Slice, m["N, G"]]
RowsVrf = tcp.VrfTensor[tcp.f32, Chip, Cluster, Slice, m["N, G"]]
Heads = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["N, G, D"]]
Normalised = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceP4, m["N, G, D"]]
State = tuple[RowsHbm, RowsHbm, OutHbm]
dev = tcp.Device()


@tcp.kernel
def ng_to_vrf(x: Rows) -> RowsVrf:
    """A per-head ``[N, G]`` value in the vector register file, read by every pass that scales a head."""
    return (
        dev.sub.begin(x.view())
        .fetch(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .collect(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .to_vrf(element=m["N, G"])
    )


@tcp.kernel
def qk_scaled(q: Query, k: Cache) -> Scores:
    """``q . k / sqrt(D)`` for every head and key, committed as bf16 and gathered onto every slice."""
    q_dm = q.to_dm(cluster=Cluster, slice=SliceQK, element=m["N, G, D"])
    k_dm = k.to_dm(cluster=Cluster, slice=SliceQK, element=m["T % 8, N, D"])
    k_trf = (
        dev.sub.begin(k_dm.view())
        .fetch(out_time=m["T % 8, N, D / 16"], out_packet=m["D % 16"])
        .collect(out_time=m["T % 8, N, D / 16"], out_packet=m["D % 16"])
        .to_trf(lane=m["T % 8"], element=m["N, D"])
    )
    part = (
        dev.main.begin(q_dm.view())
        .fetch(out_time=m["N, G, D / 16"], out_packet=m["D % 16"])
        .collect(out_time=m["N, G, D / 16"], out_packet=m["D % 16"])
        .contract_outer(k_trf, out_time=m["N, G, D / 32"], out_packet=m["D % 32"])  # N is batched
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["N, G"])
        .contract_lane(out_time=m["N, G"], out_packet=m["T % 8"], mode=IL)
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_narrow_split(out_time=m["N, G, T / 4 % 2"], out_packet=m["T % 4"])
        .vector_fp_div(SQRT_HEAD_DIM)
        .vector_widen_concat(out_time=m["N, G"], out_packet=m["T % 8"])
        .vector_final()
        .cast(tcp.bf16, out_packet=m["T % 8 # 16"])
        .commit_trim(out_packet=m["T % 8"])
        .commit(element=m["N, G, T % 8"])
    )
    return (
        dev.main.begin(part.view())
        .fetch(out_time=m["N, G"], out_packet=m["T % 8 # 16"])
        .switch(tcp.Broadcast1(slice1=64, slice0=4), out_slice=Slice, out_time=m["N, G, T / 8"])
        .collect(out_time=m["N, G, T / 8"], out_packet=m["T % 8 # 16"])
        .commit_trim(out_packet=m["T % 8"])
        .commit(element=m["N, G, T"])
    )


@tcp.kernel
def row_max(qk: Scores) -> Rows:
    """The largest score of each head over the whole chunk, masked or not."""
    return (
        dev.main.begin(qk.view())
        .fetch(out_time=m["N, G, T / 16"], out_packet=m["T % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["N, G, T / 8"], out_packet=m["T % 8"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_narrow_split(out_time=m["N, G, T / 4"], out_packet=m["T % 4"])
        .vector_intra_slice_reduce(tcp.IntraSliceReduceOpF32.MAX, reduce=T, out_time=m["N, G"], out_packet=m["1 # 4"])
        .vector_widen_pad(out_packet=m["1 # 8"])
        .vector_final()
        .transpose(out_time=m["N"], out_packet=m["G # 8"])
        .commit_trim(out_packet=m["G"])
        .commit(element=m["N, G"])
    )


@tcp.kernel
def masked_exp(qk: Scores, max_vrf: RowsVrf, mask: Mask) -> Weights:
    """``min(exp(score - max), mask)``: the 0/1 mask zeroes the keys it hides, every weight being <= 1."""
    e = (
        dev.main.begin(qk.view())
        .fetch(out_time=m["N, G, T / 16"], out_packet=m["T % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["N, G, T / 8"], out_packet=m["T % 8"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_narrow_split(out_time=m["N, G, T / 4"], out_packet=m["T % 4"])
        .vector_fp_binary(tcp.FpBinaryOp.SUB_F, max_vrf)
        .vector_fp_unary(tcp.FpUnaryOp.EXP)
        .vector_widen_concat(out_time=m["N, G, T / 8"], out_packet=m["T % 8"])
        .vector_final()
        .commit_trim(out_packet=m["T % 8"])
        .commit(element=m["N, G, T"])
    )
    mask_vrf = (
        dev.sub.begin(mask.to_dm(cluster=Cluster, slice=Slice, element=m["T"]).view())
        .fetch(out_time=m["T / 8"], out_packet=m["T % 8"])
        .collect(out_time=m["T / 8"], out_packet=m["T % 8"])
        .to_vrf(element=m["T"])
    )
    return (
        dev.main.begin(e.view())
        .fetch(out_time=m["N, G, T / 8"], out_packet=m["T % 8"])
        .collect(out_time=m["N, G, T / 8"], out_packet=m["T % 8"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_clip(tcp.ClipBinaryOpF32.MIN, mask_vrf)
        .vector_final()
        .commit_trim(out_packet=m["T % 8"])
        .commit(element=m["N, G, T"])
    )


@tcp.kernel
def row_sum(weights: Weights) -> Rows:
    """The softmax denominator of each head over the chunk, plus the epsilon."""
    return (
        dev.main.begin(weights.view())
        .fetch(out_time=m["N, G, T / 8"], out_packet=m["T % 8"])
        .collect(out_time=m["N, G, T / 8"], out_packet=m["T % 8"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_narrow_split(out_time=m["N, G, T / 4"], out_packet=m["T % 4"])
        .vector_intra_slice_reduce(tcp.IntraSliceReduceOpF32.ADD, reduce=T, out_time=m["N, G"], out_packet=m["1 # 4"])
        .vector_widen_pad(out_packet=m["1 # 8"])
        .vector_clip(tcp.ClipBinaryOpF32.ADD, EPS)
        .vector_final()
        .transpose(out_time=m["N"], out_packet=m["G # 8"])
        .commit_trim(out_packet=m["G"])
        .commit(element=m["N, G"])
    )


@tcp.kernel
def weighted_sum(weights: Weights, v: Cache) -> Heads:
    """``weights @ V`` per head, unnormalised: each slice sums its 16 keys (bf16), the inter-slice reduce
    adds a head's 32 partial sums in f32, and a DMA puts the result back on every slice."""
    w = (
        dev.main.begin(weights.view())
        .fetch(out_time=m["N, G, T / 8"], out_packet=m["T % 8"])
        .collect(out_time=m["N, G, T / 8"], out_packet=m["T % 8"])
        .cast(tcp.bf16, out_packet=m["T % 8 # 16"])
        .commit_trim(out_packet=m["T % 8"])
        .commit(element=m["N, G, T"])
    ).to_dm(slice=SliceQV, element=m["G, T % 16"])
    v_dm = v.to_dm(cluster=Cluster, slice=SliceQV, element=m["T % 16, D"])
    v_t = (
        dev.main.begin(v_dm.view())
        .fetch(out_time=m["D / 8, T % 16"], out_packet=m["D % 8 # 16"])
        .collect(out_time=m["D / 8, T % 16"], out_packet=m["D % 8 # 16"])
        .transpose(out_time=m["D / 8, T / 4 % 4, D % 8"], out_packet=m["T % 4 # 16"])
        .commit_trim(out_packet=m["T % 4"])
        .commit(element=m["D, T % 16"])
    )
    v_trf = (
        dev.sub.begin(v_t.view())
        .fetch(out_time=m["D % 8, D / 8"], out_packet=m["T % 16"])
        .collect(out_time=m["D % 8, D / 8"], out_packet=m["T % 16"])
        .to_trf(lane=m["D % 8"], element=m["D / 8, T % 16"])
    )
    part = (
        dev.main.begin(w.view())
        .fetch(out_time=m["G"], out_packet=m["T % 16"])
        .collect(out_time=m["G"], out_packet=m["T % 16"])
        .contract_outer(v_trf, out_time=m["G, D / 8"], out_packet=m["T % 16"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["G, D / 8"])
        .contract_lane(out_time=m["G, D / 8"], out_packet=m["D % 8"], mode=IL)
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["G, D"])
    )
    total = (
        dev.main.begin(part.view())
        .fetch(out_time=m["G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_inter_slice_reduce(tcp.InterSliceReduceOpF32.ADD, out_slice=m["N, 1 # 32"], out_time=m["G, D / 8"])
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["G, D"])
    )
    return total.to_dm(slice=Slice, element=m["N, G, D"])


@tcp.kernel
def attention_forward_first(q: Query, k: Cache, v: Cache, mask: Mask) -> State:
    """Attention over chunk 0: starts the running state, returned as the new ``(max, sum, out)`` in HBM."""
    qk = qk_scaled(q, k)
    top = row_max(qk)
    weights = masked_exp(qk, ng_to_vrf(top), mask)
    total = row_sum(weights)
    out = weighted_sum(weights, v)
    return top.to_hbm(element=m["N, G"]), total.to_hbm(element=m["N, G"]), out.to_hbm(element=m["N, G, D"])


@tcp.kernel
def attention_forward(q: Query, k: Cache, v: Cache, mask: Mask, max_hbm: RowsHbm, sum_hbm: RowsHbm,
                      out_hbm: OutHbm) -> State:
    """Attention over a later chunk, folded into the running state: the max rises to the chunk's where it is
    larger, and the old sum and output are rescaled by ``alpha = exp(old_max - new_max)`` before this chunk's
    are added. Returns the new ``(max, sum, out)`` in HBM."""
    qk = qk_scaled(q, k)
    old_vrf = ng_to_vrf(max_hbm.to_dm(cluster=Cluster, slice=Slice, element=m["N, G"]))
    new_max = (
        dev.main.begin(row_max(qk).view())
        .fetch(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .collect(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_clip(tcp.ClipBinaryOpF32.MAX, old_vrf)
        .vector_final()
        .commit_trim(out_packet=m["N % 4, G"])
        .commit(element=m["N, G"])
    )
    alpha = (
        dev.main.begin(new_max.view())
        .fetch(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .collect(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_narrow_split(out_time=m["N / 2"], out_packet=m["N % 2, G"])
        .vector_fp_binary(tcp.FpBinaryOp.SUB_F, old_vrf, mode=tcp.BinaryArgMode.MODE10)  # old - new
        .vector_fp_unary(tcp.FpUnaryOp.EXP)
        .vector_widen_concat(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .vector_final()
        .commit_trim(out_packet=m["N % 4, G"])
        .commit(element=m["N, G"])
    )
    alpha_vrf = ng_to_vrf(alpha)
    weights = masked_exp(qk, ng_to_vrf(new_max), mask)
    chunk_sum_vrf = ng_to_vrf(row_sum(weights))
    total = (  # old_sum * alpha + chunk_sum
        dev.main.begin(sum_hbm.to_dm(cluster=Cluster, slice=Slice, element=m["N, G"]).view())
        .fetch(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .collect(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_narrow_split(out_time=m["N / 2"], out_packet=m["N % 2, G"])
        .vector_fp_binary(MUL0, alpha_vrf)
        .vector_widen_concat(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .vector_clip(tcp.ClipBinaryOpF32.ADD, chunk_sum_vrf)
        .vector_final()
        .commit_trim(out_packet=m["N % 4, G"])
        .commit(element=m["N, G"])
    )
    part_vrf = (
        dev.sub.begin(weighted_sum(weights, v).view())
        .fetch(out_time=m["N, G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["N, G, D / 8"], out_packet=m["D % 8"])
        .to_vrf(element=m["N, G, D"])
    )
    scaled = (  # bf16(old_out * alpha)
        dev.main.begin(out_hbm.to_dm(cluster=Cluster, slice=Slice, element=m["N, G, D"]).view())
        .fetch(out_time=m["N, G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["N, G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_narrow_split(out_time=m["N, G, D / 4"], out_packet=m["D % 4"])
        .vector_fp_binary(MUL0, alpha_vrf)
        .vector_widen_concat(out_time=m["N, G, D / 8"], out_packet=m["D % 8"])
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["N, G, D"])
    )
    out = (  # bf16(scaled + this chunk's output)
        dev.main.begin(scaled.view())
        .fetch(out_time=m["N, G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["N, G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_clip(tcp.ClipBinaryOpF32.ADD, part_vrf)
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["N, G, D"])
    )
    return new_max.to_hbm(element=m["N, G"]), total.to_hbm(element=m["N, G"]), out.to_hbm(element=m["N, G, D"])


@tcp.kernel
def attention_norm(x: Normalised, sum_hbm: RowsHbm) -> Normalised:
    """The attention output divided by its softmax denominator, head by head, once every chunk is in."""
    sum_vrf = (
        dev.sub.begin(sum_hbm.to_dm(cluster=Cluster, slice=SliceP4, element=m["N, G"]).view())
        .fetch(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .collect(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .to_vrf(element=m["N, G"])
    )
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["N, G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["N, G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(ZERO)
        .vector_narrow_split(out_time=m["N, G, D / 4"], out_packet=m["D % 4"])
        .vector_fp_div(sum_vrf)
        .vector_widen_concat(out_time=m["N, G, D / 8"], out_packet=m["D % 8"])
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["N, G, D"])
    )
