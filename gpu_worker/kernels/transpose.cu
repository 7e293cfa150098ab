// Matrix transpose through shared memory, four ways, beside a device-to-device copy of the same bytes.
//   naive     read rows, write columns straight to global memory (no shared memory; writes uncoalesced)
//   tiled     TILE x TILE tile in shared memory, row-major: the column read back hits one bank per word
//   padded    the same with each tile row padded by PAD elements
//   swizzled  the same with the element offset o swizzled CuTe-style: o ^ ((o >> SW_S) & (((1<<SW_B)-1) << SW_M))
// fp16 (ELEM_BYTES 2): the tiled variants move 4-byte words (half2) only. A warp loads 32 words of a tile row, stores
// them to shared memory whole, reads back one word column (32 rows, a pair of tile columns) and trades words with
// its neighbour lane (shfl.xor 1) so that each lane holds two halves of one output row: lane 2m writes output row
// 2k, lane 2m+1 output row 2k+1, word m. PAD must be even and SW_M >= 1 so that a word's two halves stay together.
// Shared-memory addresses are a per-lane base plus compile-time offsets (the swizzle costs one XOR per column).
// Compile-time constants: ELEM_BYTES (2 or 4), TILE (32 or 64; 128 for fp16), BLOCK_ROWS, PAD, SW_B, SW_M, SW_S.
// Run:  transpose --n N [--runs R] [--warmup W] [--seed S] [--variants naive,tiled,padded,swizzled] [--profile]
// Every run: fresh random input, output poisoned, L2 flushed, CUDA events; output compared on the GPU.
#include "common.cuh"

#ifndef ELEM_BYTES
#define ELEM_BYTES 4
#endif
#ifndef TILE
#define TILE 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif
#ifndef PAD
#define PAD (ELEM_BYTES == 2 ? 2 : 1)
#endif
#ifndef SW_B
#define SW_B 5
#endif
#ifndef SW_M
#define SW_M (ELEM_BYTES == 2 ? 1 : 0)
#endif
#ifndef SW_S
#define SW_S 5
#endif

#if ELEM_BYTES == 4
typedef uint32_t T;
#elif ELEM_BYTES == 2
typedef uint16_t T;
#else
#error "ELEM_BYTES must be 2 or 4"
#endif

enum Variant { NAIVE = 0, TILED = 1, PADDED = 2, SWIZZLED = 3 };

// CuTe Sw<SW_B,SW_M,SW_S> on an element offset. It is linear over XOR: swz(a ^ b) == swz(a) ^ swz(b).
__host__ __device__ constexpr unsigned swz(unsigned o) { return o ^ ((o >> SW_S) & (((1u << SW_B) - 1u) << SW_M)); }

// naive: NTILE x NTILE elements per block of (NTILE, BLOCK_ROWS) threads, no shared memory (writes uncoalesced).
constexpr int NTILE = TILE > 64 ? 64 : TILE;
__global__ void __launch_bounds__(NTILE * BLOCK_ROWS) transpose_naive(const T* __restrict__ in, T* __restrict__ out,
                                                                      int n) {
  const int x = blockIdx.x * NTILE + threadIdx.x, y = blockIdx.y * NTILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < NTILE; j += BLOCK_ROWS) out[(size_t)x * n + (y + j)] = in[(size_t)(y + j) * n + x];
}

#if ELEM_BYTES == 4
static_assert(TILE * BLOCK_ROWS <= 1024, "fp32 blocks are (TILE, BLOCK_ROWS) threads: at most 1024");

template <int V>
__device__ __forceinline__ int sidx(int r, int c) {
  if (V == PADDED) return r * (TILE + PAD) + c;
  int o = r * TILE + c;
  if (V == SWIZZLED) o = (int)swz((unsigned)o);
  return o;
}

template <int V>
__global__ void __launch_bounds__(TILE * BLOCK_ROWS) transpose_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                                       int n) {
  constexpr int ROW = (V == PADDED) ? TILE + PAD : TILE;
  __shared__ __align__(16) T tile[TILE * ROW];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += BLOCK_ROWS) tile[sidx<V>(threadIdx.y + j, threadIdx.x)] = in[(size_t)(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += BLOCK_ROWS) out[(size_t)(y + j) * n + x] = tile[sidx<V>(threadIdx.x, threadIdx.y + j)];
}
#endif

