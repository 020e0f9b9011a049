/* fmt_tiresias.c - the job CSVs of Tiresias' simulator (Gu et al., NSDI'19):
 * job_id,num_gpu,submit_time,iterations,model_name,duration,interval.
 *
 * Times are seconds; duration is the job's run time on its num_gpu GPUs.
 * `iterations` and `interval` (the gap to the next submission) say nothing
 * submit_time and duration do not, so they are read past.
 */
#include <string.h>

#include "trace/csv.h"
#include "trace/reader.h"

enum { C_ID, C_GPUS, C_SUBMIT, C_ITERS, C_MODEL, C_DUR, C_INTERVAL, C_COUNT };

static const struct gp_csv_col cols[C_COUNT] = {
    [C_ID] = {"job_id", true},          [C_GPUS] = {"num_gpu", true},
    [C_SUBMIT] = {"submit_time", true}, [C_ITERS] = {"iterations", false},
    [C_MODEL] = {"model_name", false},  [C_DUR] = {"duration", true},
    [C_INTERVAL] = {"interval", false},
};

struct tiresias {
    struct gp_csv_reader r;
};

static int tiresias_probe(const char *line, size_t len, const char *member)
{
    static const char hdr[] = "job_id,num_gpu,submit_time,iterations,"
                              "model_name,duration,interval";
    size_t n = sizeof(hdr) - 1;

    (void)member;
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == n && memcmp(line, hdr, n) == 0)
        return 100;
    if (len >= 26 && memcmp(line, "job_id,num_gpu,submit_time", 26) == 0)
        return 70;
    return 0;
}

static int tiresias_open(void **priv, struct gp_input *in,
                         const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    (void)opts;
    return gp_csv_reader_new(priv, sizeof(struct tiresias), in, cols, C_COUNT,
                             false, NULL, diag);
}

static int tiresias_next(void *priv, struct gp_job_spec *out,
                         struct gp_diag *diag)
{
    struct tiresias *t = priv;
    struct gp_csv_reader *r = &t->r;
    const struct gp_csv_row *row = &r->row;
    int64_t submit_us, dur_us;
    uint32_t gpus;
    int rc;

    if ((rc = gp_csv_reader_next(r, diag)) != 1)
        return rc;
    if ((rc = gp_csv_u32(r->in, "num_gpu", gp_csv_get(row, r->idx[C_GPUS]), 0,
                         GP_TRACE_MAX_GPUS, &gpus, diag)) != GP_OK ||
        (rc = gp_csv_seconds(
             r->in, "submit_time", gp_csv_get(row, r->idx[C_SUBMIT]), 0,
             GP_TRACE_MAX_SUBMIT_US, &submit_us, diag)) != GP_OK ||
        (rc = gp_csv_seconds(r->in, "duration", gp_csv_get(row, r->idx[C_DUR]),
                             0, GP_TRACE_MAX_DURATION_US, &dur_us, diag)) !=
            GP_OK)
        return rc;
    if (gpus == 0)
        return gp_diag_set(diag, GP_TRACE_NOT_GPU, gp_input_where(r->in),
                           "zero-GPU job");
    if (dur_us == 0)
        return gp_diag_set(diag, GP_TRACE_NOT_GPU, gp_input_where(r->in),
                           "zero duration");
    memset(out, 0, sizeof(*out));
    out->id = gp_csv_get(row, r->idx[C_ID]);
    if (!out->id[0])
        out->id = NULL;
    out->name = gp_csv_get(row, r->idx[C_MODEL]);
    if (!out->name[0])
        out->name = NULL;
    out->gpus = gpus;
    out->submit_us = submit_us;
    out->duration_us = dur_us;
    return 1;
}

const struct gp_trace_reader_ops gp_trace_reader_tiresias = {
    .name = "tiresias",
    .summary = "Tiresias simulator job CSV (job_id,num_gpu,submit_time,"
               "...,duration,interval)",
    .preset = NULL,
    .probe = tiresias_probe,
    .open = tiresias_open,
    .next = tiresias_next,
    .close = gp_csv_reader_free,
};
