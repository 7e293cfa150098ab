// Rung 7: warp-specialized, persistent wgmma + TMA GEMM with 2-CTA cluster multicast and a TMA-store epilogue.
//   warpgroup 0   producer: gives registers back (setmaxnreg.dec); one thread keeps the TMA ring full
//   warpgroups 1-2 consumers: take the registers (setmaxnreg.inc); each computes 64x256 of a 128x256 tile with
//                 wgmma m64n256k16 and releases each stage as soon as the wgmma that read it has retired
// Per stage: `full` (TMA bytes landed; producer -> consumers) and `empty` (consumer warps done; consumers ->
// producer). With CLUSTER = 2 the two CTAs of a cluster work on vertically adjacent tiles that share their B tile:
// each CTA loads half of B and multicasts it into both CTAs, so a stage is free only once the consumers of *both*
// CTAs released it (their warps arrive on the empty barrier of every CTA in the cluster).
// One CTA per SM loops over tiles in a grouped order; the ring runs on across tiles, so the next tile's loads
// overlap this tile's epilogue. The epilogue writes bf16 into a 128B-swizzled shared buffer (64x64 per piece,
// double-buffered per warpgroup) and one thread stores it with TMA while the warpgroup moves on.
#include "decl.cuh"
#include "harness.cuh"
#include "ptx.cuh"
#include "tma.cuh"

#ifndef R7_STAGES  // an experiment's override of the declared stages
#define R7_STAGES GEMM_STAGES
#endif
#ifndef R7_GROUP_M
#define R7_GROUP_M 16
#endif
#ifndef R7_CLUSTER  // an experiment's override of the declared cluster size
#define R7_CLUSTER GEMM_CLUSTER
#endif
#ifndef R7_RELAXED  // 1: the remote stage release uses relaxed ordering (no fence)
#define R7_RELAXED 0
#endif
#ifndef R7_TMA_STORE
#define R7_TMA_STORE 1
#endif

