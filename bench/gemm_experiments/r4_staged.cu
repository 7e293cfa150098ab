// Rung-4 experiments without warp specialization (no cp.async anywhere), on a 128x256x64 tile of 8 warps:
//   XKIND=0  streamed: 3 shared buffers; every k16 slice issues a quarter of tile kt+2 into registers and stores the
//            quarter issued XDIST slices earlier; fragments double-buffered, one barrier before the last slice
//            (the rung-5 main loop with register staging instead of cp.async). XBM/XBN/XWM/XWN/XMINB: other tiles.
//   XKIND=1  the committed rung-4 schedule (next tile in registers, stored after the k tile) plus an L1 prefetch
//            (prefetch.global.L1) of tile kt+XPF, XPFS prefetches per 128-byte row; XPF=0: no prefetch.
//   XDIAG=1  every k tile reads tile 0 (loads hit in cache: the schedule without memory latency; wrong result,
//            timed by the plain loop in main); XDIAG=2 no global loads or shared stores at all (main loop only).
// Built and run by bench/gemm_rung4_experiments.py.
#include "../../gpu_worker/kernels/gemm/mma_sync.cuh"

#ifndef XBM
#define XBM 128
#endif
#ifndef XBN
#define XBN 256
#endif
#ifndef XWM
#define XWM 2
#endif
#ifndef XWN
#define XWN 4
#endif
#ifndef XMINB
#define XMINB 1
#endif
#ifndef XDIST
#define XDIST 2
#endif
#ifndef XLAYOUT
#define XLAYOUT SmemSwizzled
#endif
#ifndef XDIAG
#define XDIAG 0
#endif
#ifndef XFDB
#define XFDB 1
#endif
#ifndef XNC
#define XNC 0
#endif

GEMM_DEV uint4 ldg16(const void* p) {
  uint4 v;
#if XNC
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#else
  v = *reinterpret_cast<const uint4*>(p);
#endif
  return v;
}
GEMM_DEV void sts16(uint32_t a, uint4 v) { st_shared_v4(a, v); }

// The 16-byte chunks one thread copies per k tile: chunk i is row t/8 + (T/8) i of A (rows 0..BM-1) then of B,
// 16-byte column t%8. Every chunk keeps the row's swizzle phase, so its shared address is one offset plus a constant.
template <class L, int BM, int BN, int T>
struct Chunks {
  static constexpr int BK = 64, RSTEP = T / 8, BUF_BYTES = (BM + BN) * L::kRowElems * 2;
  const bf16* gA;
  const bf16* gB;
  int K;
  uint32_t s0, soff;  // shared base, this thread's offset in a buffer
  __device__ Chunks(const bf16* A, const bf16* B, int m0, int n0, int K_, uint32_t s0_, int t)
      : gA(A + size_t(m0 + t / 8) * K_ + (t % 8) * 8), gB(B + size_t(n0 + t / 8) * K_ + (t % 8) * 8), K(K_),
        s0(s0_), soff(2 * L::off(t / 8, (t % 8) * 8)) {}
  __device__ const bf16* gaddr(int i, int kt) const {
    const int r = i * RSTEP;
    return (r < BM ? gA + size_t(r) * K : gB + size_t(r - BM) * K) + (XDIAG == 1 ? 0 : kt * BK);
  }
  __device__ uint32_t saddr(int i, int buf) const {
    return s0 + buf * BUF_BYTES + soff + i * RSTEP * L::kRowElems * 2;
  }
};

