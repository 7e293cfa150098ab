// Rung 7: warp-specialized, persistent wgmma + TMA GEMM.
//   warpgroup 0  producer: gives back registers (setmaxnreg.dec) and, from one thread, keeps the TMA ring full
//   warpgroups 1-2 consumers: take the registers (setmaxnreg.inc), each computes 64x256 of a 128x256 tile with
//                wgmma m64n256k16 and releases each stage as soon as the wgmma that read it has retired
// Two mbarriers per stage: full (TMA bytes landed; producer -> consumers), empty (8 consumer warps done; consumers
// -> producer). One CTA per SM loops over output tiles in a grouped order (GROUP_M tile rows at a time, for L2
// reuse); the ring runs on across tiles, so the next tile's loads overlap this tile's epilogue.
#include "harness.cuh"
#include "ptx.cuh"
#include "tma.cuh"

#ifndef R7_STAGES
#define R7_STAGES 4
#endif
#ifndef R7_GROUP_M
#define R7_GROUP_M 8
#endif

namespace {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = R7_STAGES, THREADS = 384, GROUP_M = R7_GROUP_M;
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;
constexpr int CONSUMER_WARPS = 8;

struct TileOrder {  // tile index -> (tile row, tile column), GROUP_M tile rows swept column by column
  int tiles_m, tiles_n;
  __device__ void coords(int tile, int& mt, int& nt) const {
    const int per_group = GROUP_M * tiles_n, g = tile / per_group, first = g * GROUP_M;
    const int rows = min(tiles_m - first, GROUP_M), r = tile % per_group;
    mt = first + r % rows;
    nt = r / rows;
  }
};

__global__ void __launch_bounds__(THREADS, 1)
    gemm_rung7(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, bf16* __restrict__ C,
               int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  const uint32_t ring = (smem_u32(smem_raw) + 1023) & ~1023u;
  const int t = threadIdx.x, wg = t / 128;
  const TileOrder order{M / BM, N / BN};
  const int num_tiles = order.tiles_m * order.tiles_n, KT = K / BK;
  if (t == 0) {
    tma_prefetch_desc(&tmA);
    tma_prefetch_desc(&tmB);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), CONSUMER_WARPS);
    }
    fence_mbar_init();
  }
  __syncthreads();

  if (wg == 0) {  // ------------------------------------------------------------------ producer
    setmaxnreg_dec<24>();
    if (t == 0) {
      int it = 0;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        int mt, nt;
        order.coords(tile, mt, nt);
        for (int kt = 0; kt < KT; ++kt, ++it) {
          const int s = it % STAGES;
          mbar_wait(smem_u32(&empty[s]), ((it / STAGES) & 1) ^ 1);  // consumers released this stage
          const uint32_t bar = smem_u32(&full[s]), dst = ring + s * STAGE_BYTES;
          mbar_arrive_expect_tx(bar, STAGE_BYTES);
          tma_load_2d(dst, &tmA, bar, kt * BK, mt * BM);
          tma_load_2d(dst + A_BYTES, &tmB, bar, kt * BK, nt * BN);
        }
      }
    }
  } else {  // ------------------------------------------------------------------------ consumers
    setmaxnreg_inc<240>();
    const int cw = wg - 1, warp = (t / 32) % 4, lane = t % 32;
    float acc[128];
    int it = 0;
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      int mt, nt;
      order.coords(tile, mt, nt);
      for (int kt = 0; kt < KT; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(smem_u32(&full[s]), (it / STAGES) & 1);
        const uint32_t a = ring + s * STAGE_BYTES + cw * 64 * 128, b = ring + s * STAGE_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks)  // the first wgmma of a tile overwrites the accumulators
          wgmma_m64n256k16(acc, desc_k_sw128(a + ks * 32), desc_k_sw128(b + ks * 32), (kt | ks) != 0);
        wgmma_commit();
        wgmma_wait<1>();  // the previous k tile's wgmma has retired: release its stage
        if (kt > 0 && lane == 0) mbar_arrive(smem_u32(&empty[(it - 1) % STAGES]));
      }
      wgmma_wait<0>();
      if (lane == 0) mbar_arrive(smem_u32(&empty[(it - 1) % STAGES]));
      // Accumulator i = 4j + 2h + c: row 16 warp + lane/4 + 8h, column 8j + 2 (lane%4) + c of this 64x256.
      bf16* crow = C + size_t(mt * BM + cw * 64 + warp * 16 + lane / 4) * N + nt * BN + 2 * (lane % 4);
#pragma unroll
      for (int j = 0; j < 32; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          *reinterpret_cast<uint32_t*>(crow + size_t(8 * h) * N + 8 * j) =
              pack_bf16x2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    }
  }
}
}  // namespace

struct Rung {
  static constexpr int id = 7, BM = ::BM, BN = ::BN, BK = ::BK, threads = THREADS, stages = STAGES, min_cc = 90;
  static constexpr const char* name = "warp-specialized persistent wgmma m64n256k16 + TMA, setmaxnreg";
  static int smem_bytes() { return SMEM_BYTES; }
  static const char* smem_layout() { return "Sw<3,3,3> o (128,64):(64,1)"; }
  static int sms;
  static void setup() {
    GEMM_CHECK(cudaFuncSetAttribute(gemm_rung7, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    GEMM_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  }
  using Plan = TmaPlan;
  static Plan prepare(const bf16* A, const bf16* B, bf16* C, int M, int N, int K) {
    return {make_tma_2d(A, M, K, BM, BK), make_tma_2d(B, N, K, BN, BK), {}, C, M, N, K};
  }
  static void launch(const Plan& p, cudaStream_t st) {
    const int tiles = (p.M / BM) * (p.N / BN);
    gemm_rung7<<<std::min(tiles, sms), THREADS, SMEM_BYTES, st>>>(p.a, p.b, p.C, p.M, p.N, p.K);
  }
  static void release(Plan&) {}
};
int Rung::sms = 0;

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
