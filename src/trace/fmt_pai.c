/* fmt_pai.c - Alibaba PAI GPU trace v2020 (Weng et al., "MLaaS in the
 * Wild", NSDI'22): pai_job_table.csv joined with pai_task_table.csv.
 *
 * The job table says who submitted what and when; only the task table
 * says how many GPUs a job used and when it ran. Both are headerless CSVs
 * (a header line equal to the published one is accepted and skipped). The
 * task table is read whole, first, into a map job_name -> totals (GPUs,
 * CPUs, memory, run span), about 40 bytes a job plus its interned name;
 * the job table then streams against it.
 *
 * A job's GPUs = ceil(sum over its tasks of inst_num * plan_gpu / 100);
 * it runs from its earliest task start to its latest task end; its GPU
 * type is that of its task with the most GPUs. The trace has no tenant:
 * the user is the tenant. Jobs without GPUs, without tasks, or still
 * running or waiting when the trace ends are skipped with the reason.
 *
 * The task table is opts->aux_path (--trace-aux). The reader sees a stream,
 * not its path, so finding the table next to the job table is
 * gp__pai_find_task_table's job, which gp_trace_open calls when it was
 * given no aux_path.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/csv.h"
#include "trace/fmt_pai.h"
#include "trace/reader.h"

#define JOB_HEADER "job_name,inst_id,user,status,start_time,end_time"
#define TASK_HEADER                                                            \
    "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,"         \
    "plan_mem,plan_gpu,gpu_type"

enum { J_NAME, J_INST, J_USER, J_STATUS, J_START, J_END, J_COUNT };
enum {
    T_JOB,
    T_TASK,
    T_INST,
    T_STATUS,
    T_START,
    T_END,
    T_CPU,
    T_MEM,
    T_GPU,
    T_TYPE,
    T_COUNT
};

/* The totals of one job's tasks. */
struct agg {
    double gpu_pct;   /* sum of inst_num * plan_gpu, percent of a GPU */
    float cpu_pct;    /* sum of inst_num * plan_cpu, percent of a core */
    float mem_gb;     /* sum of inst_num * plan_mem */
    float top_gpu;    /* GPU percent of its largest task */
    uint32_t type;    /* id in `types` of that task's gpu_type; 0 = none */
    int64_t start_us; /* earliest task start, GP_TIME_NONE = none */
    int64_t end_us;   /* latest task end, GP_TIME_NONE = none */
    bool open_end;    /* a task has a start but no end */
};

struct pai {
    struct gp_input *jobs;
    struct gp_strtab names; /* job names: id -> aggs[id] */
    struct gp_strtab types;
    struct agg *aggs;
    size_t naggs_cap;
    struct gp_csv_row row;
    bool done;
};

static bool line_is(const char *line, size_t len, const char *text)
{
    size_t n = strlen(text);

    if (len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
        line += 3;
        len -= 3;
    }
    return len == n && memcmp(line, text, n) == 0;
}

static bool is_status(const char *s, size_t len)
{
    static const char *const known[] = {"Terminated", "Failed", "Running",
                                        "Waiting"};

    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strlen(known[i]) == len && memcmp(s, known[i], len) == 0)
            return true;
    return false;
}

static bool is_time(const char *s)
{
    char *end;

    if (!*s)
        return true; /* Running jobs have no end */
    (void)strtod(s, &end);
    return *end == '\0';
}

/* Headerless, so the probe checks the shape of a job row: six fields, a
 * known status, then two times. The task table (ten fields) is no match. */
static int pai_probe(const char *line, size_t len, const char *member)
{
    char buf[1024];
    struct gp_csv_row row;

    (void)member;
    if (line_is(line, len, JOB_HEADER))
        return 100;
    if (len >= sizeof(buf))
        return 0;
    memcpy(buf, line, len);
    buf[len] = '\0';
    if (gp_csv_split(&row, buf, len, ',', NULL, NULL) != GP_OK ||
        row.n != J_COUNT)
        return 0;
    if (!row.len[J_NAME] || !is_status(row.f[J_STATUS], row.len[J_STATUS]) ||
        !row.len[J_START] || !is_time(row.f[J_START]) || !is_time(row.f[J_END]))
        return 0;
    return 60;
}

