// Rung 5: the swizzled mma.sync kernel fed by a cp.async multi-stage pipeline. 128x256x64 block tile, STAGES
// (default 4) of 48 KB, 8 warps of 64x64. Copies go global -> shared without touching registers; while the warps
// compute on stage s, the copies for the next STAGES-2 k tiles are in flight. One barrier per k tile, placed before
// the last k16 slice so that the next tile's first fragments load while that slice multiplies.
#include "mma_sync.cuh"

#ifndef R5_STAGES  // an experiment's override of the declared stages
#define R5_STAGES GEMM_STAGES
#endif

namespace {
static_assert(GEMM_RUNG == 5, "rung 5 built with another rung's constants");
constexpr int BM = GEMM_BM, BN = GEMM_BN, BK = GEMM_BK, KS = BK / 16, STAGES = R5_STAGES;
constexpr int WARPS_M = GEMM_WARPS_M, WARPS_N = GEMM_WARPS_N;
constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N;
constexpr int STAGE_ELEMS = (BM + BN) * BK, SMEM_BYTES = STAGES * STAGE_ELEMS * 2;
static_assert(STAGES >= 3, "the barrier before the last slice needs a stage between reader and writer");
static_assert(BK == 64 && THREADS == GEMM_THREADS, "the copy loops assume 64-wide k tiles");
using L = DeclaredTile;
using W = WarpMma<L, WTM, WTN>;

__global__ void __launch_bounds__(THREADS, 1)
    gemm_rung5(const bf16* __restrict__ A, const bf16* __restrict__ B, bf16* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t s0 = smem_u32(smem_raw);
  const int t = threadIdx.x, warp = t >> 5;
  const int wm0 = (warp / WARPS_N) * WTM, wn0 = (warp % WARPS_N) * WTN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, KT = K / BK;
  auto sa = [&](int s) { return s0 + s * STAGE_ELEMS * 2; };
  auto sb = [&](int s) { return s0 + s * STAGE_ELEMS * 2 + BM * BK * 2; };
  const bf16* gA = A + size_t(m0 + t / 8) * K + (t % 8) * 8;
  const bf16* gB = B + size_t(n0 + t / 8) * K + (t % 8) * 8;
  const size_t gstep = size_t(THREADS / 8) * K;
  auto load = [&](int kt, int s) {  // chunk i: row t/8 + 32 i, 16-byte column t%8
#pragma unroll
    for (int i = 0; i < BM * BK / 8 / THREADS; ++i)
      cp_async_16(sa(s) + 2 * L::off(t / 8 + i * THREADS / 8, (t % 8) * 8), gA + i * gstep + kt * BK);
#pragma unroll
    for (int i = 0; i < BN * BK / 8 / THREADS; ++i)
      cp_async_16(sb(s) + 2 * L::off(t / 8 + i * THREADS / 8, (t % 8) * 8), gB + i * gstep + kt * BK);
  };
  float acc[W::MI][W::NJ][4] = {};
  typename W::Frag fr[2];  // slice s+1 loads into one while slice s multiplies from the other
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) load(s, s);
    cp_async_commit();
  }
  cp_async_wait<STAGES - 2>();  // k tile 0 has landed (for this thread's copies) ...
  __syncthreads();              // ... and for everyone's
  W::load(fr[0], sa(0), sb(0), wm0, wn0, 0);
  for (int kt = 0; kt < KT; ++kt) {
    const int s = kt % STAGES;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      if (ks == KS - 1) {
        // Groups committed so far: tiles 0 .. kt + STAGES - 2; tile kt+1 is complete once at most STAGES-3 remain.
        cp_async_wait<STAGES - 3>();
        __syncthreads();  // tile kt+1 visible to all; every warp has read all of tile kt-1 (and of kt)
        const int nk = kt + STAGES - 1;
        if (nk < KT) load(nk, nk % STAGES);  // refill the stage tile kt-1 used
        cp_async_commit();
        if (kt + 1 < KT) W::load(fr[0], sa((kt + 1) % STAGES), sb((kt + 1) % STAGES), wm0, wn0, 0);
      } else {
        W::load(fr[(ks + 1) & 1], sa(s), sb(s), wm0, wn0, ks + 1);
      }
      W::mma(fr[ks & 1], acc);
    }
  }
  W::store(C, N, m0 + wm0, n0 + wn0, acc);
}
}  // namespace

struct Rung : SimpleLaunch<Rung> {
  static constexpr auto kernel = gemm_rung5;
  static constexpr int id = 5, BM = ::BM, BN = ::BN, BK = ::BK, threads = THREADS, stages = STAGES, min_cc = 80;
  static constexpr const char* name = "mma.sync + swizzled smem + cp.async multi-stage pipeline";
  static int smem_bytes() { return SMEM_BYTES; }
  static const char* smem_layout() { return layout_name<L>(BM); }
  static std::string note() { return std::to_string(STAGES) + " stages, double-buffered fragments"; }
  static std::string probe() { return probe_mma_tiles<L>(BM, BN); }
};

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
