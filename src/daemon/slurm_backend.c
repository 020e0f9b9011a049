/* slurm_backend.c - backend.kind = slurm: the same daemon, store, API and
 * CLI, with Slurm running the jobs (docs/slurm.md).
 *
 * The core decides as it does for the local backend; its actions become
 * Slurm commands, and Slurm's listings become the core's reports:
 *  - a job enters Slurm held (sbatch --hold, comment gpupool:<id>) as soon
 *    as it is submitted; the core's start pins the placement's nodes and
 *    releases it (gp_slurm_place), reported started at once;
 *  - a preemption is the configured signal to every step, then, when the
 *    grace is over, `scontrol requeuehold`: back in Slurm's queue, held;
 *  - a cancel is scancel; any other kill is a held requeue at once;
 *  - every slurm.poll, sinfo gives node events (gp_slurm_sync_nodes) and
 *    squeue each job's state: a run that ended is reported once, by what
 *    gpupool had asked of it (a requeue it asked for is a stop; an end
 *    of its own is the job's end).
 *
 * Key decisions:
 *  - Slurm's job carries gpupool's id (its comment), so the mapping needs
 *    no column of its own: after a restart the daemon reads it back from
 *    squeue. An adopted job carries its Slurm id as the store's idempotency
 *    key (ext "slurm:<id>"), so an adoption is never made twice.
 *  - GPUs are asked per job (--gpus), not per node: gpupool's placer may
 *    spread a gang unevenly over its nodes, and Slurm then binds each
 *    node's share (CUDA_VISIBLE_DEVICES) within the nodes it was given.
 */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/tenancy.h"
#include "gpupool/cluster.h"

#define SUBMITS_PER_TURN 64
#define MAX_NODES 256 /* nodes of one job */
/* a placed job Slurm has not started by then: its start failed */
#define START_TIMEOUT_US (60 * INT64_C(1000000))
#define COMMENT_PREFIX "gpupool:"

/* ---- opening ----------------------------------------------------------- */

int gp_bslurm_open(struct daemon *d, struct gp_cluster **out,
                   struct gp_diag *diag)
{
    struct gp_slurm_options o = {
        .bin_dir = d->cfg.slurm.bin_dir[0] ? d->cfg.slurm.bin_dir : NULL,
        .timeout_ms = (uint32_t)(d->cfg.slurm.timeout_us / 1000),
    };
    struct gp_slurm_node *nodes = NULL;
    size_t n = 0, skipped = 0;
    int rc;

    if ((rc = gp_slurm_open(&d->slurm, &o, diag)) != GP_OK ||
        (rc = gp_slurm_nodes(d->slurm, &nodes, &n, diag)) != GP_OK)
        return rc;
    rc = gp_slurm_cluster(nodes, n, out, &skipped, diag);
    free(nodes);
    if (rc != GP_OK)
        return rc;
    d->ngpus = (unsigned)gp_cluster_gpus(*out);
    if (d->ngpus == 0) {
        gp_cluster_free(*out);
        *out = NULL;
        return gp_diag_set(diag, GP_ERANGE, "slurm",
                           "no node of the cluster has a gpu GRES (%zu "
                           "nodes without)",
                           skipped);
    }
    snprintf(d->node_name, sizeof(d->node_name), "slurm");
    gp_dlog(d, GP_LOG_INFO,
            "slurm %s: %u nodes, %u GPUs (%zu nodes without GPUs left out)",
            gp_slurm_version(d->slurm), gp_cluster_nnodes(*out), d->ngpus,
            skipped);
    return GP_OK;
}

void gp_bslurm_close(struct daemon *d)
{
    gp_slurm_close(d->slurm);
    d->slurm = NULL;
    free(d->sjobs);
    d->sjobs = NULL;
    d->nsjobs = 0;
}

/* ---- the listing ----------------------------------------------------------
 */

static int by_id(const void *a, const void *b)
{
    const struct gp_slurm_job *x = a, *y = b;

    return x->id < y->id ? -1 : x->id > y->id;
}

int gp_bslurm_list(struct daemon *d, struct gp_diag *diag)
{
    struct gp_slurm_job *v = NULL;
    size_t n = 0;
    int rc = gp_slurm_jobs(d->slurm, &v, &n, diag);

    if (rc != GP_OK)
        return rc;
    qsort(v, n, sizeof(*v), by_id);
    free(d->sjobs);
    d->sjobs = v;
    d->nsjobs = n;
    return GP_OK;
}

static const struct gp_slurm_job *sjob(const struct daemon *d, uint32_t id)
{
    struct gp_slurm_job key = {.id = id};

    return id ? bsearch(&key, d->sjobs, d->nsjobs, sizeof(key), by_id) : NULL;
}

/* gpupool's id in a Slurm job's comment, or 0 */
static int64_t comment_id(const struct gp_slurm_job *sj)
{
    const char *c = sj->comment;
    char *end;
    long long v;

    if (strncmp(c, COMMENT_PREFIX, strlen(COMMENT_PREFIX)) != 0)
        return 0;
    c += strlen(COMMENT_PREFIX);
    v = strtoll(c, &end, 10);
    return end != c && !*end && v > 0 ? v : 0;
}

