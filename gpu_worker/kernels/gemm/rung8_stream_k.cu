// Rung 8: rung 7 (warp-specialized persistent wgmma m64n256k16 + TMA, 2-CTA cluster multicast of B, TMA-store
// epilogue) with a stream-K tail against wave quantization, and an fp16 build (-DGEMM_FP16).
//
// Work: T cluster tiles (128 CLUSTER x 256, each CTA 128x256) of KT k tiles on G persistent clusters. When
// T > G and G does not divide T (and, in the default mode, T >= 8 G), the first T - T mod G tiles run
// data-parallel (every cluster the same number of whole tiles), and the k iterations of the last T mod G tiles are cut into equal segments of `sk_per` iterations,
// one per stream-K worker (at most 2 per remainder tile, so a segment is >= KT / 2). A worker walks its segment
// in order: the end of one tile, then (maybe) the beginning of the next. Per tile, the worker holding k tile 0 (the
// "holder") does that piece last in its segment; every other contributor does its piece first (or as its whole
// segment), writes its fp32 partial to a workspace slot and bumps a per-(CTA tile, warpgroup) flag with release
// semantics; the holder waits for the flag (acquire), adds the partials into its accumulators, resets the flag for
// the next launch and stores the tile. All clusters are resident at once (grid = cudaOccupancyMaxActiveClusters),
// so the waits always end. The schedule (Schedule, make_schedule) and its host walk are in stream_k.cuh.
#include "decl.cuh"
#include "harness.cuh"
#include "ptx.cuh"
#include "tma.cuh"

#ifndef R8_STAGES  // an experiment's override of the declared stages
#define R8_STAGES GEMM_STAGES
#endif
#ifndef R8_GROUP_M
#define R8_GROUP_M 16
#endif
#ifndef R8_SK  // stream-K: 0 never (rung 7's schedule), 1 a tail when the tiles make >= R8_SK_WAVES waves, 2 a tail
#define R8_SK 1  // always, 3 every tile (each cluster the same share of all k iterations: no data-parallel waves)
#endif
#ifndef R8_SK_WAVES
#define R8_SK_WAVES 8
#endif
#ifndef R8_CLUSTER  // CTAs per cluster along M, sharing B by multicast: 2 or 4 (an override of the declared 2)
#define R8_CLUSTER GEMM_CLUSTER
#endif
#ifndef R8_WAIT_LOOP  // 1: mbarrier waits as one PTX loop (mbar_wait_loop); 2: that loop with a suspend-time hint
#define R8_WAIT_LOOP 0  //    (mbar_wait_sleep)
#endif
#ifndef R8_EPI_OVERLAP  // 1: a tile's output, packed to 16 bits in registers, is stored while the next piece's first
#define R8_EPI_OVERLAP 0  //    wgmmas run (the tensor pipe does not wait for the epilogue)
#endif

#ifndef R8_CLOCKS  // 1: each CTA's clock64 and globaltimer at its start and end, so each case reports the SM clock
#define R8_CLOCKS 1  // the kernel really ran at (NVML's samples miss the power management's drops inside a launch)
#endif

#if R8_CLOCKS
#include "clock_probe.cuh"
#endif

namespace {
static_assert(GEMM_RUNG == 8, "rung 8 built with another rung's constants");
constexpr int BM = GEMM_BM, BN = GEMM_BN, BK = GEMM_BK, STAGES = R8_STAGES, THREADS = GEMM_THREADS;
constexpr int GROUP_M = R8_GROUP_M, CLUSTER = R8_CLUSTER;
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
static_assert(CLUSTER == 2 || CLUSTER == 4, "clusters of 2 or 4 CTAs");
static_assert(GROUP_M % CLUSTER == 0, "a raster group holds whole clusters");
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int B_PART_ROWS = kBoxB.rows, B_PART_BYTES = B_BYTES / CLUSTER;
constexpr int EPI_BUF_BYTES = GEMM_EPI_ROWS * GEMM_EPI_COLS * 2;
constexpr int EPI_BYTES = 2 * 2 * EPI_BUF_BYTES;  // 2 warpgroups x 2 buffers x 64x64 elements
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + EPI_BYTES + 1024;
constexpr int CONSUMER_WARPS = 8, PARTIAL_FLOAT4 = 128 * 32;  // one warpgroup's 64x256 fp32 partial, in float4s
static_assert(SMEM_BYTES <= 227 * 1024, "stages + epilogue buffers exceed the 227 KB a block may use");
}  // namespace

