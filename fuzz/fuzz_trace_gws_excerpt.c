/* fuzz_trace_gws_excerpt.c - any bytes through the gws-excerpt reader (--format
 * gws-excerpt), with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "gws-excerpt", "helios_data_training.csv", 1);
}
