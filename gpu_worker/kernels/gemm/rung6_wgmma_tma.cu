// Rung 6: Hopper wgmma fed by TMA. 128x128x64 block tile, two warpgroups each computing 64x128 with
// wgmma.mma_async m64n128k16 straight from shared memory. Tiles arrive by TMA in the 128B-swizzled K-major layout
// the wgmma descriptors describe, into a ring of STAGES buffers, each with an mbarrier that counts the bytes.
// No specialization: thread 0 issues the copies, and a block barrier each k tile says when a stage may be refilled.
#include "decl.cuh"
#include "harness.cuh"
#include "ptx.cuh"
#include "tma.cuh"

#ifndef R6_STAGES  // an experiment's override of the declared stages
#define R6_STAGES GEMM_STAGES
#endif
#ifndef R6_MIN_BLOCKS
#define R6_MIN_BLOCKS 2
#endif

namespace {
static_assert(GEMM_RUNG == 6, "rung 6 built with another rung's constants");
constexpr int BM = GEMM_BM, BN = GEMM_BN, BK = GEMM_BK, STAGES = R6_STAGES, THREADS = GEMM_THREADS;
static_assert(GEMM_WGMMA_M == 64 && GEMM_WGMMA_N == BN && GEMM_WGMMA_K == 16 && THREADS == 2 * 128 && BM == 128,
              "two warpgroups of wgmma m64n128k16");
static_assert(BK * 2 == GEMM_TMA_A_SWIZZLE, "a row of the k tile is one swizzle span (128 B)");
// The boxes TMA writes (innermost first) and the descriptor the tensor cores read, as declared.
constexpr TmaBox kBoxA{GEMM_TMA_A_COLS, GEMM_TMA_A_ROWS, GEMM_TMA_A_SWIZZLE};
constexpr TmaBox kBoxB{GEMM_TMA_B_COLS, GEMM_TMA_B_ROWS, GEMM_TMA_B_SWIZZLE};
static_assert(kBoxA.cols == BK && kBoxA.rows == BM && kBoxB.cols == BK && kBoxB.rows == BN, "one box per operand");
__host__ __device__ constexpr uint64_t gemm_desc(uint32_t saddr) {
  return desc_k<GEMM_DESC_LBO, GEMM_DESC_SBO, GEMM_DESC_LAYOUT>(saddr);
}
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // + slack to align the ring to 1024 B

__global__ void __launch_bounds__(THREADS, R6_MIN_BLOCKS)
    gemm_rung6(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, bf16* __restrict__ C,
               int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ __align__(8) uint64_t full[STAGES];
  const uint32_t ring = (smem_u32(smem_raw) + 1023) & ~1023u;  // 128B swizzle atoms must sit on 1024 B
  const int t = threadIdx.x, wg = t / 128, m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, KT = K / BK;
  if (t == 0) {
    tma_prefetch_desc(&tmA);
    tma_prefetch_desc(&tmB);
    for (int s = 0; s < STAGES; ++s) mbar_init(smem_u32(&full[s]), 1);
    fence_mbar_init();
  }
  __syncthreads();
  auto issue = [&](int kt) {
    const int s = kt % STAGES;
    const uint32_t bar = smem_u32(&full[s]), dst = ring + s * STAGE_BYTES;
    mbar_arrive_expect_tx(bar, STAGE_BYTES);
    tma_load_2d(dst, &tmA, bar, kt * BK, m0);
    tma_load_2d(dst + A_BYTES, &tmB, bar, kt * BK, n0);
  };
  if (t == 0)
    for (int kt = 0; kt < STAGES - 1 && kt < KT; ++kt) issue(kt);

  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f;
  for (int kt = 0; kt < KT; ++kt) {
    const int s = kt % STAGES;
    mbar_wait(smem_u32(&full[s]), (kt / STAGES) & 1);  // the stage's bytes have landed
    const uint32_t a = ring + s * STAGE_BYTES + wg * GEMM_WGMMA_M * BK * 2, b = ring + s * STAGE_BYTES + A_BYTES;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks)  // k16 step = 32 bytes along the swizzled 128-byte row
      wgmma_m64n128k16(acc, gemm_desc(a + ks * GEMM_DESC_K_STEP), gemm_desc(b + ks * GEMM_DESC_K_STEP), 1);
    wgmma_commit();
    wgmma_wait<1>();  // this warp's k tile kt-1 has retired
    __syncthreads();  // ... and every warp's: its stage may be refilled
    if (t == 0 && kt + STAGES - 1 < KT) issue(kt + STAGES - 1);
  }
  wgmma_wait<0>();
  // Accumulator i = 4j + 2h + c: row 16 warp + lane/4 + 8h, column 8j + 2 (lane%4) + c of the warpgroup's 64x128.
  const int warp = (t / 32) % 4, lane = t % 32;
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = m0 + wg * 64 + warp * 16 + lane / 4 + 8 * h, c = n0 + 8 * j + 2 * (lane % 4);
      *reinterpret_cast<uint32_t*>(C + size_t(r) * N + c) = pack_bf16x2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    }
}
}  // namespace

struct Rung {
  static constexpr int id = 6, BM = ::BM, BN = ::BN, BK = ::BK, threads = THREADS, stages = STAGES, min_cc = 90;
  static constexpr const char* name = "wgmma m64n128k16 + TMA (128B swizzle) + mbarrier ring";
  static int smem_bytes() { return SMEM_BYTES; }
  // In elements of bf16: the 128B swizzle on 16-byte chunks, CuTe's GMMA K_SW128 atom tiled down the rows.
  static const char* smem_layout() { return "Sw<3,3,3> o (128,64):(64,1)"; }
  static std::string note() { return ""; }
  // What the kernel passes to cuTensorMapEncodeTiled and to wgmma: the boxes, and the descriptors of a stage's first
  // k16 step and the next (start addresses 0 and the k step), of the second warpgroup's A and of B.
  static std::string probe() {
    return probe_box("box_A", kBoxA) + probe_box("box_B", kBoxB) + probe_int("desc", gemm_desc(0)) +
           probe_int("desc_k_step", gemm_desc(GEMM_DESC_K_STEP)) + probe_int("a_wg1_bytes", GEMM_WGMMA_M * BK * 2) +
           probe_int("b_base_bytes", A_BYTES) + probe_int("stage_bytes", STAGE_BYTES) +
           probe_int("wgmma_n", GEMM_WGMMA_N);
  }
  static void setup() {
    GEMM_CHECK(cudaFuncSetAttribute(gemm_rung6, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
  }
  using Plan = TmaPlan;
  static Plan prepare(const bf16* A, const bf16* B, bf16* C, int M, int N, int K) {
    return {make_tma_2d(A, M, K, kBoxA), make_tma_2d(B, N, K, kBoxB), {}, C, M, N, K};
  }
  static void launch(const Plan& p, cudaStream_t st) {
    gemm_rung6<<<dim3(p.N / BN, p.M / BM), THREADS, SMEM_BYTES, st>>>(p.a, p.b, p.C, p.M, p.N, p.K);
  }
  static void release(Plan&) {}
};

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