static bool in_partition(const struct daemon *d, const struct gp_slurm_job *sj)
{
    return !d->cfg.slurm.partition[0] ||
           strcmp(d->cfg.slurm.partition, sj->partition) == 0;
}

/* ---- submitting held ------------------------------------------------------
 */

/* s, single-quoted for sh */
static void squote(char **p, size_t *left, const char *s)
{
    size_t n;

#define PUT(str)                                                               \
    do {                                                                       \
        n = (size_t)snprintf(*p, *left, "%s", str);                            \
        n = n < *left ? n : *left ? *left - 1 : 0;                             \
        *p += n;                                                               \
        *left -= n;                                                            \
    } while (0)
    PUT("'");
    for (; *s; s++) {
        char c[2] = {*s, 0};

        if (*s == '\'')
            PUT("'\\''");
        else
            PUT(c);
    }
    PUT("'");
#undef PUT
}

/* The batch script: the checkpoint protocol's variables (docs/jobs.md),
 * the job's own, then its command in place of the shell, so that the
 * preempt signal reaches the command itself. NULL when it does not fit. */
static char *script_of(const struct daemon *d, const struct djob *dj)
{
    size_t cap = 65536, left = cap;
    char *buf = malloc(cap), *p = buf, dir[1024];
    json_t *cmd = json_object_get(dj->spec, "command"),
           *env = json_object_get(dj->spec, "env"), *v;
    const char *key;
    int n;

    if (!buf)
        return NULL;
    gp_daemon_job_dir(d, dj->id, dir, sizeof(dir));
    n = snprintf(p, left,
                 "#!/bin/sh\n"
                 "# gpupool job %" PRId64 " (gpupool show %" PRId64 ")\n"
                 "unset SLURM_EXPORT_ENV\n"
                 "export PATH=/usr/local/bin:/usr/bin:/bin\n"
                 "export GPUPOOL_JOB_ID=%" PRId64 "\n"
                 "export GPUPOOL_RESTART_COUNT=\"${SLURM_RESTART_COUNT:-0}\"\n"
                 "export GPUPOOL_PREEMPT_SIGNAL=%d\n"
                 "export GPUPOOL_PREEMPT_GRACE_S=%" PRId64 "\n"
                 "export GPUPOOL_CHECKPOINT_DIR=",
                 dj->id, dj->id, dj->id, d->cfg.backend.preempt_signal,
                 d->cfg.scheduler.grace_us / 1000000);
    p += n;
    left -= (size_t)n;
    {
        char ck[1100];

        snprintf(ck, sizeof(ck), "%s/checkpoint", dir);
        squote(&p, &left, ck);
    }
    json_object_foreach(env, key, v)
    {
        n = snprintf(p, left, "\nexport %s=", key);
        if ((size_t)n >= left)
            break;
        p += n;
        left -= (size_t)n;
        squote(&p, &left, json_string_value(v));
    }
    n = snprintf(p, left, "\nmkdir -p \"$GPUPOOL_CHECKPOINT_DIR\"\nexec");
    if ((size_t)n < left) {
        p += n;
        left -= (size_t)n;
    }
    for (size_t i = 0; i < json_array_size(cmd); i++) {
        if (left > 1) {
            *p++ = ' ';
            left--;
        }
        squote(&p, &left, json_string_value(json_array_get(cmd, i)));
    }
    if (left < 2) {
        free(buf);
        return NULL;
    }
    *p++ = '\n';
    *p = '\0';
    return buf;
}

static int submit_held(struct daemon *d, struct djob *dj, struct gp_diag *diag)
{
    json_t *sp = dj->spec;
    char comment[64], dir[1024], out[1100], err[1100], *script;
    const char *cwd = json_string_value(json_object_get(sp, "cwd"));
    double limit = json_number_value(json_object_get(sp, "time_limit_s"));
    struct gp_slurm_submit r = {
        .name = dj->name[0] ? dj->name : NULL,
        .account = dj->tenant,
        .partition = d->cfg.slurm.partition[0] ? d->cfg.slurm.partition : NULL,
        .comment = comment,
        .output = out,
        .error = err,
        .nodes = 1,
        .gpus_per_job =
            (uint32_t)json_integer_value(json_object_get(sp, "gpus")),
        .gpu_type = json_string_value(json_object_get(sp, "gpu_type")),
        .time_limit_min = limit > 0 ? (uint32_t)((limit + 59) / 60) : 0,
        .clean_env = true,
        .uid = -1,
        .gid = -1,
    };
    int rc;

    if (json_array_size(json_object_get(sp, "command")) == 0)
        return gp_diag_set(diag, GP_EINVAL, "slurm",
                           "job %" PRId64 " has no command to give Slurm",
                           dj->id);
    if (d->cfg.backend.run_as_submitter && geteuid() == 0) {
        r.uid = dj->uid;
        r.gid = dj->gid;
    }
    gp_daemon_job_dir(d, dj->id, dir, sizeof(dir));
    snprintf(comment, sizeof(comment), COMMENT_PREFIX "%" PRId64, dj->id);
    snprintf(out, sizeof(out), "%s/stdout", dir);
    snprintf(err, sizeof(err), "%s/stderr", dir);
    r.workdir = cwd && *cwd ? cwd : dir;
    if (!(r.script = script = script_of(d, dj)))
        return gp_diag_set(diag, GP_ERANGE, "slurm",
                           "job %" PRId64 ": its command and environment do "
                           "not fit in a batch script of 64 KiB",
                           dj->id);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        free(script);
        return gp_diag_set(diag, GP_EIO, dir, "%s", strerror(errno));
    }
    if (r.uid >= 0 && chown(dir, (uid_t)r.uid, (gid_t)r.gid) != 0)
        gp_dlog(d, GP_LOG_WARN, "%s: chown: %s", dir, strerror(errno));
    rc = gp_slurm_submit_held(d->slurm, &r, &dj->slurm_id, diag);
    free(script);
    if (rc == GP_OK)
        gp_dlog(d, GP_LOG_INFO, "job %" PRId64 " is Slurm job %u (held)",
                dj->id, dj->slurm_id);
    return rc;
}

