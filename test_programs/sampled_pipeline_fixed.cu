// sampled_pipeline_fixed: sampled_pipeline.cu with events ordering the buffers
// both ways (see sampled_pipeline.cu).
// RUN-ENV: SYNCSIGHT_SAMPLE=300,30,120
#define FIXED 1
#include "sampled_pipeline.cu"