namespace {
static_assert(GEMM_RUNG == 7, "rung 7 built with another rung's constants");
constexpr int BM = GEMM_BM, BN = GEMM_BN, BK = GEMM_BK, STAGES = R7_STAGES, THREADS = GEMM_THREADS;
constexpr int GROUP_M = R7_GROUP_M, CLUSTER = R7_CLUSTER;
static_assert(GEMM_WGMMA_M == 64 && GEMM_WGMMA_N == BN && GEMM_WGMMA_K == 16 && BM == 2 * GEMM_WGMMA_M &&
              THREADS == 3 * 128, "a producer and two consumer warpgroups of wgmma m64n256k16");
static_assert(BK * 2 == GEMM_TMA_A_SWIZZLE && GEMM_EPI_COLS * 2 == GEMM_TMA_C_SWIZZLE, "rows of one swizzle span");
// The boxes (innermost first) and the descriptor, as declared; B's box is the part one CTA multicasts.
constexpr TmaBox kBoxA{GEMM_TMA_A_COLS, GEMM_TMA_A_ROWS, GEMM_TMA_A_SWIZZLE};
constexpr TmaBox kBoxB{GEMM_TMA_B_COLS, CLUSTER == GEMM_CLUSTER ? GEMM_TMA_B_ROWS : BN / CLUSTER, GEMM_TMA_B_SWIZZLE};
constexpr TmaBox kBoxC{GEMM_TMA_C_COLS, GEMM_TMA_C_ROWS, GEMM_TMA_C_SWIZZLE};
static_assert(kBoxA.rows == BM && kBoxB.rows * CLUSTER == BN && kBoxC.rows == GEMM_EPI_ROWS &&
              kBoxC.cols == GEMM_EPI_COLS, "boxes and tiles agree");
__host__ __device__ constexpr uint64_t gemm_desc(uint32_t saddr) {
  return desc_k<GEMM_DESC_LBO, GEMM_DESC_SBO, GEMM_DESC_LAYOUT>(saddr);
}
// Byte offset of (row, column) in a GEMM_EPI_ROWS x GEMM_EPI_COLS epilogue buffer of 2-byte elements: the declared
// C layout Sw<B,M,S> o (rows,cols):(cols,1) in elements, which is Sw<B,M+1,S> on bytes.
__host__ __device__ constexpr int epi_byte(int r, int c) {
  return swizzle_row_major<GEMM_EPI_SW_B, GEMM_EPI_SW_M + 1, GEMM_EPI_SW_S, 2 * GEMM_EPI_COLS>(r, 2 * c);
}
__host__ __device__ constexpr int epi_off(int r, int c) { return epi_byte(r, c) / 2; }
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int B_PART_ROWS = kBoxB.rows, B_PART_BYTES = B_BYTES / CLUSTER;
constexpr int EPI_BUF_BYTES = GEMM_EPI_ROWS * GEMM_EPI_COLS * 2;
constexpr int EPI_BYTES = R7_TMA_STORE ? 2 * 2 * EPI_BUF_BYTES : 0;  // 2 warpgroups x 2 buffers x 64x64 bf16
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + EPI_BYTES + 1024;
constexpr int CONSUMER_WARPS = 8;
static_assert(CLUSTER == 1 || CLUSTER == 2, "cluster of 1 or 2 CTAs");

struct TileOrder {  // cluster tile index -> (tile row of the cluster's first CTA, tile column)
  int rows, cols;   // in cluster tiles: (M / BM / CLUSTER) x (N / BN)
  __device__ void coords(int tile, int& mt, int& nt) const {
    constexpr int G = GROUP_M / CLUSTER;
    const int per_group = G * cols, first = (tile / per_group) * G;
    const int height = min(rows - first, G), r = tile % per_group;
    mt = (first + r % height) * CLUSTER;
    nt = r / height;
  }
};

// A consumer warp is done with a stage: tell this CTA's producer and, with multicast, the peer's.
GEMM_DEV void release(uint32_t bar) {
  mbar_arrive(bar);
  if constexpr (CLUSTER > 1) {
    if constexpr (R7_RELAXED) mbar_arrive_cluster_relaxed(bar, cluster_ctarank() ^ 1);
    else mbar_arrive_cluster(bar, cluster_ctarank() ^ 1);
  }
}

GEMM_DEV void named_bar_sync(int id, int count) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory"); }

__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
    gemm_rung7(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
               const __grid_constant__ CUtensorMap tmC, bf16* __restrict__ C, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  const uint32_t ring = (smem_u32(smem_raw) + 1023) & ~1023u, epi = ring + STAGES * STAGE_BYTES;
  const int t = threadIdx.x, wg = t / 128;
  const uint32_t rank = CLUSTER > 1 ? cluster_ctarank() : 0;
  const TileOrder order{M / BM / CLUSTER, N / BN};
  const int num_tiles = order.rows * order.cols, KT = K / BK;
  const int cluster_id = blockIdx.x / CLUSTER, num_clusters = gridDim.x / CLUSTER;
  if (t == 0) {
    tma_prefetch_desc(&tmA);
    tma_prefetch_desc(&tmB);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), CONSUMER_WARPS * CLUSTER);
    }
    fence_mbar_init();
  }
  if constexpr (CLUSTER > 1) cluster_sync();  // the peer's barriers exist before anything multicasts into them
  else __syncthreads();

  if (wg == 0) {  // ------------------------------------------------------------------ producer
    setmaxnreg_dec<24>();
    if (t == 0) {
      int it = 0;
      for (int tile = cluster_id; tile < num_tiles; tile += num_clusters) {
        int mt, nt;
        order.coords(tile, mt, nt);
        mt += rank;
        for (int kt = 0; kt < KT; ++kt, ++it) {
          const int s = it % STAGES;
          mbar_wait(smem_u32(&empty[s]), ((it / STAGES) & 1) ^ 1);  // every consumer in the cluster released it
          const uint32_t bar = smem_u32(&full[s]), dst = ring + s * STAGE_BYTES;
          mbar_arrive_expect_tx(bar, STAGE_BYTES);  // own A + all parts of B (the peer's part arrives by multicast)
          tma_load_2d(dst, &tmA, bar, kt * BK, mt * BM);
          if constexpr (CLUSTER > 1)
            tma_load_2d_multicast(dst + A_BYTES + rank * B_PART_BYTES, &tmB, bar, kt * BK,
                                  nt * BN + rank * B_PART_ROWS, (1u << CLUSTER) - 1);
          else
            tma_load_2d(dst + A_BYTES, &tmB, bar, kt * BK, nt * BN);
        }
      }
    }
    __syncwarp();
  } else {  // ------------------------------------------------------------------------ consumers
    setmaxnreg_inc<240>();
    const int cw = wg - 1, warp = (t / 32) % 4, lane = t % 32, wt = t % 128;
    float acc[128];
    int it = 0;
    for (int tile = cluster_id; tile < num_tiles; tile += num_clusters) {
      int mt, nt;
      order.coords(tile, mt, nt);
      mt += rank;
      for (int kt = 0; kt < KT; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(smem_u32(&full[s]), (it / STAGES) & 1);
        const uint32_t a = ring + s * STAGE_BYTES + cw * GEMM_WGMMA_M * BK * 2, b = ring + s * STAGE_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks)  // the first wgmma of a tile overwrites the accumulators
          wgmma_m64n256k16(acc, gemm_desc(a + ks * GEMM_DESC_K_STEP), gemm_desc(b + ks * GEMM_DESC_K_STEP),
                           (kt | ks) != 0);
        wgmma_commit();
        wgmma_wait<1>();  // the previous k tile's wgmma has retired: release its stage everywhere it was written
        if (kt > 0 && lane == 0) release(smem_u32(&empty[(it - 1) % STAGES]));
      }
      wgmma_wait<0>();
      if (lane == 0) release(smem_u32(&empty[(it - 1) % STAGES]));
      // Accumulator i = 4j + 2h + c: row 16 warp + lane/4 + 8h, column 8j + 2 (lane%4) + c of this 64x256.
      const int r0 = warp * 16 + lane / 4;
      if constexpr (R7_TMA_STORE) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {  // 64-column pieces through a 128B-swizzled 64x64 buffer
          const uint32_t buf = epi + (cw * 2 + (q & 1)) * EPI_BUF_BYTES;
          if (wt == 0) tma_store_wait_read<1>();  // the store that last used this buffer has read it
          named_bar_sync(1 + cw, 128);
#pragma unroll
          for (int jj = 0; jj < 8; ++jj)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int r = r0 + 8 * h, i = 4 * (8 * q + jj) + 2 * h;
              const uint32_t addr = buf + epi_byte(r, 8 * jj) + (lane % 4) * 4;  // chunk jj, word lane % 4
              asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(pack_bf16x2(acc[i], acc[i + 1])));
            }
          fence_proxy_async_smem();  // generic-proxy writes -> visible to the TMA engine
          named_bar_sync(1 + cw, 128);
          if (wt == 0) {
            tma_store_2d(&tmC, buf, nt * BN + GEMM_EPI_COLS * q, mt * BM + cw * GEMM_EPI_ROWS);
            tma_store_commit();
          }
        }
      } else {
        bf16* crow = C + size_t(mt * BM + cw * 64 + r0) * N + nt * BN + 2 * (lane % 4);
#pragma unroll
        for (int j = 0; j < 32; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            *reinterpret_cast<uint32_t*>(crow + size_t(8 * h) * N + 8 * j) =
                pack_bf16x2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      }
    }
    if (R7_TMA_STORE && wt == 0) tma_store_wait<0>();
  }
  __syncwarp();
  if constexpr (CLUSTER > 1) cluster_sync();  // no CTA leaves while its peer may still signal its barriers
}
}  // namespace