void gp_bslurm_submit_new(struct daemon *d, int64_t now)
{
    unsigned done = 0;

    /* not a walk of every job each turn: only after new submits, and
     * once a poll period for those a poll or a refusal left out */
    if (d->submits == d->slurm_scanned_submits && now < d->slurm_rescan_us)
        return;
    d->slurm_scanned_submits = d->submits;
    d->slurm_rescan_us = now + d->cfg.slurm.poll_us;

    for (size_t i = 0; i < d->njobs && done < SUBMITS_PER_TURN; i++) {
        struct djob *dj = d->jobs[i];
        const struct gp_job *j = gp_core_job(d->core, dj->handle);
        struct gp_diag diag = {{0}, {0}};

        if (dj->slurm_id || dj->has_proc || !j || j->state != GP_JOB_PENDING ||
            now < dj->slurm_retry_us)
            continue;
        done++;
        if (submit_held(d, dj, &diag) != GP_OK) {
            dj->slurm_retry_us = now + d->cfg.slurm.poll_us;
            /* it stays out of Slurm; its start tries again, and fails
             * with this reason if Slurm still refuses */
            gp_dlog(d, GP_LOG_WARN,
                    "job %" PRId64 ": not submitted to Slurm: %s: %s", dj->id,
                    diag.where, diag.msg);
            gp_daemon_save_job(d, dj, j, "slurm_submit_failed",
                               json_pack("{ss}", "why", diag.msg));
        }
    }
    if (done == SUBMITS_PER_TURN)
        d->slurm_rescan_us = now; /* more to go: the next turn */
}

/* ---- starting and stopping --------------------------------------------------
 */

int gp_bslurm_start(struct daemon *d, struct djob *dj, const struct gp_job *j,
                    int64_t now)
{
    const char *names[MAX_NODES];
    struct gp_diag diag = {{0}, {0}};
    const struct gp_cluster *cl = gp_core_cluster(d->core);
    size_t n = 0;
    int rc = GP_OK;

    for (uint32_t s = 0; s < j->where.nslots && n < MAX_NODES; s++) {
        const char *name = gp_cluster_node_name(cl, j->where.slots[s].node);
        bool seen = false;

        for (size_t k = 0; k < n; k++)
            seen = seen || strcmp(names[k], name) == 0;
        if (!seen)
            names[n++] = name;
    }
    if (n == 0)
        rc = gp_diag_set(&diag, GP_EINVAL, "slurm",
                         "a placement with no node (placement = count does "
                         "not name nodes: use pack or topo with Slurm)");
    if (rc == GP_OK && j->where.colocated)
        rc = gp_diag_set(&diag, GP_EINVAL, "slurm",
                         "Slurm gives a GPU to one job at a time: a policy "
                         "that co-locates jobs (gandiva) runs on the local "
                         "backend or in the simulator");
    if (rc == GP_OK && !dj->slurm_id)
        rc = submit_held(d, dj, &diag);
    if (rc == GP_OK)
        rc = gp_slurm_place(d->slurm, dj->slurm_id, names, n, &diag);
    if (rc != GP_OK) {
        char why[400];

        snprintf(why, sizeof(why), "slurm: %.380s", diag.msg);
        return gp_core_job_start_failed(d->core, dj->handle, why, now);
    }
    /* started once squeue says RUNNING (check_job): Slurm's pass may come
     * a few seconds after the release, and the ledger counts from then */
    gp_djob_set_proc(d, dj, true);
    dj->requeue_at_us = 0;
    dj->slurm_requeued = false;
    dj->placed_at_us = now;
    d->starts++;
    return GP_OK;
}