#include "stream_k.cuh"

namespace {
GEMM_DEV void release(uint32_t bar) {  // a consumer warp is done with a stage, here and in every peer CTA
  mbar_arrive(bar);
  const uint32_t rank = cluster_ctarank();
#pragma unroll
  for (int p = 1; p < CLUSTER; ++p) mbar_arrive_cluster(bar, (rank + p) % CLUSTER);
}

GEMM_DEV void wait_phase(uint32_t bar, uint32_t parity) {
  if constexpr (R8_WAIT_LOOP == 2) mbar_wait_sleep(bar, parity);
  else if constexpr (R8_WAIT_LOOP == 1) mbar_wait_loop(bar, parity);
  else mbar_wait(bar, parity);
}

GEMM_DEV void named_bar_sync(int id, int count) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory"); }

__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
    gemm_rung8(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
               const __grid_constant__ CUtensorMap tmC, const Schedule sch, float4* __restrict__ ws,
               int* __restrict__ flags) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  const uint32_t ring = (smem_u32(smem_raw) + 1023) & ~1023u, epi = ring + STAGES * STAGE_BYTES;
  const int t = threadIdx.x, wg = t / 128, cid = blockIdx.x / CLUSTER;
  const uint32_t rank = cluster_ctarank();
  if (t == 0) {
    tma_prefetch_desc(&tmA);
    tma_prefetch_desc(&tmB);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), CONSUMER_WARPS * CLUSTER);
    }
    fence_mbar_init();
  }
  cluster_sync();  // the peer's barriers exist before anything multicasts into them
#if R8_CLOCKS
  if (t == 0) clock_probe_stamp(false);
