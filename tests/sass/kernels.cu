// Kernels whose parameter accesses tests/test_analyzer_sass.c checks after
// compiling this file to cubins (several architectures and build modes).
#include <cstddef>

struct Pair { const float *in; float *out; int n; };
struct Wide { int a; int b; float *p; double d; float *q; };

__global__ void k_read(const float *x, float *y, size_t n)
{ size_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * 2.f; }
__global__ void k_inplace(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1.f; }
__global__ void k_atomic(float *acc, const float *v) { atomicAdd(acc, v[threadIdx.x]); }
__global__ void k_unused(float *p, float *q) { q[threadIdx.x] = 1.f; }
__global__ void k_scalar(float *y, size_t n, size_t m) { if (threadIdx.x < n) y[threadIdx.x] = (float)m; }
__global__ void k_grid(const float *x, float *y, size_t n)
{ for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i]; }
__global__ void k_walk(const float *x, float *y, int n)
{ float s = 0; for (int i = 0; i < n; i++) { s += *x; x += blockDim.x; } y[threadIdx.x] = s; }
__global__ void k_vec(const float4 *x, float4 *y) { int i = threadIdx.x; float4 v = x[i]; v.x += 1; y[i] = v; }
__global__ void k_ldg(const float *__restrict__ x, float *__restrict__ y) { int i = threadIdx.x; y[i] = __ldg(&x[i]) + x[i + 1]; }
__global__ void k_struct(Pair p) { int i = threadIdx.x; if (i < p.n) p.out[i] = p.in[i]; }
__global__ void k_wide(int k, Wide w) { int i = threadIdx.x; if (i < w.a) w.q[i] = w.p[i + w.b] + k; }
__global__ void k_escape(float *x, float **slot) { *slot = x; }
__device__ __noinline__ void dev_write(float *p, int i) { p[i] = 3.f; }
__global__ void k_call(float *x, float *y) { dev_write(x, threadIdx.x); y[0] = 1; }
__global__ void k_constwrite(const float *x) { const_cast<float *>(x)[threadIdx.x] = 1.f; }
__global__ void k_many(float *a0, float *a1, float *a2, float *a3, float *a4, float *a5, float *a6,
                       float *a7, float *a8, float *a9, float *a10, float *a11, float *a12, float *a13,
                       float *a14, float *a15, float *a16, float *a17, float *a18, float *a19,
                       float *a20, float *a21)
{
    int i = threadIdx.x;
    a21[i] = a0[i] + a2[i] + a4[i] + a6[i] + a8[i] + a10[i] + a12[i] + a14[i] + a16[i] + a18[i] + a20[i];
    a1[i] = 0;
    a19[i] = 1;
    atomicAdd(a5, 1.f);
}
