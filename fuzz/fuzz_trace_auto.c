/* fuzz_trace_auto.c - any bytes through format detection and whichever
 * reader it picks, with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, NULL, "trace.csv", 0);
}