#endif

  if (wg == 0) {  // ------------------------------------------------------------------ producer
    setmaxnreg_dec<24>();
    if (t == 0) {
      int it = 0;
      auto produce = [&](int tile, int kb, int ke) {
        int mt, nt;
        sch.coords(tile, mt, nt);
        mt += rank;
        for (int kt = kb; kt < ke; ++kt, ++it) {
          const int s = it % STAGES;
          wait_phase(smem_u32(&empty[s]), ((it / STAGES) & 1) ^ 1);  // every consumer in the cluster released it
          const uint32_t bar = smem_u32(&full[s]), dst = ring + s * STAGE_BYTES;
          mbar_arrive_expect_tx(bar, STAGE_BYTES);  // own A + every part of B (the peers' parts by multicast)
          tma_load_2d(dst, &tmA, bar, kt * BK, mt * BM);
          tma_load_2d_multicast(dst + A_BYTES + rank * B_PART_BYTES, &tmB, bar, kt * BK,
                                nt * BN + rank * B_PART_ROWS, (1u << CLUSTER) - 1);
        }
      };
      sch.for_each_piece(cid, produce);
    }
    __syncwarp();
  } else {  // ------------------------------------------------------------------------ consumers
    setmaxnreg_inc<240>();
    const int cw = wg - 1, warp = (t / 32) % 4, lane = t % 32, wt = t % 128;
    float acc[128];
    uint32_t packed[64];  // a finished tile's output, 2 elements per register, until it is stored
    int it = 0, pend_mt = -1, pend_nt = 0;
    // The epilogue: packed[] of tile (mt, nt) -> 128B-swizzled 64x64 shared buffers -> TMA stores.
    // packed[p] = accumulators 2p, 2p+1; accumulator i = 4j + 2h + c: row 16 warp + lane/4 + 8h, column
    // 8j + 2 (lane%4) + c of this warpgroup's 64x256.
    auto store_tile = [&](int mt, int nt) {
      const int r0 = warp * 16 + lane / 4;
#pragma unroll
      for (int q = 0; q < 4; ++q) {  // 64-column pieces through a 128B-swizzled 64x64 buffer
        const uint32_t buf = epi + (cw * 2 + (q & 1)) * EPI_BUF_BYTES;
        if (wt == 0) tma_store_wait_read<1>();  // the store that last used this buffer has read it
        named_bar_sync(1 + cw, 128);
#pragma unroll
        for (int jj = 0; jj < 8; ++jj)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int r = r0 + 8 * hh;
            const uint32_t addr = buf + epi_byte(r, 8 * jj) + (lane % 4) * 4;  // chunk jj, word lane % 4
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(packed[2 * (8 * q + jj) + hh]));
          }
        fence_proxy_async_smem();  // generic-proxy writes -> visible to the TMA engine
        named_bar_sync(1 + cw, 128);
        if (wt == 0) {
          tma_store_2d(&tmC, buf, nt * BN + GEMM_EPI_COLS * q, mt * BM + cw * GEMM_EPI_ROWS);
          tma_store_commit();
        }
      }
    };
    auto consume = [&](int tile, int kb, int ke) {
      int mt, nt;
      sch.coords(tile, mt, nt);
      mt += rank;
      for (int kt = kb; kt < ke; ++kt, ++it) {
        const int s = it % STAGES;
        wait_phase(smem_u32(&full[s]), (it / STAGES) & 1);
        const uint32_t a = ring + s * STAGE_BYTES + cw * GEMM_WGMMA_M * BK * 2, b = ring + s * STAGE_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks)  // the first wgmma of a piece overwrites the accumulators
          wgmma_m64n256k16(acc, gemm_desc(a + ks * GEMM_DESC_K_STEP), gemm_desc(b + ks * GEMM_DESC_K_STEP),
                           kt != kb || ks != 0);
        wgmma_commit();
        if (R8_EPI_OVERLAP && kt == kb && pend_mt >= 0) {  // the last tile's stores, under this k tile's wgmmas
          store_tile(pend_mt, pend_nt);
          pend_mt = -1;
        }
        wgmma_wait<1>();  // the previous k tile's wgmma has retired: release its stage everywhere it was written
        if (kt > kb && lane == 0) release(smem_u32(&empty[(it - 1) % STAGES]));
      }
      wgmma_wait<0>();
      if (lane == 0) release(smem_u32(&empty[(it - 1) % STAGES]));
      if (kb != 0 || ke != sch.kt) {  // ------------------------------------------ a stream-K piece
        const int j = tile - sch.dp_tiles, h = sch.holder(j);
        const size_t cta_tile = size_t(j) * CLUSTER + rank;
        int* flag = flags + cta_tile * 2 + cw;
        if (kb != 0) {  // a contributor: publish the partial, then the flag
          float4* dst = ws + ((cta_tile * sch.slots + (cid - h - 1)) * 2 + cw) * PARTIAL_FLOAT4 + wt;
#pragma unroll
          for (int q = 0; q < 32; ++q)
            __stcg(dst + q * 128, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
          named_bar_sync(1 + cw, 128);
          if (wt == 0) red_release_gpu(flag, 1);
          return;
        }
        const int others = sch.last(j) - h;  // the holder: wait for every contributor, add their partials
        if (wt == 0) {
          while (ld_acquire_gpu(flag) < others) {
          }
          *flag = 0;  // ready for the next launch (nobody else touches it in this one)
        }
        named_bar_sync(1 + cw, 128);
        for (int o = 0; o < others; ++o) {
          const float4* src = ws + ((cta_tile * sch.slots + o) * 2 + cw) * PARTIAL_FLOAT4 + wt;
#pragma unroll
          for (int q = 0; q < 32; ++q) {
            const float4 v = __ldcg(src + q * 128);
            acc[4 * q] += v.x;
            acc[4 * q + 1] += v.y;
            acc[4 * q + 2] += v.z;
            acc[4 * q + 3] += v.w;
          }
        }
      }
#pragma unroll
      for (int p = 0; p < 64; ++p) packed[p] = pack_elem2(acc[2 * p], acc[2 * p + 1]);
      if (R8_EPI_OVERLAP) {
        pend_mt = mt;
        pend_nt = nt;
      } else {
        store_tile(mt, nt);
      }
    };
    sch.for_each_piece(cid, consume);
    if (pend_mt >= 0) store_tile(pend_mt, pend_nt);
    if (wt == 0) tma_store_wait<0>();
  }
  __syncwarp();
