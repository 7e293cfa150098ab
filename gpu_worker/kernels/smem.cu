// Shared-memory access benchmark. Every warp issues the same NACC warp-wide loads (one 32-lane address table,
// computed in Python from a CuTe layout) ITERS times; the time per load gives cycles per instruction, which for a
// throughput-bound loop equals the wavefronts the bank model predicts.
//
// Compile-time constants (-D):
//   ELEM_BYTES  1, 2, 4, 8 or 16: width of one ordinary ld.shared per lane            (MODE 0)
//   MODE        0: ld.shared of ELEM_BYTES;  1: ldmatrix.m8n8.x{LDM_NUM}.b16 (.trans when LDM_TRANS)
//   LDM_NUM     1, 2 or 4;  LDM_TRANS 0 or 1
//   NACC        number of distinct warp accesses in the unrolled loop body (rows of the address table)
//   WARPS       warps per block
// Run:  smem --table FILE --footprint BYTES [--iters N] [--runs R] [--warmup W] [--seed S] [--profile]
//   FILE holds NACC*32 byte offsets (access-major, lane-minor). Prints one JSON object.
#include "common.cuh"
#include "smem_ops.cuh"

#ifndef ELEM_BYTES
#define ELEM_BYTES 4
#endif
#ifndef MODE
#define MODE 0
#endif
#ifndef LDM_NUM
#define LDM_NUM 4
#endif
#ifndef LDM_TRANS
#define LDM_TRANS 0
#endif
#ifndef NACC
#define NACC 16
#endif
#ifndef WARPS
#define WARPS 8
#endif


__device__ __forceinline__ uint32_t load_sum(uint32_t addr) {
#if MODE == 1
  return ldmatrix_sum<LDM_NUM, (LDM_TRANS != 0)>(addr);
#elif ELEM_BYTES == 1 || ELEM_BYTES == 2 || ELEM_BYTES == 4 || ELEM_BYTES == 8 || ELEM_BYTES == 16
  return ld_shared_sum<ELEM_BYTES>(addr);
#else
#error "ELEM_BYTES must be 1, 2, 4, 8 or 16"
#endif
}

// out[thread] = iters * sum over accesses of the words the lane received (mod 2^32).
// stamps[block] = {clock64 start, clock64 end, globaltimer start, globaltimer end} of thread 0.
// `zero` is 0 at run time; the compiler cannot know it, so `base + (it & zero)` changes (for it) every iteration and
// the loads cannot be hoisted out of the loop (ptxas hoists loop-invariant shared loads otherwise).
__global__ void __launch_bounds__(WARPS * 32) smem_kernel(const uint32_t* __restrict__ fill, int fill_words,
                                                          const uint32_t* __restrict__ table, int iters, int zero,
                                                          uint32_t* __restrict__ out,
                                                          unsigned long long* __restrict__ stamps) {
  extern __shared__ __align__(128) uint32_t tile[];
  for (int i = threadIdx.x; i < fill_words; i += blockDim.x) tile[i] = fill[i];
  const int lane = threadIdx.x & 31;
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(tile);
  uint32_t addr[NACC];
#pragma unroll
  for (int a = 0; a < NACC; ++a) addr[a] = table[a * 32 + lane];
  __syncthreads();
  unsigned long long c0 = clock64(), t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  uint32_t acc = 0;
  for (int it = 0; it < iters; ++it) {
    const uint32_t b = base + (uint32_t)(it & zero);
#pragma unroll
    for (int a = 0; a < NACC; ++a) acc += load_sum(b + addr[a]);
  }
  unsigned long long c1 = clock64(), t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  if (threadIdx.x == 0) {
    stamps[4 * blockIdx.x + 0] = c0;
    stamps[4 * blockIdx.x + 1] = c1;
    stamps[4 * blockIdx.x + 2] = t0;
    stamps[4 * blockIdx.x + 3] = t1;
  }
}

static uint32_t word_at(const std::vector<uint32_t>& fill, uint32_t byte) { return fill[byte / 4]; }
[[maybe_unused]] static uint32_t b16_at(const std::vector<uint32_t>& fill, uint32_t byte) {
  return (word_at(fill, byte) >> (8 * (byte & 2))) & 0xFFFFu;
}

