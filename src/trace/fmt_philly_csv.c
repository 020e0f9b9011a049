/* fmt_philly_csv.c - the per-job Philly table the Pollux artifact ships
 * (philly.csv: timestamp,duration,num_gpus,gpu_time,cluster).
 *
 * Key decision: the table has no job ids, so a job is named by its data row
 * ("philly-1" is the first row under the header); bad rows still take their
 * number, so ids do not shift with --skip-bad. Rows are not sorted by time;
 * the simulator sorts.
 */
#include <stdio.h>
#include <string.h>

#include "trace/csv.h"
#include "trace/reader.h"

enum col { C_TIMESTAMP, C_DURATION, C_GPUS, C_GPU_TIME, C_CLUSTER, NCOLS };

static const struct gp_csv_col cols[NCOLS] = {
    [C_TIMESTAMP] = {"timestamp", true}, [C_DURATION] = {"duration", true},
    [C_GPUS] = {"num_gpus", true},       [C_GPU_TIME] = {"gpu_time", false},
    [C_CLUSTER] = {"cluster", true},
};

struct philly_csv {
    struct gp_csv_reader r;
    uint64_t row; /* data rows seen */
    char id[32];
};

static int philly_csv_probe(const char *line, size_t len, const char *member)
{
    (void)member;
    if (len == 44 &&
        memcmp(line, "timestamp,duration,num_gpus,gpu_time,cluster", 44) == 0)
        return 100;
    if (strstr(line, "timestamp") && strstr(line, "num_gpus") &&
        strstr(line, "duration") && strstr(line, "cluster"))
        return 60;
    return 0;
}

static int philly_csv_open(void **priv, struct gp_input *in,
                           const struct gp_trace_opts *opts,
                           struct gp_diag *diag)
{
    (void)opts;
    return gp_csv_reader_new(priv, sizeof(struct philly_csv), in, cols, NCOLS,
                             false, gp_csv_member_is_csv, diag);
}

static int philly_csv_next(void *priv, struct gp_job_spec *out,
                           struct gp_diag *diag)
{
    struct philly_csv *p = priv;
    struct gp_csv_reader *r = &p->r;
    const char *cluster;
    int rc;

    if ((rc = gp_csv_reader_next(r, diag)) != 1)
        return rc;
    snprintf(p->id, sizeof(p->id), "philly-%llu", (unsigned long long)++p->row);
    out->id = p->id;
    if ((rc = gp_csv_datetime(r->in, "timestamp",
                              gp_csv_get(&r->row, r->idx[C_TIMESTAMP]),
                              &out->submit_us, diag)) < 0)
        return rc;
    if (out->submit_us < 0 || out->submit_us > GP_TRACE_MAX_SUBMIT_US)
        return gp_csv_field_error(r->in, "timestamp", diag,
                                  "is outside 1970..2069");
    if ((rc = gp_csv_u32(r->in, "num_gpus", gp_csv_get(&r->row, r->idx[C_GPUS]),
                         0, GP_TRACE_MAX_GPUS, &out->gpus, diag)) < 0)
        return rc;
    if ((rc = gp_csv_seconds(
             r->in, "duration", gp_csv_get(&r->row, r->idx[C_DURATION]), 0,
             GP_TRACE_MAX_DURATION_US, &out->duration_us, diag)) < 0)
        return rc;
    cluster = gp_csv_get(&r->row, r->idx[C_CLUSTER]);
    out->tenant = cluster[0] ? cluster : NULL;
    if (out->gpus == 0)
        return gp_csv_not_gpu(r->in, diag, "no GPUs (CPU-only job)");
    if (out->duration_us == 0)
        return gp_csv_not_gpu(r->in, diag, "zero run time");
    return 1;
}

const struct gp_trace_reader_ops gp_trace_reader_philly_csv = {
    .name = "philly-csv",
    .summary =
        "Philly per-job table of Pollux: timestamp,duration,num_gpus,...",
    .preset = "philly",
    .probe = philly_csv_probe,
    .open = philly_csv_open,
    .next = philly_csv_next,
    .close = gp_csv_reader_free,
};
