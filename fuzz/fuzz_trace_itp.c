/* fuzz_trace_itp.c - any bytes through the itp reader (--format itp),
 * with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "itp", "cluster04.csv", 1);
}
