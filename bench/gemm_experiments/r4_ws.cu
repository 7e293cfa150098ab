// Rung-4 experiment: warp-specialized register staging. PRODUCERS (4 warps) copy global -> registers -> shared
// (ld.global.v4 + st.shared.v4, no cp.async), 8 consumer warps run ldmatrix + mma.sync on a 128x256x64 tile from a
// ring of XS stages guarded by full/empty mbarriers; setmaxnreg moves registers from producers to consumers.
// XCL=2 pairs vertically adjacent CTAs in a cluster that share the B tile: each producer loads A and half of B and
// writes that half into both CTAs' shared memory (st.shared::cluster), halving the B traffic from L2.
// Macros: XS stages, XFDB fragment double buffering, XCREG/XPREG register split, XBATCH chunks per batch, XSETS
// register batches in flight, XLAYOUT, XCL. Built and run by bench/gemm_rung4_experiments.py.
#include "../../gpu_worker/kernels/gemm/mma_sync.cuh"

#ifndef XS
#define XS 4
#endif
#ifndef XFDB
#define XFDB 1
#endif
#ifndef XPREG
#define XPREG 88
#endif
#ifndef XCREG
#define XCREG 208
#endif
#ifndef XBATCH
#define XBATCH 8
#endif
#ifndef XLAYOUT
#define XLAYOUT SmemSwizzled
#endif
#ifndef XSETS
#define XSETS 2
#endif
#ifndef XCL
#define XCL 1
#endif

