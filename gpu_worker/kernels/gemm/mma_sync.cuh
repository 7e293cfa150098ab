// Pieces shared by the mma.sync rungs (2-5): shared-memory layouts for a (rows x 64) bf16 K-major tile, the warp's
// ldmatrix + mma.sync step over one 64-wide k tile, and the epilogue from mma accumulators to global bf16.
#pragma once
#include "decl.cuh"
#include "harness.cuh"
#include "plan.cuh"
#include "ptx.cuh"

// A K-major tile with 64 bf16 columns (128 B per row) and PITCH elements between rows, composed with the swizzle
// Sw<B,M,S> on element offsets: CuTe's Sw<B,M,S> o (rows,64):(PITCH,1). off(r, c) is the element offset of (r, c).
// Swizzles that move whole 16-byte chunks (M >= 3) keep chunks contiguous, so 16-byte stores and ldmatrix row
// addresses stay aligned. The rungs take PITCH and B, M, S from their declaration (decl.cuh).
template <int PITCH, int B, int M, int S>
struct SmemTile {
  static constexpr int kRowElems = PITCH;
  static_assert(PITCH >= 64 && PITCH % 8 == 0 && (B == 0 || M >= 3), "16-byte chunks must stay whole");
  __host__ __device__ static constexpr int off(int r, int c) {
    if constexpr (B != 0 && (1 << (M + S)) == PITCH) return swizzle_row_major<B, M, S, PITCH>(r, c);  // same map
    else return swizzle_apply<B, M, S>(r * PITCH + c);
  }
};
using SmemRowMajor = SmemTile<64, 0, 0, 0>;  // (rows,64):(64,1): ldmatrix's 8 rows 128 B apart, all in 4 banks
using SmemPadded = SmemTile<72, 0, 0, 0>;    // (rows,64):(72,1): each row shifted 4 banks, conflict-free
using SmemSwizzled = SmemTile<64, 3, 3, 3>;  // Sw<3,3,3> o (rows,64):(64,1): chunk ^= row mod 8, conflict-free

template <class L>
struct LayoutName;
template <int PITCH, int B, int M, int S>
struct LayoutName<SmemTile<PITCH, B, M, S>> {
  static const char* of(int rows) {
    static char buf[64];
    if (B) snprintf(buf, sizeof buf, "Sw<%d,%d,%d> o (%d,64):(%d,1)", B, M, S, rows, PITCH);
    else snprintf(buf, sizeof buf, "(%d,64):(%d,1)", rows, PITCH);
    return buf;
  }
};
template <class L>
const char* layout_name(int rows) {
  return LayoutName<L>::of(rows);
}

// Warp tile WTM x WTN at (wm0, wn0) of the block tile; acc[MI][NJ][4] in the m16n8 accumulator order.
template <class L, int WTM, int WTN>
struct WarpMma {
  static constexpr int MI = WTM / 16, NJ = WTN / 8;
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile must be a multiple of 16x16");

  // One k16 slice split in two, so that a kernel can load slice s+1 into a second Frag while slice s multiplies:
  // load() issues the ldmatrix.x4 (per m16 of A, per n16 of B), mma() the MI*NJ mma.sync.
  struct Frag {
    uint32_t a[MI][4];
    uint32_t b[NJ][2];
  };
  __device__ static void load(Frag& f, uint32_t sA, uint32_t sB, int wm0, int wn0, int ks) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)  // lanes 0-15: rows of k 0-7, lanes 16-31: rows of k 8-15
      ldmatrix_x4(f.a[mi], sA + 2 * L::off(wm0 + mi * 16 + (lane & 15), ks * 16 + (lane >> 4) * 8));
