/*
 * Test program with known call sites (lines marked LINE-*: the test script
 * finds them with grep).  Every "CUDA call" goes through fake_cuda_call in
 * libsyncsight_test.so, as a real program's calls go through the shim.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int  fake_cuda_call(unsigned cbid, int blameable);
void testshim_init(int stacks_mode);
void testshim_set_stacks(int stacks_mode);
int  testshim_write_trace(const char *path);

static inline __attribute__((always_inline)) void inlined_helper(void)
{
    fake_cuda_call(101, 1); /* LINE-INLINE */
}

__attribute__((noinline)) void solver_step(void)
{
    inlined_helper(); /* LINE-STEP */
}

__attribute__((noinline)) void user_direct(void)
{
    fake_cuda_call(102, 1); /* LINE-DIRECT */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TRACE PLUGIN.so\n", argv[0]);
        return 2;
    }
    testshim_init(1);
    solver_step(); /* LINE-MAIN-STEP */
    /* The same stack three times: one STACK record.  (volatile: an unrolled
     * loop would make three call sites.) */
    for (volatile int i = 0; i < 3; i++)
        user_direct();
    fake_cuda_call(103, 0);        /* not blameable: no stack under SYNCSIGHT_STACKS=1 */
    testshim_set_stacks(2);
    fake_cuda_call(104, 0); /* LINE-ALL */
    testshim_set_stacks(0);
    fake_cuda_call(105, 1);        /* stacks off */
    testshim_set_stacks(1);

    /* A library loaded after the module map was first written. */
    void *plugin = dlopen(argv[2], RTLD_NOW);
    if (!plugin) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    void (*plugin_run)(void) = (void (*)(void))dlsym(plugin, "plugin_run");
    if (!plugin_run)
        return 1;
    plugin_run();
    int rc = testshim_write_trace(argv[1]);
    if (rc) {
        fprintf(stderr, "write trace: %d\n", rc);
        return 1;
    }
    return 0;
}
