/* fuzz_trace_gpupool.c - any bytes through the gpupool reader (--format
 * gpupool), with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "gpupool", "trace.csv", 1);
}