/* ---- the task table ---------------------------------------------------- */

static int grow_aggs(struct pai *p, uint32_t id, struct gp_input *in,
                     struct gp_diag *diag)
{
    size_t cap = p->naggs_cap;
    struct agg *a;

    if (id < cap)
        return GP_OK;
    if (id >= GP_PAI_MAX_JOBS)
        return gp_diag_set(diag, GP_ERANGE, gp_input_where(in),
                           "more than %u jobs in the task table",
                           GP_PAI_MAX_JOBS);
    while (cap <= id)
        cap = cap ? cap * 2 : 4096;
    if (!(a = realloc(p->aggs, cap * sizeof(*a))))
        return gp_diag_set(diag, GP_ENOMEM, gp_input_where(in),
                           "out of memory");
    for (size_t i = p->naggs_cap; i < cap; i++) {
        memset(&a[i], 0, sizeof(a[i]));
        a[i].start_us = GP_TIME_NONE;
        a[i].end_us = GP_TIME_NONE;
    }
    p->aggs = a;
    p->naggs_cap = cap;
    return GP_OK;
}

/* A number field that may be empty (then `def`). */
static int opt_double(struct gp_input *in, const char *field, const char *s,
                      double def, double hi, double *out, struct gp_diag *diag)
{
    if (!*s) {
        *out = def;
        return GP_OK;
    }
    return gp_csv_double(in, field, s, 0, hi, out, diag);
}

static int opt_time(struct gp_input *in, const char *field, const char *s,
                    int64_t *out, struct gp_diag *diag)
{
    if (!*s) {
        *out = GP_TIME_NONE;
        return GP_OK;
    }
    return gp_csv_seconds(in, field, s, 0, GP_TRACE_MAX_SUBMIT_US, out, diag);
}

static int task_row(struct pai *p, struct gp_input *in,
                    const struct gp_csv_row *row, struct gp_diag *diag)
{
    double inst, cpu, mem, gpu;
    int64_t start, end;
    uint32_t id, type = 0;
    struct agg *a;
    int rc;

    if (row->n != T_COUNT)
        return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                           "%zu fields; a PAI task row has %d (" TASK_HEADER
                           ")",
                           row->n, T_COUNT);
    if (!row->len[T_JOB])
        return gp_csv_field_error(in, "job_name", diag, "empty");
    if ((rc = opt_double(in, "inst_num", row->f[T_INST], 1, 1e6, &inst,
                         diag)) != GP_OK ||
        (rc = opt_double(in, "plan_cpu", row->f[T_CPU], 0, 1e8, &cpu, diag)) !=
            GP_OK ||
        (rc = opt_double(in, "plan_mem", row->f[T_MEM], 0, 1e8, &mem, diag)) !=
            GP_OK ||
        (rc = opt_double(in, "plan_gpu", row->f[T_GPU], 0, 1e6, &gpu, diag)) !=
            GP_OK ||
        (rc = opt_time(in, "start_time", row->f[T_START], &start, diag)) !=
            GP_OK ||
        (rc = opt_time(in, "end_time", row->f[T_END], &end, diag)) != GP_OK)
        return rc;
    if (row->len[T_TYPE] && gp_strtab_intern(&p->types, row->f[T_TYPE],
                                             row->len[T_TYPE], &type) != GP_OK)
        return gp_diag_set(diag, GP_ENOMEM, gp_input_where(in),
                           "out of memory");
    if (gp_strtab_intern(&p->names, row->f[T_JOB], row->len[T_JOB], &id) !=
        GP_OK)
        return gp_diag_set(diag, GP_ENOMEM, gp_input_where(in),
                           "out of memory");
    if ((rc = grow_aggs(p, id, in, diag)) != GP_OK)
        return rc;
    a = &p->aggs[id];
    a->gpu_pct += inst * gpu;
    a->cpu_pct += (float)(inst * cpu);
    a->mem_gb += (float)(inst * mem);
    if (inst * gpu > a->top_gpu ||
        (a->type == 0 && type != 0 && inst * gpu >= a->top_gpu)) {
        a->top_gpu = (float)(inst * gpu);
        if (type)
            a->type = type;
    }
    if (start != GP_TIME_NONE &&
        (a->start_us == GP_TIME_NONE || start < a->start_us))
        a->start_us = start;
    if (end != GP_TIME_NONE && end > a->end_us)
        a->end_us = end;
    if (start != GP_TIME_NONE && end == GP_TIME_NONE)
        a->open_end = true;
    return GP_OK;
}

