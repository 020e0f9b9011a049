/* trace_fuzz.h - the body shared by the per-format trace fuzzers: any bytes
 * through gp_trace_open_mem with one --format (plain, compressed or a
 * tarball, as the bytes say), read to the end with skip_bad off and on.
 * Every job handed out must satisfy the readers' contract; a bad row must be
 * consumed, so that reading on after GP_EPARSE always ends. */
#ifndef GPUPOOL_FUZZ_TRACE_FUZZ_H
#define GPUPOOL_FUZZ_TRACE_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* `strict`: the bounds the readers of docs/traces.md promise (at most a
 * million GPUs, a run time in (0, 10 years], a submit time in [0, 100
 * years]); otherwise only what job.h asks of any spec (a share is of gpus
 * 0 and below one GPU; gpus 0 without a share is a zero-GPU job, which
 * the gpupool format may hold). */
static void fuzz_check_job(const struct gp_job_spec *j, int strict)
{
    const int64_t year_us = INT64_C(31557600) * GP_US_PER_S;

    if (j->duration_us < 0 || j->submit_us < 0 ||
        j->gpu_milli >= GP_MILLI_PER_GPU || (j->gpus && j->gpu_milli))
        abort();
    if (strict &&
        (j->gpus > 1000000 || j->duration_us == 0 ||
         j->duration_us > 10 * year_us || j->submit_us > 100 * year_us))
        abort();
    /* every string must be readable to its NUL; id may be NULL (assigned) */
    if ((j->id && strlen(j->id) > (1u << 20)) ||
        (j->tenant && strlen(j->tenant) > (1u << 20)) ||
        (j->user && strlen(j->user) > (1u << 20)) ||
        (j->name && strlen(j->name) > (1u << 20)) ||
        (j->gpu_type && strlen(j->gpu_type) > (1u << 20)))
        abort();
}

static int fuzz_trace(const uint8_t *data, size_t size, const char *format,
                      const char *name, int strict)
{
    for (int skip = 0; skip < 2; skip++) {
        struct gp_trace_opts opts = {.format = format, .skip_bad = skip};
        struct gp_trace *t = NULL;
        struct gp_job_spec j;
        struct gp_diag d;
        int rc;

        if (gp_trace_open_mem(&t, data, size, name, &opts, &d) != GP_OK)
            continue;
        while ((rc = gp_trace_next(t, &j, &d)) != 0) {
            if (rc == 1)
                fuzz_check_job(&j, strict);
            else if (rc != GP_EPARSE || skip)
                break; /* fatal, or EPARSE that skip_bad did not absorb */
        }
        if (gp_trace_skipped(t) > gp_trace_rows(t))
            abort();
        gp_trace_close(t);
    }
    return 0;
}

#endif
