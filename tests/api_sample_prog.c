/*
 * Program for tests/test_shim_stack_policy.sh, linked against the fake
 * libcudart.so.13: makes the calls whose stack policy the test checks.
 *   - cudaSetDevice, cudaStreamCreateWithFlags: not blamed, must get a stack;
 *   - 600 launches of one kernel on a non-default stream from one call site
 *     (launch_site), reached through 0, 1 or 2 extra frames in turn (i % 3) so
 *     that consecutive launches have different real stacks: the test can see
 *     which launches were unwound and which reused the cached stack;
 *   - 10 launches on the legacy stream: blamed, every one unwound;
 *   - 8 copies from one site, slow and quick in turn: one stack.
 * Prints nothing; the trace is checked by the script.
 */
#include <stdio.h>
#include <cuda_runtime_api.h>

#define SAMPLED_LAUNCHES 600

static void kernel_stub(void) {}

static volatile int sink;

__attribute__((noinline)) static void launch_site(cudaStream_t stream)
{
    void *args[1] = { NULL };
    if (cudaLaunchKernel((const void *)kernel_stub, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0, stream)
        != cudaSuccess)
        fprintf(stderr, "launch failed\n");
    sink++;   /* no tail call: launch_site stays on the stack */
}

__attribute__((noinline)) static void via_frames(int extra, cudaStream_t stream)
{
    if (extra > 0)
        via_frames(extra - 1, stream);
    else
        launch_site(stream);
    sink++;
}

/* One copy site, slow (1 ms in the fake: unwound) and quick (through the
 * verified cache) in turn: one chain of frames, one stack in the trace. */
__attribute__((noinline)) static void copy_site(cudaStream_t stream, size_t count)
{
    static char src[8192], dst[8192];
    if (cudaMemcpyAsync(dst, src, count, cudaMemcpyHostToHost, stream) != cudaSuccess)
        fprintf(stderr, "copy failed\n");
    sink++;
}

int main(void)
{
    cudaStream_t stream;
    if (cudaSetDevice(0) != cudaSuccess || cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        return 1;
    for (int i = 0; i < SAMPLED_LAUNCHES; i++)
        via_frames(i % 3, stream);
    for (int i = 0; i < 10; i++)
        via_frames(i % 3, 0);   /* legacy default stream */
    for (int i = 0; i < 8; i++)
        copy_site(stream, i % 2 ? 4096 : 4097);   /* the slow one first */
    return 0;
}
