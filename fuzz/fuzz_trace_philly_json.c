/* fuzz_trace_philly_json.c - any bytes through the philly-json reader (--format
 * philly-json), with skip_bad off and on; see trace_fuzz.h. */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_trace(data, size, "philly-json", "cluster_job_log", 1);
}