__host__ __device__ constexpr int gcd_c(int a, int b) { return b == 0 ? a : gcd_c(b, a % b); }
GEMM_DEV uint32_t mapa(uint32_t a, uint32_t cta) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(cta));
  return r;
}
GEMM_DEV void st_cluster_v4(uint32_t a, uint4 v) {
  asm volatile("st.shared::cluster.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
GEMM_DEV void arrive_remote(uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}
GEMM_DEV void bar_wait(uint32_t bar, uint32_t parity) {  // acquire at cluster scope when a peer writes to us
  if constexpr (XCL == 1) {
    mbar_wait(bar, parity);
  } else {
    uint32_t done = 0;
    do {
      asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                   " selp.u32 %0, 1, 0, p;\n}\n"
                   : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
  }
}

namespace {
constexpr int BM = 128, BN = 256, BK = 64, KS = 4, S = XS, WARPS_M = 2, WARPS_N = 4;
constexpr int CONSUMERS = WARPS_M * WARPS_N * 32, PRODUCERS = 128, THREADS = CONSUMERS + PRODUCERS;
constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N, BN_OWN = BN / XCL;  // B rows this CTA loads
using L = XLAYOUT;
using W = WarpMma<L, WTM, WTN>;
constexpr int STAGE_BYTES = (BM + BN) * L::kRowElems * 2, BAR_OFF = S * STAGE_BYTES, SMEM_BYTES = BAR_OFF + 16 * S;
constexpr int CH = (BM + BN_OWN) * BK / 8 / PRODUCERS, RSTEP = PRODUCERS / 8, BATCH = XBATCH, NB = CH / BATCH;
constexpr int EMPTY_COUNT = XCL == 1 ? CONSUMERS : 2 * CONSUMERS / 32;
static_assert(CH % BATCH == 0 && (XCL == 1 || XCL == 2), "batches, cluster size");
// setmaxnreg.inc waits for registers that other warps of the CTA gave back: the split must fit the launch allocation
// (384 threads at the 168 registers that __launch_bounds__(384, 1) allows), or the kernel hangs.
static_assert(CONSUMERS * XCREG + PRODUCERS * XPREG <= THREADS * 168, "register split exceeds the launch allocation");

__global__ void __cluster_dims__(1, XCL, 1) __launch_bounds__(THREADS, 1)
    gemm_mma_ws(const bf16* __restrict__ A, const bf16* __restrict__ B, bf16* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t s0 = smem_u32(smem_raw);
  const uint32_t full0 = s0 + BAR_OFF, empty0 = full0 + 8 * S;
  const int t = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, KT = K / BK;
  const uint32_t rank = XCL == 1 ? 0 : cluster_ctarank(), peer = rank ^ 1;
  if (t == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full0 + 8 * s, XCL * PRODUCERS);  // with XCL=2 the peer's producers write our half of B
      mbar_init(empty0 + 8 * s, EMPTY_COUNT);     // with XCL=2 one arrival per consumer warp of both CTAs
    }
    fence_mbar_init();
  }
  if constexpr (XCL == 1) __syncthreads();
  else cluster_sync();
  if (t >= CONSUMERS) {  // producers
    setmaxnreg_dec<XPREG>();
    const int p = t - CONSUMERS;
    const bf16* gA = A + size_t(m0 + p / 8) * K + (p % 8) * 8;
    const bf16* gB = B + size_t(n0 + rank * BN_OWN + p / 8) * K + (p % 8) * 8;
    const uint32_t soff = s0 + 2 * L::off(p / 8, (p % 8) * 8);
    const uint32_t roff = XCL == 1 ? 0 : mapa(s0, peer) + 2 * L::off(p / 8, (p % 8) * 8);
    const size_t rstep = size_t(RSTEP) * K;
    // chunk row r of the sequence: A rows 0..BM-1, then this CTA's B rows; one running pointer per batch
    auto load = [&](uint4 (&r)[BATCH], int kt, int j) {
      const int row0 = j * BATCH * RSTEP;
      const bf16* ptr = (row0 < BM ? gA + size_t(row0) * K : gB + size_t(row0 - BM) * K) + kt * BK;
#pragma unroll
      for (int q = 0; q < BATCH; ++q) {
        const int row = row0 + q * RSTEP;
        if (q > 0) ptr = row == BM ? gB + kt * BK : ptr + rstep;
        r[q] = *reinterpret_cast<const uint4*>(ptr);
      }
    };
    auto store = [&](const uint4 (&r)[BATCH], int s, int j) {
#pragma unroll
      for (int q = 0; q < BATCH; ++q) {
        const int row = (j * BATCH + q) * RSTEP, srow = row < BM ? row : BM + rank * BN_OWN + (row - BM);
        const uint32_t o = s * STAGE_BYTES + srow * L::kRowElems * 2;
        st_shared_v4(soff + o, r[q]);
        if (XCL == 2 && row >= BM) st_cluster_v4(roff + o, r[q]);
      }
    };
    // batch g of the sequence (kt, j) = (g / NB, g % NB) lives in set g % SETS; SETS - 1 batches are in flight
    constexpr int SETS = XSETS, U = SETS * NB / gcd_c(SETS, NB);  // unrolled U batches: set indices static
    uint4 rs[SETS][BATCH];
    const int G = KT * NB;
#pragma unroll
    for (int g = 0; g < SETS - 1; ++g)
      if (g < G) load(rs[g], g / NB, g % NB);
    for (int g0 = 0; g0 < G; g0 += U) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int g = g0 + u;
        if (g < G) {
          const int gn = g + SETS - 1;
          if (gn < G) load(rs[(u + SETS - 1) % SETS], gn / NB, gn % NB);
          const int kt = g / NB, j = g % NB, s = kt % S;
          if (j == 0) bar_wait(empty0 + 8 * s, ((kt / S) + 1) & 1);
          store(rs[u % SETS], s, j);
          if (j == NB - 1) {
            mbar_arrive(full0 + 8 * s);
            if constexpr (XCL == 2) arrive_remote(mapa(full0 + 8 * s, peer));
          }
        }
      }
    }
  } else {  // consumers
    setmaxnreg_inc<XCREG>();
    const int warp = t >> 5;
    const int wm0 = (warp / WARPS_N) * WTM, wn0 = (warp % WARPS_N) * WTN;
    float acc[W::MI][W::NJ][4] = {};
    auto sa = [&](int s) { return s0 + s * STAGE_BYTES; };
    auto sb = [&](int s) { return s0 + s * STAGE_BYTES + 2 * BM * L::kRowElems; };
    auto release = [&](int s) {
      if constexpr (XCL == 1) {
        mbar_arrive(empty0 + 8 * s);
      } else {
        __syncwarp();
        if ((t & 31) == 0) {
          arrive_remote(mapa(empty0 + 8 * s, rank));
          arrive_remote(mapa(empty0 + 8 * s, peer));
        }
      }
    };
#if XFDB
    typename W::Frag fr[2];
    bar_wait(full0, 0);
    W::load(fr[0], sa(0), sb(0), wm0, wn0, 0);
    for (int kt = 0; kt < KT; ++kt) {
      const int s = kt % S;
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        if (ks < KS - 1) {
          W::load(fr[(ks + 1) & 1], sa(s), sb(s), wm0, wn0, ks + 1);
        } else {
          release(s);
          if (kt + 1 < KT) {
            const int s1 = (kt + 1) % S;
            bar_wait(full0 + 8 * s1, ((kt + 1) / S) & 1);
            W::load(fr[0], sa(s1), sb(s1), wm0, wn0, 0);
          }
        }
        W::mma(fr[ks & 1], acc);
      }
    }
#else
    for (int kt = 0; kt < KT; ++kt) {
      const int s = kt % S;
      bar_wait(full0 + 8 * s, (kt / S) & 1);
      W::ktile(sa(s), sb(s), wm0, wn0, acc);
      release(s);
    }
#endif
    W::store(C, N, m0 + wm0, n0 + wn0, acc);
  }
  if constexpr (XCL == 2) cluster_sync();  // the peer may arrive on our barriers until it is done
}
}  // namespace

struct Rung : SimpleLaunch<Rung> {
  static constexpr auto kernel = gemm_mma_ws;
  static constexpr int id = 4, BM = ::BM * XCL, BN = ::BN, BK = ::BK, threads = THREADS, stages = S, min_cc = 90;
  static constexpr const char* name = "rung-4 experiment: warp-specialized register staging";
  static int smem_bytes() { return SMEM_BYTES; }
  static const char* smem_layout() { return layout_name<L>(::BM); }
  static std::string note() { return "producer/consumer warps, mbarrier ring"; }
  static void launch(const Plan& p, cudaStream_t st) {  // one CTA per 128-row tile (BM counts the cluster's rows)
    gemm_mma_ws<<<dim3(p.N / ::BN, p.M / ::BM), THREADS, SMEM_BYTES, st>>>(p.A, p.B, p.C, p.M, p.N, p.K);
  }
};

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
