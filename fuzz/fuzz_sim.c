/* fuzz_sim.c - a whole simulation from any bytes: a trace, a cluster and
 * tenants go through the readers into gp_sim_run, and the run must keep its
 * promises: never more GPUs busy than the cluster has, and every job that
 * was not rejected ends.
 *
 * Input: a first line "POLICY CLUSTER" ("fifo 4x8", "pool 2x8:V100+2x4"),
 * then optionally a tenants document ending in a line "--", then the trace
 * (any format, plain or compressed). Runs are kept small (at most 64 nodes,
 * 256 jobs, times clamped to a day) so that every input stays fast; only
 * the public API of include/gpupool/ is used.
 *
 * Its first finding (fuzz/README.md): a job wider than its tenant's cap
 * (or an ancestor's) was neither run nor rejected; pool now rejects it,
 * and its input stays in the corpus. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/sim.h"
#include "trace/tenants.h"

#define MAX_JOBS 256
#define DAY_US (INT64_C(86400) * GP_US_PER_S)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct watch {
    uint64_t total, busy;
    uint32_t held[MAX_JOBS]; /* GPUs a running job holds, by core job id */
};

static void w_started(void *priv, const struct gp_core *c,
                      const struct gp_job *j, int64_t now_us)
{
    struct watch *w = priv;

    (void)c;
    (void)now_us;
    if (j->id >= MAX_JOBS || w->held[j->id])
        abort(); /* started twice */
    w->held[j->id] = j->where.gpus ? j->where.gpus : 1;
    w->busy += w->held[j->id];
    if (w->busy > w->total)
        abort();
}

static void w_stopped(void *priv, const struct gp_core *c,
                      const struct gp_job *j, int64_t now_us)
{
    struct watch *w = priv;

    (void)c;
    (void)now_us;
    if (j->id < MAX_JOBS) {
        w->busy -= w->held[j->id];
        w->held[j->id] = 0;
    }
}

static const struct gp_observer_ops watch_ops = {
    .started = w_started,
    .preempted = w_stopped,
    .ended = w_stopped,
};

/* Split off the first line ("POLICY CLUSTER") and the tenants part. */
static int split(const uint8_t *data, size_t size, char *policy, char *cluster,
                 size_t cap, const uint8_t **tenants, size_t *ntenants,
                 const uint8_t **trace, size_t *ntrace)
{
    const uint8_t *nl = memchr(data, '\n', size), *p, *end = data + size;
    const char *sp;
    char line[128];
    size_t n;

    if (!nl || (size_t)(nl - data) >= sizeof(line))
        return -1;
    n = (size_t)(nl - data);
    memcpy(line, data, n);
    line[n] = '\0';
    if (!(sp = strchr(line, ' ')) || (size_t)(sp - line) >= cap ||
        strlen(sp + 1) >= cap)
        return -1;
    memcpy(policy, line, (size_t)(sp - line));
    policy[sp - line] = '\0';
    strcpy(cluster, sp + 1);
    if (!isdigit((unsigned char)cluster[0]) || !strchr(cluster, 'x') ||
        strchr(cluster, '.') || strchr(cluster, ','))
        return -1; /* shapes only: never a file */
    p = nl + 1;
    *tenants = NULL;
    *ntenants = 0;
    if (p < end && *p == '{') {
        const uint8_t *q = p;

        while (q < end) { /* the tenants end at a line "--" */
            const uint8_t *e = memchr(q, '\n', (size_t)(end - q));

            if (!e)
                return -1;
            if (e - q == 2 && q[0] == '-' && q[1] == '-') {
                *tenants = p;
                *ntenants = (size_t)(q - p);
                p = e + 1;
                break;
            }
            q = e + 1;
        }
        if (!*tenants)
            return -1;
    }
    *trace = p;
    *ntrace = (size_t)(end - p);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char policy[64], cspec[64];
    const uint8_t *tdoc, *trace;
    size_t ntdoc, ntrace;
    struct gp_tenant_list tl;
    struct gp_workload wl;
    struct gp_trace *t = NULL;
    struct gp_cluster *c = NULL;
    struct gp_metrics *m = NULL;
    struct gp_diag d;
    struct gp_trace_opts opts = {.skip_bad = true};
    struct gp_sim_config cfg = {.model = GP_PLACE_PACK};
    struct watch *w;
    const struct gp_summary *sum;

    if (split(data, size, policy, cspec, sizeof(cspec), &tdoc, &ntdoc, &trace,
              &ntrace) != 0 ||
        !(cfg.policy = gp_policy_find(policy)))
        return 0;
    if (!(w = calloc(1, sizeof(*w))))
        return 0;
    gp_tenant_list_init(&tl);
    gp_workload_init(&wl);
    if (tdoc && gp_tenants_parse(&tl, (const char *)tdoc, ntdoc, "tenants",
                                 &d) != GP_OK)
        goto out;
    if (gp_trace_open_mem(&t, trace, ntrace, "trace", &opts, &d) != GP_OK ||
        gp_workload_load(&wl, t, NULL, &d) != GP_OK || wl.n == 0 ||
        wl.n > MAX_JOBS)
        goto out;
    for (size_t i = 0; i < wl.n; i++) { /* monotone: the order stays */
        if (wl.jobs[i].submit_us > DAY_US)
            wl.jobs[i].submit_us = DAY_US;
        if (wl.jobs[i].duration_us > DAY_US)
            wl.jobs[i].duration_us = DAY_US;
    }
    if (gp_cluster_from_spec(cspec, &c, &d) != GP_OK)
        goto out;
    if (gp_cluster_nnodes(c) > 64) {
        gp_cluster_free(c);
        goto out;
    }
    w->total = gp_cluster_gpus(c);
    cfg.tenants = tl.t;
    cfg.ntenants = tl.n;
    cfg.grace_us = GP_TIME_NONE;
    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = -1;
        cfg.max_preemptions[k] = UINT32_MAX;
    }
    cfg.watch = &watch_ops;
    cfg.watch_priv = w;
    if (gp_metrics_new(&m) != GP_OK) {
        gp_cluster_free(c);
        goto out;
    }
    if (gp_sim_run(&wl, c, &cfg, m, NULL, &d) == GP_OK) {
        sum = gp_metrics_summary(m);
        /* every job ends: completed, or rejected as never fitting */
        if (sum->jobs != wl.n || sum->unfinished != 0 ||
            sum->completed + sum->rejected != sum->jobs)
            abort();
    }
out:
    gp_metrics_free(m);
    gp_trace_close(t);
    gp_workload_fini(&wl);
    gp_tenant_list_fini(&tl);
    free(w);
    return 0;
}
