/* fuzz_trace_gavel.c - any bytes through the gavel reader (--format gavel),
 * with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "gavel", "trace.trace", 1);
}