static void requeue(struct daemon *d, struct djob *dj)
{
    struct gp_diag diag;

    dj->requeue_at_us = 0;
    if (dj->slurm_requeued)
        return;
    dj->slurm_requeued = true;
    if (gp_slurm_requeue_hold(d->slurm, dj->slurm_id, &diag) != GP_OK)
        gp_dlog(d, GP_LOG_WARN, "job %" PRId64 ": requeue: %s", dj->id,
                diag.msg); /* ended meanwhile: the poll reports it */
}

void gp_bslurm_stop(struct daemon *d, struct djob *dj,
                    const struct gp_action *a, int64_t now)
{
    struct gp_diag diag;

    if (!dj->has_proc || !dj->slurm_id)
        return;
    dj->stopping = true;
    dj->stop_reason = a->reason;
    if (a->kind == GP_ACT_SIGNAL) {
        if (dj->requeue_at_us || dj->slurm_requeued)
            return; /* already on its way out */
        if (gp_slurm_signal(d->slurm, dj->slurm_id,
                            d->cfg.backend.preempt_signal, &diag) != GP_OK)
            gp_dlog(d, GP_LOG_WARN, "job %" PRId64 ": signal: %s", dj->id,
                    diag.msg);
        dj->requeue_at_us = a->deadline_us > now ? a->deadline_us : now;
        return;
    }
    if (a->reason == GP_STOP_CANCEL) {
        dj->cancel_asked = true;
        if (gp_slurm_cancel(d->slurm, dj->slurm_id, &diag) != GP_OK)
            gp_dlog(d, GP_LOG_WARN, "job %" PRId64 ": scancel: %s", dj->id,
                    diag.msg);
        return;
    }
    requeue(d, dj);
}

/* ---- what Slurm says ---------------------------------------------------- */

/* A run is over in Slurm (final state, or back in its queue): tell the
 * core, by what gpupool had asked. */
static void report(struct daemon *d, struct djob *dj, const struct gp_job *j,
                   const struct gp_slurm_job *sj, int64_t now)
{
    int code = sj ? sj->exit_status >> 8 & 0xff : 0;
    int sig = sj ? sj->exit_status & 0x7f : 0;
    enum gp_slurm_jstate st = sj ? sj->state : GP_SJ_OTHER;
    bool clean = st == GP_SJ_COMPLETED;
    int rc;

    gp_djob_set_proc(d, dj, false);
    if (sj && gp_slurm_jstate_final(st))
        dj->exit_code = sig ? 128 + sig : code;
    if (j->state == GP_JOB_STOPPING) {
        int64_t saved = clean && j->checkpointable ? gp_job_work_at(j, now)
                                                   : j->ckpt_work_us;

        if (dj->cancel_asked && !dj->reason[0])
            snprintf(dj->reason, sizeof(dj->reason), "cancelled");
        /* it left at the signal: Slurm recorded an end; back to the
         * queue, held, for its next run */
        if (!dj->cancel_asked && sj && gp_slurm_jstate_final(st)) {
            dj->slurm_requeued = false;
            requeue(d, dj);
        }
        dj->restarts++;
        rc = gp_core_job_stopped(d->core, dj->handle, saved, now);
    } else {
        enum gp_job_state how = clean ? GP_JOB_COMPLETED : GP_JOB_FAILED;

        if (!sj)
            snprintf(dj->reason, sizeof(dj->reason),
                     "Slurm no longer knows its job %u", dj->slurm_id);
        else if (st == GP_SJ_TIMEOUT)
            snprintf(dj->reason, sizeof(dj->reason), "time limit");
        else if (st == GP_SJ_CANCELLED) {
            how = GP_JOB_CANCELLED;
            snprintf(dj->reason, sizeof(dj->reason), "cancelled in Slurm");
        } else if (st == GP_SJ_NODE_FAIL)
            snprintf(dj->reason, sizeof(dj->reason), "node failure (%.200s)",
                     sj->nodes);
        else if (sig)
            snprintf(dj->reason, sizeof(dj->reason), "killed by signal %d",
                     sig);
        else if (!clean)
            snprintf(dj->reason, sizeof(dj->reason), "%s, exit code %d",
                     sj->state_name, code);
        rc = gp_core_job_ended(d->core, dj->handle, how, now);
    }
    if (rc != GP_OK)
        gp_dlog(d, GP_LOG_ERROR, "job %" PRId64 ": report: %s", dj->id,
                gp_err_str(rc));
}

