/* fmt_pollux.c - the workload CSVs of the Pollux artifact (Qiao et al.,
 * OSDI'21; petuum/adaptdl, branch osdi21-artifact):
 * name,time,application,num_replicas,batch_size.
 *
 * Key decision: the trace gives no run time. A Pollux job trains its model
 * to a target metric, so its length follows from the model profiles the
 * simulator loads with --goodput (docs/speed.md, "Goodput"); duration is
 * left 0 here. Every row must name its application (the profile to use)
 * and a batch size, or the job could never be run. The jobs checkpoint and
 * restart on every reallocation, so all are checkpointable, and may run on
 * 1 to 64 GPUs (elastic; num_replicas is their size). The artifact's
 * cluster is 16 nodes of 4 GPUs, given as the implied cluster spec.
 */
#include <string.h>

#include "trace/csv.h"
#include "trace/reader.h"

enum col { C_NAME, C_TIME, C_APP, C_REPLICAS, C_BATCH, NCOLS };

static const struct gp_csv_col cols[NCOLS] = {
    [C_NAME] = {"name", true},        [C_TIME] = {"time", true},
    [C_APP] = {"application", true},  [C_REPLICAS] = {"num_replicas", true},
    [C_BATCH] = {"batch_size", true},
};

struct pollux {
    struct gp_csv_reader r;
};

static int pollux_probe(const char *line, size_t len, const char *member)
{
    static const char hdr[] = "name,time,application,num_replicas,batch_size";
    size_t n = sizeof(hdr) - 1;

    (void)member;
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == n && memcmp(line, hdr, n) == 0)
        return 100;
    if (strstr(line, "application") && strstr(line, "num_replicas") &&
        strstr(line, "batch_size"))
        return 60;
    return 0;
}

static int pollux_open(void **priv, struct gp_input *in,
                       const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    (void)opts;
    return gp_csv_reader_new(priv, sizeof(struct pollux), in, cols, NCOLS,
                             false, gp_csv_member_is_csv, diag);
}

/* A text field that must be given: non-empty, printable. */
static int need_text(struct gp_input *in, const char *field, const char *s,
                     struct gp_diag *diag)
{
    char why[64];
    const char *bad;

    if (gp_csv_blank(s))
        return gp_csv_field_error(in, field, diag, "is empty");
    if ((bad = gp_text_check(s, strlen(s), why, sizeof(why))))
        return gp_csv_field_error(in, field, diag,
                                  "%s (control characters and invalid "
                                  "UTF-8 are refused)",
                                  bad);
    return GP_OK;
}

static int pollux_next(void *priv, struct gp_job_spec *out,
                       struct gp_diag *diag)
{
    struct pollux *p = priv;
    struct gp_csv_reader *r = &p->r;
    const struct gp_csv_row *row = &r->row;
    const char *name, *app;
    int64_t submit_us;
    uint32_t gpus, batch;
    int rc;

    if ((rc = gp_csv_reader_next(r, diag)) != 1)
        return rc;
    name = gp_csv_get(row, r->idx[C_NAME]);
    app = gp_csv_get(row, r->idx[C_APP]);
    if ((rc = need_text(r->in, "name", name, diag)) != GP_OK ||
        (rc = gp_csv_seconds(r->in, "time", gp_csv_get(row, r->idx[C_TIME]), 0,
                             GP_TRACE_MAX_SUBMIT_US, &submit_us, diag)) !=
            GP_OK ||
        (rc = need_text(r->in, "application", app, diag)) != GP_OK ||
        (rc = gp_csv_u32(r->in, "num_replicas",
                         gp_csv_get(row, r->idx[C_REPLICAS]), 1,
                         GP_TRACE_MAX_GPUS, &gpus, diag)) != GP_OK ||
        (rc = gp_csv_u32(r->in, "batch_size", gp_csv_get(row, r->idx[C_BATCH]),
                         1, UINT32_MAX, &batch, diag)) != GP_OK)
        return rc;
    memset(out, 0, sizeof(*out));
    out->id = name;
    out->submit_us = submit_us;
    out->job_class = app;
    out->gpus = gpus;
    out->batch_size = batch;
    /* elastic, as Pollux's jobs are: from one GPU to 64 (the artifact's
     * most), or its own size if larger; num_replicas is where it starts
     * under a policy that does not size jobs */
    out->min_gpus = 1;
    out->max_gpus = gpus > 64 ? gpus : 64;
    out->checkpointable = true;
    return 1;
}

const struct gp_trace_reader_ops gp_trace_reader_pollux = {
    .name = "pollux",
    .summary = "Pollux artifact workload: name,time,application,num_replicas,"
               "batch_size",
    .preset = "16x4",
    .probe = pollux_probe,
    .open = pollux_open,
    .next = pollux_next,
    .close = gp_csv_reader_free,
};
