/* fmt_gpupool.c - gpupool's own CSV trace: a header row names the columns
 * in any order; four are required (id, submit_s, gpus, duration_s), the
 * rest fill the optional parts of a job spec.
 *
 * Key decision: an unknown column is an error that lists the known ones, so
 * a typo ("duraton_s") is caught instead of silently dropping the value.
 * The reference is docs/traces.md.
 */
#include <string.h>

#include "trace/csv.h"
#include "trace/reader.h"

#define MAX_STR 255
#define MAX_CPUS 100000000u
#define MAX_MEM_MIB (UINT64_C(1) << 40)
#define MAX_PRIORITY 1000000

enum col {
    C_ID,
    C_SUBMIT,
    C_GPUS,
    C_DURATION,
    C_TENANT,
    C_USER,
    C_NAME,
    C_GPU_TYPE,
    C_CPUS,
    C_MEM,
    C_PRIORITY,
    C_MIN_GPUS,
    C_MAX_GPUS,
    C_CKPT,
    C_LIMIT,
    C_GPU_MILLI,
    C_ESTIMATE,
    C_SLO,
    NCOLS
};

static const struct gp_csv_col cols[NCOLS] = {
    [C_ID] = {"id", true},
    [C_SUBMIT] = {"submit_s", true},
    [C_GPUS] = {"gpus", true},
    [C_DURATION] = {"duration_s", true},
    [C_TENANT] = {"tenant", false},
    [C_USER] = {"user", false},
    [C_NAME] = {"name", false},
    [C_GPU_TYPE] = {"gpu_type", false},
    [C_CPUS] = {"cpus", false},
    [C_MEM] = {"mem_mib", false},
    [C_PRIORITY] = {"priority", false},
    [C_MIN_GPUS] = {"min_gpus", false},
    [C_MAX_GPUS] = {"max_gpus", false},
    [C_CKPT] = {"checkpointable", false},
    [C_LIMIT] = {"time_limit_s", false},
    [C_GPU_MILLI] = {"gpu_milli", false},
    [C_ESTIMATE] = {"estimate_s", false},
    [C_SLO] = {"slo_s", false},
};

static int gpupool_probe(const char *line, size_t len, const char *member)
{
    static const char *const need[] = {"id", "submit_s", "gpus", "duration_s"};
    int found = 0;

    (void)member;
    /* whole column names, in any order */
    for (size_t i = 0; i < 4; i++) {
        size_t n = strlen(need[i]);

        for (const char *p = line; (p = strstr(p, need[i])); p += n) {
            bool start = p == line || p[-1] == ',' || p[-1] == '"';
            bool end =
                (size_t)(p - line) + n == len || p[n] == ',' || p[n] == '"';

            if (start && end) {
                found++;
                break;
            }
        }
    }
    return found == 4 ? 100 : 0;
}

static int gpupool_open(void **priv, struct gp_input *in,
                        const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    (void)opts;
    return gp_csv_reader_new(priv, sizeof(struct gp_csv_reader), in, cols,
                             NCOLS, true, gp_csv_member_is_csv, diag);
}

/* An optional string column: NULL when absent or empty. */
static int str_col(struct gp_csv_reader *r, enum col c, const char **out,
                   struct gp_diag *diag)
{
    int i = r->idx[c];

    *out = NULL;
    if (i < 0 || r->row.len[i] == 0)
        return GP_OK;
    if (r->row.len[i] > MAX_STR)
        return gp_csv_field_error(r->in, cols[c].name, diag,
                                  "is longer than %d bytes", MAX_STR);
    *out = r->row.f[i];
    return GP_OK;
}

/* An optional number column is present and not blank. */
static bool has(const struct gp_csv_reader *r, enum col c)
{
    return !gp_csv_blank(gp_csv_get(&r->row, r->idx[c]));
}

static const char *val(const struct gp_csv_reader *r, enum col c)
{
    return gp_csv_get(&r->row, r->idx[c]);
}

static int gpupool_next(void *priv, struct gp_job_spec *out,
                        struct gp_diag *diag)
{
    struct gp_csv_reader *r = priv;
    struct gp_input *in = r->in;
    int64_t prio;
    int rc;