#if ELEM_BYTES == 2
static_assert(PAD % 2 == 0, "fp16 tiles are stored as 4-byte words: PAD must be even");
static_assert(SW_M >= 1, "fp16 tiles are stored as 4-byte words: the swizzle must keep bit 0 (SW_M >= 1)");
constexpr int WORDS = TILE / 2;    // 4-byte words per tile row
constexpr int GROUPS = TILE / 32;  // groups of 32 tile rows in one word column
constexpr int LOADS = TILE * WORDS / (32 * BLOCK_ROWS);  // words per thread, each way
constexpr int RSTEP = 32 * BLOCK_ROWS / WORDS;           // tile rows between one thread's loads
constexpr int KCOLS = LOADS / GROUPS;                     // word columns one warp reads back
static_assert(LOADS * 32 * BLOCK_ROWS == TILE * WORDS && KCOLS * GROUPS == LOADS && KCOLS * BLOCK_ROWS == WORDS,
              "tile / block_rows");
static_assert((RSTEP & (RSTEP - 1)) == 0 && (KCOLS & (KCOLS - 1)) == 0, "steps must be powers of two");
// A thread's load j adds D = j * RSTEP * TILE to its element offset o0 < RSTEP * TILE: no common bit, so
// swz(o0 + D) = swz(o0) ^ swz(D) = (swz(o0) ^ X) + D with X = swz(D) ^ D (the bits D moves below it): one XOR with a
// constant that repeats, plus an immediate offset. That needs the swizzle's target bits below RSTEP * TILE.
static_assert((((1u << SW_B) - 1u) << SW_M) < (unsigned)(RSTEP * TILE), "swizzle target bits above a load step");
static_assert((((1u << SW_B) - 1u) << SW_M) < 32u * TILE, "swizzle target bits above 32 tile rows");

// Word index of the word holding elements (r, 2w) and (r, 2w + 1): the layout the bank model checks.
template <int V>
__device__ __forceinline__ unsigned widx(unsigned r, unsigned w) {
  if (V == PADDED) return r * (WORDS + PAD / 2) + w;
  if (V == SWIZZLED) return swz(r * TILE + 2 * w) >> 1;
  return r * WORDS + w;
}

// Block (32, BLOCK_ROWS): lane = threadIdx.x, warp = threadIdx.y. Loads: thread (lane, warp) moves word w0 of tile
// rows r0 + j RSTEP. Reads: warp w takes word columns k = w KCOLS + c (c < KCOLS), all GROUPS groups of 32 rows, group
// fastest, so that its consecutive stores fill output rows 2k and 2k + 1 (TILE * 2 bytes each) one after the other.
template <int V>
__global__ void __launch_bounds__(32 * BLOCK_ROWS) transpose_half2(const uint32_t* __restrict__ in,
                                                                   uint32_t* __restrict__ out, int n) {
  constexpr unsigned ROWW = (V == PADDED) ? WORDS + PAD / 2 : WORDS;
  __shared__ __align__(16) uint32_t tile[TILE * ROWW];
  const unsigned lane = threadIdx.x, warp = threadIdx.y, nw = (unsigned)n / 2;
  const unsigned t = warp * 32 + lane, r0 = t / WORDS, w0 = t % WORDS;  // r0 < RSTEP
  const uint32_t* src = in + ((size_t)blockIdx.y * TILE + r0) * nw + (size_t)blockIdx.x * WORDS + w0;
  const size_t lstep = (size_t)RSTEP * nw;
  uint32_t v[LOADS];
#pragma unroll
  for (int j = 0; j < LOADS; ++j) v[j] = src[j * lstep];  // all loads in flight before the first shared store
  const unsigned s0 = V == SWIZZLED ? swz(r0 * TILE + 2 * w0) : 2 * widx<V>(r0, w0);
#pragma unroll
  for (int j = 0; j < LOADS; ++j) {
    constexpr unsigned STEP = RSTEP * TILE;  // element offset of one load step (unswizzled rows)
    const unsigned d = j * STEP;
    const unsigned word = V == SWIZZLED ? ((s0 ^ (swz(d) ^ d)) + d) >> 1 : (s0 >> 1) + j * RSTEP * ROWW;
    tile[word] = v[j];
  }
  __syncthreads();
  const unsigned odd = lane & 1, k0 = warp * KCOLS;
  const unsigned sel = odd ? 0x3276u : 0x5410u;  // even: (v.lo, p.lo); odd: (p.hi, v.hi)
  uint32_t* dst = out + ((size_t)blockIdx.x * TILE + 2 * k0 + odd) * nw + (size_t)blockIdx.y * WORDS + (lane >> 1);
  const unsigned rs = V == SWIZZLED ? swz(lane * TILE + 2 * k0) : 2 * widx<V>(lane, k0);
#pragma unroll
  for (int c = 0; c < KCOLS; ++c) {
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) {
      // rows g * 32 + lane of word column k0 + c. Swizzled: o0 = 32 g rows + 2c elements away, no common bits, so
      // swz(o0 + dr + dc) = (rs ^ swz(dc) ^ (swz(dr) ^ dr)) + dr: one XOR per column c, groups as immediate offsets.
      const unsigned dr = g * 32 * TILE, dc = 2 * c;
      const unsigned word = V == SWIZZLED ? ((rs ^ swz(dc) ^ (swz(dr) ^ dr)) + dr) >> 1 : (rs >> 1) + g * 32 * ROWW + c;
      const uint32_t x = tile[word];                        // elements (r, 2k) and (r, 2k + 1)
      const uint32_t p = __shfl_xor_sync(0xffffffffu, x, 1);  // the neighbour row's pair
      dst[(size_t)(2 * c) * nw + g * 16] = __byte_perm(x, p, sel);  // output row 2k + odd, word (g * 32 + lane) / 2
    }
  }
}
#endif