/* One job gpupool holds against Slurm's word on it. */
static void check_job(struct daemon *d, struct djob *dj, int64_t now)
{
    const struct gp_job *j = gp_core_job(d->core, dj->handle);
    const struct gp_slurm_job *sj = sjob(d, dj->slurm_id);
    struct gp_diag diag;

    if (!j || !dj->slurm_id)
        return;
    if (dj->has_proc) {
        /* placed: started once Slurm runs it (or ran it: it ended
         * between two polls); not started in time, it is held again and
         * the start failed */
        if (j->state == GP_JOB_STARTING && sj &&
            (sj->state == GP_SJ_RUNNING || gp_slurm_jstate_final(sj->state)))
            gp_core_job_started(d->core, dj->handle, now);
        else if (j->state == GP_JOB_STARTING && sj &&
                 sj->state == GP_SJ_PENDING &&
                 now - dj->placed_at_us >= START_TIMEOUT_US) {
            char why[160];

            snprintf(why, sizeof(why),
                     "Slurm did not start it within %d s (reason %.60s)",
                     (int)(START_TIMEOUT_US / 1000000), sj->reason);
            gp_slurm_hold(d->slurm, dj->slurm_id, NULL);
            gp_djob_set_proc(d, dj, false);
            gp_core_job_start_failed(d->core, dj->handle, why, now);
            return;
        }
        /* a run that ended, or that is back in the queue as asked; a
         * placed job Slurm has not started yet is pending, not held */
        if (!sj || gp_slurm_jstate_final(sj->state) ||
            (sj->state == GP_SJ_PENDING && dj->slurm_requeued))
            report(d, dj, j, sj, now);
        else if (sj->state == GP_SJ_PENDING && j->state != GP_JOB_STARTING) {
            /* Slurm requeued a run gpupool did not stop (its node
             * failed and came back between two polls): the run is lost,
             * the job held again, queued from its checkpoint */
            gp_dlog(d, GP_LOG_WARN,
                    "job %" PRId64 ": Slurm requeued its run (Slurm job %u, "
                    "restart %u): lost, queued again",
                    dj->id, dj->slurm_id, sj->restarts);
            if (!sj->held)
                gp_slurm_hold(d->slurm, dj->slurm_id, NULL);
            gp_core_job_lost(d->core, dj->handle, now);
        }
        return;
    }
    /* pending in gpupool */
    if (!sj) {
        dj->slurm_id = 0; /* forgotten: submitted again */
    } else if (sj->state == GP_SJ_CANCELLED) {
        snprintf(dj->reason, sizeof(dj->reason), "cancelled in Slurm");
        gp_core_cancel(d->core, dj->handle, now);
    } else if (gp_slurm_jstate_final(sj->state)) {
        /* it ended in Slurm while queued in gpupool (it left at the
         * signal just as it was requeued): back to Slurm's queue, held,
         * or a new Slurm job if Slurm refuses */
        if (gp_slurm_requeue_hold(d->slurm, dj->slurm_id, &diag) != GP_OK)
            dj->slurm_id = 0;
    } else if (sj->state == GP_SJ_PENDING && !sj->held) {
        if (gp_slurm_hold(d->slurm, dj->slurm_id, &diag) != GP_OK)
            gp_dlog(d, GP_LOG_WARN, "job %" PRId64 ": hold: %s", dj->id,
                    diag.msg);
    } else if (sj->state == GP_SJ_RUNNING && !dj->slurm_requeued) {
        gp_dlog(d, GP_LOG_WARN,
                "job %" PRId64 " runs in Slurm (job %u) though gpupool did "
                "not start it: requeued, held",
                dj->id, dj->slurm_id);
        dj->slurm_requeued = true;
        gp_slurm_requeue_hold(d->slurm, dj->slurm_id, NULL);
    } else if (sj->state == GP_SJ_PENDING) {
        dj->slurm_requeued = false;
    }
}

/* ---- adoption ---------------------------------------------------------- */

/* The placement of a job Slurm runs on `hostlist`: on each node, the
 * lowest free devices, until it has its GPUs. */
struct nodes_of {
    const struct gp_cluster *cl;
    uint32_t ids[MAX_NODES];
    size_t n;
    bool unknown;
};

static int add_node(void *priv, const char *name)
{
    struct nodes_of *no = priv;
    uint32_t id;

    if (gp_cluster_find_node(no->cl, name, &id) != GP_OK) {
        no->unknown = true;
        return 1;
    }
    if (no->n == MAX_NODES)
        return 1;
    no->ids[no->n++] = id;
    return 0;
}

static int placement_on(struct daemon *d, const char *hostlist, uint32_t gpus,
                        struct gp_placement *p, struct gp_slot *slots,
                        struct gp_diag *diag)
{
    const struct gp_cluster *cl = gp_core_cluster(d->core);
    struct nodes_of no = {.cl = cl};
    uint32_t left = gpus, sw[MAX_NODES];