    if ((rc = gp_csv_reader_next(r, diag)) != 1)
        return rc;
    if ((rc = str_col(r, C_ID, &out->id, diag)) < 0)
        return rc;
    if (!out->id)
        return gp_csv_field_error(in, "id", diag, "is empty");
    rc = gp_csv_seconds(in, "submit_s", val(r, C_SUBMIT), 0,
                        GP_TRACE_MAX_SUBMIT_US, &out->submit_us, diag);
    if (rc < 0)
        return rc;
    /* gpus 0: a share of one device (gpu_milli), or no GPU at all */
    rc = gp_csv_u32(in, "gpus", val(r, C_GPUS), 0, GP_TRACE_MAX_GPUS,
                    &out->gpus, diag);
    if (rc < 0)
        return rc;
    if (has(r, C_GPU_MILLI) &&
        (rc = gp_csv_u32(in, "gpu_milli", val(r, C_GPU_MILLI), 0,
                         GP_MILLI_PER_GPU - 1, &out->gpu_milli, diag)) < 0)
        return rc;
    if (out->gpus && out->gpu_milli)
        return gp_csv_field_error(in, "gpu_milli", diag,
                                  "a share of one device asks gpus 0 (gpus "
                                  "is %u)",
                                  out->gpus);
    rc = gp_csv_seconds(in, "duration_s", val(r, C_DURATION), 1,
                        GP_TRACE_MAX_DURATION_US, &out->duration_us, diag);
    if (rc < 0)
        return rc;
    if ((rc = str_col(r, C_TENANT, &out->tenant, diag)) < 0 ||
        (rc = str_col(r, C_USER, &out->user, diag)) < 0 ||
        (rc = str_col(r, C_NAME, &out->name, diag)) < 0 ||
        (rc = str_col(r, C_GPU_TYPE, &out->gpu_type, diag)) < 0)
        return rc;
    if (has(r, C_CPUS) && (rc = gp_csv_u32(in, "cpus", val(r, C_CPUS), 0,
                                           MAX_CPUS, &out->cpus, diag)) < 0)
        return rc;
    if (has(r, C_MEM) &&
        (rc = gp_csv_u64(in, "mem_mib", val(r, C_MEM), 0, MAX_MEM_MIB,
                         &out->mem_mib, diag)) < 0)
        return rc;
    if (has(r, C_PRIORITY)) {
        if ((rc = gp_csv_i64(in, "priority", val(r, C_PRIORITY), -MAX_PRIORITY,
                             MAX_PRIORITY, &prio, diag)) < 0)
            return rc;
        out->priority = (int32_t)prio;
    }
    if (has(r, C_MIN_GPUS) &&
        (rc = gp_csv_u32(in, "min_gpus", val(r, C_MIN_GPUS), 1,
                         GP_TRACE_MAX_GPUS, &out->min_gpus, diag)) < 0)
        return rc;
    if (has(r, C_MAX_GPUS) &&
        (rc = gp_csv_u32(in, "max_gpus", val(r, C_MAX_GPUS), 1,
                         GP_TRACE_MAX_GPUS, &out->max_gpus, diag)) < 0)
        return rc;
    if (out->gpus == 0 && (out->min_gpus || out->max_gpus))
        return gp_csv_field_error(in, out->min_gpus ? "min_gpus" : "max_gpus",
                                  diag,
                                  "a job of gpus 0 (a share, or no GPU) is "
                                  "not elastic");
    if (out->min_gpus && out->min_gpus > out->gpus)
        return gp_csv_field_error(in, "min_gpus", diag,
                                  "%u is more than gpus (%u)", out->min_gpus,
                                  out->gpus);
    if (out->max_gpus && out->max_gpus < out->gpus)
        return gp_csv_field_error(in, "max_gpus", diag,
                                  "%u is less than gpus (%u)", out->max_gpus,
                                  out->gpus);
    if (has(r, C_CKPT) &&
        (rc = gp_csv_bool(in, "checkpointable", val(r, C_CKPT),
                          &out->checkpointable, diag)) < 0)
        return rc;
    if (has(r, C_LIMIT) &&
        (rc = gp_csv_seconds(in, "time_limit_s", val(r, C_LIMIT), 0,
                             GP_TRACE_MAX_DURATION_US, &out->time_limit_us,
                             diag)) < 0)
        return rc;
    if (has(r, C_ESTIMATE) &&
        (rc = gp_csv_seconds(in, "estimate_s", val(r, C_ESTIMATE), 1,
                             GP_TRACE_MAX_DURATION_US, &out->estimate_us,
                             diag)) < 0)
        return rc;
    if (has(r, C_SLO) &&
        (rc = gp_csv_seconds(in, "slo_s", val(r, C_SLO), 0,
                             GP_TRACE_MAX_DURATION_US, &out->slo_us, diag)) < 0)
        return rc;
    return 1;
}

const struct gp_trace_reader_ops gp_trace_reader_gpupool = {
    .name = "gpupool",
    .summary = "gpupool CSV: a header names the columns (docs/traces.md)",
    .preset = NULL,
    .probe = gpupool_probe,
    .open = gpupool_open,
    .next = gpupool_next,
    .close = gp_csv_reader_free,
};