#if R8_CLOCKS
  if (t == 128) clock_probe_stamp(true);  // the first consumer thread, after its last store was issued
#endif
  cluster_sync();  // no CTA leaves while its peer may still signal its barriers
}
}  // namespace

struct Plan {
  CUtensorMap a, b, c;
  Schedule sch;
  float4* ws;
  int* flags;
  int M, N, K;
};

struct Rung {
  static constexpr int id = 8, BM = ::BM * CLUSTER, BN = ::BN, BK = ::BK, threads = THREADS, stages = STAGES;
  static constexpr int min_cc = 90;
  static constexpr const char* name =
      "rung 7 + stream-K tail (data-parallel whole waves, stream-K for the remainder tiles), fp16 build";
  static int smem_bytes() { return SMEM_BYTES; }
  static const char* smem_layout() { return "Sw<3,3,3> o (128,64):(64,1)"; }
  static int max_clusters;
  static std::string describe(int M, int N, int K, int clusters) { return describe_schedule(M, N, K, clusters); }
  static std::string probe() {
    return probe_box("box_A", kBoxA) + probe_box("box_B", kBoxB) + probe_box("box_C", kBoxC) +
           probe_int("desc", gemm_desc(0)) + probe_int("desc_k_step", gemm_desc(GEMM_DESC_K_STEP)) +
           probe_int("a_wg1_bytes", GEMM_WGMMA_M * BK * 2) +
           probe_int("b_base_bytes", A_BYTES) + probe_int("stage_bytes", STAGE_BYTES) +
           probe_int("wgmma_n", GEMM_WGMMA_N) + probe_table("C", GEMM_EPI_ROWS, GEMM_EPI_COLS, epi_off);
  }
  static std::string note() {
    const int mode = stream_k_mode();
    return "persistent grid of " + std::to_string(max_clusters) + " " + std::to_string(CLUSTER) +
           "-CTA clusters, group_m " + std::to_string(GROUP_M) +
           (mode == 0 ? ", data-parallel only"
                      : mode == 1 ? ", stream-K tail from " + std::to_string(R8_SK_WAVES) + " waves"
                      : mode == 2 ? ", stream-K tail always"
                                  : ", stream-K over every tile");
  }
  static void setup() {
    GEMM_CHECK(cudaFuncSetAttribute(gemm_rung8, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1024);
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = SMEM_BYTES;
    GEMM_CHECK(cudaOccupancyMaxActiveClusters(&max_clusters, gemm_rung8, &cfg));
    if (max_clusters < 1) gemm_fatal("rung 8 cannot be resident (%d bytes of shared memory)", SMEM_BYTES);
  }
  static Plan prepare(const elem_t* A, const elem_t* B, elem_t* C, int M, int N, int K) {
    Plan p{make_tma_2d(A, M, K, kBoxA), make_tma_2d(B, N, K, kBoxB), make_tma_2d(C, M, N, kBoxC),
           make_schedule(M, N, K, max_clusters), nullptr, nullptr, M, N, K};
    const int sk_tiles = p.sch.tiles() - p.sch.dp_tiles;
    if (sk_tiles > 0) {
      const size_t cta_tiles = size_t(sk_tiles) * CLUSTER;
      GEMM_CHECK(cudaMalloc(&p.ws, cta_tiles * std::max(p.sch.slots, 1) * 2 * PARTIAL_FLOAT4 * sizeof(float4)));
      GEMM_CHECK(cudaMalloc(&p.flags, cta_tiles * 2 * sizeof(int)));
      GEMM_CHECK(cudaMemset(p.flags, 0, cta_tiles * 2 * sizeof(int)));
    }
    return p;
  }
  static void launch(const Plan& p, cudaStream_t st) {
    gemm_rung8<<<p.sch.clusters * CLUSTER, THREADS, SMEM_BYTES, st>>>(p.a, p.b, p.c, p.sch, p.ws, p.flags);
  }
#if R8_CLOCKS
  static std::string extra_json() { return clock_probe_json(max_clusters * CLUSTER); }
#endif
  static void release(Plan& p) {
    if (p.ws) GEMM_CHECK(cudaFree(p.ws));
    if (p.flags) GEMM_CHECK(cudaFree(p.flags));
  }
};
int Rung::max_clusters = 0;

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
