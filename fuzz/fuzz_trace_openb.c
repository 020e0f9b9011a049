/* fuzz_trace_openb.c - any bytes through the openb reader (--format openb), as
 * gp_trace_open_mem sees them: plain, compressed or a tarball. Every job it
 * hands out must be well formed. */
#include <stdint.h>
#include <stdlib.h>

#include "gpupool/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_trace_opts opts = {.format = "openb", .skip_bad = true};
    struct gp_trace *t = NULL;
    struct gp_job_spec j;

    if (gp_trace_open_mem(&t, data, size, "pods.csv", &opts, NULL) != GP_OK)
        return 0;
    for (int i = 0; i < 1000000 && gp_trace_next(t, &j, NULL) == 1; i++)
        if (j.gpus < 1 || j.submit_us < 0 || j.duration_us < 0)
            abort();
    gp_trace_close(t);
    return 0;
}