    memset(p, 0, sizeof(*p));
    if (gp_hostlist_expand(hostlist, add_node, &no, diag) != GP_OK ||
        no.unknown || no.n == 0)
        return gp_diag_set(diag, GP_ENOENT, "slurm",
                           "nodes '%s' are not all gpupool's", hostlist);
    if (gpus == 0) {
        /* a CPU-only job: one slot of no GPUs on its node, for its CPUs
         * and memory (without it the run could not be adopted after a
         * restart: no slot, no node, and a type read from nothing) */
        memset(&slots[0], 0, sizeof(slots[0]));
        slots[0].node = no.ids[0];
        p->nslots = 1;
    }
    for (size_t k = 0; k < no.n && left; k++) {
        uint32_t node = no.ids[k], ng = gp_cluster_node_gpus(cl, node);
        struct gp_slot *s = &slots[p->nslots];
        bool new_sw = true;

        memset(s, 0, sizeof(*s));
        s->node = node;
        for (uint32_t g = 0; g < ng && left; g++)
            if (gp_cluster_node_dev_used(cl, node, g) == 0) {
                s->mask |= 1ull << g;
                s->gpus++;
                left--;
            }
        if (!s->gpus)
            continue;
        for (uint32_t k2 = 0; k2 < p->nswitches; k2++)
            new_sw = new_sw && sw[k2] != gp_cluster_node_switch(cl, node);
        if (new_sw)
            sw[p->nswitches++] = gp_cluster_node_switch(cl, node);
        p->nslots++;
    }
    if (left)
        return gp_diag_set(diag, GP_ENOFIT, "slurm",
                           "nodes '%s' have %u of its %u GPUs free", hostlist,
                           gpus - left, gpus);
    p->gpus = gpus;
    p->type = gp_cluster_node_type(cl, slots[0].node);
    p->slots = slots;
    if (p->nslots == 1) {
        p->inline_slot = slots[0];
        p->slots = &p->inline_slot;
    }
    return GP_OK;
}

/* A job's run Slurm still holds, into the core as running. */
static int adopt_run(struct daemon *d, struct djob *dj,
                     const struct gp_slurm_job *sj, int64_t started_us,
                     int64_t now, struct gp_diag *diag)
{
    struct gp_slot slots[MAX_NODES];
    struct gp_placement p;
    const struct gp_job *j = gp_core_job(d->core, dj->handle);
    int rc;

    if ((rc = placement_on(d, sj->nodes, j->demand.gpus, &p, slots, diag)) !=
        GP_OK)
        return rc;
    /* before the adoption: its start (the log, the history's event) names
     * the nodes */
    snprintf(dj->devices, sizeof(dj->devices), "%.255s", sj->nodes);
    if ((rc = gp_core_adopt(d->core, dj->handle, &p,
                            started_us <= now ? started_us : now, now, diag)) !=
        GP_OK) {
        dj->devices[0] = '\0';
        return rc;
    }
    gp_djob_set_proc(d, dj, true);
    return GP_OK;
}

void gp_bslurm_restore_run(struct daemon *d, struct djob *dj,
                           const struct gp_db_run *last, int64_t now)
{
    const struct gp_slurm_job *sj = NULL;
    struct gp_diag diag = {{0}, {0}};
    const char *lost = NULL;

    /* its Slurm job: the comment names it (the newest, should a crash
     * between two submits have left two) */
    for (size_t i = 0; i < d->nsjobs; i++)
        if (comment_id(&d->sjobs[i]) == dj->id)
            sj = &d->sjobs[i];
    dj->slurm_id = sj ? sj->id : 0;
    if (!last->run) {
        if (sj && sj->state == GP_SJ_RUNNING) {
            gp_dlog(d, GP_LOG_WARN,
                    "job %" PRId64 " runs in Slurm (job %u) with no run "
                    "begun in the store: requeued, held",
                    dj->id, sj->id);
            gp_slurm_requeue_hold(d->slurm, sj->id, NULL);
        }
        return;
    }
    if (!sj)
        lost = "lost: Slurm no longer knows its job";
    else if (sj->state == GP_SJ_PENDING)
        lost = "requeued while the daemon was away";
    else if (!sj->nodes[0])
        lost = "lost: Slurm names no node for it";
    /* its run began when Slurm started it, if that is known and later
     * than the release */
    if (!lost && adopt_run(d, dj, sj,
                           sj->start_s * 1000000 > last->started_us
                               ? sj->start_s * 1000000
                               : last->started_us,
                           now, &diag) != GP_OK)
        lost = diag.msg;
    if (lost) {
        gp_db_run_end(d->db, dj->id, last->run, now, lost, NULL);
        gp_dlog(d, GP_LOG_WARN, "job %" PRId64 " run %u: %s; queued again",
                dj->id, last->run, lost);
        if (sj && sj->state == GP_SJ_PENDING && !sj->held)
            gp_slurm_hold(d->slurm, sj->id, NULL);
        if (!sj || gp_slurm_jstate_final(sj->state))
            dj->slurm_id = 0;
        return;
    }
    gp_dlog(d, GP_LOG_INFO,
            "job %" PRId64 " run %u adopted: Slurm job %u %s on %s", dj->id,
            last->run, sj->id, sj->state_name, sj->nodes);
}

/* A Slurm job gpupool does not hold becomes a gpupool job: tenant = its
 * account, GPUs from its request, its time limit (the predictor's
 * fallback), its user. ext "slurm:<id>" makes this happen once. */
