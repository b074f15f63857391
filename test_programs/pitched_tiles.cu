// Image tiles on streams, as image-processing code writes it: one pitched
// device image (cudaMallocPitch), NTILES non-blocking streams, and per stream
// t a vertical strip of the image -- columns [t*W/NTILES, (t+1)*W/NTILES) of
// every row: a cudaMemcpy2DAsync upload of the strip from pinned memory, a
// kernel on the strip, a cudaMemset2DAsync of the strip's border column in a
// second pitched image and a cudaMemcpy2DAsync download of the strip; then
// stream syncs and a check.
// The strips interleave in memory (every row holds a piece of each) but no
// byte is touched by two streams: correct without any cross-stream ordering.
// A model that takes a 2D copy for width*height contiguous bytes from its
// first byte sees the strips overlap.
// Expected: nothing to report.
#include "ss_test.cuh"

#define W 2048      // columns (floats)
#define H 512       // rows
#define NTILES 4
#define TW (W / NTILES)

__global__ void brighten(float *img, size_t pitch, int x0, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) {
        float *row = (float *)((char *)img + (size_t)y * pitch);
        row[x0 + x] = row[x0 + x] * 2.0f + 1.0f;
    }
}

int main(void)
{
    ss_init_device();
    float *h_in, *h_out, *d_img, *d_mask;
    size_t pitch, mpitch;
    CK(cudaMallocHost(&h_in, sizeof(float) * W * H));
    CK(cudaMallocHost(&h_out, sizeof(float) * W * H));
    CK(cudaMallocPitch(&d_img, &pitch, sizeof(float) * W, H));
    CK(cudaMallocPitch(&d_mask, &mpitch, sizeof(float) * W, H));
    for (int i = 0; i < W * H; i++) h_in[i] = (float)(i % 97);
    cudaStream_t s[NTILES];
    for (int t = 0; t < NTILES; t++) CK(cudaStreamCreateWithFlags(&s[t], cudaStreamNonBlocking));
    // warm-up, one stream at a time: module loading before the streams overlap
    brighten<<<dim3(1, 1), 32, 0, s[0]>>>(d_img, pitch, 0, 1, 1);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(s[0]));

    for (int t = 0; t < NTILES; t++) {
        size_t x0 = (size_t)t * TW;
        CK(cudaMemcpy2DAsync((char *)d_img + x0 * sizeof(float), pitch, h_in + x0, sizeof(float) * W,
                             sizeof(float) * TW, H, cudaMemcpyHostToDevice, s[t]));
        brighten<<<dim3((TW + 255) / 256, H), 256, 0, s[t]>>>(d_img, pitch, (int)x0, TW, H);
        CK_LAUNCH();
        CK(cudaMemset2DAsync((char *)d_mask + x0 * sizeof(float), mpitch, 0, sizeof(float), H, s[t]));
        CK(cudaMemcpy2DAsync(h_out + x0, sizeof(float) * W, (char *)d_img + x0 * sizeof(float), pitch,
                             sizeof(float) * TW, H, cudaMemcpyDeviceToHost, s[t]));
    }
    for (int t = 0; t < NTILES; t++) CK(cudaStreamSynchronize(s[t]));

    long bad = 0;
    for (int i = 0; i < W * H; i++)
        if (h_out[i] != h_in[i] * 2.0f + 1.0f) bad++;
    printf("pitched_tiles: %s\n", bad ? "FAILED" : "PASSED");
    for (int t = 0; t < NTILES; t++) CK(cudaStreamDestroy(s[t]));
    CK(cudaFree(d_img));
    CK(cudaFree(d_mask));
    CK(cudaFreeHost(h_in));
    CK(cudaFreeHost(h_out));
    return bad ? 1 : 0;
}