static int load_tasks(struct pai *p, struct gp_input *in, bool skip_bad,
                      struct gp_diag *diag)
{
    struct gp_csv_row row;
    bool first = true;
    int rc;

    for (;;) {
        char *line;
        size_t len;

        if ((rc = gp_input_getline(in, &line, &len, diag)) < 0)
            return rc;
        if (rc == 0) {
            const char *member;

            if ((rc = gp_input_next_member(in, &member, diag)) < 0)
                return rc;
            if (rc == 0)
                return GP_OK;
            first = true;
            continue;
        }
        if (len == 0)
            continue;
        if (first && line_is(line, len, TASK_HEADER)) {
            first = false;
            continue;
        }
        first = false;
        rc = gp_csv_split(&row, line, len, ',', in, diag);
        if (rc == GP_OK)
            rc = task_row(p, in, &row, diag);
        if (rc == GP_EPARSE && skip_bad)
            continue;
        if (rc != GP_OK)
            return rc;
    }
}

static void pai_close(void *priv)
{
    struct pai *p = priv;

    if (!p)
        return;
    gp_strtab_fini(&p->names);
    gp_strtab_fini(&p->types);
    free(p->aggs);
    free(p);
}

int gp__pai_open_tasks(void **priv, struct gp_input *jobs,
                       struct gp_input *tasks, bool skip_bad,
                       struct gp_diag *diag)
{
    struct pai *p = calloc(1, sizeof(*p));
    int rc;

    if (!p)
        return gp_diag_set(diag, GP_ENOMEM, gp_input_name(jobs),
                           "out of memory");
    p->jobs = jobs;
    gp_strtab_init(&p->names);
    gp_strtab_init(&p->types);
    if ((rc = load_tasks(p, tasks, skip_bad, diag)) != GP_OK) {
        pai_close(p);
        return rc;
    }
    *priv = p;
    return GP_OK;
}

bool gp__pai_find_task_table(const char *job_path, char *out, size_t size)
{
    static const char *const names[] = {
        "pai_task_table.csv",        "pai_task_table.csv.gz",
        "pai_task_table.csv.xz",     "pai_task_table.tar.gz",
        "pai_task_table.csv.tar.gz",
    };
    const char *slash = job_path ? strrchr(job_path, '/') : NULL;
    int dirlen = slash ? (int)(slash - job_path) + 1 : 0;

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct stat st;
        int n = snprintf(out, size, "%.*s%s", dirlen, job_path ? job_path : "",
                         names[i]);

        if (n < 0 || (size_t)n >= size)
            return false;
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
            return true;
    }
    return false;
}

static int pai_open(void **priv, struct gp_input *in,
                    const struct gp_trace_opts *opts, struct gp_diag *diag)
{
    struct gp_input *tasks = NULL;
    const char *member;
    int rc;

    if (!opts || !opts->aux_path || !opts->aux_path[0])
        return gp_diag_set(diag, GP_EINVAL, gp_input_name(in),
                           "a PAI job table needs its task table: put "
                           "pai_task_table.csv (or .csv.gz, .csv.xz, "
                           ".tar.gz) next to it or give --trace-aux PATH");
    if ((rc = gp_input_open_path(&tasks, opts->aux_path, diag)) != GP_OK)
        return rc;
    rc = gp_input_next_member(tasks, &member, diag);
    if (rc == 0)
        rc = gp_diag_set(diag, GP_EPARSE, opts->aux_path,
                         "the task table is empty");
    if (rc > 0)
        rc = gp__pai_open_tasks(priv, in, tasks, opts->skip_bad, diag);
    gp_input_close(tasks);
    return rc;
}

/* ---- the job table ----------------------------------------------------- */