// Same bytes moved as a transpose, in 16-byte vectors: the bandwidth a kernel can hope for.
__global__ void copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, size_t n16) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) out[i] = in[i];
}

__global__ void fill_kernel(T* __restrict__ a, size_t count, uint64_t seed) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    a[i] = (T)(z ^ (z >> 31));
  }
}

// The reference: out[c][r] must equal in[r][c] everywhere (a simple, obviously-right indexing).
__global__ void verify_kernel(const T* __restrict__ in, const T* __restrict__ out, int n,
                              unsigned long long* __restrict__ bad) {
  size_t count = (size_t)n * n, stride = (size_t)gridDim.x * blockDim.x;
  unsigned long long local = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    size_t r = i / n, c = i % n;
    local += out[c * n + r] != in[i];
  }
  if (local) atomicAdd(bad, local);
}

int main(int argc, char** argv) {
  const int n = (int)ll_arg(argc, argv, "--n", 8192);
  const int runs = (int)ll_arg(argc, argv, "--runs", 20);
  const int warmup = (int)ll_arg(argc, argv, "--warmup", 3);
  const uint64_t seed = (uint64_t)ll_arg(argc, argv, "--seed", 4242);
  const std::string variants = ll_sarg(argc, argv, "--variants", "naive,tiled,padded,swizzled");
  if (n <= 0 || n % TILE) ll_fail("n must be a positive multiple of TILE", __LINE__);

  LL_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  LL_CHECK(cudaGetDeviceProperties(&prop, 0));
  const size_t count = (size_t)n * n, bytes = count * sizeof(T);
  const size_t flush_bytes = std::max<size_t>((size_t)prop.l2CacheSize * 4, 64u << 20);
  T *d_in, *d_out;
  void* d_flush;
  unsigned long long* d_bad;
  LL_CHECK(cudaMalloc(&d_in, bytes));
  LL_CHECK(cudaMalloc(&d_out, bytes));
  LL_CHECK(cudaMalloc(&d_flush, flush_bytes));
  LL_CHECK(cudaMalloc(&d_bad, 8));
  cudaEvent_t e0, e1;
  LL_CHECK(cudaEventCreate(&e0));
  LL_CHECK(cudaEventCreate(&e1));
  const int fill_blocks = prop.multiProcessorCount * 8;
  uint64_t run_no = 0;

  // One timed launch of `body`: fresh input (optional), poisoned output, L2 flushed; returns ms; counts mismatches.
  auto timed = [&](auto body, bool fresh, bool verify, long long* bad_total) -> double {
    if (fresh) {
      fill_kernel<<<fill_blocks, 256>>>(d_in, count, seed + 104729ull * run_no++);
      ll_check_launch("fill_kernel");
    }
    LL_CHECK(cudaMemset(d_out, 0xFF, bytes));
    LL_CHECK(cudaMemset(d_flush, (int)(run_no & 0xFF), flush_bytes));
    LL_CHECK(cudaEventRecord(e0));
    body();
    LL_CHECK(cudaEventRecord(e1));
    ll_check_launch("timed kernel");
    float ms = 0;
    LL_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (verify) {
      LL_CHECK(cudaMemset(d_bad, 0, 8));
      verify_kernel<<<fill_blocks, 256>>>(d_in, d_out, n, d_bad);
      ll_check_launch("verify_kernel");
      unsigned long long bad = 0;
      LL_CHECK(cudaMemcpy(&bad, d_bad, 8, cudaMemcpyDeviceToHost));
      *bad_total += (long long)bad;
    }
    return ms;
  };

  std::string json = std::string("{\"ok\": true, \"device\": ") + ll_device_json(0);
  char buf[512];
  snprintf(buf, sizeof buf,
           ", \"config\": {\"n\": %d, \"elem_bytes\": %d, \"tile\": %d, \"block_rows\": %d, \"pad\": %d, "
           "\"swizzle\": \"Sw<%d,%d,%d>\", \"runs\": %d, \"warmup\": %d, \"l2_flush_bytes\": %zu, "
           "\"smem_access_bytes\": %d}, \"variants\": {",
           n, ELEM_BYTES, TILE, BLOCK_ROWS, PAD, SW_B, SW_M, SW_S, runs, warmup, flush_bytes, (int)sizeof(uint32_t));
  json += buf;
  bool all_ok = true, first = true;
  auto measure = [&](const char* name, auto body, bool verify) {
    long long bad = 0;
    for (int i = 0; i < 2 && verify; ++i) timed(body, true, true, &bad);  // correctness first, fresh inputs
    for (int i = 0; i < warmup; ++i) timed(body, false, false, &bad);
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
      ll_progress(name, i + 1, runs);
      t.push_back(timed(body, (i % 4) == 0, verify, &bad));
    }
    double med = ll_median(t);
    snprintf(buf, sizeof buf, "%s\"%s\": {\"check\": {\"passed\": %s, \"mismatches\": %lld, \"verified\": %s}, "
             "\"median_ms\": %.6g, \"gbps\": %.6g, \"times_ms\": ",
             first ? "" : ", ", name, bad == 0 ? "true" : "false", bad, verify ? "true" : "false", med,
             2.0 * (double)bytes / (med * 1e-3) / 1e9);
    json += buf + ll_json_array(t) + "}";
    first = false;
    all_ok = all_ok && bad == 0;
  };

  dim3 grid(n / TILE, n / TILE), ngrid(n / NTILE, n / NTILE), nblock(NTILE, BLOCK_ROWS);