// What lane `lane` receives from access `a`, summed as 32-bit words (the reference for the check).
static uint32_t expected_lane(const std::vector<uint32_t>& fill, const std::vector<uint32_t>& table, int a, int lane) {
  const uint32_t* row = &table[a * 32];
#if MODE == 1
  uint32_t s = 0;
  for (int m = 0; m < LDM_NUM; ++m) {
#if LDM_TRANS
    uint32_t col = lane / 4, r = 2 * (lane % 4);
    uint32_t lo = b16_at(fill, row[8 * m + r] + 2 * col), hi = b16_at(fill, row[8 * m + r + 1] + 2 * col);
    s += lo | (hi << 16);
#else
    s += word_at(fill, row[8 * m + lane / 4] + 4 * (lane % 4));
#endif
  }
  return s;
#else
  uint32_t byte = row[lane];
  if (ELEM_BYTES == 1) return (word_at(fill, byte) >> (8 * (byte & 3))) & 0xFFu;
  if (ELEM_BYTES == 2) return b16_at(fill, byte);
  uint32_t s = 0;
  for (int k = 0; k < ELEM_BYTES / 4; ++k) s += word_at(fill, byte + 4 * k);
  return s;
#endif
}

int main(int argc, char** argv) {
  const char* table_path = ll_sarg(argc, argv, "--table", nullptr);
  const long long footprint = ll_arg(argc, argv, "--footprint", 0);
  const int iters = (int)ll_arg(argc, argv, "--iters", 1024);
  const int runs = (int)ll_arg(argc, argv, "--runs", 30);
  const int warmup = (int)ll_arg(argc, argv, "--warmup", 3);
  const uint64_t seed = (uint64_t)ll_arg(argc, argv, "--seed", 12345);
  const bool profile = ll_flag(argc, argv, "--profile");
  const int zero = (int)ll_arg(argc, argv, "--zero", 0);  // always 0; read at run time on purpose
  if (!table_path || footprint <= 0) ll_fail("usage: smem --table FILE --footprint BYTES", __LINE__);

  std::vector<uint32_t> table;
  FILE* f = fopen(table_path, "r");
  if (!f) ll_fail(std::string("cannot open table ") + table_path, __LINE__);
  unsigned long v;
  while (fscanf(f, "%lu", &v) == 1) table.push_back((uint32_t)v);
  fclose(f);
  if ((int)table.size() != NACC * 32) ll_fail("table must hold NACC*32 offsets", __LINE__);
  const int fill_words = (int)((footprint + 15) / 16 * 4);
  for (uint32_t off : table)
    if (off + (MODE == 1 ? 16 : ELEM_BYTES) > (uint32_t)fill_words * 4) ll_fail("table offset past footprint", __LINE__);

  int dev = 0;
  LL_CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  LL_CHECK(cudaGetDeviceProperties(&prop, dev));
  const size_t smem_bytes = (size_t)fill_words * 4;
  LL_CHECK(cudaFuncSetAttribute(smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes));
  int per_sm = 0;
  LL_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, smem_kernel, WARPS * 32, smem_bytes));
  if (per_sm < 1) ll_fail("tile does not fit in shared memory", __LINE__);
  const int blocks = profile ? prop.multiProcessorCount : prop.multiProcessorCount * per_sm;
  const int threads = WARPS * 32;
  const size_t nout = (size_t)blocks * threads;

  uint32_t *d_fill, *d_table, *d_out;
  unsigned long long* d_stamps;
  LL_CHECK(cudaMalloc(&d_fill, smem_bytes));
  LL_CHECK(cudaMalloc(&d_table, table.size() * 4));
  LL_CHECK(cudaMalloc(&d_out, nout * 4));
  LL_CHECK(cudaMalloc(&d_stamps, (size_t)blocks * 32));
  LL_CHECK(cudaMemcpy(d_table, table.data(), table.size() * 4, cudaMemcpyHostToDevice));

  std::vector<uint32_t> fill(fill_words), out(nout);
  std::vector<unsigned long long> stamps(4 * (size_t)blocks);
  long long mismatches = 0, checked = 0;
  std::string first_bad;
  int run_no = 0;
  // One launch on fresh random data, output poisoned first; returns the kernel time in ms and checks every lane.
  auto launch = [&](int n_iters, bool check, double* clock_mhz) -> double {
    LLRng rng(seed + 7919ull * (uint64_t)(run_no++));
    for (auto& w : fill) w = rng.next();
    LL_CHECK(cudaMemcpy(d_fill, fill.data(), smem_bytes, cudaMemcpyHostToDevice));
    LL_CHECK(cudaMemset(d_out, 0xA5, nout * 4));
    cudaEvent_t e0, e1;
    LL_CHECK(cudaEventCreate(&e0));
    LL_CHECK(cudaEventCreate(&e1));
    LL_CHECK(cudaEventRecord(e0));
    smem_kernel<<<blocks, threads, smem_bytes>>>(d_fill, fill_words, d_table, n_iters, zero, d_out, d_stamps);
    LL_CHECK(cudaEventRecord(e1));
    ll_check_launch("smem_kernel");
    float ms = 0;
    LL_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (check) {
      LL_CHECK(cudaMemcpy(out.data(), d_out, nout * 4, cudaMemcpyDeviceToHost));
      uint32_t want[32];
      for (int lane = 0; lane < 32; ++lane) {
        uint32_t s = 0;
        for (int a = 0; a < NACC; ++a) s += expected_lane(fill, table, a, lane);
        want[lane] = s * (uint32_t)n_iters;
      }
      for (size_t i = 0; i < nout; ++i) {
        ++checked;
        if (out[i] != want[i % 32]) {
          if (!mismatches) {
            char b[160];
            snprintf(b, sizeof b, "thread %zu lane %zu: got %u, expected %u", i, i % 32, out[i], want[i % 32]);
            first_bad = b;
          }
          ++mismatches;
        }
      }
    }
    if (clock_mhz) {
      LL_CHECK(cudaMemcpy(stamps.data(), d_stamps, stamps.size() * 8, cudaMemcpyDeviceToHost));
      std::vector<double> mhz;
      for (int b = 0; b < blocks; ++b) {
        double dc = (double)(stamps[4 * b + 1] - stamps[4 * b]), dt = (double)(stamps[4 * b + 3] - stamps[4 * b + 2]);
        if (dt > 0) mhz.push_back(dc / dt * 1e3);
      }
      *clock_mhz = ll_median(mhz);
    }
    return ms;
  };

  std::vector<double> times, clocks;
  if (!profile) {
    ll_progress("checking", 0, 2);
    launch(1, true, nullptr);  // correctness first: one pass, every lane compared, then three
    launch(3, true, nullptr);
    for (int i = 0; i < warmup; ++i) launch(iters, false, nullptr);
    for (int i = 0; i < runs; ++i) {
      ll_progress("timing", i + 1, runs);
      double mhz = 0;
      times.push_back(launch(iters, true, &mhz));
      clocks.push_back(mhz);
    }
  } else {
    launch(iters, true, nullptr);
  }

  const double warp_accesses = (double)blocks * WARPS * (double)iters * NACC;
  const double bytes_per_access = MODE == 1 ? 128.0 * LDM_NUM : 32.0 * ELEM_BYTES;
  printf("{\"ok\": true, \"device\": %s, \"config\": {\"elem_bytes\": %d, \"mode\": \"%s\", \"ldmatrix_num\": %d, "
         "\"trans\": %s, \"nacc\": %d, \"warps_per_block\": %d, \"blocks\": %d, \"blocks_per_sm\": %d, "
         "\"iters\": %d, \"smem_bytes\": %zu, \"profile\": %s}, ",
         ll_device_json(dev).c_str(), ELEM_BYTES, MODE == 1 ? "ldmatrix" : "lds", LDM_NUM, LDM_TRANS ? "true" : "false",
         NACC, WARPS, blocks, per_sm, iters, smem_bytes, profile ? "true" : "false");
  printf("\"check\": {\"passed\": %s, \"checked\": %lld, \"mismatches\": %lld, \"first_mismatch\": \"%s\"}, ",
         mismatches == 0 ? "true" : "false", checked, mismatches, ll_escape(first_bad).c_str());
  printf("\"warp_accesses\": %.0f, \"bytes_per_warp_access\": %.0f, \"times_ms\": %s, \"sm_clock_mhz\": %s}\n",
         warp_accesses, bytes_per_access, ll_json_array(times).c_str(), ll_json_array(clocks).c_str());
  return mismatches == 0 ? 0 : 4;
}