#pragma unroll
    for (int nj = 0; nj < NJ; nj += 2) {  // as in ktile()
      uint32_t r[4];
      ldmatrix_x4(r, sB + 2 * L::off(wn0 + nj * 8 + (lane & 7) + (lane >> 4) * 8, ks * 16 + ((lane >> 3) & 1) * 8));
      f.b[nj][0] = r[0]; f.b[nj][1] = r[1]; f.b[nj + 1][0] = r[2]; f.b[nj + 1][1] = r[3];
    }
  }
  __device__ static void mma(const Frag& f, float (&acc)[MI][NJ][4]) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const int nj = (mi & 1) ? NJ - 1 - j : j;  // serpentine: consecutive mmas share a B fragment
        mma_16816(acc[mi][nj], f.a[mi], f.b[nj][0], f.b[nj][1]);
      }
  }

  // One 64-wide k tile: 4 steps of k16, each ldmatrix.x4 per m16 of A and per n16 of B, then MI*NJ mma.sync.
  __device__ static void ktile(uint32_t sA, uint32_t sB, int wm0, int wn0, float (&acc)[MI][NJ][4]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      uint32_t bfr[NJ][2];
#pragma unroll
      // matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
      for (int nj = 0; nj < NJ; nj += 2) {
        uint32_t r[4];
        ldmatrix_x4(r, sB + 2 * L::off(wn0 + nj * 8 + (lane & 7) + (lane >> 4) * 8, ks * 16 + ((lane >> 3) & 1) * 8));
        bfr[nj][0] = r[0]; bfr[nj][1] = r[1]; bfr[nj + 1][0] = r[2]; bfr[nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {  // lanes 0-15: rows of k 0-7, lanes 16-31: rows of k 8-15
        uint32_t af[4];
        ldmatrix_x4(af, sA + 2 * L::off(wm0 + mi * 16 + (lane & 15), ks * 16 + (lane >> 4) * 8));
#pragma unroll
        for (int nj = 0; nj < NJ; ++nj) mma_16816(acc[mi][nj], af, bfr[nj][0], bfr[nj][1]);
      }
    }
  }

  // Accumulator (mi, nj, c): row 16 mi + lane/4 + 8 (c/2), columns 8 nj + 2 (lane%4) + {0, 1}.
  __device__ static void store(bf16* C, int ldc, int row0, int col0, const float (&acc)[MI][NJ][4]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int nj = 0; nj < NJ; ++nj)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = row0 + mi * 16 + (lane >> 2) + 8 * h, c = col0 + nj * 8 + 2 * (lane & 3);
          *reinterpret_cast<uint32_t*>(C + size_t(r) * ldc + c) =
              pack_bf16x2(acc[mi][nj][2 * h], acc[mi][nj][2 * h + 1]);
        }
  }
};

