/* fuzz_trace_pollux.c - any bytes through the pollux reader (--format
 * pollux), with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "pollux", "workload.csv", 1);
}
