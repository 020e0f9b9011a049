/* fuzz_trace_tiresias.c - any bytes through the tiresias reader (--format
 * tiresias), with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "tiresias", "jobs.csv", 1);
}