static int adopt_new(struct daemon *d, const struct gp_slurm_job *sj,
                     int64_t now)
{
    char ext[32], comment[64];
    const char *tenant = sj->account[0] ? sj->account : "default";
    uint32_t gpus =
        sj->gpus_per_job
            ? sj->gpus_per_job
            : sj->gpus_per_node * (sj->node_count ? sj->node_count : 1);
    struct passwd *pw = getpwuid(sj->uid);
    json_t *spec;
    char *text;
    struct gp_db_job row = {0};
    struct gp_diag diag = {{0}, {0}};
    struct djob *dj = NULL;
    int64_t id;
    int rc;

    snprintf(ext, sizeof(ext), "slurm:%u", sj->id);
    if (gp_db_job_find_ext(d->db, ext, &id, NULL) == GP_OK)
        return GP_EEXIST; /* adopted before; its job has ended */
    spec = json_pack("{sssssisbsi}", "tenant", tenant, "name", sj->name, "gpus",
                     (int)gpus, "checkpointable", 1, "slurm_job", (int)sj->id);
    if (!spec)
        return GP_ENOMEM;
    if (sj->gpu_type[0])
        json_object_set_new(spec, "gpu_type", json_string(sj->gpu_type));
    if (sj->time_limit_min)
        json_object_set_new(spec, "time_limit_s",
                            json_integer((json_int_t)sj->time_limit_min * 60));
    text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
    row.ext = ext;
    row.tenant = tenant;
    row.user = sj->user[0] ? sj->user : pw ? pw->pw_name : "unknown";
    row.uid = sj->uid;
    row.gid = pw ? pw->pw_gid : sj->uid;
    row.name = sj->name;
    row.spec_json = text;
    row.state = GP_JOB_PENDING;
    row.submit_us = sj->submit_s > 0 ? sj->submit_s * 1000000 : now;
    if (row.submit_us > now)
        row.submit_us = now;
    row.queued_us = row.submit_us;
    row.first_start_us = GP_TIME_NONE;
    row.end_us = GP_TIME_NONE;
    row.exit_code = GP_DB_NO_EXIT;
    row.updated_us = now;
    rc = text ? gp_db_job_insert(d->db, &row, &id, &diag) : GP_ENOMEM;
    free(text);
    if (rc == GP_OK && !(dj = gp_djob_new(d, &row, id, spec)))
        rc = GP_ENOMEM;
    json_decref(spec);
    if (rc != GP_OK)
        return rc;
    dj->slurm_id = sj->id;
    {
        struct gp_db_event ev = {.job_id = id, .ts_us = now, .kind = "adopted"};
        char detail[96];

        snprintf(detail, sizeof(detail), "{\"slurm_job\":%u,\"state\":\"%s\"}",
                 sj->id, sj->state_name);
        ev.detail_json = detail;
        gp_db_event_append(d->db, &ev, NULL, NULL);
    }
    if ((rc = gp_daemon_submit_core(d, dj, now, &diag)) != GP_OK) {
        gp_dlog(d, GP_LOG_WARN, "Slurm job %u cannot be adopted: %s", sj->id,
                diag.msg);
        gp_djob_drop(d, dj);
        return rc;
    }
    d->submits++;
    d->adopted++;
    if (!gp_core_job(d->core, dj->handle) ||
        !gp_djob_find(d, id)) /* rejected: the observer dropped it */
        return GP_OK;
    if (sj->state == GP_SJ_RUNNING &&
        adopt_run(d, dj, sj, sj->start_s * 1000000, now, &diag) != GP_OK) {
        gp_dlog(d, GP_LOG_WARN,
                "Slurm job %u runs on %s where gpupool cannot account for "
                "it (%s): requeued, held",
                sj->id, sj->nodes, diag.msg);
        gp_slurm_requeue_hold(d->slurm, sj->id, NULL);
    }
    snprintf(comment, sizeof(comment), COMMENT_PREFIX "%" PRId64, id);
    if (gp_slurm_set_comment(d->slurm, sj->id, comment, &diag) != GP_OK)
        gp_dlog(d, GP_LOG_WARN, "Slurm job %u: comment: %s", sj->id, diag.msg);
    gp_dlog(d, GP_LOG_INFO,
            "Slurm job %u (%s, account %s, %u GPUs) adopted as job %" PRId64,
            sj->id, sj->state_name, tenant, gpus, id);
    return GP_OK;
}

/* Slurm's jobs that no live gpupool job holds: one whose gpupool job has
 * ended is cancelled (an end the daemon decided before a crash); a held
 * one is adopted; a running one only at a start (`at_start`): between
 * polls a running job gpupool did not start is one its partition exempts
 * from gpupool. */
static void adopt_unknown(struct daemon *d, bool at_start, int64_t now)
{
    for (size_t i = 0; i < d->nsjobs; i++) {
        const struct gp_slurm_job *sj = &d->sjobs[i];
        int64_t gid = comment_id(sj);
        struct djob *dj = gid ? gp_djob_find(d, gid) : NULL;
        struct gp_db_job row;

        if ((dj && dj->slurm_id == sj->id) ||
            gp_slurm_jstate_final(sj->state) || !in_partition(d, sj))
            continue;
        if (gid && gp_db_job_get(d->db, gid, &row, NULL) == GP_OK &&
            (!dj || dj->slurm_id != sj->id)) {
            if (row.state >= GP_JOB_COMPLETED || (dj && dj->slurm_id)) {
                gp_dlog(d, GP_LOG_WARN,
                        "Slurm job %u belongs to gpupool job %" PRId64
                        " (%s), which does not hold it: cancelled",
                        sj->id, gid, gp_job_state_name(row.state));
                gp_slurm_cancel(d->slurm, sj->id, NULL);
                continue;
            }
            if (dj) {
                dj->slurm_id = sj->id; /* the submit's answer was lost */
                continue;
            }
        }
        if (!d->cfg.slurm.adopt ||
            !(sj->held || (at_start && sj->state == GP_SJ_RUNNING)))
            continue;
        adopt_new(d, sj, now);
    }
}

