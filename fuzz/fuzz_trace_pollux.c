/* fuzz_trace_pollux.c - any bytes through the pollux reader (--format
 * pollux), with skip_bad off and on; see trace_fuzz.h. Not strict: the
 * format gives no run time (the goodput model makes it), so its jobs have
 * duration 0. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "pollux", "workload.csv", 0);
}
