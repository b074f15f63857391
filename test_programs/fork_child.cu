// fork_child: a CUDA parent that forks (1) a child that only does CPU work
// and exits without exec -- it must not touch CUDA, and the shim must not
// either (no trace writer thread, no CUPTI in the child) -- and (2) a child
// that execs this program again as a CUDA program of its own.  Under the
// shim the output must be exactly what it is without it.
#include "ss_test.cuh"
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void square(int *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = i * i;
}

static long long gpu_sum_of_squares(int n)
{
    int *device_data;
    CK(cudaMalloc(&device_data, n * sizeof(int)));
    square<<<(n + 255) / 256, 256>>>(device_data, n);
    CK_LAUNCH();
    int *host_data = (int *)malloc(n * sizeof(int));
    if (host_data == NULL)
        exit(1);
    CK(cudaMemcpy(host_data, device_data, n * sizeof(int), cudaMemcpyDeviceToHost));
    long long sum = 0;
    for (int i = 0; i < n; i++)
        sum += host_data[i];
    free(host_data);
    CK(cudaFree(device_data));
    return sum;
}

static int wait_for(pid_t pid, const char *what)
{
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fork_child: %s did not exit cleanly (status 0x%x)\n", what, status);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--cuda-child") == 0) {
        ss_init_device();
        printf("exec child: gpu sum of squares below 1000 = %lld\n", gpu_sum_of_squares(1000));
        return 0;
    }

    ss_init_device();
    printf("parent: gpu sum of squares below 1000 = %lld\n", gpu_sum_of_squares(1000));
    fflush(stdout); // the child inherits unflushed stdio buffers: empty them first

    pid_t cpu_child = fork();
    if (cpu_child < 0) {
        perror("fork");
        return 1;
    }
    if (cpu_child == 0) {
        long long sum = 0;
        for (int i = 0; i < 1000; i++)
            sum += (long long)i * i;
        printf("cpu child: sum of squares below 1000 = %lld\n", sum);
        exit(0); // a normal exit: atexit handlers (the shim's too) run in the child
    }
    int failed = wait_for(cpu_child, "cpu child");

    // The parent keeps using CUDA while and after children exist.
    printf("parent: after the cpu child, gpu sum = %lld\n", gpu_sum_of_squares(1000));
    fflush(stdout);

    pid_t exec_child = fork();
    if (exec_child < 0) {
        perror("fork");
        return 1;
    }
    if (exec_child == 0) {
        execl("/proc/self/exe", argv[0], "--cuda-child", (char *)NULL);
        perror("execl");
        _exit(127);
    }
    failed |= wait_for(exec_child, "exec child");
    printf("parent: done\n");
    return failed;
}