void gp_bslurm_reconcile(struct daemon *d, int64_t now)
{
    adopt_unknown(d, true, now);
    d->slurm_polled_us = now;
    d->slurm_nodes_polled_us = now;
}

/* ---- the poll ---------------------------------------------------------- */

static void sync_nodes(struct daemon *d, int64_t now)
{
    struct gp_slurm_node *nodes = NULL;
    struct gp_slurm_sync s;
    struct gp_diag diag;
    size_t n = 0;

    if (gp_slurm_nodes(d->slurm, &nodes, &n, &diag) != GP_OK) {
        gp_dlog(d, GP_LOG_WARN, "slurm: %s: %s (nodes unchanged)", diag.where,
                diag.msg);
        return;
    }
    if (gp_slurm_sync_nodes(d->core, nodes, n, now, &s, &diag) != GP_OK)
        gp_dlog(d, GP_LOG_ERROR, "slurm: %s: %s", diag.where, diag.msg);
    else if (s.added || s.changed || s.gone || s.resized) {
        for (size_t i = 0; i < n; i++)
            gp_dlog(d, GP_LOG_DEBUG, "slurm node %s: %s", nodes[i].name,
                    nodes[i].state);
        gp_dlog(d, GP_LOG_INFO,
                "slurm nodes: %u added, %u changed state, %u gone, %u "
                "resized (applied at a restart)",
                s.added, s.changed, s.gone, s.resized);
    }
    free(nodes);
}

/* Is gpupool waiting on Slurm: a placed job not yet running there, a job
 * signalled for its preemption (it may leave before the grace ends), or a
 * stop asked (requeue or cancel) whose end is not seen yet? */
static bool waiting_on_slurm(const struct daemon *d)
{
    for (size_t i = 0; i < d->nprocs; i++) {
        const struct djob *dj = d->procs[i];
        const struct gp_job *j = gp_core_job(d->core, dj->handle);

        if (dj->requeue_at_us || dj->slurm_requeued || dj->cancel_asked ||
            (j && j->state == GP_JOB_STARTING))
            return true;
    }
    return false;
}

/* Jobs are read every slurm.poll, every slurm.busy_poll while gpupool
 * waits on Slurm; nodes every slurm.poll. */
static int64_t jobs_period(const struct daemon *d)
{
    const struct gp_config *c = &d->cfg;

    return waiting_on_slurm(d) && c->slurm.busy_poll_us < c->slurm.poll_us
               ? c->slurm.busy_poll_us
               : c->slurm.poll_us;
}

int gp_bslurm_poll(struct daemon *d, int64_t now)
{
    struct gp_diag diag;
    size_t n;
    int64_t *ids;

    /* requeues whose grace is over */
    for (size_t i = 0; i < d->nprocs; i++)
        if (d->procs[i]->requeue_at_us && now >= d->procs[i]->requeue_at_us)
            requeue(d, d->procs[i]);
    if (now - d->slurm_nodes_polled_us >= d->cfg.slurm.poll_us) {
        d->slurm_nodes_polled_us = now;
        sync_nodes(d, now);
    }
    if (now - d->slurm_polled_us < jobs_period(d))
        return GP_OK;
    d->slurm_polled_us = now;
    if (gp_bslurm_list(d, &diag) != GP_OK) {
        gp_dlog(d, GP_LOG_WARN, "slurm: %s: %s (jobs not looked at)",
                diag.where, diag.msg);
        return GP_EIO;
    }
    /* a report may end and drop the job: walk a copy of the ids */
    n = d->njobs;
    if (!(ids = malloc((n ? n : 1) * sizeof(*ids))))
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        ids[i] = d->jobs[i]->id;
    for (size_t i = 0; i < n; i++) {
        struct djob *dj = gp_djob_find(d, ids[i]);

        if (dj)
            check_job(d, dj, now);
    }
    free(ids);
    adopt_unknown(d, false, now);
    return GP_OK;
}

int64_t gp_bslurm_wakeup(const struct daemon *d)
{
    int64_t t = d->slurm_polled_us + jobs_period(d);

    if (d->slurm_nodes_polled_us + d->cfg.slurm.poll_us < t)
        t = d->slurm_nodes_polled_us + d->cfg.slurm.poll_us;

    for (size_t i = 0; i < d->nprocs; i++)
        if (d->procs[i]->requeue_at_us && d->procs[i]->requeue_at_us < t)
            t = d->procs[i]->requeue_at_us;
    return t;
}