// Rungs 2-4: two shared-memory buffers; the next k tile is fetched into registers (16-byte loads) while the warps
// compute on the current buffer, then stored with 16-byte st.shared into the other one (one barrier per k tile).
// Only the shared-memory layout L differs between the three rungs.
#ifndef MMA_MIN_BLOCKS  // 1: no register cap; 2: capped at 128 registers (spills)
#define MMA_MIN_BLOCKS 1
#endif
#ifndef MMA_BN  // an experiment's override of the declared BN
#define MMA_BN GEMM_BN
#endif
template <class L, int BM, int BN, int WARPS_M, int WARPS_N>
__global__ void __launch_bounds__(WARPS_M * WARPS_N * 32, MMA_MIN_BLOCKS)
    gemm_mma_regprefetch(const bf16* __restrict__ A, const bf16* __restrict__ B, bf16* __restrict__ C, int M, int N,
                         int K) {
  constexpr int BK = 64, T = WARPS_M * WARPS_N * 32, WTM = BM / WARPS_M, WTN = BN / WARPS_N;
  constexpr int CA = BM * BK / 8 / T, CB = BN * BK / 8 / T;  // 16-byte chunks per thread
  constexpr int BUF_ELEMS = (BM + BN) * L::kRowElems;
  using W = WarpMma<L, WTM, WTN>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  bf16* smem = reinterpret_cast<bf16*>(smem_raw);
  const int t = threadIdx.x, warp = t >> 5;
  const int wm0 = (warp / WARPS_N) * WTM, wn0 = (warp % WARPS_N) * WTN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, KT = K / BK;
  // Chunk i of a k tile: row t/8 + (T/8) i of A (rows 0..BM-1) then of B, 16-byte column t%8. The row's swizzle
  // phase (row mod 8) is the same for every i, so each chunk's shared address is one offset plus a constant.
  constexpr int CH = CA + CB, RSTEP = T / 8, BUF_BYTES = BUF_ELEMS * 2;
  static_assert(BM % RSTEP == 0 && RSTEP % 8 == 0, "chunk rows must keep the swizzle phase");
  const bf16* gA = A + size_t(m0 + t / 8) * K + (t % 8) * 8;
  const bf16* gB = B + size_t(n0 + t / 8) * K + (t % 8) * 8;
  const uint32_t soff = smem_u32(smem) + 2 * L::off(t / 8, (t % 8) * 8);
  const size_t rstep = size_t(RSTEP) * K;
  auto fetch = [&](uint4 (&r)[CH], int kt) {  // one running pointer: few registers for addresses
    const bf16* g = gA + kt * BK;
#pragma unroll
    for (int i = 0; i < CH; ++i) {
      if (i > 0) g = i == CA ? g + (gB - gA) - (CA - 1) * rstep : g + rstep;
      r[i] = *reinterpret_cast<const uint4*>(g);
    }
  };
  auto saddr = [&](int i, int buf) { return soff + buf * BUF_BYTES + i * RSTEP * L::kRowElems * 2; };
  float acc[W::MI][W::NJ][4] = {};
  uint4 rg[CH];
  fetch(rg, 0);
#pragma unroll
  for (int i = 0; i < CH; ++i) st_shared_v4(saddr(i, 0), rg[i]);
  __syncthreads();
  for (int kt = 0; kt < KT; ++kt) {
    if (kt + 1 < KT) fetch(rg, kt + 1);  // in flight while the tensor cores work
    const uint32_t sA = smem_u32(smem + (kt & 1) * BUF_ELEMS);
    W::ktile(sA, sA + 2 * BM * L::kRowElems, wm0, wn0, acc);
    if (kt + 1 < KT) {  // the other buffer was last read before the previous barrier
#pragma unroll
      for (int i = 0; i < CH; ++i) st_shared_v4(saddr(i, (kt + 1) & 1), rg[i]);
    }
    __syncthreads();
  }
  W::store(C, N, m0 + wm0, n0 + wn0, acc);
}

// The probe of rungs 2-5: the element offset of every (row, column) of A and of B, each from its own base, as the
// kernel's L::off computes it, and where B starts in a stage.
template <class L>
std::string probe_mma_tiles(int bm, int bn) {
  return probe_table("A", bm, 64, L::off) + probe_table("B", bn, 64, L::off) +
         probe_int("b_base_elems", bm * L::kRowElems);
}

// The Rung description for rungs 2-4: the tile, warps and layout from the declaration (decl.cuh).
using DeclaredTile = SmemTile<GEMM_SMEM_PITCH, GEMM_SW_B, GEMM_SW_M, GEMM_SW_S>;
template <int ID>
struct MmaSyncRung : SimpleLaunch<MmaSyncRung<ID>> {
  static_assert(GEMM_RUNG == ID, "built with another rung's constants");
  using L = DeclaredTile;
  static constexpr int id = ID, BM = GEMM_BM, BN = MMA_BN, BK = GEMM_BK, threads = GEMM_THREADS;
  static constexpr int stages = GEMM_STAGES, min_cc = 80;
  static_assert(ID != GEMM_RUNG || (BK == 64 && stages == 2 && threads == GEMM_WARPS_M * GEMM_WARPS_N * 32),
                "the kernel's shape");
  static constexpr auto kernel = gemm_mma_regprefetch<L, BM, BN, GEMM_WARPS_M, GEMM_WARPS_N>;
  static int smem_bytes() { return 2 * (BM + BN) * L::kRowElems * 2; }
  static const char* smem_layout() { return layout_name<L>(BM); }
  static std::string note() { return "block tile 128x" + std::to_string(BN) + ", 2 shared-memory buffers"; }
  static std::string probe() { return probe_mma_tiles<L>(BM, BN); }
};