template <class L, int BM, int BN, int WARPS_M, int WARPS_N, int MINB, int DIST>
__global__ void __launch_bounds__(WARPS_M * WARPS_N * 32, MINB)
    gemm_mma_streamed(const bf16* __restrict__ A, const bf16* __restrict__ B, bf16* __restrict__ C, int M, int N, int K) {
  constexpr int BK = 64, KS = 4, NBUF = 3, T = WARPS_M * WARPS_N * 32, WTM = BM / WARPS_M, WTN = BN / WARPS_N;
  constexpr int CH = (BM + BN) * BK / 8 / T, PART = CH / KS, RSTEP = T / 8;
  static_assert(CH % KS == 0 && BM % RSTEP == 0 && 4 % DIST == 0, "shape");
  constexpr int BUF_BYTES = (BM + BN) * L::kRowElems * 2;
  using W = WarpMma<L, WTM, WTN>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t s0 = smem_u32(smem_raw);
  const int t = threadIdx.x, warp = t >> 5;
  const int wm0 = (warp / WARPS_N) * WTM, wn0 = (warp % WARPS_N) * WTN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, KT = K / BK;
  const Chunks<L, BM, BN, T> ch(A, B, m0, n0, K, s0, t);
  // Prologue: tiles 0 and 1 straight into buffers 0 and 1.
  for (int kt = 0; kt < 2 && kt < KT; ++kt) {
#pragma unroll
    for (int i = 0; i < CH; ++i) sts16(ch.saddr(i, kt), ldg16(ch.gaddr(i, kt)));
  }
  __syncthreads();
  float acc[W::MI][W::NJ][4] = {};
  typename W::Frag fr[1 + XFDB];
  uint4 stage[DIST][PART];
  if (XFDB) W::load(fr[0], s0, s0 + 2 * BM * L::kRowElems, wm0, wn0, 0);
  for (int kt = 0; kt < KT; ++kt) {
    const int buf = kt % NBUF;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      // store the part issued DIST slices ago: part (ks - DIST) mod 4 of tile kt + 1 + (ks >= DIST)
      if (XDIAG != 2) {
        const int tile = kt + 1 + (ks >= DIST ? 1 : 0), part = (ks - DIST + 4) % 4;
        if (tile >= 2 && tile < KT) {
#pragma unroll
          for (int j = 0; j < PART; ++j) sts16(ch.saddr(part * PART + j, tile % NBUF), stage[ks % DIST][j]);
        }
      }
      // issue part ks of tile kt + 2
      if (XDIAG != 2 && kt + 2 < KT) {
#pragma unroll
        for (int j = 0; j < PART; ++j) stage[ks % DIST][j] = ldg16(ch.gaddr(ks * PART + j, kt + 2));
      }
#if XFDB
      if (ks == KS - 1) {
        __syncthreads();  // tile kt+1 complete; every warp is done reading tile kt's buffer
        if (kt + 1 < KT) {
          const uint32_t nb = s0 + ((kt + 1) % NBUF) * BUF_BYTES;
          W::load(fr[0], nb, nb + 2 * BM * L::kRowElems, wm0, wn0, 0);
        }
      } else {
        const uint32_t cb = s0 + buf * BUF_BYTES;
        W::load(fr[(ks + 1) & 1], cb, cb + 2 * BM * L::kRowElems, wm0, wn0, ks + 1);
      }
      W::mma(fr[ks & 1], acc);
#else
      {
        const uint32_t cb = s0 + buf * BUF_BYTES;
        W::load(fr[0], cb, cb + 2 * BM * L::kRowElems, wm0, wn0, ks);
        W::mma(fr[0], acc);
        if (ks == KS - 1) __syncthreads();
      }
#endif
    }
  }
  W::store(C, N, m0 + wm0, n0 + wn0, acc);
}


#ifndef XPF
#define XPF 2
#endif
#ifndef XPFS
#define XPFS 1
#endif
GEMM_DEV void pf_l1(const void* p) { asm volatile("prefetch.global.L1 [%0];\n" ::"l"(p)); }

