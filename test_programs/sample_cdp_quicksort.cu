// NVCC-FLAGS: -rdc=true -lcudadevrt
// Follows NVIDIA's CUDA samples for dynamic parallelism (CDP2, the only kind
// on sm_90): cdpSimpleQuicksort (Samples/3_CUDA_Features/cdpSimpleQuicksort)
// and the tail-launch / fire-and-forget streams of the programming guide.
//
// Part 1, as the sample: the host copies random integers to the device with
// cudaMemcpy, launches cdp_simple_quicksort<<<1, 1>>> on the legacy default
// stream and calls cudaDeviceSynchronize.  The kernel partitions its range and
// launches itself on each half from the device, each child on a stream it
// creates with cudaStreamCreateWithFlags(cudaStreamNonBlocking); below a depth
// or size it sorts its range in place.  Then the host copies the data back
// (cudaMemcpy) and checks that it is sorted.
//
// Part 2, a pipeline built on device launches: on stream `producer` (made with
// cudaStreamNonBlocking) a one-thread kernel launches the kernel that fills a
// buffer, into cudaStreamTailLaunch for even rounds and
// cudaStreamFireAndForget for odd ones; the fill spins 2 ms before it writes.
// cudaEventRecord(ready, producer); cudaStreamWaitEvent(consumer, ready); a
// kernel on `consumer` sums the buffer, a pinned D2H copy brings the sum back,
// cudaStreamSynchronize(consumer), and the host checks it.
//
// Why it is correct: a grid completes only when every grid it launched has
// completed (CDP2), whatever stream they were launched into, so stream order
// and the event on `producer` cover the children: the consumer reads the
// buffer after the fill wrote it.  cudaDeviceSynchronize in part 1 waits for
// the sort, the only work in flight.  No pageable async copy, no legacy-stream
// work while the two streams are busy.
// Expected: nothing to report.  The parents' device launches are no host API
// calls: the trace has no call for the children, and what the children do is
// part of their parent's grid.
#include "ss_test.cuh"

#define MAX_DEPTH 16
#define INSERTION_SORT 32
#define SORT_ITEMS 4096
#define FILL_N (256 * 1024)
#define ROUNDS 6

// Selection sort for small ranges and deep recursion (as the sample).
__device__ void selection_sort(unsigned int *data, int left, int right)
{
    for (int i = left; i <= right; ++i) {
        unsigned min_val = data[i];
        int min_idx = i;
        for (int j = i + 1; j <= right; ++j) {
            unsigned val_j = data[j];
            if (val_j < min_val) {
                min_idx = j;
                min_val = val_j;
            }
        }
        if (i != min_idx) {
            data[min_idx] = data[i];
            data[i] = min_val;
        }
    }
}

__global__ void cdp_simple_quicksort(unsigned int *data, int left, int right, int depth)
{
    if (depth >= MAX_DEPTH || right - left <= INSERTION_SORT) {
        selection_sort(data, left, right);
        return;
    }
    unsigned int *lptr = data + left;
    unsigned int *rptr = data + right;
    unsigned int pivot = data[(left + right) / 2];
    while (lptr <= rptr) {
        unsigned int lval = *lptr;
        unsigned int rval = *rptr;
        while (lval < pivot) {
            lptr++;
            lval = *lptr;
        }
        while (rval > pivot) {
            rptr--;
            rval = *rptr;
        }
        if (lptr <= rptr) {
            *lptr++ = rval;
            *rptr-- = lval;
        }
    }
    int nright = (int)(rptr - data);
    int nleft = (int)(lptr - data);
    if (left < nright) {
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        cdp_simple_quicksort<<<1, 1, 0, s>>>(data, left, nright, depth + 1);
        cudaStreamDestroy(s);
    }
    if (nleft < right) {
        cudaStream_t s1;
        cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
        cdp_simple_quicksort<<<1, 1, 0, s1>>>(data, nleft, right, depth + 1);
        cudaStreamDestroy(s1);
    }
}

__global__ void fill_child(int *buf, int n, int value, unsigned long long spin_ns)
{
    if (threadIdx.x == 0)
        ss_spin_ns(spin_ns);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        buf[i] = value;
}

__global__ void fill_parent(int *buf, int n, int value, int tail, unsigned long long spin_ns)
{
    if (tail)
        fill_child<<<64, 256, 0, cudaStreamTailLaunch>>>(buf, n, value, spin_ns);
    else
        fill_child<<<64, 256, 0, cudaStreamFireAndForget>>>(buf, n, value, spin_ns);
}

__global__ void sum_kernel(const int *buf, int n, long long *out)
{
    __shared__ long long part[256];
    long long s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += buf[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = part[0];
}

static int quicksort_part(void)
{
    unsigned int *h = (unsigned int *)malloc(SORT_ITEMS * sizeof(unsigned int));
    srand(2026);
    for (int i = 0; i < SORT_ITEMS; i++)
        h[i] = (unsigned int)rand() % SORT_ITEMS;
    unsigned int *d = NULL;
    CK(cudaMalloc(&d, SORT_ITEMS * sizeof(unsigned int)));
    CK(cudaMemcpy(d, h, SORT_ITEMS * sizeof(unsigned int), cudaMemcpyHostToDevice));
    cdp_simple_quicksort<<<1, 1>>>(d, 0, SORT_ITEMS - 1, 0);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h, d, SORT_ITEMS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 1; i < SORT_ITEMS; i++)
        if (h[i - 1] > h[i])
            bad++;
    CK(cudaFree(d));
    free(h);
    return bad;
}

static int pipeline_part(void)
{
    cudaStream_t producer, consumer;
    CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    cudaEvent_t ready;
    CK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    int *buf = NULL;
    long long *d_sum = NULL, *h_sum = NULL;
    CK(cudaMalloc(&buf, FILL_N * sizeof(int)));
    CK(cudaMalloc(&d_sum, sizeof(long long)));
    CK(cudaMallocHost(&h_sum, sizeof(long long)));
    CK(cudaMemsetAsync(buf, 0, FILL_N * sizeof(int), producer));
    CK(cudaStreamSynchronize(producer));
    int bad = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        fill_parent<<<1, 1, 0, producer>>>(buf, FILL_N, round, round % 2 == 0, ss_ms_to_ns(2.0));
        CK_LAUNCH();
        CK(cudaEventRecord(ready, producer));
        CK(cudaStreamWaitEvent(consumer, ready, 0));
        sum_kernel<<<1, 256, 0, consumer>>>(buf, FILL_N, d_sum);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h_sum, d_sum, sizeof(long long), cudaMemcpyDeviceToHost, consumer));
        CK(cudaStreamSynchronize(consumer));
        if (*h_sum != (long long)round * FILL_N) {
            fprintf(stderr, "round %d: sum %lld, expected %lld\n", round, *h_sum, (long long)round * FILL_N);
            bad++;
        }
    }
    CK(cudaFreeHost(h_sum));
    CK(cudaFree(d_sum));
    CK(cudaFree(buf));
    CK(cudaEventDestroy(ready));
    CK(cudaStreamDestroy(consumer));
    CK(cudaStreamDestroy(producer));
    return bad;
}

int main(void)
{
    ss_init_device();
    int unsorted = quicksort_part();
    int wrong = pipeline_part();
    printf("sample_cdp_quicksort: %d out of order, %d wrong sums\n", unsorted, wrong);
    return unsorted || wrong ? 1 : 0;
}
