// Rung 5: the swizzled mma.sync kernel fed by a cp.async multi-stage pipeline. 128x256x64 block tile, STAGES
// (default 3) of 48 KB, 8 warps of 64x64. Copies go global -> shared without touching registers; while the warps
// compute on stage s, the copies for the next STAGES-1 k tiles are in flight.
#include "mma_sync.cuh"

#ifndef R5_STAGES
#define R5_STAGES 3
#endif

namespace {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = R5_STAGES, WARPS_M = 2, WARPS_N = 4;
constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N;
constexpr int STAGE_ELEMS = (BM + BN) * BK, SMEM_BYTES = STAGES * STAGE_ELEMS * 2;
using L = SmemSwizzled;
using W = WarpMma<L, WTM, WTN>;

__global__ void __launch_bounds__(THREADS, 1)
    gemm_rung5(const bf16* __restrict__ A, const bf16* __restrict__ B, bf16* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t s0 = smem_u32(smem_raw);
  const int t = threadIdx.x, warp = t >> 5;
  const int wm0 = (warp / WARPS_N) * WTM, wn0 = (warp % WARPS_N) * WTN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int KT = K / BK;
  auto sa = [&](int s) { return s0 + s * STAGE_ELEMS * 2; };
  auto sb = [&](int s) { return s0 + s * STAGE_ELEMS * 2 + BM * BK * 2; };
  auto load = [&](int kt, int s) {
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < BM * BK / 8 / THREADS; ++i) {
      const int c = t + i * THREADS, r = c / 8, col = (c % 8) * 8;
      cp_async_16(sa(s) + 2 * L::off(r, col), A + size_t(m0 + r) * K + k0 + col);
    }
#pragma unroll
    for (int i = 0; i < BN * BK / 8 / THREADS; ++i) {
      const int c = t + i * THREADS, r = c / 8, col = (c % 8) * 8;
      cp_async_16(sb(s) + 2 * L::off(r, col), B + size_t(n0 + r) * K + k0 + col);
    }
  };
  float acc[W::MI][W::NJ][4] = {};
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) load(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<STAGES - 2>();  // k tile kt has landed (for this thread's copies) ...
    __syncthreads();              // ... and for everyone's; and every warp is done with k tile kt-1
    const int nk = kt + STAGES - 1;
    if (nk < KT) load(nk, nk % STAGES);  // refill the stage that k tile kt-1 used
    cp_async_commit();
    W::ktile(sa(kt % STAGES), sb(kt % STAGES), wm0, wn0, acc);
  }
  W::store(C, N, m0 + wm0, n0 + wn0, acc);
}
}  // namespace

struct Rung {
  static constexpr int id = 5, BM = ::BM, BN = ::BN, BK = ::BK, threads = THREADS, stages = STAGES, min_cc = 80;
  static constexpr const char* name = "mma.sync + swizzled smem + cp.async multi-stage pipeline";
  static int smem_bytes() { return SMEM_BYTES; }
  static const char* smem_layout() { return layout_name<L>(BM); }
  static std::string note() { return ""; }
  static void setup() {
    GEMM_CHECK(cudaFuncSetAttribute(gemm_rung5, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
  }
  using Plan = SimplePlan;
  static Plan prepare(const bf16* A, const bf16* B, bf16* C, int M, int N, int K) { return {A, B, C, M, N, K}; }
  static void launch(const Plan& p, cudaStream_t st) {
    gemm_rung5<<<dim3(p.N / BN, p.M / BM), THREADS, SMEM_BYTES, st>>>(p.A, p.B, p.C, p.M, p.N, p.K);
  }
  static void release(Plan&) {}
};

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