// Two buffers, the next k tile through registers (loaded at the tile's start, stored at its end), plus an L1
// prefetch of tile kt+PF so that those register loads hit L1.
template <class L, int BM, int BN, int WARPS_M, int WARPS_N, int PF, int PFS>
__global__ void __launch_bounds__(WARPS_M * WARPS_N * 32, 1)
    gemm_mma_pf(const bf16* __restrict__ A, const bf16* __restrict__ B, bf16* __restrict__ C, int M, int N, int K) {
  constexpr int BK = 64, T = WARPS_M * WARPS_N * 32, WTM = BM / WARPS_M, WTN = BN / WARPS_N;
  constexpr int CH = (BM + BN) * BK / 8 / T;
  constexpr int BUF_BYTES = (BM + BN) * L::kRowElems * 2;
  using W = WarpMma<L, WTM, WTN>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t s0 = smem_u32(smem_raw);
  const int t = threadIdx.x, warp = t >> 5;
  const int wm0 = (warp / WARPS_N) * WTM, wn0 = (warp % WARPS_N) * WTN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, KT = K / BK;
  const Chunks<L, BM, BN, T> ch(A, B, m0, n0, K, s0, t);
  // prefetch rows: thread t takes rows t, t+T, ... of the (BM+BN) rows, PFS prefetches per 128-byte row
  auto prefetch = [&](int kt) {
#pragma unroll
    for (int r0 = 0; r0 < BM + BN; r0 += T) {
      const int r = r0 + t;
      if (r < BM + BN) {
        const bf16* p = (r < BM ? A + size_t(m0 + r) * K : B + size_t(n0 + r - BM) * K) + kt * BK;
#pragma unroll
        for (int s = 0; s < PFS; ++s) pf_l1(p + s * (64 / PFS));
      }
    }
  };
  uint4 rg[CH];
  float acc[W::MI][W::NJ][4] = {};
#pragma unroll
  for (int p = 1; p < PF; ++p)
    if (p < KT) prefetch(p);
#pragma unroll
  for (int i = 0; i < CH; ++i) sts16(ch.saddr(i, 0), ldg16(ch.gaddr(i, 0)));
  __syncthreads();
  for (int kt = 0; kt < KT; ++kt) {
    if (PF > 0 && kt + PF < KT) prefetch(kt + PF);
    if (XDIAG != 2 && kt + 1 < KT) {
#pragma unroll
      for (int i = 0; i < CH; ++i) rg[i] = ldg16(ch.gaddr(i, kt + 1));
    }
    const uint32_t sA = s0 + (kt & 1) * BUF_BYTES;
    W::ktile(sA, sA + 2 * BM * L::kRowElems, wm0, wn0, acc);
    if (XDIAG != 2 && kt + 1 < KT) {
#pragma unroll
      for (int i = 0; i < CH; ++i) sts16(ch.saddr(i, (kt + 1) & 1), rg[i]);
    }
    __syncthreads();
  }
  W::store(C, N, m0 + wm0, n0 + wn0, acc);
}

#ifndef XKIND
#define XKIND 0
#endif
struct Rung : SimpleLaunch<Rung> {
  static constexpr int id = 4, BM = XBM, BN = XBN, BK = 64, threads = XWM * XWN * 32, stages = 3, min_cc = 80;
  static constexpr const char* name = "experiment";
  using L = XLAYOUT;
  #if XKIND == 0
  static constexpr auto kernel = gemm_mma_streamed<L, BM, BN, XWM, XWN, XMINB, XDIST>;
  static constexpr int NB = 3;
#else
  static constexpr auto kernel = gemm_mma_pf<L, BM, BN, XWM, XWN, XPF, XPFS>;
  static constexpr int NB = 2;
#endif
  static int smem_bytes() { return NB * (BM + BN) * L::kRowElems * 2; }
  static const char* smem_layout() { return layout_name<L>(BM); }
  static std::string note() { return "streamed"; }
};

int main(int argc, char** argv) {
#if XDIAG
  const int n = 4096;
  bf16 *A, *B, *C;
  cudaMalloc(&A, size_t(n) * n * 2); cudaMalloc(&B, size_t(n) * n * 2); cudaMalloc(&C, size_t(n) * n * 2);
  cudaMemset(A, 0, size_t(n) * n * 2); cudaMemset(B, 0, size_t(n) * n * 2);
  Rung::setup();
  Rung::Plan p{A, B, C, n, n, n};
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int i = 0; i < 5; ++i) Rung::launch(p, 0);
  cudaEventRecord(e0);
  for (int i = 0; i < 20; ++i) Rung::launch(p, 0);
  cudaEventRecord(e1); cudaEventSynchronize(e1);
  float ms; cudaEventElapsedTime(&ms, e0, e1);
  printf("{\"ok\": true, \"results\": [{\"m\": %d, \"n\": %d, \"k\": %d, \"tflops\": %.1f, \"err\": \"%s\"}]}\n", n, n, n,
         2.0 * n * n * n / (ms / 20) * 1e-9, cudaGetErrorString(cudaGetLastError()));
  return 0;
#else
  return gemm_main<Rung>(argc, argv);
#endif
}