#if ELEM_BYTES == 2
  dim3 wblock(32, BLOCK_ROWS);
  const uint32_t* w_in = (const uint32_t*)d_in;
  uint32_t* w_out = (uint32_t*)d_out;
#define LL_TILED_LAUNCH(V) transpose_half2<V><<<grid, wblock>>>(w_in, w_out, n)
#else
#define LL_TILED_LAUNCH(V) transpose_kernel<V><<<grid, dim3(TILE, BLOCK_ROWS)>>>(d_in, d_out, n)
#endif
  measure("memcpy", [&] { LL_CHECK(cudaMemcpyAsync(d_out, d_in, bytes, cudaMemcpyDeviceToDevice)); }, false);
  measure("copy_kernel", [&] {
    copy_kernel<<<prop.multiProcessorCount * 16, 512>>>((const uint4*)d_in, (uint4*)d_out, bytes / 16);
  }, false);
  if (variants.find("naive") != std::string::npos)
    measure("naive", [&] { transpose_naive<<<ngrid, nblock>>>(d_in, d_out, n); }, true);
  if (variants.find("tiled") != std::string::npos)
    measure("tiled", [&] { LL_TILED_LAUNCH(TILED); }, true);
  if (variants.find("padded") != std::string::npos)
    measure("padded", [&] { LL_TILED_LAUNCH(PADDED); }, true);
  if (variants.find("swizzled") != std::string::npos)
    measure("swizzled", [&] { LL_TILED_LAUNCH(SWIZZLED); }, true);
  json += "}}";
  if (!all_ok) json.replace(json.find("\"ok\": true"), 10, "\"ok\": true, \"check_failed\": true");
  printf("%s\n", json.c_str());
  return all_ok ? 0 : 4;
}
