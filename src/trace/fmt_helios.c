/* fmt_helios.c - SenseTime Helios traces, in two shapes:
 *
 * helios: the original per-cluster cluster_log.csv (job_id,user,vc,gpu_num,
 * cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue).
 * The virtual cluster (vc) is the tenant; CPU-only jobs (gpu_num 0, about
 * half the log) are skipped as not GPU jobs.
 *
 * gws-excerpt: the re-encoded excerpts of Gen-Parallel-Workloads
 * (helios_data_training.csv, philly_data_training.csv: u_id,user,gpu_num,
 * cpu_num,node_num,interval,run_time,wall_time,new_status). Absolute times
 * are gone: a job's submit time is the running sum of `interval` (seconds
 * since the previous submission), which also counts the intervals of rows
 * that are skipped, so skipping never shifts the jobs after it.
 */
#include <string.h>

#include "trace/csv.h"
#include "trace/reader.h"

#define MAX_CPUS 100000000u

/* Does a header line name all of `need` as whole columns? */
static bool has_cols(const char *line, const char *const *need, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(need[i]);
        const char *p = line;
        bool found = false;

        while ((p = strstr(p, need[i]))) {
            if ((p == line || p[-1] == ',') && (p[k] == ',' || p[k] == 0)) {
                found = true;
                break;
            }
            p += k;
        }
        if (!found)
            return false;
    }
    return true;
}

/* ---- helios: cluster_log.csv ------------------------------------------- */

enum hcol {
    H_ID,
    H_USER,
    H_VC,
    H_GPUS,
    H_CPUS,
    H_NODES,
    H_STATE,
    H_SUBMIT,
    H_START,
    H_END,
    H_DURATION,
    H_QUEUE,
    NHCOLS
};

static const struct gp_csv_col hcols[NHCOLS] = {
    [H_ID] = {"job_id", true},
    [H_USER] = {"user", false},
    [H_VC] = {"vc", true},
    [H_GPUS] = {"gpu_num", true},
    [H_CPUS] = {"cpu_num", false},
    [H_NODES] = {"node_num", false},
    [H_STATE] = {"state", false},
    [H_SUBMIT] = {"submit_time", true},
    [H_START] = {"start_time", false},
    [H_END] = {"end_time", false},
    [H_DURATION] = {"duration", false},
    [H_QUEUE] = {"queue", false},
};

static int helios_probe(const char *line, size_t len, const char *member)
{
    static const char exact[] = "job_id,user,vc,gpu_num,cpu_num,node_num,"
                                "state,submit_time,start_time,end_time,"
                                "duration,queue";
    static const char *const need[] = {"job_id", "vc", "gpu_num",
                                       "submit_time"};

    (void)member;
    if (len == sizeof(exact) - 1 && memcmp(line, exact, len) == 0)
        return 100;
    return has_cols(line, need, 4) ? 80 : 0;
}

static int helios_open(void **priv, struct gp_input *in,
                       const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    (void)opts;
    return gp_csv_reader_new(priv, sizeof(struct gp_csv_reader), in, hcols,
                             NHCOLS, false, gp_csv_member_is_csv, diag);
}

static int helios_next(void *priv, struct gp_job_spec *out,
                       struct gp_diag *diag)
{
    struct gp_csv_reader *r = priv;
    struct gp_input *in = r->in;
    const char *s;
    int rc;

    if ((rc = gp_csv_reader_next(r, diag)) != 1)
        return rc;
    out->id = gp_csv_get(&r->row, r->idx[H_ID]);
    if (!out->id[0])
        return gp_csv_field_error(in, "job_id", diag, "is empty");
    s = gp_csv_get(&r->row, r->idx[H_USER]);
    out->user = s[0] ? s : NULL;
    s = gp_csv_get(&r->row, r->idx[H_VC]);
    out->tenant = s[0] ? s : NULL;
    if ((rc = gp_csv_u32(in, "gpu_num", gp_csv_get(&r->row, r->idx[H_GPUS]), 0,
                         GP_TRACE_MAX_GPUS, &out->gpus, diag)) < 0)
        return rc;
    s = gp_csv_get(&r->row, r->idx[H_CPUS]);
    if (!gp_csv_blank(s) &&
        (rc = gp_csv_u32(in, "cpu_num", s, 0, MAX_CPUS, &out->cpus, diag)) < 0)
        return rc;
    if ((rc = gp_csv_datetime(in, "submit_time",
                              gp_csv_get(&r->row, r->idx[H_SUBMIT]),
                              &out->submit_us, diag)) < 0)
        return rc;
    if (out->submit_us < 0 || out->submit_us > GP_TRACE_MAX_SUBMIT_US)
        return gp_csv_field_error(in, "submit_time", diag,
                                  "is outside 1970..2069");
    s = gp_csv_get(&r->row, r->idx[H_DURATION]);
    if (!gp_csv_blank(s)) {
        if ((rc = gp_csv_seconds(in, "duration", s, 0, GP_TRACE_MAX_DURATION_US,
                                 &out->duration_us, diag)) < 0)
            return rc;
    } else {
        const char *st = gp_csv_get(&r->row, r->idx[H_START]);
        const char *en = gp_csv_get(&r->row, r->idx[H_END]);
        int64_t start_us, end_us;

        if (gp_csv_blank(st) || gp_csv_blank(en)) {
            if (out->gpus == 0)
                return gp_csv_not_gpu(in, diag, "no GPUs (CPU-only job)");
            return gp_csv_not_gpu(in, diag, "never ran (no duration)");
        }
        if ((rc = gp_csv_datetime(in, "start_time", st, &start_us, diag)) < 0 ||
            (rc = gp_csv_datetime(in, "end_time", en, &end_us, diag)) < 0)
            return rc;
        if (end_us < start_us)
            return gp_csv_field_error(in, "end_time", diag,
                                      "is before start_time");
        if (end_us - start_us > GP_TRACE_MAX_DURATION_US)
            return gp_csv_field_error(in, "end_time", diag,
                                      "is more than 10 years after "
                                      "start_time");
        out->duration_us = end_us - start_us;
    }
    if (out->gpus == 0)
        return gp_csv_not_gpu(in, diag, "no GPUs (CPU-only job)");
    if (out->duration_us == 0)
        return gp_csv_not_gpu(in, diag, "zero run time");
    return 1;
}