static int job_row(struct pai *p, struct gp_job_spec *out, struct gp_diag *diag)
{
    const struct gp_csv_row *row = &p->row;
    struct gp_input *in = p->jobs;
    const struct agg *a;
    int64_t submit_us, end_us;
    double gpus;
    uint32_t id;
    int rc;

    if (row->n != J_COUNT)
        return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                           "%zu fields; a PAI job row has %d (" JOB_HEADER ")",
                           row->n, J_COUNT);
    if (!row->len[J_NAME])
        return gp_csv_field_error(in, "job_name", diag, "empty");
    if ((rc = gp_csv_seconds(in, "start_time", row->f[J_START], 0,
                             GP_TRACE_MAX_SUBMIT_US, &submit_us, diag)) !=
            GP_OK ||
        (rc = opt_time(in, "end_time", row->f[J_END], &end_us, diag)) != GP_OK)
        return rc;
    id = gp_strtab_find(&p->names, row->f[J_NAME], row->len[J_NAME]);
    if (id == 0 || id >= p->naggs_cap)
        return gp_diag_set(diag, GP_TRACE_NOT_GPU, gp_input_where(in),
                           "no task in the task table");
    a = &p->aggs[id];
    /* 1e-6: plan_gpu is a float in the trace; 3 x 33.3333 is one GPU. */
    gpus = ceil(a->gpu_pct / 100.0 - 1e-6);
    if (!(gpus >= 1))
        return gp_diag_set(diag, GP_TRACE_NOT_GPU, gp_input_where(in),
                           "zero-GPU job");
    if (gpus > GP_TRACE_MAX_GPUS)
        return gp_csv_field_error(in, "job_name", diag,
                                  "its tasks ask for %.0f GPUs", gpus);
    if (a->start_us == GP_TIME_NONE || a->end_us == GP_TIME_NONE ||
        a->open_end || end_us == GP_TIME_NONE)
        return gp_diag_set(diag, GP_TRACE_NOT_GPU, gp_input_where(in),
                           "not finished in the trace (status %s)",
                           row->len[J_STATUS] ? row->f[J_STATUS] : "empty");
    if (a->end_us - a->start_us <= 0)
        return gp_diag_set(diag, GP_TRACE_NOT_GPU, gp_input_where(in),
                           "zero lifetime");
    if (a->end_us - a->start_us > GP_TRACE_MAX_DURATION_US)
        return gp_csv_field_error(in, "job_name", diag,
                                  "its tasks run longer than 10 years");
    memset(out, 0, sizeof(*out));
    out->id = row->f[J_NAME];
    out->user = row->len[J_USER] ? row->f[J_USER] : NULL;
    out->tenant = out->user; /* PAI has no tenant column: one user, one */
    out->gpu_type = a->type ? gp_strtab_get(&p->types, a->type) : NULL;
    out->submit_us = submit_us;
    out->duration_us = a->end_us - a->start_us;
    out->gpus = (uint32_t)gpus;
    out->cpus = (uint32_t)ceil(a->cpu_pct / 100.0 - 1e-6);
    out->mem_mib = (uint64_t)llround((double)a->mem_gb * 1024.0);
    return 1;
}

static int pai_next(void *priv, struct gp_job_spec *out, struct gp_diag *diag)
{
    struct pai *p = priv;

    for (;;) {
        const char *member;
        char *line;
        size_t len;
        int rc;

        if (p->done)
            return 0;
        if ((rc = gp_input_getline(p->jobs, &line, &len, diag)) < 0)
            return rc;
        if (rc == 0) {
            if ((rc = gp_input_next_member(p->jobs, &member, diag)) < 0)
                return rc;
            if (rc == 0)
                p->done = true;
            continue;
        }
        if (len == 0)
            continue;
        if (gp_input_lineno(p->jobs) == 1 && line_is(line, len, JOB_HEADER))
            continue;
        if ((rc = gp_csv_split(&p->row, line, len, ',', p->jobs, diag)) !=
            GP_OK)
            return rc;
        return job_row(p, out, diag);
    }
}

const struct gp_trace_reader_ops gp_trace_reader_pai = {
    .name = "pai",
    .summary = "Alibaba PAI 2020 pai_job_table.csv joined with "
               "pai_task_table.csv (--trace-aux)",
    .preset = "pai",
    .probe = pai_probe,
    .open = pai_open,
    .next = pai_next,
    .close = pai_close,
};
