/* fmt_itp.c - Microsoft ITP job logs as released with ElasticFlow: one
 * clusterNN.csv per cluster (job_id,submission_time,duration,num_gpu), plain
 * or inside raw-traces.tar.gz / elasticflow-traces.tar.gz.
 *
 * Key decision: ITP has no tenants, so the cluster a job came from is its
 * tenant ("cluster04"). In a tarball only members named clusterNN.csv are
 * read: LICENSE and the 195-job testbed sample (195job.csv, which repeats
 * jobs of the clusters) are left out. The ElasticFlow variant's synthetic
 * model_name becomes the job name; its other synthetic columns are ignored.
 */
#include <string.h>

#include "trace/csv.h"
#include "trace/reader.h"

enum col { C_ID, C_SUBMIT, C_DURATION, C_GPUS, C_MODEL, NCOLS };

static const struct gp_csv_col cols[NCOLS] = {
    [C_ID] = {"job_id", true},         [C_SUBMIT] = {"submission_time", true},
    [C_DURATION] = {"duration", true}, [C_GPUS] = {"num_gpu", true},
    [C_MODEL] = {"model_name", false},
};

struct itp {
    struct gp_csv_reader r;
    const char *member; /* the member tenant was made from */
    char tenant[64];
};

/* "clusterNN.csv", any number of digits. */
static bool is_cluster_csv(const char *member)
{
    const char *b = gp_path_base(member);
    size_t n = strlen(b), i = 7;

    if (n < 12 || strncmp(b, "cluster", 7) != 0 ||
        strcmp(b + n - 4, ".csv") != 0)
        return false;
    for (; i < n - 4; i++)
        if (b[i] < '0' || b[i] > '9')
            return false;
    return true;
}

static int itp_probe(const char *line, size_t len, const char *member)
{
    (void)len;
    if (strncmp(line, "job_id,submission_time,", 23) == 0 &&
        strstr(line, ",num_gpu") && strstr(line, ",duration"))
        return member && is_cluster_csv(member) ? 100 : 90;
    return 0;
}

static int itp_open(void **priv, struct gp_input *in,
                    const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    (void)opts;
    return gp_csv_reader_new(priv, sizeof(struct itp), in, cols, NCOLS, false,
                             is_cluster_csv, diag);
}

/* The tenant from a member or file name: its base name up to the first
 * '.' ("cluster04.csv.gz" -> "cluster04"). */
static void set_tenant(struct itp *p)
{
    const char *b = gp_path_base(p->r.member);
    size_t n = strcspn(b, ".");

    if (n == 0)
        n = strlen(b);
    if (n >= sizeof(p->tenant))
        n = sizeof(p->tenant) - 1;
    memcpy(p->tenant, b, n);
    p->tenant[n] = 0;
    p->member = p->r.member;
}

static int itp_next(void *priv, struct gp_job_spec *out, struct gp_diag *diag)
{
    struct itp *p = priv;
    struct gp_csv_reader *r = &p->r;
    const char *model;
    int rc;

    if ((rc = gp_csv_reader_next(r, diag)) != 1)
        return rc;
    if (r->member != p->member)
        set_tenant(p);
    out->id = gp_csv_get(&r->row, r->idx[C_ID]);
    if (!out->id[0])
        return gp_csv_field_error(r->in, "job_id", diag, "is empty");
    out->tenant = p->tenant;
    model = gp_csv_get(&r->row, r->idx[C_MODEL]);
    out->name = model[0] ? model : NULL;
    if ((rc = gp_csv_seconds(
             r->in, "submission_time", gp_csv_get(&r->row, r->idx[C_SUBMIT]), 0,
             GP_TRACE_MAX_SUBMIT_US, &out->submit_us, diag)) < 0 ||
        (rc = gp_csv_seconds(
             r->in, "duration", gp_csv_get(&r->row, r->idx[C_DURATION]), 0,
             GP_TRACE_MAX_DURATION_US, &out->duration_us, diag)) < 0 ||
        (rc = gp_csv_u32(r->in, "num_gpu", gp_csv_get(&r->row, r->idx[C_GPUS]),
                         0, GP_TRACE_MAX_GPUS, &out->gpus, diag)) < 0)
        return rc;
    if (out->gpus == 0)
        return gp_csv_not_gpu(r->in, diag, "no GPUs (CPU-only job)");
    if (out->duration_us == 0)
        return gp_csv_not_gpu(r->in, diag, "zero run time");
    return 1;
}

const struct gp_trace_reader_ops gp_trace_reader_itp = {
    .name = "itp",
    .summary = "Microsoft ITP (ElasticFlow): clusterNN.csv files or tarball",
    .preset = "itp",
    .probe = itp_probe,
    .open = itp_open,
    .next = itp_next,
    .close = gp_csv_reader_free,
};
