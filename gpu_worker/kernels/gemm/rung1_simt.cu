// Rung 1: SIMT baseline. Shared-memory tiled fp32 FMA, 128x128 block tile, 8x8 outputs per thread.
// The bf16 tile is widened to fp32 and stored transposed (M-major) so each thread reads float4 vectors.
#include "decl.cuh"
#include "harness.cuh"
#include "plan.cuh"

namespace {
static_assert(GEMM_RUNG == 1, "rung 1 built with another rung's constants");
constexpr int BM = GEMM_BM, BN = GEMM_BN, BK = GEMM_BK, THREADS = GEMM_THREADS;
// Each operand tile in fp32, (row, k) -> k * PITCH + row: M-major, CuTe (BM,BK):(1,PITCH).
using SmemTileF = float[BK][GEMM_SMEM_PITCH];
static_assert(GEMM_SMEM_PITCH >= BM && BM == BN && THREADS == 256 && BK == 16, "the loops below assume these");
// Thread t's 8x8 outputs: rows 4 ty.. of A's two 64-row halves, columns 4 tx.. of B's. Quarter q (8 lanes) of warp w
// takes ty = w + 8 (q % 2) and tx = lane % 8 + 8 [q is 1 or 2]: the two quarters of a half-warp read different
// float4s in the same banks (A: 128 B apart, B: 8 vectors apart), so no quarter repeats another's addresses and each
// ld.shared.v4 costs its four quarter-warp wavefronts, as the bank model counts (gpu_worker/gemm_decl.py).
__host__ __device__ constexpr int rung1_ty(int t) { return t / 32 + 8 * ((t % 32) / 8 % 2); }
__host__ __device__ constexpr int rung1_tx(int t) { return t % 8 + 8 * ((t % 32) / 8 == 1 || (t % 32) / 8 == 2); }

__global__ void __launch_bounds__(THREADS) gemm_rung1(const bf16* __restrict__ A, const bf16* __restrict__ B,
                                                      bf16* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) SmemTileF As;
  __shared__ __align__(16) SmemTileF Bs;
  const int t = threadIdx.x, tx = rung1_tx(t), ty = rung1_ty(t);
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int lrow = t / 2, lk = (t % 2) * 8;  // each thread loads 8 consecutive k of one row of A and of B
  const bf16* pa = A + size_t(m0 + lrow) * K + lk;
  const bf16* pb = B + size_t(n0 + lrow) * K + lk;
  float acc[8][8] = {};
  uint4 ra = *reinterpret_cast<const uint4*>(pa), rb = *reinterpret_cast<const uint4*>(pb);
  for (int k0 = 0; k0 < K; k0 += BK) {
    const bf16* ea = reinterpret_cast<const bf16*>(&ra);
    const bf16* eb = reinterpret_cast<const bf16*>(&rb);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      As[lk + i][lrow] = __bfloat162float(ea[i]);
      Bs[lk + i][lrow] = __bfloat162float(eb[i]);
    }
    __syncthreads();
    if (k0 + BK < K) {  // prefetch the next tile into registers while this one is used
      ra = *reinterpret_cast<const uint4*>(pa + k0 + BK);
      rb = *reinterpret_cast<const uint4*>(pb + k0 + BK);
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[8], b[8];
      *reinterpret_cast<float4*>(a) = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
      *reinterpret_cast<float4*>(a + 4) = *reinterpret_cast<const float4*>(&As[k][64 + ty * 4]);
      *reinterpret_cast<float4*>(b) = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
      *reinterpret_cast<float4*>(b + 4) = *reinterpret_cast<const float4*>(&Bs[k][64 + tx * 4]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint2 v;
      __nv_bfloat162 lo = __floats2bfloat162_rn(acc[i][4 * h], acc[i][4 * h + 1]);
      __nv_bfloat162 hi = __floats2bfloat162_rn(acc[i][4 * h + 2], acc[i][4 * h + 3]);
      v.x = *reinterpret_cast<uint32_t*>(&lo);
      v.y = *reinterpret_cast<uint32_t*>(&hi);
      *reinterpret_cast<uint2*>(C + size_t(row) * N + n0 + h * 64 + tx * 4) = v;
    }
  }
}
}  // namespace

struct Rung {
  static constexpr int id = 1, BM = ::BM, BN = ::BN, BK = ::BK, threads = THREADS, stages = 1, min_cc = 80;
  static constexpr const char* name = "SIMT fp32 FMA, shared-memory tiles";
  static int smem_bytes() { return 2 * int(sizeof(SmemTileF)); }
  // Each operand tile as fp32 in shared memory, (row, k) -> k * PITCH + row: M-major, read as float4 along rows.
  static const char* smem_layout() {
    static char buf[64];
    snprintf(buf, sizeof buf, "(%d,%d):(1,%d)", BM, BK, GEMM_SMEM_PITCH);
    return buf;
  }
  // The element offset of (row, k) in the tile type the kernel allocates, for both operands.
  static std::string probe() {
    static SmemTileF t;
    auto off = [](int r, int k) { return int(&t[k][r] - &t[0][0]); };
    return probe_table("A", BM, BK, off) + probe_table("B", BN, BK, off) +
           probe_table("threads", THREADS, 2, [](int t, int c) { return c ? rung1_tx(t) : rung1_ty(t); });
  }
  static std::string note() { return ""; }
  static void setup() {}
  using Plan = SimplePlan;
  static Plan prepare(const bf16* A, const bf16* B, bf16* C, int M, int N, int K) { return {A, B, C, M, N, K}; }
  static void launch(const Plan& p, cudaStream_t st) {
    gemm_rung1<<<dim3(p.N / BN, p.M / BM), THREADS, 0, st>>>(p.A, p.B, p.C, p.M, p.N, p.K);
  }
  static void release(Plan&) {}
};

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
