/* jobs.c - the daemon's jobs: the table of live jobs, the core's observer
 * that writes every change to the store, the core's actions carried out by
 * the local backend, and the recovery of all of it after a restart.
 *
 * Key decisions:
 *  - The store's id is the job's public id and the core's external id
 *    (gp_job.ext is its decimal text), so an observer call finds the
 *    daemon's record without a second map.
 *  - Decide, persist, act: an action is written to the store (with the run
 *    it begins) in the transaction that also holds the decision; it is
 *    carried out only after the commit, and marked done in the next
 *    transaction. After a crash the undone ones are exactly what may be
 *    half-done, and the run files (gp_local_adopt) say how far it got.
 *  - A job never runs twice at once: a run is started only for a job the
 *    core holds as STARTING, and recovery adopts a live run instead of
 *    starting a new one; a run whose supervisor is gone is killed by its
 *    process group before the job is queued again.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/tenancy.h"

#define MAX_ACTIONS_PER_ROUND 65536

/* ---- the table ------------------------------------------------------- */

static size_t lower_bound(const struct daemon *d, int64_t id)
{
    size_t lo = 0, hi = d->njobs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (d->jobs[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct djob *gp_djob_find(struct daemon *d, int64_t id)
{
    size_t i = lower_bound(d, id);

    return i < d->njobs && d->jobs[i]->id == id ? d->jobs[i] : NULL;
}

struct djob *gp_djob_of(struct daemon *d, const struct gp_job *j)
{
    char *end;
    long long id = strtoll(j->ext, &end, 10);

    return end != j->ext && !*end ? gp_djob_find(d, id) : NULL;
}

int gp_djob_add(struct daemon *d, struct djob *j)
{
    size_t i = lower_bound(d, j->id);

    if (d->njobs == d->capjobs) {
        size_t cap = d->capjobs ? d->capjobs * 2 : 256;
        struct djob **p = realloc(d->jobs, cap * sizeof(*p));

        if (!p)
            return GP_ENOMEM;
        d->jobs = p;
        if (!(p = realloc(d->procs, cap * sizeof(*p))))
            return GP_ENOMEM; /* jobs grew: harmless */
        d->procs = p;
        d->capjobs = cap;
    }
    memmove(d->jobs + i + 1, d->jobs + i, (d->njobs - i) * sizeof(*d->jobs));
    d->jobs[i] = j;
    d->njobs++;
    return GP_OK;
}

struct djob *gp_djob_new(struct daemon *d, const struct gp_db_job *row,
                         int64_t id, json_t *spec)
{
    struct djob *dj = calloc(1, sizeof(*dj));

    if (!dj)
        return NULL;
    dj->id = id;
    dj->tenant = strdup(row->tenant);
    dj->user = strdup(row->user);
    dj->name = strdup(row->name ? row->name : "");
    dj->uid = row->uid;
    dj->gid = row->gid;
    dj->spec = json_incref(spec);
    dj->submit_us = row->submit_us;
    dj->exit_code = GP_DB_NO_EXIT;
    dj->limit_at_us = GP_TIME_NONE;
    dj->idle_since_us = GP_TIME_NONE;
    if (!dj->tenant || !dj->user || !dj->name || gp_djob_add(d, dj) != GP_OK) {
        gp_djob_free(dj);
        return NULL;
    }
    return dj;
}

void gp_djob_free(struct djob *j)
{
    if (!j)
        return;
    free(j->tenant);
    free(j->user);
    free(j->name);
    json_decref(j->spec);
    free(j);
}

void gp_djob_set_proc(struct daemon *d, struct djob *j, bool on)
{
    if (on == j->has_proc)
        return;
    j->has_proc = on;
    if (on) {
        j->proc_pos = d->nprocs;
        d->procs[d->nprocs++] = j;
    } else {
        struct djob *last = d->procs[--d->nprocs];

        d->procs[j->proc_pos] = last;
        last->proc_pos = j->proc_pos;
    }
}

void gp_djob_drop(struct daemon *d, struct djob *j)
{
    size_t i = lower_bound(d, j->id);

    gp_djob_set_proc(d, j, false);
    if (i < d->njobs && d->jobs[i] == j) {
        memmove(d->jobs + i, d->jobs + i + 1,
                (d->njobs - i - 1) * sizeof(*d->jobs));
        d->njobs--;
    }
    gp_djob_free(j);
}

void gp_daemon_job_dir(const struct daemon *d, int64_t id, char *buf,
                       size_t len)
{
    snprintf(buf, len, "%s/%" PRId64, d->cfg.backend.job_dir, id);
}

/* ---- the store's record of a job --------------------------------------- */

static void devices_of(const struct daemon *d, const struct gp_placement *p,
                       char *idx, size_t ilen, char *cuda, size_t clen)
{
    size_t io = 0, co = 0;

    idx[0] = cuda[0] = '\0';
    for (uint32_t s = 0; s < p->nslots; s++) {
        const struct gp_slot *sl = &p->slots[s];
        uint64_t m = sl->mask;

        if (sl->milli && !sl->gpus)
            m = 1ull << sl->dev;
        for (; m; m &= m - 1) {
            unsigned g = (unsigned)__builtin_ctzll(m);

            if (io < ilen)
                io += (size_t)snprintf(idx + io, ilen - io, "%s%u",
                                       io ? "," : "", g);
            if (co < clen) {
                /* real GPUs by UUID: stable whatever CUDA's own order */
                if (d->mon && !gp_monitor_is_fake(d->mon) && g < d->ngpus)
                    co += (size_t)snprintf(cuda + co, clen - co, "%s%s",
                                           co ? "," : "", d->gpus[g].uuid);
                else
                    co += (size_t)snprintf(cuda + co, clen - co, "%s%u",
                                           co ? "," : "", g);
            }
        }
    }
}

int gp_daemon_save_job(struct daemon *d, struct djob *dj,
                       const struct gp_job *j, const char *event,
                       json_t *detail)
{
    struct gp_db_job row;
    struct gp_diag diag;
    int rc;

    if ((rc = gp_db_job_get(d->db, dj->id, &row, &diag)) != GP_OK)
        goto fail;
    row.state = j->state;
    row.queued_us = j->queued_us;
    row.first_start_us = j->first_start_us;
    row.end_us = j->end_us;
    row.restarts = dj->restarts;
    row.preemptions = j->preemptions;
    row.exit_code = dj->exit_code;
    row.reason = dj->reason[0] ? dj->reason : NULL;
    row.gpu_us = j->gpu_us;
    row.work_done_us = j->work_done_us;
    row.predicted_us = j->predicted_us;
    row.updated_us = gp_now_us();
    if ((rc = gp_db_job_update(d->db, &row, &diag)) != GP_OK)
        goto fail;
    if (event) {
        struct gp_db_event ev = {
            .job_id = dj->id, .ts_us = row.updated_us, .kind = event};
        char *text = detail ? json_dumps(detail, JSON_COMPACT) : NULL;

        ev.detail_json = text;
        rc = gp_db_event_append(d->db, &ev, NULL, &diag);
        free(text);
        if (rc != GP_OK)
            goto fail;
    }
    json_decref(detail);
    return GP_OK;
fail:
    json_decref(detail);
    gp_dlog(d, GP_LOG_ERROR, "store: job %" PRId64 ": %s: %s", dj->id,
            diag.where, diag.msg);
    return rc;
}

/* ---- the core's observer ------------------------------------------------ */

/* Ended jobs to take out of the core once the turn is over: the store has
 * their record, and the core would otherwise keep every job that ever
 * passed through (a few hundred bytes each, for the daemon's life). Not
 * from inside the observer: the core may still look at the job it tells
 * about. */
static uint64_t *ended;
static size_t nended, capended;

static void retire_later(uint64_t handle)
{
    if (nended == capended) {
        size_t cap = capended ? capended * 2 : 256;
        uint64_t *p = realloc(ended, cap * sizeof(*p));

        if (!p)
            return; /* it stays in the core: memory, not correctness */
        ended = p;
        capended = cap;
    }
    ended[nended++] = handle;
}

void gp_daemon_retire_ended(struct daemon *d)
{
    for (size_t i = 0; i < nended; i++)
        gp_core_retire(d->core, ended[i]);
    nended = 0;
}

static void on_rejected(void *priv, const struct gp_core *core,
                        const struct gp_job *j, const char *why, int64_t now_us)
{
    struct daemon *d = priv;
    struct djob *dj = gp_djob_of(d, j);

    (void)core;
    (void)now_us;
    if (!dj)
        return;
    snprintf(dj->reason, sizeof(dj->reason), "%s", why);
    gp_daemon_save_job(d, dj, j, "rejected", json_pack("{ss}", "why", why));
    gp_dlog(d, GP_LOG_INFO, "job %" PRId64 " rejected: %s", dj->id, why);
    retire_later(dj->handle);
    gp_djob_drop(d, dj);
}

static void on_started(void *priv, const struct gp_core *core,
                       const struct gp_job *j, int64_t now_us)
{
    struct daemon *d = priv;
    struct djob *dj = gp_djob_of(d, j);

    (void)core;
    (void)now_us;
    if (!dj)
        return;
    if (d->slurm)
        gp_daemon_save_job(d, dj, j, "started",
                           json_pack("{sssisi}", "nodes", dj->devices, "run",
                                     (int)dj->runs, "slurm_job",
                                     (int)dj->slurm_id));
    else
        gp_daemon_save_job(d, dj, j, "started",
                           json_pack("{sssisI}", "devices", dj->devices, "run",
                                     (int)dj->runs, "pid",
                                     (json_int_t)dj->proc.job_pid));
    gp_dlog(d, GP_LOG_INFO, "job %" PRId64 " started run=%u gpus=%s", dj->id,
            dj->runs, dj->devices);
}

static void end_run(struct daemon *d, struct djob *dj, const char *why)
{
    struct gp_diag diag;

    if (dj->runs == 0)
        return;
    if (gp_db_run_end(d->db, dj->id, dj->runs, gp_now_us(), why, &diag) ==
        GP_EIO)
        gp_dlog(d, GP_LOG_ERROR, "store: %s: %s", diag.where, diag.msg);
    gp_djob_set_proc(d, dj, false);
    dj->stopping = false;
    dj->devices[0] = '\0';
    dj->limit_at_us = GP_TIME_NONE;
    dj->idle_since_us = GP_TIME_NONE;
    dj->idle_reported = false;
    dj->requeue_at_us = 0;
}

static void on_preempted(void *priv, const struct gp_core *core,
                         const struct gp_job *j, int64_t now_us)
{
    struct daemon *d = priv;
    struct djob *dj = gp_djob_of(d, j);
    const char *why = j->requeued_by == GP_STOP_MIGRATE     ? "migrated"
                      : j->requeued_by == GP_STOP_NODE_DOWN ? "node down"
                                                            : "preempted";
    bool lent = j->parked && j->requeued_by == GP_STOP_PREEMPT;
    char end[GP_TENANT_NAME_MAX + 64];
    json_t *detail;

    (void)core;
    (void)now_us;
    if (!dj)
        return;
    /* an idle job whose GPUs were lent: say so in the run's end, the
     * event and the log */
    if (lent && dj->lent_to[0])
        snprintf(end, sizeof(end), "idle: lent to tenant %s", dj->lent_to);
    else
        snprintf(end, sizeof(end), "%s", lent ? "idle: lent" : why);
    end_run(d, dj, end);
    d->preempts++;
    detail = json_pack("{sisI}", "preemptions", (int)j->preemptions,
                       "work_kept_s", (json_int_t)(j->work_done_us / 1000000));
    if (detail && lent) {
        json_object_set_new(detail, "idle", json_true());
        if (dj->lent_to[0])
            json_object_set_new(detail, "lent_to", json_string(dj->lent_to));
    }
    gp_daemon_save_job(d, dj, j, why, detail);
    gp_dlog(d, GP_LOG_INFO,
            "job %" PRId64 " %s%s%s%s, queued again (%u so far)", dj->id, why,
            lent ? " (" : "", lent ? end : "", lent ? ")" : "", j->preemptions);
    dj->lent_to[0] = '\0';
}

static void on_ended(void *priv, const struct gp_core *core,
                     const struct gp_job *j, int64_t now_us)
{
    struct daemon *d = priv;
    struct djob *dj = gp_djob_of(d, j);
    const char *state = gp_job_state_name(j->state);
    struct gp_diag diag;

    (void)core;
    if (!dj)
        return;
    end_run(d, dj, state);
    gp_daemon_save_job(
        d, dj, j, state,
        dj->exit_code != GP_DB_NO_EXIT
            ? json_pack("{sis?}", "exit_code", dj->exit_code, "reason",
                        dj->reason[0] ? dj->reason : NULL)
            : json_pack("{ss?}", "reason", dj->reason[0] ? dj->reason : NULL));
    if (j->state == GP_JOB_COMPLETED && j->first_start_us != GP_TIME_NONE) {
        struct gp_db_history h = {
            .user = dj->user,
            .name = dj->name,
            .tenant = dj->tenant,
            .gpus = j->demand.gpus,
            .runtime_us = j->work_done_us,
            .gpu_us = j->gpu_us,
            .end_us = now_us,
        };
        if (h.runtime_us > 0 && gp_db_history_add(d->db, &h, &diag) != GP_OK)
            gp_dlog(d, GP_LOG_ERROR, "store: %s: %s", diag.where, diag.msg);
    }
    gp_dlog(d, GP_LOG_INFO, "job %" PRId64 " %s%s%s", dj->id, state,
            dj->reason[0] ? ": " : "", dj->reason);
    retire_later(dj->handle);
    gp_djob_drop(d, dj);
}

static void on_start_failed(void *priv, const struct gp_core *core,
                            const struct gp_job *j, const char *why,
                            int64_t now_us)
{
    struct daemon *d = priv;
    struct djob *dj = gp_djob_of(d, j);

    (void)core;
    (void)now_us;
    if (!dj)
        return;
    end_run(d, dj, "start failed");
    snprintf(dj->reason, sizeof(dj->reason), "%s", why);
    if (j->state == GP_JOB_PENDING)
        gp_daemon_save_job(d, dj, j, "start_failed",
                           json_pack("{sssi}", "why", why, "failures",
                                     (int)j->start_failures));
    gp_dlog(d, GP_LOG_WARN, "job %" PRId64 " did not start: %s", dj->id, why);
}

const struct gp_observer_ops gp_daemon_observer = {
    .rejected = on_rejected,
    .started = on_started,
    .preempted = on_preempted,
    .ended = on_ended,
    .start_failed = on_start_failed,
};

/* ---- the core's actions ------------------------------------------------- */

/* A job the world reported idle is signalled so that another tenant's job
 * gets its GPUs (the policy's lend_idle): the action's detail (in `buf`)
 * and the log say so, and the job remembers the tenant for its history
 * (on_preempted). */
static void note_lent(struct daemon *d, struct djob *dj, const struct gp_job *j,
                      struct gp_db_action *row, char *buf, size_t len)
{
    const char *to = j->reclaim_for != GP_TENANT_NONE
                         ? gp_core_tenant_name(d->core, j->reclaim_for)
                         : "";
    json_t *detail = json_pack("{sbss}", "idle", 1, "lent_to", to);
    char *text = detail ? json_dumps(detail, JSON_COMPACT) : NULL;

    json_decref(detail);
    if (text && strlen(text) < len) {
        memcpy(buf, text, strlen(text) + 1);
        row->detail_json = buf;
    }
    free(text);
    snprintf(dj->lent_to, sizeof(dj->lent_to), "%s", to);
    gp_dlog(d, GP_LOG_INFO,
            "job %" PRId64 " holds gpus %s idle: preempted, its GPUs lent to "
            "tenant %s",
            dj->id, dj->devices, to[0] ? to : "?");
}

/* Under Slurm a run's record names its nodes ("n1,n3") and the GPUs it
 * holds on each ("4+2"): Slurm picks the devices within them. */
static void slurm_run_of(const struct daemon *d, const struct gp_placement *p,
                         char *nodes, size_t nlen, char *gpus, size_t glen)
{
    const struct gp_cluster *cl = gp_core_cluster(d->core);
    size_t no = 0, go = 0;

    nodes[0] = gpus[0] = '\0';
    for (uint32_t s = 0; s < p->nslots; s++) {
        if (no < nlen)
            no += (size_t)snprintf(nodes + no, nlen - no, "%s%s", s ? "," : "",
                                   gp_cluster_node_name(cl, p->slots[s].node));
        if (go < glen)
            go += (size_t)snprintf(gpus + go, glen - go, "%s%u", s ? "+" : "",
                                   p->slots[s].gpus);
    }
}

/* Actions persisted this round, to carry out after the commit. */
struct pending_act {
    struct gp_action a;
    int64_t db_id;
};
static struct pending_act *acts;
static size_t nacts, capacts;

int gp_daemon_persist_actions(struct daemon *d, int64_t now)
{
    const struct gp_action *a;
    size_t n = gp_core_take_actions(d->core, &a);
    struct gp_diag diag;
    int rc;

    for (size_t i = 0; i < n; i++) {
        const struct gp_job *j = gp_core_job(d->core, a[i].job);
        struct djob *dj = j ? gp_djob_of(d, j) : NULL;
        char detail[2 * GP_TENANT_NAME_MAX + 64];
        struct gp_db_action row = {
            .job_id = dj ? dj->id : 0,
            .kind = gp_action_kind_name(a[i].kind),
            .at_us = now,
            .deadline_us =
                a[i].kind == GP_ACT_SIGNAL ? a[i].deadline_us : GP_TIME_NONE,
            .reason = a[i].kind == GP_ACT_START
                          ? NULL
                          : gp_stop_reason_name(a[i].reason),
            .done_us = GP_TIME_NONE,
        };

        if (!dj)
            continue;
        if (a[i].kind == GP_ACT_SIGNAL && j->parked &&
            a[i].reason == GP_STOP_PREEMPT)
            note_lent(d, dj, j, &row, detail, sizeof(detail));
        if (a[i].kind == GP_ACT_START) {
            char idx[256], cuda[1024];
            struct gp_db_run run = {.job_id = dj->id,
                                    .node = d->node_name,
                                    .milli = j->where.milli ? j->where.milli
                                                            : GP_MILLI_PER_GPU,
                                    .started_us = now};
            uint32_t no;

            if (d->slurm) { /* cuda holds the node list */
                slurm_run_of(d, &j->where, cuda, sizeof(cuda), idx,
                             sizeof(idx));
                run.node = cuda;
            } else {
                devices_of(d, &j->where, idx, sizeof(idx), cuda, sizeof(cuda));
            }
            run.devices = idx;
            if ((rc = gp_db_run_begin(d->db, &run, &no, &diag)) != GP_OK)
                goto fail;
            dj->runs = no;
            /* what the log and events name: the nodes under Slurm */
            snprintf(dj->devices, sizeof(dj->devices), "%.255s",
                     d->slurm ? run.node : idx);
        }
        if (a[i].kind == GP_ACT_RESIZE)
            continue; /* an elastic job's count: nothing the local backend
                         changes under a running process */
        if ((rc = gp_db_action_add(d->db, &row, &row.id, &diag)) != GP_OK)
            goto fail;
        if (nacts == capacts) {
            size_t cap = capacts ? capacts * 2 : 64;
            struct pending_act *p;

            if (cap > MAX_ACTIONS_PER_ROUND ||
                !(p = realloc(acts, cap * sizeof(*p)))) {
                rc = GP_ENOMEM;
                goto fail_quiet;
            }
            acts = p;
            capacts = cap;
        }
        acts[nacts].a = a[i];
        acts[nacts++].db_id = row.id;
    }
    return GP_OK;
fail:
    gp_dlog(d, GP_LOG_ERROR, "store: %s: %s", diag.where, diag.msg);
fail_quiet:
    return rc;
}

static void set_busy(struct daemon *d, const struct gp_job *j, bool busy)
{
    if (!d->mon || !gp_monitor_is_fake(d->mon) || !d->cfg.monitor.fake_busy)
        return;
    for (uint32_t s = 0; s < j->where.nslots; s++)
        for (uint64_t m = j->where.slots[s].mask; m; m &= m - 1)
            gp_monitor_fake_set_busy(d->mon, (unsigned)__builtin_ctzll(m),
                                     busy);
}

static int start_job(struct daemon *d, struct djob *dj, const struct gp_job *j,
                     int64_t now)
{
    struct gp_local_job spec;
    const char *argv[1025], *env[257];
    char envbuf[256][512], dir[1024], cuda[1024], idx[256];
    json_t *cmd = json_object_get(dj->spec, "command"),
           *e = json_object_get(dj->spec, "env"), *v;
    const char *key, *cwd = json_string_value(json_object_get(dj->spec, "cwd"));
    struct gp_diag diag = {{0}, {0}};
    size_t n = 0;
    int rc;

    gp_local_job_init(&spec);
    for (size_t i = 0; i < json_array_size(cmd) && i < 1024; i++)
        argv[i] = json_string_value(json_array_get(cmd, i));
    argv[json_array_size(cmd) < 1024 ? json_array_size(cmd) : 1024] = NULL;
    json_object_foreach(e, key, v)
    {
        if (n == 256)
            break;
        snprintf(envbuf[n], sizeof(envbuf[n]), "%s=%s", key,
                 json_string_value(v));
        env[n] = envbuf[n];
        n++;
    }
    env[n] = NULL;
    gp_daemon_job_dir(d, dj->id, dir, sizeof(dir));
    devices_of(d, &j->where, idx, sizeof(idx), cuda, sizeof(cuda));
    spec.job_id = (uint64_t)dj->id;
    spec.run = dj->runs;
    spec.restart_count = dj->restarts;
    spec.argv = argv;
    spec.env = env;
    spec.cwd = cwd && *cwd ? cwd : NULL;
    spec.uid = d->cfg.backend.run_as_submitter && geteuid() == 0
                   ? dj->uid
                   : GP_LOCAL_UID_SELF;
    spec.submitter_uid = dj->uid;
    spec.devices = cuda;
    spec.job_dir = dir;
    spec.preempt_signal = d->cfg.backend.preempt_signal;
    spec.grace_s = (uint32_t)(d->cfg.scheduler.grace_us / 1000000);
    spec.supervisor = d->supervisor;
    rc = gp_local_start(&spec, &dj->proc, &diag);
    if (rc != GP_OK) {
        char why[400];

        snprintf(why, sizeof(why), "%s",
                 diag.msg[0] ? diag.msg : gp_err_str(rc));
        return gp_core_job_start_failed(d->core, dj->handle, why, now);
    }
    gp_djob_set_proc(d, dj, true);
    dj->limit_at_us =
        j->time_limit_us > 0 ? now + j->time_limit_us : GP_TIME_NONE;
    if (gp_db_run_set_supervisor(d->db, dj->id, dj->runs,
                                 (int32_t)dj->proc.supervisor_pid,
                                 dj->proc.supervisor_start, &diag) == GP_EIO)
        gp_dlog(d, GP_LOG_ERROR, "store: %s: %s", diag.where, diag.msg);
    set_busy(d, j, true);
    d->starts++;
    return gp_core_job_started(d->core, dj->handle, now);
}

static void begin_stop(struct daemon *d, struct djob *dj, int first_signal,
                       int64_t grace_us, int64_t now)
{
    struct gp_diag diag;
    int rc;

    if (!dj->has_proc)
        return;
    if (dj->stopping && dj->stop.stage > 0 &&
        first_signal == d->cfg.backend.preempt_signal)
        return; /* already on its way out */
    if (!dj->stopping || first_signal == SIGTERM) {
        gp_local_stop_init(&dj->stop, first_signal, grace_us,
                           d->cfg.backend.kill_after_us);
        dj->stopping = true;
    }
    rc = gp_local_stop_step(&dj->stop, &dj->proc, now, &diag);
    gp_dlog(d, GP_LOG_DEBUG, "job %" PRId64 ": stop step %d (signal %d): %s",
            dj->id, dj->stop.stage, first_signal, gp_err_name(rc));
    if (rc != GP_OK && rc != GP_ESTATE)
        gp_dlog(d, GP_LOG_WARN, "job %" PRId64 ": stop: %s", dj->id, diag.msg);
}

bool gp_daemon_actions_pending(const struct daemon *d)
{
    /* under Slurm, carrying out also submits new jobs to Slurm, held
     * (gp_bslurm_submit_new, which paces itself): every turn */
    return nacts > 0 || d->slurm;
}

int gp_daemon_execute(struct daemon *d, int64_t now)
{
    struct gp_diag diag;
    int rc = GP_OK;

    for (size_t i = 0; i < nacts; i++) {
        const struct gp_action *a = &acts[i].a;
        const struct gp_job *j = gp_core_job(d->core, a->job);
        struct djob *dj = j ? gp_djob_of(d, j) : NULL;

        if (dj && d->slurm &&
            (a->kind == GP_ACT_SIGNAL || a->kind == GP_ACT_KILL)) {
            gp_bslurm_stop(d, dj, a, now);
        } else if (dj) {
            switch (a->kind) {
            case GP_ACT_START:
                if (j->state == GP_JOB_STARTING)
                    rc = d->slurm ? gp_bslurm_start(d, dj, j, now)
                                  : start_job(d, dj, j, now);
                else if (j->state == GP_JOB_STOPPING) /* cancelled first */
                    rc = gp_core_job_start_failed(d->core, dj->handle,
                                                  "cancelled", now);
                break;
            case GP_ACT_SIGNAL:
                dj->stop_reason = a->reason;
                begin_stop(d, dj, d->cfg.backend.preempt_signal,
                           a->deadline_us - a->at_us, now);
                break;
            case GP_ACT_KILL:
                dj->stop_reason = a->reason;
                if (a->reason == GP_STOP_CANCEL)
                    dj->cancel_asked = true;
                begin_stop(d, dj, SIGTERM, 0, now);
                break;
            case GP_ACT_RESIZE:
                break;
            }
        }
        if (rc != GP_OK && rc != GP_ESTATE)
            gp_dlog(d, GP_LOG_ERROR, "job %" PRId64 ": %s: %s", dj ? dj->id : 0,
                    gp_action_kind_name(a->kind), gp_err_str(rc));
        if (gp_db_action_done(d->db, acts[i].db_id, now, &diag) == GP_EIO)
            gp_dlog(d, GP_LOG_ERROR, "store: %s: %s", diag.where, diag.msg);
        rc = GP_OK;
    }
    nacts = 0;
    if (d->slurm)
        gp_bslurm_submit_new(d, now);
    return GP_OK;
}

/* ---- what the processes say ---------------------------------------------- */

/* A run is over: tell the core, by what it was doing. */
static int report_exit(struct daemon *d, struct djob *dj,
                       const struct gp_job *j, const struct gp_local_state *st,
                       int64_t now)
{
    bool clean = st->kind == GP_LOCAL_EXITED && st->code == 0;

    set_busy(d, j, false);
    if (st->kind == GP_LOCAL_EXITED)
        dj->exit_code = st->code;
    else if (st->kind == GP_LOCAL_KILLED)
        dj->exit_code = 128 + st->signal;
    if (j->state == GP_JOB_STARTING && st->kind == GP_LOCAL_START_FAILED)
        return gp_core_job_start_failed(d->core, dj->handle, st->reason, now);
    if (j->state == GP_JOB_STOPPING) {
        int64_t saved = clean && j->checkpointable ? gp_job_work_at(j, now)
                                                   : j->ckpt_work_us;

        if (dj->cancel_asked && !dj->reason[0])
            snprintf(dj->reason, sizeof(dj->reason), "cancelled");
        dj->restarts += st->kind != GP_LOCAL_START_FAILED;
        return gp_core_job_stopped(d->core, dj->handle, saved, now);
    }
    /* it ended on its own, or by its time limit */
    if (dj->timed_out)
        snprintf(dj->reason, sizeof(dj->reason), "time limit");
    else if (st->kind == GP_LOCAL_KILLED)
        snprintf(dj->reason, sizeof(dj->reason), "killed by signal %d%s",
                 st->signal, st->core_dumped ? " (core dumped)" : "");
    else if (st->kind == GP_LOCAL_EXITED && st->code != 0)
        snprintf(dj->reason, sizeof(dj->reason), "exit code %d", st->code);
    else if (st->kind == GP_LOCAL_START_FAILED || st->kind == GP_LOCAL_LOST)
        snprintf(dj->reason, sizeof(dj->reason), "%s", st->reason);
    return gp_core_job_ended(
        d->core, dj->handle,
        clean && !dj->timed_out ? GP_JOB_COMPLETED : GP_JOB_FAILED, now);
}

int gp_daemon_poll_jobs(struct daemon *d, int64_t now)
{
    if (d->slurm)
        return gp_bslurm_poll(d, now);
    /* a report may end and drop the job: walk a copy of the ids of the
     * jobs with a process */
    size_t n = d->nprocs;
    int64_t *ids = malloc((n ? n : 1) * sizeof(*ids));

    if (!ids)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        ids[i] = d->procs[i]->id;
    for (size_t i = 0; i < n; i++) {
        struct djob *dj = gp_djob_find(d, ids[i]);
        const struct gp_job *j;
        struct gp_local_state st;
        struct gp_diag diag;
        int rc;

        if (!dj || !dj->has_proc)
            continue;
        j = gp_core_job(d->core, dj->handle);
        if (!j)
            continue;
        if ((rc = gp_local_poll(&dj->proc, &st, &diag)) != GP_OK) {
            gp_dlog(d, GP_LOG_WARN, "job %" PRId64 ": poll: %s", dj->id,
                    diag.msg);
            continue;
        }
        if (st.kind != GP_LOCAL_RUNNING) {
            if (st.kind == GP_LOCAL_LOST) /* make sure nothing is left */
                gp_local_signal(&dj->proc, SIGKILL, NULL);
            gp_djob_set_proc(d, dj, false);
            if ((rc = report_exit(d, dj, j, &st, now)) != GP_OK)
                gp_dlog(d, GP_LOG_ERROR, "job %" PRId64 ": report: %s", ids[i],
                        gp_err_str(rc));
            continue;
        }
        /* a time limit reached: stop it, it fails once gone */
        if (dj->limit_at_us != GP_TIME_NONE && now >= dj->limit_at_us &&
            !dj->timed_out) {
            dj->timed_out = true;
            gp_dlog(d, GP_LOG_INFO, "job %" PRId64 " reached its time limit",
                    dj->id);
            begin_stop(d, dj, SIGTERM, 0, now);
            continue;
        }
        /* the next step of a stop under way */
        if (dj->stopping && dj->stop.deadline_us != GP_TIME_NONE &&
            now >= dj->stop.deadline_us &&
            gp_local_stop_step(&dj->stop, &dj->proc, now, &diag) != GP_OK)
            gp_dlog(d, GP_LOG_WARN, "job %" PRId64 ": stop: %s", dj->id,
                    diag.msg);
    }
    free(ids);
    return GP_OK;
}

/* The process group of a pid (/proc/PID/stat field 5), or 0. */
static uint32_t pgrp_of(uint32_t pid)
{
    char path[64], buf[512], *rp;
    FILE *f;
    size_t n;
    unsigned long pgrp = 0;

    snprintf(path, sizeof(path), "/proc/%u/stat", pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the command may hold spaces and parentheses: read after the last ')' */
    if (!(rp = strrchr(buf, ')')) || sscanf(rp + 1, " %*c %*d %lu", &pgrp) != 1)
        return 0;
    return (uint32_t)pgrp;
}

bool gp_daemon_pid_is_ours(const struct daemon *d, uint32_t pid)
{
    uint32_t g = pgrp_of(pid);

    for (size_t i = 0; i < d->nprocs; i++)
        if ((uint32_t)d->procs[i]->proc.job_pid == pid ||
            (g && (uint32_t)d->procs[i]->proc.job_pid == g))
            return true;
    return false;
}

/* The core learns what the samples say: a policy may lend an idle job's
 * GPUs (the pool's lend_idle). */
static void tell_idle(struct daemon *d, struct djob *dj, bool idle, int64_t now)
{
    int rc = gp_core_set_job_idle(d->core, dj->handle, idle, now);

    if (rc != GP_OK)
        gp_dlog(d, GP_LOG_WARN,
                "job %" PRId64 ": the core did not take it %s: %s", dj->id,
                idle ? "idle" : "busy", gp_err_str(rc));
}

void gp_daemon_check_gpus(struct daemon *d, int64_t now)
{
    size_t nf = 0;

    /* processes on a GPU that no job of gpupool started */
    for (unsigned g = 0; g < d->ngpus; g++) {
        const struct gp_gpu_sample *s = &d->samples[g];

        for (unsigned k = 0; k < s->npids; k++) {
            bool seen = false;

            if (!s->pids[k] || gp_daemon_pid_is_ours(d, s->pids[k]))
                continue;
            for (size_t x = 0; x < d->nforeign; x++)
                seen |= d->foreign[x] == s->pids[k];
            if (!seen)
                gp_dlog(d, GP_LOG_WARN,
                        "pid %u uses gpu %u and was not started by gpupool",
                        s->pids[k], g);
            if (nf < sizeof(d->foreign) / sizeof(*d->foreign))
                d->foreign[nf++] = s->pids[k];
        }
    }
    d->nforeign = nf;
    if (d->cfg.monitor.idle_after_us <= 0)
        return;
    /* jobs whose GPUs all stay idle */
    for (size_t i = 0; i < d->nprocs; i++) {
        struct djob *dj = d->procs[i];
        const struct gp_job *j = gp_core_job(d->core, dj->handle);
        bool idle = true, known = false;

        if (!dj->has_proc || !j || j->state != GP_JOB_RUNNING || !j->where.gpus)
            continue;
        for (uint32_t sl = 0; sl < j->where.nslots; sl++)
            for (uint64_t m = j->where.slots[sl].mask; m; m &= m - 1) {
                unsigned g = (unsigned)__builtin_ctzll(m);

                if (g >= d->ngpus || d->samples[g].err != GP_OK ||
                    d->samples[g].util_pct < 0)
                    continue;
                known = true;
                idle &=
                    d->samples[g].util_pct <= (int)d->cfg.monitor.idle_util_pct;
            }
        if (!known || !idle) {
            if (dj->idle_reported) {
                gp_dlog(d, GP_LOG_INFO, "job %" PRId64 " uses its GPUs again",
                        dj->id);
                tell_idle(d, dj, false, now);
            }
            dj->idle_since_us = GP_TIME_NONE;
            dj->idle_reported = false;
            continue;
        }
        if (dj->idle_since_us == GP_TIME_NONE)
            dj->idle_since_us = now;
        if (!dj->idle_reported &&
            now - dj->idle_since_us >= d->cfg.monitor.idle_after_us) {
            dj->idle_reported = true;
            d->idle_reports++;
            gp_dlog(d, GP_LOG_WARN,
                    "job %" PRId64 " holds gpus %s idle (at most %d%% for "
                    "%.0f s)",
                    dj->id, dj->devices, (int)d->cfg.monitor.idle_util_pct,
                    (double)(now - dj->idle_since_us) / 1e6);
            gp_daemon_save_job(
                d, dj, j, "idle",
                json_pack("{sssf}", "devices", dj->devices, "idle_s",
                          (double)(now - dj->idle_since_us) / 1e6));
            tell_idle(d, dj, true, now);
        }
    }
}

int64_t gp_daemon_backend_wakeup(const struct daemon *d)
{
    int64_t t = GP_TIME_NONE;

    if (d->slurm)
        return gp_bslurm_wakeup(d);
    for (size_t i = 0; i < d->nprocs; i++) {
        const struct djob *dj = d->procs[i];
        int64_t x = GP_TIME_NONE;

        if (dj->stopping && dj->stop.deadline_us != GP_TIME_NONE)
            x = dj->stop.deadline_us;
        if (dj->limit_at_us != GP_TIME_NONE &&
            (x == GP_TIME_NONE || dj->limit_at_us < x))
            x = dj->limit_at_us;
        if (x != GP_TIME_NONE && (t == GP_TIME_NONE || x < t))
            t = x;
    }
    return t;
}

/* ---- recovery ---------------------------------------------------------- */

struct recover {
    struct daemon *d;
    int64_t now;
    struct gp_diag *diag;
    int rc;
};

static int spec_of(struct djob *dj, struct gp_job_spec *s, char *idbuf,
                   size_t len)
{
    json_t *sp = dj->spec;

    memset(s, 0, sizeof(*s));
    snprintf(idbuf, len, "%" PRId64, dj->id);
    s->id = idbuf;
    s->tenant = dj->tenant;
    s->user = dj->user;
    s->name = dj->name;
    s->gpu_type = json_string_value(json_object_get(sp, "gpu_type"));
    s->submit_us = dj->submit_us;
    s->time_limit_us =
        (int64_t)(json_number_value(json_object_get(sp, "time_limit_s")) * 1e6);
    s->slo_us =
        (int64_t)(json_number_value(json_object_get(sp, "slo_s")) * 1e6);
    s->gpus = (uint32_t)json_integer_value(json_object_get(sp, "gpus"));
    s->gpu_milli =
        (uint32_t)json_integer_value(json_object_get(sp, "gpu_milli"));
    s->min_gpus = (uint32_t)json_integer_value(json_object_get(sp, "min_gpus"));
    s->max_gpus = (uint32_t)json_integer_value(json_object_get(sp, "max_gpus"));
    s->cpus = (uint32_t)json_integer_value(json_object_get(sp, "cpus"));
    s->mem_mib = (uint64_t)json_integer_value(json_object_get(sp, "mem_mib"));
    s->priority = (int32_t)json_integer_value(json_object_get(sp, "priority"));
    s->checkpointable = json_is_true(json_object_get(sp, "checkpointable"));
    return GP_OK;
}

int gp_daemon_submit_core(struct daemon *d, struct djob *dj, int64_t now,
                          struct gp_diag *diag)
{
    struct gp_job_spec s;
    char idbuf[32];

    spec_of(dj, &s, idbuf, sizeof(idbuf));
    return gp_core_submit(d->core, &s, now, &dj->handle, diag);
}

static int open_run(void *priv, const struct gp_db_run *r)
{
    struct gp_db_run *out = priv;

    if (r->run >= out->run) {
        *out = *r;
        out->node = NULL;
        out->devices = NULL;
        /* devices are copied by the caller's second look */
    }
    return 0;
}

struct devlook {
    uint32_t run;
    char devices[256];
};

static int run_devices(void *priv, const struct gp_db_run *r)
{
    struct devlook *l = priv;

    if (r->run == l->run)
        snprintf(l->devices, sizeof(l->devices), "%s", r->devices);
    return 0;
}

static int parse_devices(const char *s, uint64_t *mask, uint32_t *n)
{
    *mask = 0;
    *n = 0;
    while (*s) {
        char *end;
        long g = strtol(s, &end, 10);

        if (end == s || g < 0 || g >= 64)
            return GP_EPARSE;
        if (!(*mask & (1ull << g)))
            (*n)++;
        *mask |= 1ull << g;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return GP_EPARSE;
    }
    return GP_OK;
}

/* Parked (gp_job.parked): its last preemption was of an idle job whose
 * GPUs were lent ("preempted" with "idle": true) and it has not started
 * since. Read from its history, so the store needs no column for it. */
static int parked_event(void *priv, const struct gp_db_event *ev)
{
    bool *parked = priv;

    if (strcmp(ev->kind, "started") == 0) {
        *parked = false;
    } else if (strcmp(ev->kind, "preempted") == 0) {
        json_t *d =
            ev->detail_json ? json_loads(ev->detail_json, 0, NULL) : NULL;

        *parked = json_is_true(json_object_get(d, "idle"));
        json_decref(d);
    }
    return 0;
}

/* The store's live jobs into the table (an iteration may not write, so
 * the core, whose observers write, comes after). */
static int load_job(void *priv, const struct gp_db_job *row)
{
    struct recover *rv = priv;
    struct daemon *d = rv->d;
    struct djob *dj = calloc(1, sizeof(*dj));
    int rc;

    if (!dj)
        return rv->rc = GP_ENOMEM;
    dj->id = row->id;
    dj->tenant = strdup(row->tenant);
    dj->user = strdup(row->user);
    dj->name = strdup(row->name ? row->name : "");
    dj->uid = row->uid;
    dj->gid = row->gid;
    dj->submit_us = row->submit_us;
    dj->restarts = row->restarts;
    dj->exit_code = GP_DB_NO_EXIT;
    dj->limit_at_us = GP_TIME_NONE;
    dj->idle_since_us = GP_TIME_NONE;
    dj->spec = json_loads(row->spec_json, 0, NULL);
    if (!dj->tenant || !dj->user || !dj->name || !dj->spec) {
        gp_djob_free(dj);
        return rv->rc = gp_diag_set(rv->diag, GP_EPARSE, "store",
                                    "job %" PRId64 ": its record cannot be "
                                    "read back",
                                    row->id);
    }
    if ((rc = gp_djob_add(d, dj)) != GP_OK) {
        gp_djob_free(dj);
        return rv->rc = rc;
    }
    dj->restore = (struct gp_job_restore){
        .first_start_us = row->first_start_us,
        .queued_us = row->queued_us,
        .work_done_us = row->work_done_us,
        .gpu_us = row->gpu_us,
        .preemptions = row->preemptions,
        .starts = row->restarts,
        .predicted_us = row->predicted_us,
    };
    if (row->state == GP_JOB_PENDING && row->preemptions > 0)
        gp_db_events_each(d->db, row->id, parked_event, &dj->restore.parked,
                          NULL);
    return 0;
}

/* A job the core no longer takes (its tenant is gone, its record is
 * refused): it fails, with the reason, in the store; a process of its
 * last run still alive is killed, so nothing runs that gpupool does not
 * account for; and it leaves the table. */
static void fail_unrestorable(struct recover *rv, struct djob *dj,
                              const char *why)
{
    struct daemon *d = rv->d;
    struct gp_db_run last = {0};
    struct gp_db_job row;
    struct gp_diag diag = {{0}, {0}};

    gp_dlog(d, GP_LOG_ERROR, "job %" PRId64 " cannot be restored: %s; it fails",
            dj->id, why);
    gp_db_runs_each(d->db, dj->id, true, open_run, &last, NULL);
    if (last.run) {
        char dir[1024];

        gp_daemon_job_dir(d, dj->id, dir, sizeof(dir));
        if (gp_local_adopt(dir, last.run, &dj->proc, &diag) == GP_OK)
            gp_local_signal(&dj->proc, SIGKILL, NULL);
        gp_db_run_end(d->db, dj->id, last.run, rv->now, "not restored", NULL);
    }
    if (gp_db_job_get(d->db, dj->id, &row, &diag) == GP_OK) {
        struct gp_db_event ev = {
            .job_id = dj->id, .ts_us = rv->now, .kind = "failed"};
        char reason[400];

        snprintf(reason, sizeof(reason), "cannot be restored: %.360s", why);
        row.state = GP_JOB_FAILED;
        row.end_us = rv->now;
        row.reason = reason;
        row.updated_us = rv->now;
        if (gp_db_job_update(d->db, &row, &diag) != GP_OK ||
            gp_db_event_append(d->db, &ev, NULL, &diag) != GP_OK)
            gp_dlog(d, GP_LOG_ERROR, "store: job %" PRId64 ": %s", dj->id,
                    diag.msg);
    }
    gp_djob_drop(d, dj);
}

/* One job back into the core: submitted again, its accounting restored,
 * its last run adopted if it still runs (or ran while the daemon was
 * away: the next poll reports how it ended). */
static int restore_job(struct recover *rv, struct djob *dj)
{
    struct daemon *d = rv->d;
    struct gp_db_run last = {0};
    struct devlook dl = {0};
    struct gp_diag diag = {{0}, {0}};
    int rc;

    if (!gp_tenancy_is_defined(d, dj->tenant))
        gp_dlog(d, GP_LOG_WARN,
                "job %" PRId64 ": its tenant %s is no longer defined; it "
                "goes on with no guarantee, seen by admins only",
                dj->id, dj->tenant);
    if ((rc = gp_daemon_submit_core(d, dj, rv->now, &diag)) != GP_OK) {
        fail_unrestorable(rv, dj, diag.msg);
        return 0;
    }
    if (gp_core_job(d->core, dj->handle)->state != GP_JOB_PENDING)
        return 0; /* rejected now (the cluster changed): the observer said */
    if (gp_core_restore_job(d->core, dj->handle, &dj->restore, &diag) != GP_OK)
        gp_dlog(d, GP_LOG_WARN,
                "job %" PRId64 ": its accounting cannot be restored (%s); "
                "it goes on from zero",
                dj->id, diag.msg);
    /* its last run: still going, or over while the daemon was away? */
    gp_db_runs_each(d->db, dj->id, true, open_run, &last, NULL);
    dj->runs = 0;
    {
        /* the run number to continue from: the highest of all runs */
        struct gp_db_run any = {0};
        gp_db_runs_each(d->db, dj->id, false, open_run, &any, NULL);
        dj->runs = any.run;
    }
    if (d->slurm) {
        gp_bslurm_restore_run(d, dj, &last, rv->now);
        return 0;
    }
    if (last.run == 0)
        return 0;
    dl.run = last.run;
    gp_db_runs_each(d->db, dj->id, true, run_devices, &dl, NULL);
    {
        char dir[1024];
        struct gp_local_state st;
        uint64_t mask;
        uint32_t ngpus;
        struct gp_placement p = {0};

        gp_daemon_job_dir(d, dj->id, dir, sizeof(dir));
        rc = gp_local_adopt(dir, last.run, &dj->proc, &diag);
        if (rc == GP_OK)
            rc = gp_local_poll(&dj->proc, &st, &diag);
        if (rc != GP_OK) {
            st.kind = GP_LOCAL_LOST;
            snprintf(st.reason, sizeof(st.reason), "%.200s", diag.msg);
        }
        if (st.kind == GP_LOCAL_LOST)
            gp_local_signal(&dj->proc, SIGKILL, NULL);
        if (parse_devices(dl.devices, &mask, &ngpus) != GP_OK) {
            st.kind = GP_LOCAL_LOST;
            snprintf(st.reason, sizeof(st.reason), "bad devices '%.200s'",
                     dl.devices);
        }
        if (st.kind == GP_LOCAL_START_FAILED || st.kind == GP_LOCAL_LOST) {
            /* it is not running: queued again, from its checkpoint */
            gp_db_run_end(d->db, dj->id, last.run, rv->now,
                          st.kind == GP_LOCAL_LOST ? "lost" : "start failed",
                          NULL);
            gp_dlog(d, GP_LOG_WARN,
                    "job %" PRId64 " run %u %s while the daemon was away: "
                    "queued again",
                    dj->id, last.run, gp_local_kind_name(st.kind));
            return 0;
        }
        /* it runs, or ran: adopt it on its devices, then report */
        p.type = 0;
        p.gpus =
            (uint32_t)json_integer_value(json_object_get(dj->spec, "gpu_milli"))
                ? 0
                : ngpus;
        p.milli = (uint32_t)json_integer_value(
            json_object_get(dj->spec, "gpu_milli"));
        p.nslots = 1;
        p.nswitches = 1;
        p.inline_slot.node = 0;
        p.inline_slot.gpus = p.gpus;
        p.inline_slot.mask = p.milli ? 0 : mask;
        p.inline_slot.milli = p.milli;
        p.inline_slot.dev =
            p.milli && mask ? (uint32_t)__builtin_ctzll(mask) : 0;
        p.slots = &p.inline_slot;
        /* a GPU another job adopted first: they were co-located */
        p.colocated = p.gpus > 0;
        snprintf(dj->devices, sizeof(dj->devices), "%s", dl.devices);
        gp_djob_set_proc(d, dj, true);
        if ((rc = gp_core_adopt(d->core, dj->handle, &p,
                                last.started_us <= rv->now ? last.started_us
                                                           : rv->now,
                                rv->now, &diag)) != GP_OK) {
            gp_dlog(d, GP_LOG_ERROR,
                    "job %" PRId64 " cannot be adopted on gpus %s: %s; "
                    "stopping it",
                    dj->id, dl.devices, diag.msg);
            gp_local_signal(&dj->proc, SIGKILL, NULL);
            gp_djob_set_proc(d, dj, false);
            gp_db_run_end(d->db, dj->id, last.run, rv->now, "lost", NULL);
            return 0;
        }
        {
            const struct gp_job *j = gp_core_job(d->core, dj->handle);
            if (j->time_limit_us > 0)
                dj->limit_at_us = j->run_start_us + j->time_limit_us;
        }
        gp_dlog(d, GP_LOG_INFO, "job %" PRId64 " run %u adopted on gpus %s",
                dj->id, last.run, dl.devices);
    }
    return 0;
}

static int recover_usage(void *priv, const struct gp_db_usage *u)
{
    struct recover *rv = priv;
    uint32_t t;

    if (gp_core_find_tenant(rv->d->core, u->tenant, &t) == GP_OK)
        gp_core_set_tenant_usage(rv->d->core, t, u->decayed_gpu_us / 1e6,
                                 u->at_us <= rv->now ? u->at_us : rv->now);
    return 0;
}

static int recover_history(void *priv, const struct gp_db_history *h)
{
    struct recover *rv = priv;

    gp_core_learn(rv->d->core, h->tenant, h->user, h->name, h->gpus,
                  h->runtime_us);
    return 0;
}

int gp_daemon_recover(struct daemon *d, int64_t now, struct gp_diag *diag)
{
    struct recover rv = {d, now, diag, GP_OK};
    int rc;

    gp_core_advance(d->core, now);
    if ((rc = gp_db_usage_each(d->db, recover_usage, &rv, diag)) != GP_OK ||
        (rc = gp_db_history_each(d->db, 0, recover_history, &rv, diag)) !=
            GP_OK)
        return rc;
    rc = gp_db_jobs_each(d->db, GP_DB_LIVE, 0, 0, load_job, &rv, diag);
    if (rc == GP_OK)
        rc = rv.rc;
    if (rc != GP_OK)
        return rc;
    {
        /* restoring may drop a job (rejected now): walk a copy of the ids */
        size_t n = d->njobs;
        int64_t *ids = malloc((n ? n : 1) * sizeof(*ids));

        if (!ids)
            return gp_diag_set(diag, GP_ENOMEM, "recovery", "out of memory");
        for (size_t i = 0; i < n; i++)
            ids[i] = d->jobs[i]->id;
        for (size_t i = 0; i < n; i++) {
            struct djob *dj = gp_djob_find(d, ids[i]);

            if (dj && (rc = restore_job(&rv, dj)) != GP_OK)
                break;
        }
        free(ids);
    }
    if (rc == GP_OK && d->slurm)
        gp_bslurm_reconcile(d, now);
    return rc;
}