const struct gp_trace_reader_ops gp_trace_reader_helios = {
    .name = "helios",
    .summary = "Helios cluster_log.csv (job_id,user,vc,gpu_num,...)",
    .preset = NULL,
    .probe = helios_probe,
    .open = helios_open,
    .next = helios_next,
    .close = gp_csv_reader_free,
};

/* ---- gws-excerpt: Gen-Parallel-Workloads training data ----------------- */

enum xcol {
    X_ID,
    X_USER,
    X_GPUS,
    X_CPUS,
    X_NODES,
    X_INTERVAL,
    X_RUN,
    X_WALL,
    X_STATUS,
    NXCOLS
};

static const struct gp_csv_col xcols[NXCOLS] = {
    [X_ID] = {"u_id", true},
    [X_USER] = {"user", false},
    [X_GPUS] = {"gpu_num", true},
    [X_CPUS] = {"cpu_num", false},
    [X_NODES] = {"node_num", false},
    [X_INTERVAL] = {"interval", true},
    [X_RUN] = {"run_time", true},
    [X_WALL] = {"wall_time", false},
    [X_STATUS] = {"new_status", false},
};

struct excerpt {
    struct gp_csv_reader r;
    const char *member; /* of the last row; NULL before the first */
    int64_t clock_us;   /* submit time of the last row */
};

static int excerpt_probe(const char *line, size_t len, const char *member)
{
    static const char exact[] = "u_id,user,gpu_num,cpu_num,node_num,"
                                "interval,run_time,wall_time,new_status";
    static const char *const need[] = {"u_id", "gpu_num", "interval",
                                       "run_time"};

    (void)member;
    if (len == sizeof(exact) - 1 && memcmp(line, exact, len) == 0)
        return 100;
    return has_cols(line, need, 4) ? 80 : 0;
}

static int excerpt_open(void **priv, struct gp_input *in,
                        const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    (void)opts;
    return gp_csv_reader_new(priv, sizeof(struct excerpt), in, xcols, NXCOLS,
                             false, gp_csv_member_is_csv, diag);
}

static int excerpt_next(void *priv, struct gp_job_spec *out,
                        struct gp_diag *diag)
{
    struct excerpt *x = priv;
    struct gp_csv_reader *r = &x->r;
    struct gp_input *in = r->in;
    int64_t interval_us;
    const char *s;
    int rc;

    if ((rc = gp_csv_reader_next(r, diag)) != 1)
        return rc;
    if (r->member != x->member) { /* each file is its own timeline */
        x->member = r->member;
        x->clock_us = 0;
    }
    /* the clock first, so that a bad row still moves it */
    if ((rc = gp_csv_seconds(in, "interval",
                             gp_csv_get(&r->row, r->idx[X_INTERVAL]), 0,
                             GP_TRACE_MAX_SUBMIT_US, &interval_us, diag)) < 0)
        return rc;
    if (x->clock_us > GP_TRACE_MAX_SUBMIT_US - interval_us)
        return gp_csv_field_error(in, "interval", diag,
                                  "takes the submit time past 100 years");
    x->clock_us += interval_us;
    out->submit_us = x->clock_us;
    out->id = gp_csv_get(&r->row, r->idx[X_ID]);
    if (!out->id[0])
        return gp_csv_field_error(in, "u_id", diag, "is empty");
    s = gp_csv_get(&r->row, r->idx[X_USER]);
    out->user = s[0] ? s : NULL;
    if ((rc = gp_csv_u32(in, "gpu_num", gp_csv_get(&r->row, r->idx[X_GPUS]), 0,
                         GP_TRACE_MAX_GPUS, &out->gpus, diag)) < 0)
        return rc;
    s = gp_csv_get(&r->row, r->idx[X_CPUS]);
    if (!gp_csv_blank(s) &&
        (rc = gp_csv_u32(in, "cpu_num", s, 0, MAX_CPUS, &out->cpus, diag)) < 0)
        return rc;
    if ((rc = gp_csv_seconds(in, "run_time", gp_csv_get(&r->row, r->idx[X_RUN]),
                             0, GP_TRACE_MAX_DURATION_US, &out->duration_us,
                             diag)) < 0)
        return rc;
    if (out->gpus == 0)
        return gp_csv_not_gpu(in, diag, "no GPUs (CPU-only job)");
    if (out->duration_us == 0)
        return gp_csv_not_gpu(in, diag, "zero run time");
    return 1;
}

const struct gp_trace_reader_ops gp_trace_reader_helios_excerpt = {
    .name = "gws-excerpt",
    .summary =
        "Gen-Parallel-Workloads excerpt of Helios/Philly (u_id,...,interval)",
    .preset = NULL,
    .probe = excerpt_probe,
    .open = excerpt_open,
    .next = excerpt_next,
    .close = gp_csv_reader_free,
};
