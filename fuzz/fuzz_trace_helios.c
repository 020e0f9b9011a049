/* fuzz_trace_helios.c - any bytes through the helios reader (--format helios),
 * with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "helios", "cluster_log.csv", 1);
}
