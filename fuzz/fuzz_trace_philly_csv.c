/* fuzz_trace_philly_csv.c - any bytes through the philly-csv reader (--format
 * philly-csv), with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "philly-csv", "philly.csv", 1);
}
