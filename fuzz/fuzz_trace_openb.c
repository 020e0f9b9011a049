/* fuzz_trace_openb.c - any bytes through the openb reader (--format openb),
 * with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "openb", "pods.csv", 1);
}