struct Rung {
  static constexpr int id = 7, BM = ::BM * CLUSTER, BN = ::BN, BK = ::BK, threads = THREADS, stages = STAGES;
  static constexpr int min_cc = 90;
  static constexpr const char* name =
      "warp-specialized persistent wgmma m64n256k16 + TMA multicast (2-CTA cluster), setmaxnreg, TMA-store epilogue";
  static int smem_bytes() { return SMEM_BYTES; }
  static const char* smem_layout() { return "Sw<3,3,3> o (128,64):(64,1)"; }
  static std::string probe() {
    return probe_box("box_A", kBoxA) + probe_box("box_B", kBoxB) + probe_box("box_C", kBoxC) +
           probe_int("desc", gemm_desc(0)) + probe_int("desc_k_step", gemm_desc(GEMM_DESC_K_STEP)) +
           probe_int("a_wg1_bytes", GEMM_WGMMA_M * BK * 2) +
           probe_int("b_base_bytes", A_BYTES) + probe_int("stage_bytes", STAGE_BYTES) +
           probe_int("wgmma_n", GEMM_WGMMA_N) + probe_table("C", GEMM_EPI_ROWS, GEMM_EPI_COLS, epi_off);
  }
  static std::string note() {
    return "persistent grid " + std::to_string(grid) + " CTAs, cluster " + std::to_string(CLUSTER) + ", group_m " +
           std::to_string(GROUP_M) + (R7_TMA_STORE ? ", TMA-store epilogue" : ", direct-store epilogue");
  }
  static int grid;
  static void setup() {
    GEMM_CHECK(cudaFuncSetAttribute(gemm_rung7, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1024);
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = SMEM_BYTES;
    int clusters = 0;  // how many clusters fit on the device at once: the persistent grid
    GEMM_CHECK(cudaOccupancyMaxActiveClusters(&clusters, gemm_rung7, &cfg));
    if (clusters < 1) gemm_fatal("rung 7 cannot be resident (%d bytes of shared memory)", SMEM_BYTES);
    grid = clusters * CLUSTER;
  }
  using Plan = TmaPlan;
  static Plan prepare(const bf16* A, const bf16* B, bf16* C, int M, int N, int K) {
    return {make_tma_2d(A, M, K, kBoxA), make_tma_2d(B, N, K, kBoxB), make_tma_2d(C, M, N, kBoxC), C, M, N, K};
  }
  static void launch(const Plan& p, cudaStream_t st) {
    const int tiles = (p.M / BM) * (p.N / BN) * CLUSTER;
    gemm_rung7<<<std::min(tiles, grid), THREADS, SMEM_BYTES, st>>>(p.a, p.b, p.c, p.C, p.M, p.N, p.K);
  }
  static void release(Plan&) {}
};
int Rung::grid = 0;

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
