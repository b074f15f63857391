/*
 * The user-code policy (analyzer/symbolize.h), frame by frame: which modules,
 * native frames and Python files are the user's.  The stacks of real
 * programs, nvcc's launch stubs included, are checked on the fixtures
 * (nosite lines of the fixtures' expect files, tests/test_fixture_sites.sh).
 */
#include <stdio.h>
#include <string.h>

#include "symbolize.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static ss_frame frame(const char *module, const char *function, const char *file, int line)
{
    ss_frame f = { .addr = 0x401234, .module = module, .offset = 0x1234, .function = function,
                   .file = file, .line = line };
    return f;
}

#define USER(expected, module, function, file, line) do {                                       \
        ss_frame f_ = frame(module, function, file, line);                                      \
        CHECK(ss_frame_is_user(&f_) == (expected), "%s in %s (%s:%d) should %sbe the user's",   \
              function ? function : "?", module ? module : "?", file ? file : "-", line,         \
              (expected) ? "" : "not ");                                                        \
    } while (0)

int main(void)
{
    /* modules */
    CHECK(ss_module_is_user("/home/u/app/train"), "the program");
    CHECK(ss_module_is_user("/home/u/app/libmodel.so"), "the program's library");
    CHECK(!ss_module_is_user("/usr/local/cuda/lib64/libcudart.so.13"), "cudart");
    CHECK(!ss_module_is_user("/usr/lib/x86_64-linux-gnu/libc.so.6"), "libc");
    CHECK(!ss_module_is_user("/opt/app/build/libsyncsight.so"), "syncsight");
    CHECK(!ss_module_is_user("/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"), "PyTorch");
    CHECK(!ss_module_is_user(""), "no path");
    /* frameworks that make driver-API calls for the user (docs/launch-paths.md) */
    CHECK(!ss_module_is_user("/venv/lib/python3.12/site-packages/cupy/cuda/function.cpython-312-x86_64-linux-gnu.so"),
          "CuPy's launcher");
    CHECK(!ss_module_is_user("/venv/lib/python3.12/site-packages/cupy_backends/cuda/api/driver.cpython-312.so"),
          "CuPy's driver bindings");
    CHECK(!ss_module_is_user("/venv/lib/python3.12/site-packages/jaxlib/xla_extension.so"), "JAX");
    CHECK(!ss_module_is_user("/root/.triton/cache/AbC123/__triton_launcher.so"), "Triton's compiled launcher");
    CHECK(!ss_module_is_user("/tmp/torchinductor_root/triton/0/XyZ/__triton_launcher.so"),
          "Triton's launcher under torch.compile");

    const char *prog = "/home/u/app/train";
    /* the user's own code, with and without line info */
    USER(1, prog, "main", "/home/u/app/train.cu", 30);
    USER(1, prog, "step(int)", NULL, 0);
    /* a user function may be named like CUDA's when its line info says so */
    USER(1, prog, "cudaHelper()", "/home/u/app/train.cu", 12);
    /* nvcc's static cudart inside the program: no line info */
    USER(0, prog, "cudaFree", NULL, 0);
    USER(0, prog, "cudart::globalState::initializeDriver()", NULL, 0);
    /* the launch glue nvcc generates */
    USER(0, prog, "__device_stub__Z11spin_kernelyPii(unsigned long long, int*, int)",
         "/tmp/tmpxft_00000431_00000000-6_legacy_stream.cudafe1.stub.c", 13);
    USER(0, prog, "__cudaLaunchKernel_helper", "/usr/local/cuda/targets/x86_64-linux/include/crt/device_functions.h", 2963);
    /* the C start-up code: never the user's, even with line info (glibc's
     * debug info installed, a static executable) */
    USER(0, prog, "_start", NULL, 0);
    USER(0, prog, "_start", "../sysdeps/x86_64/start.S", 115);
    USER(0, prog, "__libc_start_call_main", "../sysdeps/nptl/libc_start_call_main.h", 58);
    USER(0, prog, "__libc_start_main_impl", "../csu/libc-start.c", 360);
    USER(0, prog, "_init", NULL, 0);
    /* ... but only those names: a user function starting like them is the user's */
    USER(1, prog, "_start_workers(int)", "/home/u/app/train.cu", 40);
    /* a library frame is never the user's, whatever its name */
    USER(0, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "main", "x.cc", 1);
    USER(0, NULL, "main", "/home/u/app/train.cu", 30);

    /* Python files (length-delimited, not NUL-terminated) */
    const char *py = "/home/u/app/train.py<garbage>";
    CHECK(ss_pyfile_is_user(py, strlen("/home/u/app/train.py")), "the script");
    CHECK(!ss_pyfile_is_user("<frozen importlib._bootstrap>", 29), "frozen module");
    CHECK(!ss_pyfile_is_user("/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", 61), "PyTorch's Python");
    CHECK(!ss_pyfile_is_user("/x/dist-packages/triton/runtime/jit.py", 38), "Triton's Python");
    CHECK(!ss_pyfile_is_user("/tmp/torchinductor_root/ab/cabcdef0123.py", 41), "torch.compile's generated code");
    CHECK(!ss_pyfile_is_user("/venv/lib/python3.12/site-packages/cupy/_core/_kernel.py", 56), "CuPy's Python");
    /* the marker must lie within the given length */
    const char *cut = "/home/u/app/x.py/site-packages/torch/";
    CHECK(ss_pyfile_is_user(cut, strlen("/home/u/app/x.py")), "a path cut before a library marker");
    CHECK(!ss_pyfile_is_user("", 0), "no file");

    /* module+offset and address-only frames as text */
    char text[256];
    ss_frame f = frame("/home/u/app/train", NULL, NULL, 0);
    ss_frame_format(&f, text, sizeof text);
    CHECK(!strcmp(text, "train+0x1234"), "%s", text);
    f = frame(NULL, NULL, NULL, 0);
    ss_frame_format(&f, text, sizeof text);
    CHECK(!strcmp(text, "0x401234"), "%s", text);
    f = frame(prog, "main", "train.cu", 30);
    ss_frame_format(&f, text, sizeof text);
    CHECK(!strcmp(text, "train.cu:30 main"), "%s", text);

    /* header-only CUDA libraries: their code is compiled into the user's
     * binary, never the user's code, and named by its include tree */
    CHECK(!strcmp(ss_header_library("/usr/local/cuda-13.0/targets/x86_64-linux/include/cccl/thrust/system/cuda/"
                                    "detail/reduce.h") ?: "", "Thrust"), "CUDA 13's Thrust");
    CHECK(!strcmp(ss_header_library("/usr/local/cuda-12.4/include/thrust/detail/vector_base.inl") ?: "", "Thrust"),
          "CUDA 12's Thrust");
    CHECK(!strcmp(ss_header_library("/usr/local/cuda/include/cccl/cub/util_device.cuh") ?: "", "CUB"), "CUB");
    CHECK(!strcmp(ss_header_library("/opt/cccl/include/cuda/std/__algorithm/copy.h") ?: "", "libcu++"),
          "libcu++ from a CCCL checkout");
    CHECK(!ss_header_library("/usr/local/cuda/include/crt/host_runtime.h"), "nvcc's glue is no library");
    CHECK(!ss_header_library("/usr/local/cuda/include/cuda_runtime.h"), "cudart's header is no library");
    CHECK(!ss_header_library("/home/u/app/src/thrust_helpers.cu"), "the user's file named after Thrust");
    CHECK(!ss_header_library("/home/u/app/include/mylib/thrust/x.h"), "deeper than include/: the user's");
    CHECK(!ss_header_library(NULL), "no file");
    CHECK(!strcmp(ss_header_library("/home/u/app/build/_deps/cccl-src/thrust/thrust/reduce.h") ?: "", "Thrust"),
          "a CCCL checkout that CMake fetched into the build tree");
    CHECK(!strcmp(ss_header_library("/home/u/app/build/_deps/cccl-src/cub/cub/device/device_reduce.cuh") ?: "", "CUB"),
          "its CUB");
    USER(0, prog, "thrust::reduce<...>", "/home/u/app/build/_deps/cccl-src/thrust/thrust/reduce.h", 40);
    USER(1, prog, "main", "/home/u/app/thrust_demo.cu", 40);
    CHECK(ss_header_library_syncs_by_itself("Thrust"), "Thrust's algorithms synchronize on their own");
    CHECK(!ss_header_library_syncs_by_itself("CUB") && !ss_header_library_syncs_by_itself("libcu++"),
          "CUB's and libcu++'s syncs are asked for by name");
    CHECK(!ss_header_library_syncs_by_itself("libcublas") && !ss_header_library_syncs_by_itself(NULL),
          "no header library");
    USER(0, prog, "thrust::reduce<...>", "/usr/local/cuda/include/cccl/thrust/reduce.inl", 40);

    /* a call as the user wrote it */
    static const struct { const char *in, *out; } shorts[] = {
        { "thrust::THRUST_300001_SM_900_NS::reduce<thrust::THRUST_300001_SM_900_NS::cuda_cub::execute_on_stream, "
          "thrust::THRUST_300001_SM_900_NS::detail::normal_iterator<thrust::THRUST_300001_SM_900_NS::device_ptr<"
          "float> >, float>(thrust::THRUST_300001_SM_900_NS::detail::execution_policy_base<thrust::"
          "THRUST_300001_SM_900_NS::cuda_cub::execute_on_stream> const&, float, float)", "thrust::reduce" },
        /* a return type before the name, a clone suffix after the parameters */
        { "thrust::THRUST_300001_SM_900_NS::detail::disable_if<foo<int>::value, void>::type thrust::"
          "THRUST_300001_SM_900_NS::detail::allocator_traits_detail::value_initialize_range<A, B>(A&, B, "
          "unsigned long) (.isra.0)", "thrust::detail::allocator_traits_detail::value_initialize_range" },
        { "cub::CUB_300001_SM_900::SyncStream(CUstream_st*)", "cub::SyncStream" },
        { "cuda::std::__4::copy<float*>(float*, float*)", "cuda::std::copy" },
        { "std::__cxx11::basic_string<char>::size() const", "std::basic_string::size" },
        { "Foo::operator()(int) const", "Foo::operator()" },
        { "Foo::operator<<(int)", "Foo::operator<<" },
        { "main", "main" },
        { "(anonymous namespace)::helper(int)", "(anonymous namespace)::helper(int)" },
    };
    for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++) {
        char out[160];
        ss_function_short(shorts[i].in, out, sizeof out);
        CHECK(!strcmp(out, shorts[i].out), "%s -> \"%s\", not \"%s\"", shorts[i].in, out, shorts[i].out);
    }
    char tiny[8];
    ss_function_short("thrust::THRUST_300001_SM_900_NS::reduce<int>(int)", tiny, sizeof tiny);
    CHECK(!strcmp(tiny, "thrust"), "cut to the buffer, at a component: \"%s\"", tiny);

    if (failures) { fprintf(stderr, "%d failure(s)\n", failures); return 1; }
    printf("PASS the user-code policy\n");
    return 0;
}
