/* fmt_openb.c - Alibaba's GPU cluster trace v2023 ("openb", Weng et al.,
 * ATC'23): one Kubernetes pod per row of openb_pod_list_*.csv.
 *
 * A pod asking for a fraction of one GPU (num_gpu 1, gpu_milli < 1000) is
 * a job of gpus 0 and that gpu_milli: a share of one device (the
 * simulator's --shares round-up gives it a whole GPU instead). A pod runs from
 * scheduled_time to deletion_time; a pod never scheduled (Pending, empty
 * scheduled_time) is replayed as running from creation_time, so its demand is
 * not lost. CPU-only pods and pods of zero lifetime are not GPU jobs and are
 * skipped with a reason. Multi-type specs ("V100M16|V100M32") are relaxed to
 * any type: a job names one type or none.
 */
#include <string.h>

#include "trace/csv.h"
#include "trace/reader.h"

enum {
    C_NAME,
    C_CPU,
    C_MEM,
    C_NGPU,
    C_MILLI,
    C_SPEC,
    C_QOS,
    C_PHASE,
    C_CREATE,
    C_DELETE,
    C_SCHED,
    C_COUNT
};

static const struct gp_csv_col cols[C_COUNT] = {
    [C_NAME] = {"name", true},
    [C_CPU] = {"cpu_milli", false},
    [C_MEM] = {"memory_mib", false},
    [C_NGPU] = {"num_gpu", true},
    [C_MILLI] = {"gpu_milli", false},
    [C_SPEC] = {"gpu_spec", false},
    [C_QOS] = {"qos", false},
    [C_PHASE] = {"pod_phase", false},
    [C_CREATE] = {"creation_time", true},
    [C_DELETE] = {"deletion_time", true},
    [C_SCHED] = {"scheduled_time", false},
};

struct openb {
    struct gp_csv_reader r;
};

static int openb_probe(const char *line, size_t len, const char *member)
{
    static const char hdr[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli";
    size_t n = sizeof(hdr) - 1;

    (void)member;
    if (len < n || memcmp(line, hdr, n) != 0)
        return 0;
    /* The full header of the lists that carry times. */
    if (strstr(line, "creation_time") && strstr(line, "deletion_time"))
        return 100;
    return 50; /* the multigpu lists: open() will name what is missing */
}

static int openb_open(void **priv, struct gp_input *in,
                      const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    (void)opts;
    return gp_csv_reader_new(priv, sizeof(struct openb), in, cols, C_COUNT,
                             false, NULL, diag);
}

static int openb_row(struct openb *o, struct gp_job_spec *out,
                     struct gp_diag *diag)
{
    struct gp_csv_reader *r = &o->r;
    const struct gp_csv_row *row = &r->row;
    const char *sched = gp_csv_get(row, r->idx[C_SCHED]);
    const char *spec = gp_csv_get(row, r->idx[C_SPEC]);
    const char *cpu = gp_csv_get(row, r->idx[C_CPU]);
    const char *mem = gp_csv_get(row, r->idx[C_MEM]);
    const char *milli = gp_csv_get(row, r->idx[C_MILLI]);
    uint64_t cpu_milli = 0, mem_mib = 0;
    uint32_t ngpu, gpu_milli = 1000;
    int64_t create_us, delete_us, start_us;
    int rc;

    if ((rc = gp_csv_u32(r->in, "num_gpu", gp_csv_get(row, r->idx[C_NGPU]), 0,
                         GP_TRACE_MAX_GPUS, &ngpu, diag)) != GP_OK)
        return rc;
    if (*milli && (rc = gp_csv_u32(r->in, "gpu_milli", milli, 0, 1000,
                                   &gpu_milli, diag)) != GP_OK)
        return rc;
    if (*cpu && (rc = gp_csv_u64(r->in, "cpu_milli", cpu, 0, UINT64_C(1) << 40,
                                 &cpu_milli, diag)) != GP_OK)
        return rc;
    if (*mem && (rc = gp_csv_u64(r->in, "memory_mib", mem, 0, UINT64_C(1) << 40,
                                 &mem_mib, diag)) != GP_OK)
        return rc;
    if ((rc = gp_csv_seconds(
             r->in, "creation_time", gp_csv_get(row, r->idx[C_CREATE]), 0,
             GP_TRACE_MAX_SUBMIT_US, &create_us, diag)) != GP_OK ||
        (rc = gp_csv_seconds(
             r->in, "deletion_time", gp_csv_get(row, r->idx[C_DELETE]), 0,
             GP_TRACE_MAX_SUBMIT_US, &delete_us, diag)) != GP_OK)
        return rc;
    start_us = create_us;
    if (*sched &&
        (rc = gp_csv_seconds(r->in, "scheduled_time", sched, 0,
                             GP_TRACE_MAX_SUBMIT_US, &start_us, diag)) != GP_OK)
        return rc;
    if (ngpu == 0)
        return gp_diag_set(diag, GP_TRACE_NOT_GPU, gp_input_where(r->in),
                           "CPU-only pod");
    if (delete_us - start_us <= 0)
        return gp_diag_set(diag, GP_TRACE_NOT_GPU, gp_input_where(r->in),
                           "zero lifetime");
    if (delete_us - start_us > GP_TRACE_MAX_DURATION_US)
        return gp_csv_field_error(r->in, "deletion_time", diag,
                                  "the pod lives longer than 10 years");
    memset(out, 0, sizeof(*out));
    out->id = gp_csv_get(row, r->idx[C_NAME]);
    if (!out->id[0])
        out->id = NULL;
    out->tenant = gp_csv_get(row, r->idx[C_QOS]);
    if (!out->tenant[0])
        out->tenant = NULL;
    /* One type or any: gpupool has no "one of these types". */
    out->gpu_type = *spec && !strchr(spec, '|') ? spec : NULL;
    if (ngpu == 1 && gpu_milli > 0 && gpu_milli < GP_MILLI_PER_GPU) {
        out->gpus = 0; /* a share of one device */
        out->gpu_milli = gpu_milli;
    } else {
        out->gpus = ngpu;
    }
    out->submit_us = create_us;
    out->duration_us = delete_us - start_us;
    out->cpus = (uint32_t)((cpu_milli + 999) / 1000);
    out->mem_mib = mem_mib;
    return 1;
}

static int openb_next(void *priv, struct gp_job_spec *out, struct gp_diag *diag)
{
    struct openb *o = priv;
    int rc = gp_csv_reader_next(&o->r, diag);

    if (rc != 1)
        return rc;
    return openb_row(o, out, diag);
}

const struct gp_trace_reader_ops gp_trace_reader_openb = {
    .name = "openb",
    .summary = "Alibaba GPU trace 2023 (openb) pod list; GPU slices become "
               "whole GPUs",
    .preset = "openb",
    .probe = openb_probe,
    .open = openb_open,
    .next = openb_next,
    .close = gp_csv_reader_free,
};
