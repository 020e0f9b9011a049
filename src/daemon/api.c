/* api.c - the HTTP/JSON API under /v1 (docs/api.md), run by the loop.
 *
 * Key decisions:
 *  - A request body is decoded strictly (decode.c): unknown fields, wrong
 *    types and values out of range are a 400 that names the field, before
 *    anything changes.
 *  - A submit is written to the store (job, event) and given to the core
 *    inside the loop's transaction; the client hears its id only after the
 *    commit (serve.c). A client-chosen client_id makes a retried submit
 *    return the job it created the first time.
 *  - Who may do what (auth.h): a caller submits to, sees and touches only
 *    the jobs of tenants it belongs to; lists, the tenants, the ledger,
 *    the nodes' jobs and the per-tenant metrics are filtered to them. A
 *    job of another tenant is answered 404, as if it did not exist, so ids
 *    tell nothing. Within its tenants a job is cancelled by the user who
 *    submitted it. Admins (root, the daemon's own user, admin tokens) see
 *    and touch everything, and only they create and change tenants and the
 *    policy's options.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/decode.h"
#include "daemon/live.h"
#include "daemon/tenancy.h"
#include "monitor/prom.h"
#include "sim/version.h" /* GP_VERSION */

#define MAX_LIST 10000

static double secs(int64_t us)
{
    return us == GP_TIME_NONE ? NAN : (double)us / 1e6;
}

static json_t *time_or_null(int64_t us)
{
    return us == GP_TIME_NONE || us <= 0 ? json_null()
                                         : json_real((double)us / 1e6);
}

static json_t *error(unsigned *status, unsigned code, const char *err,
                     const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static json_t *error(unsigned *status, unsigned code, const char *err,
                     const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    *status = code;
    return json_pack("{s:s, s:s, s:s*}", "error", err, "message", msg, "field",
                     field);
}

/* ---- a job as shown -------------------------------------------------- */

/* What a waiting job waits for, and when it should start: the GPUs the
 * running jobs free at their predicted ends, taken first by the jobs
 * queued before it (an estimate: the policy may order otherwise). The
 * waiting and running jobs are gathered once per request (struct est),
 * so that listing n waiting jobs costs O(n log n), not O(n^2). */
struct est {
    bool built;
    uint64_t free_gpus;
    int64_t *pend_id;   /* waiting jobs by id */
    uint64_t *pend_cum; /* GPUs of the first k waiting jobs: [k] */
    size_t npend;
    int64_t *end;      /* running jobs' predicted ends, earliest first */
    uint64_t *end_cum; /* GPUs freed by the first k ends: [k] */
    size_t nrun;
};

struct pair {
    int64_t key;
    uint64_t gpus;
};

static int cmp_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;

    return (x->key > y->key) - (x->key < y->key);
}

static void est_fini(struct est *e)
{
    free(e->pend_id);
    free(e->pend_cum);
    free(e->end);
    free(e->end_cum);
    memset(e, 0, sizeof(*e));
}

static int est_build(struct daemon *d, struct est *e, int64_t now)
{
    size_t n = d->njobs ? d->njobs : 1, np = 0, nr = 0;
    struct pair *pend = malloc(n * sizeof(*pend)),
                *run = malloc(n * sizeof(*run));
    int rc = GP_ENOMEM;

    e->pend_id = malloc(n * sizeof(*e->pend_id));
    e->pend_cum = malloc((n + 1) * sizeof(*e->pend_cum));
    e->end = malloc(n * sizeof(*e->end));
    e->end_cum = malloc((n + 1) * sizeof(*e->end_cum));
    if (!pend || !run || !e->pend_id || !e->pend_cum || !e->end || !e->end_cum)
        goto out;
    for (size_t i = 0; i < d->njobs; i++) {
        const struct gp_job *o = gp_core_job(d->core, d->jobs[i]->handle);

        if (!o)
            continue;
        if (o->state == GP_JOB_PENDING)
            pend[np++] = (struct pair){d->jobs[i]->id, o->demand.gpus};
        else if (o->state == GP_JOB_RUNNING || o->state == GP_JOB_STARTING)
            run[nr++] = (struct pair){
                now + gp_core_predicted_remaining(d->core, o, now),
                o->where.gpus};
    }
    qsort(pend, np, sizeof(*pend), cmp_pair);
    qsort(run, nr, sizeof(*run), cmp_pair);
    e->pend_cum[0] = e->end_cum[0] = 0;
    for (size_t i = 0; i < np; i++) {
        e->pend_id[i] = pend[i].key;
        e->pend_cum[i + 1] = e->pend_cum[i] + pend[i].gpus;
    }
    for (size_t i = 0; i < nr; i++) {
        e->end[i] = run[i].key;
        e->end_cum[i + 1] = e->end_cum[i] + run[i].gpus;
    }
    e->npend = np;
    e->nrun = nr;
    e->free_gpus = gp_cluster_free_gpus(gp_core_cluster(d->core));
    e->built = true;
    rc = GP_OK;
out:
    free(pend);
    free(run);
    return rc;
}

static void estimate(struct daemon *d, struct est *e, const struct gp_job *j,
                     int64_t id, int64_t now, json_t *out)
{
    size_t lo = 0, hi, pos;
    uint64_t need;

    if (!e->built && est_build(d, e, now) != GP_OK)
        return;
    for (hi = e->npend; lo < hi;) { /* waiting jobs queued before it */
        size_t mid = lo + (hi - lo) / 2;

        if (e->pend_id[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    pos = lo;
    need = e->pend_cum[pos] + (j->demand.gpus ? j->demand.gpus : 1);
    json_object_set_new(out, "position", json_integer((json_int_t)pos + 1));
    if (j->parked)
        json_object_set_new(out, "reason",
                            json_string("parked: preempted while idle, its "
                                        "GPUs lent to another tenant; it "
                                        "starts when GPUs are free, and "
                                        "nothing is preempted for it"));
    else if (j->why)
        json_object_set_new(out, "reason",
                            json_string(gp_core_str(d->core, j->why)));
    else if (e->free_gpus < j->demand.gpus)
        json_object_set_new(out, "reason",
                            json_string("waiting for GPUs to free up"));
    else if (pos > 0)
        json_object_set_new(out, "reason",
                            json_string("jobs queued before it go first"));
    else if (gp_core_policy(d->core)->needs_guarantees)
        json_object_set_new(out, "reason",
                            json_string("the policy holds it back (its "
                                        "tenant is at its share)"));
    else
        json_object_set_new(out, "reason",
                            json_string("the policy holds it back (its "
                                        "order or schedule starts it later: "
                                        "docs/policies)"));
    if (e->free_gpus >= need) {
        json_object_set_new(out, "estimated_start", json_real(secs(now)));
        return;
    }
    for (size_t i = 0; i < e->nrun; i++)
        if (e->free_gpus + e->end_cum[i + 1] >= need) {
            json_object_set_new(out, "estimated_start",
                                json_real(secs(e->end[i])));
            break;
        }
}

/* A job as the API shows it (from the store's record); a waiting job
 * with its position, reason and estimated start when e is given. */
/* The job as the API shows it. Its spec is row->spec_json, or `given`
 * (borrowed) when the caller has it parsed already (a submit). */
static json_t *job_json_spec(struct daemon *d, const struct gp_db_job *row,
                             int64_t now, struct est *e, json_t *given)
{
    json_t *spec =
               given ? json_incref(given) : json_loads(row->spec_json, 0, NULL),
           *o;
    struct djob *dj = gp_djob_find(d, row->id);
    char dir[1100];

    o = json_pack("{sIsssssssssisi}", "id", (json_int_t)row->id, "name",
                  row->name ? row->name : "", "tenant", row->tenant, "user",
                  row->user, "state", gp_job_state_name(row->state), "uid",
                  (int)row->uid, "restarts", (int)row->restarts);
    if (!o) {
        json_decref(spec);
        return NULL;
    }
    json_object_set_new(o, "preemptions", json_integer(row->preemptions));
    json_object_set_new(o, "submit_time", time_or_null(row->submit_us));
    json_object_set_new(o, "start_time", time_or_null(row->first_start_us));
    json_object_set_new(o, "end_time", time_or_null(row->end_us));
    json_object_set_new(o, "queued_time", time_or_null(row->queued_us));
    json_object_set_new(o, "exit_code",
                        row->exit_code == GP_DB_NO_EXIT
                            ? json_null()
                            : json_integer(row->exit_code));
    json_object_set_new(o, "reason",
                        json_string(row->reason ? row->reason : ""));
    json_object_set_new(o, "gpu_seconds", json_real(secs(row->gpu_us)));
    json_object_set_new(o, "predicted_runtime_s",
                        row->predicted_us > 0
                            ? json_real(secs(row->predicted_us))
                            : json_null());
    if (spec) {
        const char *key;
        json_t *v;

        json_object_foreach(spec, key, v)
        {
            if (!json_object_get(o, key) && strcmp(key, "client_id") != 0)
                json_object_set(o, key, v);
        }
    }
    json_decref(spec);
    gp_daemon_job_dir(d, row->id, dir, sizeof(dir));
    json_object_set_new(o, "job_dir", json_string(dir));
    json_object_set_new(o, "stdout", json_pack("s+", dir, "/stdout"));
    json_object_set_new(o, "stderr", json_pack("s+", dir, "/stderr"));
    json_object_set_new(o, "checkpoint_dir",
                        json_pack("s+", dir, "/checkpoint"));
    if (dj) {
        const struct gp_job *j = gp_core_job(d->core, dj->handle);

        json_object_set_new(o, "devices", json_string(dj->devices));
        if (dj->has_proc)
            json_object_set_new(o, "pid", json_integer(dj->proc.job_pid));
        if (dj->idle_reported)
            json_object_set_new(o, "idle_since",
                                time_or_null(dj->idle_since_us));
        if (j) {
            /* the live state (the store's is as of the last change) */
            json_object_set_new(o, "state",
                                json_string(gp_job_state_name(j->state)));
            if (j->parked)
                json_object_set_new(o, "parked", json_true());
            /* the predictor's figure, taken at submission: the store has
             * it once the job has run */
            if (j->predicted_us > 0)
                json_object_set_new(o, "predicted_runtime_s",
                                    json_real(secs(j->predicted_us)));
            if (j->state == GP_JOB_PENDING && e)
                estimate(d, e, j, row->id, now, o);
        }
    }
    return o;
}

static json_t *job_json(struct daemon *d, const struct gp_db_job *row,
                        int64_t now, struct est *e)
{
    return job_json_spec(d, row, now, e, NULL);
}

/* ---- submit ------------------------------------------------------------ */

/* May `who` submit this clean job? NULL, or the error. Asked of every job
 * of a batch before any is queued: a refusal leaves nothing behind. */
static json_t *may_submit(struct daemon *d, const struct gp_identity *who,
                          json_t *clean, const char *where, unsigned *status)
{
    const char *tenant = json_string_value(json_object_get(clean, "tenant"));
    char field[48];

    snprintf(field, sizeof(field), "%s%stenant", where, *where ? "." : "");
    /* the same answer whether the tenant exists or not */
    if (!gp_tenancy_may(d, who, tenant) ||
        (!who->admin && !gp_tenancy_is_defined(d, tenant)))
        return error(status, 403, "AUTH", field,
                     "%s: %s may not submit to tenant '%s' (not one of its "
                     "tenants; an admin adds members)",
                     field, who->user, tenant);
    if (geteuid() != 0 && who->uid != (uid_t)geteuid())
        return error(status, 403, "AUTH", NULL,
                     "this daemon runs as uid %u and can run jobs only for "
                     "that user; run it as root to serve every user",
                     (unsigned)geteuid());
    return NULL;
}

/* One clean job (decode.c; borrowed) into the store and the core. */
static json_t *submit_one(struct daemon *d, const struct gp_identity *who,
                          json_t *clean, int64_t now, unsigned *status)
{
    json_t *out;
    struct gp_db_job row = {0};
    struct djob *dj;
    struct gp_diag diag = {{0}, {0}};
    char *text;
    const char *cid;
    int64_t id;
    int rc;

    cid = json_string_value(json_object_get(clean, "client_id"));
    if (cid && gp_db_job_find_ext(d->db, cid, &id, NULL) == GP_OK &&
        gp_db_job_get(d->db, id, &row, NULL) == GP_OK) {
        if (strcmp(row.user, who->user) != 0)
            return error(status, 409, "EXIST", "client_id",
                         "client_id: another user's job has it");
        *status = 200; /* the job the first try created */
        return job_json(d, &row, now, NULL);
    }
    if (!(text = json_dumps(clean, JSON_COMPACT | JSON_SORT_KEYS)))
        return error(status, 503, "NOMEM", NULL, "out of memory");
    row.ext = cid;
    row.tenant = json_string_value(json_object_get(clean, "tenant"));
    row.user = who->user;
    row.uid = who->uid;
    row.gid = who->gid;
    row.name = json_string_value(json_object_get(clean, "name"));
    row.spec_json = text;
    row.state = GP_JOB_PENDING;
    row.submit_us = now;
    row.queued_us = now;
    row.first_start_us = GP_TIME_NONE;
    row.end_us = GP_TIME_NONE;
    row.exit_code = GP_DB_NO_EXIT;
    row.updated_us = now;
    rc = gp_db_job_insert(d->db, &row, &id, &diag);
    if (rc != GP_OK) {
        free(text);
        return error(status, gp_http_status_of(rc), gp_err_name(rc), NULL, "%s",
                     diag.msg);
    }
    row.id = id;
    if (!(dj = gp_djob_new(d, &row, id, clean))) {
        free(text);
        return error(status, 503, "NOMEM", NULL, "out of memory");
    }
    {
        struct gp_db_event ev = {
            .job_id = id, .ts_us = now, .kind = "submitted"};
        gp_db_event_append(d->db, &ev, NULL, NULL);
    }
    if ((rc = gp_daemon_submit_core(d, dj, now, &diag)) != GP_OK) {
        free(text);
        gp_djob_drop(d, dj);
        return error(status, gp_http_status_of(rc), gp_err_name(rc), NULL, "%s",
                     diag.msg);
    }
    d->submits++;
    if (gp_djob_find(d, id)) {
        /* queued: the row is as inserted (nothing starts before the
         * round), and the job's live state is read from the core */
        out = job_json_spec(d, &row, now, NULL, clean);
        free(text);
        *status = 201;
        return out;
    }
    free(text);
    /* a job the cluster can never run was rejected by now (observer) */
    if (gp_db_job_get(d->db, id, &row, NULL) != GP_OK)
        return error(status, 500, "IO", NULL, "the store lost the job");
    out = job_json(d, &row, now, NULL);
    *status = row.state == GP_JOB_REJECTED ? 422 : 201;
    if (row.state == GP_JOB_REJECTED) {
        json_decref(out);
        return error(status, 422, "NOFIT", NULL,
                     "the cluster can never run it, so nothing was "
                     "queued: %s",
                     row.reason ? row.reason : "");
    }
    return out;
}

/* A batch refused part-way: the loop's savepoint takes the jobs it had
 * created out of the store, and this takes them out of the core and the
 * job table. Kept there, they would hold no row yet be scheduled, and the
 * next submit would be given the id of one of them again (two jobs, one
 * id: two open runs of one job). Newest first; each is pending. */
static void undo_created(struct daemon *d, const int64_t *ids, size_t n,
                         int64_t now)
{
    for (size_t i = n; i-- > 0;) {
        struct djob *dj = gp_djob_find(d, ids[i]);
        uint64_t handle;

        if (!dj)
            continue;
        handle = dj->handle;
        snprintf(dj->reason, sizeof(dj->reason), "its batch was refused");
        /* ended: the observer drops dj, the turn's end retires it */
        if (gp_core_cancel(d->core, handle, now) != GP_OK)
            gp_djob_drop(d, dj);
        d->submits--;
    }
}

static json_t *submit(struct daemon *d, struct gp_http_request *r, int64_t now,
                      unsigned *status)
{
    struct gp_diag diag = {{0}, {0}};
    json_t *jobs = NULL, *out;
    int rc = gp_api_decode_submit(r->body, r->body_len, &jobs, &diag);
    int64_t created[GP_API_MAX_BATCH];
    size_t ncreated = 0;

    if (rc != GP_OK)
        return error(status, rc == GP_ENOMEM ? 503 : 400, gp_err_name(rc),
                     diag.where, "%s", diag.msg);
    if (json_is_object(jobs)) {
        if (!(out = may_submit(d, &r->who, jobs, "", status)))
            out = submit_one(d, &r->who, jobs, now, status);
        json_decref(jobs);
        return out;
    }
    /* a batch: all or nothing */
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        char where[32];

        snprintf(where, sizeof(where), "jobs[%zu]", i);
        if ((out = may_submit(d, &r->who, json_array_get(jobs, i), where,
                              status))) {
            json_decref(jobs);
            return out;
        }
    }
    out = json_pack("{s[]}", "jobs");
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *one =
            submit_one(d, &r->who, json_array_get(jobs, i), now, status);

        if (*status >= 400) {
            /* the savepoint undoes the ones before in the store */
            undo_created(d, created, ncreated, now);
            json_decref(out);
            json_decref(jobs);
            return one;
        }
        if (*status == 201) /* not 200: a job an earlier request made */
            created[ncreated++] =
                json_integer_value(json_object_get(one, "id"));
        json_array_append_new(json_object_get(out, "jobs"), one);
    }
    *status = 201;
    json_decref(jobs);
    return out;
}

/* ---- list, show, cancel ------------------------------------------------ */

struct lister {
    struct daemon *d;
    const struct gp_identity *who;
    json_t *arr;
    const char *tenant, *user, *state;
    int64_t now;
    size_t limit;
    struct est est;
};

static int list_one(void *priv, const struct gp_db_job *row)
{
    struct lister *l = priv;
    json_t *j;

    if (!gp_tenancy_may(l->d, l->who, row->tenant) ||
        (l->tenant && strcmp(l->tenant, row->tenant) != 0) ||
        (l->user && strcmp(l->user, row->user) != 0) ||
        (l->state && strcmp(l->state, gp_job_state_name(row->state)) != 0))
        return 0;
    if (!(j = job_json(l->d, row, l->now, &l->est)))
        return GP_ENOMEM;
    json_array_append_new(l->arr, j);
    return json_array_size(l->arr) >= l->limit ? 1 : 0;
}

/* A yes/no argument: absent, 0, false or no is no; present alone, 1, true
 * or yes is yes; anything else is a 400 naming it. */
static json_t *flag_arg(struct gp_http_request *r, const char *key, bool *on,
                        unsigned *status)
{
    static const char *const yes[] = {"", "1", "true", "yes"}, *const no[] = {
                                                                   "0", "false",
                                                                   "no"};
    const char *v = gp_http_arg(r, key);

    *on = false;
    if (!v)
        return NULL;
    for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
        if (strcmp(v, yes[i]) == 0) {
            *on = true;
            return NULL;
        }
    for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
        if (strcmp(v, no[i]) == 0)
            return NULL;
    return error(status, 400, "PARSE", key, "%s: expected 1 or 0, got '%s'",
                 key, v);
}

static json_t *list(struct daemon *d, struct gp_http_request *r, int64_t now,
                    unsigned *status)
{
    struct lister l = {d,
                       &r->who,
                       json_array(),
                       gp_http_arg(r, "tenant"),
                       gp_http_arg(r, "user"),
                       gp_http_arg(r, "state"),
                       now,
                       100,
                       {0}};
    const char *lim = gp_http_arg(r, "limit"), *after = gp_http_arg(r, "after");
    enum gp_db_which which = GP_DB_LIVE;
    bool ended = false, all = false;
    int64_t after_id = 0;
    json_t *out;
    char *end;

    if (!l.arr)
        return error(status, 503, "NOMEM", NULL, "out of memory");
    if (lim) {
        long long x = strtoll(lim, &end, 10);
        if (end == lim || *end || x < 1 || x > MAX_LIST) {
            json_decref(l.arr);
            return error(status, 400, "RANGE", "limit",
                         "limit: expected 1 to %d", MAX_LIST);
        }
        l.limit = (size_t)x;
    }
    if (after) {
        after_id = strtoll(after, &end, 10);
        if (end == after || *end || after_id < 0) {
            json_decref(l.arr);
            return error(status, 400, "PARSE", "after",
                         "after: expected a job id");
        }
    }
    if ((out = flag_arg(r, "ended", &ended, status)) ||
        (out = flag_arg(r, "all", &all, status))) {
        json_decref(l.arr);
        return out;
    }
    if (ended)
        which = GP_DB_ENDED;
    if (l.state && strcmp(l.state, "pending") != 0 &&
        strcmp(l.state, "running") != 0 && strcmp(l.state, "starting") != 0 &&
        strcmp(l.state, "stopping") != 0)
        which = GP_DB_ALL;
    if (all)
        which = GP_DB_ALL;
    gp_db_jobs_each(d->db, which, after_id, 0, list_one, &l, NULL);
    est_fini(&l.est);
    out = json_pack("{so sf}", "jobs", l.arr, "now", secs(now));
    if (json_array_size(l.arr) == l.limit)
        json_object_set_new(
            out, "next_after",
            json_object_get(json_array_get(l.arr, l.limit - 1), "id")
                ? json_incref(
                      json_object_get(json_array_get(l.arr, l.limit - 1), "id"))
                : json_null());
    *status = 200;
    return out;
}

static int add_event(void *priv, const struct gp_db_event *ev)
{
    json_t *arr = priv, *e;

    e = json_pack("{sisfss}", "seq", (int)ev->seq, "time", secs(ev->ts_us),
                  "kind", ev->kind);
    if (e && ev->detail_json) {
        json_t *det = json_loads(ev->detail_json, 0, NULL);
        if (det)
            json_object_set_new(e, "detail", det);
    }
    json_array_append_new(arr, e);
    return 0;
}

static int add_run(void *priv, const struct gp_db_run *r)
{
    json_t *arr = priv;

    json_array_append_new(
        arr, json_pack("{si ss ss so so ss?}", "run", (int)r->run, "node",
                       r->node, "devices", r->devices, "start",
                       time_or_null(r->started_us), "end",
                       time_or_null(r->ended_us), "end_reason", r->end_reason));
    return 0;
}

/* The job, if `who` may see it: another tenant's job is answered as one
 * that does not exist. */
static bool visible_job(struct daemon *d, const struct gp_identity *who,
                        int64_t id, struct gp_db_job *row)
{
    return gp_db_job_get(d->db, id, row, NULL) == GP_OK &&
           gp_tenancy_may(d, who, row->tenant);
}

static json_t *show(struct daemon *d, const struct gp_identity *who, int64_t id,
                    const char *what, int64_t now, unsigned *status)
{
    struct gp_db_job row;
    json_t *o, *ev, *runs;

    if (!visible_job(d, who, id, &row))
        return error(status, 404, "NOENT", "id", "no job %" PRId64, id);
    {
        struct est e = {0};

        o = job_json(d, &row, now, &e);
        est_fini(&e);
    }
    if (!o)
        return error(status, 503, "NOMEM", NULL, "out of memory");
    ev = json_array();
    runs = json_array();
    gp_db_events_each(d->db, id, add_event, ev, NULL);
    gp_db_runs_each(d->db, id, false, add_run, runs, NULL);
    *status = 200;
    if (what && strcmp(what, "events") == 0) {
        json_decref(o);
        json_decref(runs);
        return json_pack("{sIso}", "id", (json_int_t)id, "events", ev);
    }
    if (what && strcmp(what, "why") == 0) {
        json_t *w = json_pack("{sIsO}", "id", (json_int_t)id, "state",
                              json_object_get(o, "state"));
        const char *k[] = {"position", "reason", "estimated_start",
                           "predicted_runtime_s", "devices"};

        for (size_t i = 0; i < sizeof(k) / sizeof(*k); i++)
            if (json_object_get(o, k[i]))
                json_object_set(w, k[i], json_object_get(o, k[i]));
        json_decref(o);
        json_decref(ev);
        json_decref(runs);
        return w;
    }
    json_object_set_new(o, "runs", runs);
    json_object_set_new(o, "events", ev);
    return o;
}

static json_t *cancel(struct daemon *d, const struct gp_identity *who,
                      int64_t id, int64_t now, unsigned *status)
{
    struct gp_db_job row;
    struct djob *dj;
    uint64_t handle;
    int rc;

    if (!visible_job(d, who, id, &row))
        return error(status, 404, "NOENT", "id", "no job %" PRId64, id);
    if (!who->admin && strcmp(row.user, who->user) != 0)
        return error(status, 403, "AUTH", "id",
                     "job %" PRId64 " is %s's: only they or an admin may "
                     "cancel it",
                     id, row.user);
    if (!(dj = gp_djob_find(d, id)))
        return error(status, 409, "STATE", "id",
                     "job %" PRId64 " has ended already (%s)", id,
                     gp_job_state_name(row.state));
    dj->cancel_asked = true;
    snprintf(dj->reason, sizeof(dj->reason), "cancelled by %s", who->user);
    /* a waiting job ends at once: the observer frees dj */
    handle = dj->handle;
    if ((rc = gp_core_cancel(d->core, handle, now)) != GP_OK)
        return error(status, gp_http_status_of(rc), gp_err_name(rc), "id",
                     "job %" PRId64 ": %s", id, gp_err_str(rc));
    {
        const struct gp_job *j = gp_core_job(d->core, handle);
        struct gp_db_event ev = {
            .job_id = id, .ts_us = now, .kind = "cancel_asked"};

        gp_db_event_append(d->db, &ev, NULL, NULL);
        *status = 200;
        return json_pack("{sIss}", "id", (json_int_t)id, "state",
                         j ? gp_job_state_name(j->state) : "cancelled");
    }
}

/* ---- tenants, nodes, health, metrics ------------------------------------- */

/* The tenants `who` may see, in the core's order. */
static json_t *tenants(struct daemon *d, const struct gp_identity *who,
                       bool ledger_only, unsigned *status)
{
    json_t *arr = json_array();

    for (size_t t = 0; t < gp_core_ntenants(d->core); t++) {
        const struct gp_tenant_info *ti =
            gp_core_tenant_info(d->core, (uint32_t)t);
        double held = gp_milli_gpus(ti->held_milli);
        json_t *o, *users;

        if (!gp_tenancy_may(d, who, ti->name))
            continue;
        o = json_pack("{ss si sf sf sf sf sf}", "name", ti->name,
                      "guarantee_gpus", (int)ti->guarantee, "entitled_gpus",
                      ti->entitled, "held_gpus", held, "borrowed_gpus",
                      fmax(0, held - (double)ti->guarantee), "owed_gpus",
                      gp_milli_gpus(ti->owed_milli), "pending_gpus",
                      gp_milli_gpus(ti->pending_milli));
        if (!o)
            continue;
        json_object_set_new(o, "weight", json_real(ti->weight));
        json_object_set_new(o, "cap_gpus", json_integer(ti->cap));
        if (!ledger_only) {
            json_object_set_new(o, "lend_limit_gpus",
                                json_integer(ti->lend_limit));
            if (ti->parent != GP_TENANT_NONE)
                json_object_set_new(
                    o, "parent",
                    json_string(gp_core_tenant_name(d->core, ti->parent)));
            json_object_set_new(o, "running", json_integer(ti->nrunning));
            json_object_set_new(o, "pending", json_integer(ti->npending));
            json_object_set_new(o, "usage_gpu_s", json_real(ti->usage_gpu_s));
            json_object_set_new(
                o, "defined", json_boolean(gp_tenancy_is_defined(d, ti->name)));
            if ((users = json_object_get(d->members, ti->name)))
                json_object_set(o, "users", users);
        }
        json_array_append_new(arr, o);
    }
    *status = 200;
    if (!ledger_only)
        return json_pack("{so}", "tenants", arr);
    return json_pack(
        "{so si sI}", "tenants", arr, "gpus", (int)d->ngpus, "free_gpus",
        (json_int_t)gp_cluster_free_gpus(gp_core_cluster(d->core)));
}

/* ---- what only admins do: tenants and the policy's options -----------------
 */

static json_t *admins_only(const struct gp_identity *who, const char *what,
                           unsigned *status)
{
    if (who->admin)
        return NULL;
    return error(status, 403, "AUTH", NULL,
                 "%s is for admins (root, the daemon's own user, or an admin "
                 "token); %s is not one",
                 what, who->user);
}

/* An error of tenancy.c as the API's answer. */
static json_t *tenancy_error(int rc, const struct gp_diag *diag,
                             unsigned *status)
{
    unsigned code = rc == GP_EEXIST                   ? 409
                    : rc == GP_ENOENT                 ? 404
                    : rc == GP_EIO || rc == GP_ENOMEM ? 503
                                                      : 400;
    /* diag->where: a field of the body, or the tenant the core named */
    return error(status, code, gp_err_name(rc),
                 diag->where[0] ? diag->where : NULL, "%s", diag->msg);
}

static json_t *tenant_create(struct daemon *d, struct gp_http_request *r,
                             int64_t now, unsigned *status)
{
    struct gp_diag diag = {{0}, {0}};
    json_t *req = NULL, *out;
    int rc;

    if ((out = admins_only(&r->who, "creating a tenant", status)))
        return out;
    if ((rc = gp_api_decode_tenant(r->body, r->body_len, true, &req, &diag)) !=
        GP_OK)
        return error(status, rc == GP_ENOMEM ? 503 : 400, gp_err_name(rc),
                     diag.where, "%s", diag.msg);
    rc = gp_tenancy_create(d, req, now, &diag);
    if (rc != GP_OK) {
        json_decref(req);
        return tenancy_error(rc, &diag, status);
    }
    gp_dlog(d, GP_LOG_INFO, "tenant %s created by %s",
            json_string_value(json_object_get(req, "name")), r->who.user);
    out = gp_tenancy_spec(d, json_string_value(json_object_get(req, "name")));
    json_decref(req);
    *status = 201;
    return out ? out : error(status, 503, "NOMEM", NULL, "out of memory");
}

static json_t *tenant_update(struct daemon *d, struct gp_http_request *r,
                             const char *name, int64_t now, unsigned *status)
{
    struct gp_diag diag = {{0}, {0}};
    json_t *req = NULL, *out;
    int rc;

    if ((out = admins_only(&r->who, "changing a tenant", status)))
        return out;
    if ((rc = gp_api_decode_tenant(r->body, r->body_len, false, &req, &diag)) !=
        GP_OK)
        return error(status, rc == GP_ENOMEM ? 503 : 400, gp_err_name(rc),
                     diag.where, "%s", diag.msg);
    rc = gp_tenancy_update(d, name, req, now, &diag);
    json_decref(req);
    if (rc != GP_OK)
        return tenancy_error(rc, &diag, status);
    gp_dlog(d, GP_LOG_INFO, "tenant %s changed by %s", name, r->who.user);
    *status = 200;
    out = gp_tenancy_spec(d, name);
    return out ? out : error(status, 503, "NOMEM", NULL, "out of memory");
}

/* New options for the running policy (live.h): kept in the store, then
 * given to the core, which ranks every job again; a set the policy refuses
 * is a 400 naming the key, and the savepoint undoes the store's copy. */
static json_t *policy_options(struct daemon *d, struct gp_http_request *r,
                              unsigned *status)
{
    struct gp_diag diag = {{0}, {0}};
    json_t *opts = NULL, *out;
    int rc;

    if ((out = admins_only(&r->who, "changing the policy's options", status)))
        return out;
    if ((rc = gp_api_decode_policy_options(r->body, r->body_len, &opts,
                                           &diag)) != GP_OK)
        return error(status, rc == GP_ENOMEM ? 503 : 400, gp_err_name(rc),
                     diag.where, "%s", diag.msg);
    rc = gp_live_policy_set(d, opts, "api", &diag);
    json_decref(opts);
    if (rc != GP_OK)
        return error(status, rc == GP_EINVAL ? 400 : 503, gp_err_name(rc),
                     diag.where[0] ? diag.where : NULL, "%s%s%s", diag.where,
                     diag.where[0] ? ": " : "", diag.msg);
    gp_dlog(d, GP_LOG_INFO, "policy options changed by %s", r->who.user);
    *status = 200;
    out = gp_live_policy_json(d);
    return out ? out : error(status, 503, "NOMEM", NULL, "out of memory");
}

/* Under Slurm: every node of the cluster as the core sees it, with the
 * jobs on it (those `who` may see). */
static json_t *cluster_nodes(struct daemon *d, const struct gp_identity *who,
                             unsigned *status)
{
    const struct gp_cluster *cl = gp_core_cluster(d->core);
    json_t *out = json_array();

    for (uint32_t n = 0; n < gp_cluster_nnodes(cl); n++) {
        enum gp_node_state st = gp_cluster_node_state(cl, n);
        json_t *jobs = json_array();

        if (st == GP_NODE_REMOVED)
            continue;
        for (size_t k = 0; k < d->njobs; k++) {
            const struct gp_job *j = gp_core_job(d->core, d->jobs[k]->handle);

            if (!j || !d->jobs[k]->has_proc ||
                !gp_tenancy_may(d, who, d->jobs[k]->tenant))
                continue;
            for (uint32_t s = 0; s < j->where.nslots; s++)
                if (j->where.slots[s].node == n) {
                    json_array_append_new(
                        jobs,
                        json_pack("{sIsi}", "job", (json_int_t)d->jobs[k]->id,
                                  "gpus", (int)j->where.slots[s].gpus));
                    break;
                }
        }
        json_array_append_new(
            out,
            json_pack("{sssssssssisIso}", "name", gp_cluster_node_name(cl, n),
                      "state", gp_node_state_name(st), "switch",
                      gp_cluster_switch_name(cl, gp_cluster_node_switch(cl, n)),
                      "gpu_type",
                      gp_cluster_type_name(cl, gp_cluster_node_type(cl, n)),
                      "ngpus", (int)gp_cluster_node_gpus(cl, n), "free_gpus",
                      (json_int_t)gp_cluster_node_free(cl, n), "jobs", jobs));
    }
    *status = 200;
    return json_pack("{so}", "nodes", out);
}

static json_t *nodes(struct daemon *d, const struct gp_identity *who,
                     unsigned *status)
{
    json_t *gpus;
    const struct gp_cluster *cl = gp_core_cluster(d->core);

    if (d->slurm)
        return cluster_nodes(d, who, status);
    gpus = json_array();

    for (unsigned i = 0; i < d->ngpus; i++) {
        const struct gp_gpu_sample *s = &d->samples[i];
        json_t *g =
            json_pack("{sisssssssI}", "index", (int)i, "name", d->gpus[i].name,
                      "uuid", d->gpus[i].uuid, "type", d->gpus[i].type,
                      "mem_total_mib", (json_int_t)d->gpus[i].mem_total_mib);

        if (s->t_us > 0) {
            json_t *foreign = json_array();

            for (unsigned k = 0; k < s->npids; k++)
                if (s->pids[k] && !gp_daemon_pid_is_ours(d, s->pids[k]))
                    json_array_append_new(foreign, json_integer(s->pids[k]));
            json_object_set_new(g, "foreign_pids", foreign);
            if (s->nprocs >= 0)
                json_object_set_new(g, "processes", json_integer(s->nprocs));
            json_object_set_new(g, "util_pct", json_integer(s->util_pct));
            json_object_set_new(g, "mem_used_mib",
                                json_integer(s->mem_used_mib));
            json_object_set_new(g, "sampled", json_real(secs(s->t_us)));
        }
        json_t *on = json_array();

        for (size_t k = 0; k < d->njobs; k++) {
            const struct gp_job *j = gp_core_job(d->core, d->jobs[k]->handle);
            if (j &&
                (j->state == GP_JOB_RUNNING || j->state == GP_JOB_STARTING ||
                 j->state == GP_JOB_STOPPING) &&
                j->where.nslots && (j->where.slots[0].mask >> i & 1) &&
                gp_tenancy_may(d, who, d->jobs[k]->tenant))
                json_array_append_new(on, json_integer(d->jobs[k]->id));
        }
        /* "job": the first; "jobs": every one, when co-located jobs share
         * the GPU (a policy that time-slices or packs: gandiva) */
        if (json_array_size(on) > 0)
            json_object_set(g, "job", json_array_get(on, 0));
        if (json_array_size(on) > 1)
            json_object_set(g, "jobs", on);
        json_decref(on);
        json_array_append_new(gpus, g);
    }
    *status = 200;
    return json_pack("{s[{sssssssisIso}]}", "nodes", "name", d->node_name,
                     "state", "up", "gpu_type",
                     d->cfg.backend.gpu_type[0] ? d->cfg.backend.gpu_type
                                                : d->gpus[0].type,
                     "ngpus", (int)d->ngpus, "free_gpus",
                     (json_int_t)gp_cluster_free_gpus(cl), "gpus", gpus);
}

/* Prometheus text; the per-tenant series of the tenants `who` may see. */
static char *metrics(struct daemon *d, const struct gp_identity *who,
                     int64_t now)
{
    struct gp_prom_buf b;
    char *out = NULL;
    const char *text;
    size_t len;

    gp_prom_init(&b, 0, NULL);
    gp_prom_family(&b, "gpupool_up", "1 while the daemon serves",
                   GP_PROM_GAUGE);
    gp_prom_sample(&b, "gpupool_up", NULL, 0, 1);
    gp_prom_family(&b, "gpupool_jobs_submitted_total",
                   "jobs submitted since the daemon started", GP_PROM_COUNTER);
    gp_prom_sample(&b, "gpupool_jobs_submitted_total", NULL, 0,
                   (double)d->submits);
    gp_prom_family(&b, "gpupool_job_starts_total",
                   "runs started since the daemon started", GP_PROM_COUNTER);
    gp_prom_sample(&b, "gpupool_job_starts_total", NULL, 0, (double)d->starts);
    gp_prom_family(&b, "gpupool_preemptions_total",
                   "runs preempted since the daemon started", GP_PROM_COUNTER);
    gp_prom_sample(&b, "gpupool_preemptions_total", NULL, 0,
                   (double)d->preempts);
    gp_prom_family(&b, "gpupool_idle_job_reports_total",
                   "jobs reported holding their GPUs idle (monitor.idle_after)",
                   GP_PROM_COUNTER);
    gp_prom_sample(&b, "gpupool_idle_job_reports_total", NULL, 0,
                   (double)d->idle_reports);
    gp_prom_family(&b, "gpupool_foreign_gpu_processes",
                   "processes on the GPUs that gpupool did not start",
                   GP_PROM_GAUGE);
    gp_prom_sample(&b, "gpupool_foreign_gpu_processes", NULL, 0,
                   (double)d->nforeign);
    gp_prom_family(&b, "gpupool_gpus", "GPUs of the cluster", GP_PROM_GAUGE);
    gp_prom_sample(&b, "gpupool_gpus", NULL, 0, d->ngpus);
    gp_prom_family(&b, "gpupool_gpus_free", "GPUs no job holds", GP_PROM_GAUGE);
    gp_prom_sample(&b, "gpupool_gpus_free", NULL, 0,
                   (double)gp_cluster_free_gpus(gp_core_cluster(d->core)));
    {
        static const struct {
            const char *name, *help;
        } fam[] = {
            {"gpupool_tenant_held_gpus", "GPUs a tenant's jobs hold"},
            {"gpupool_tenant_guaranteed_gpus", "a tenant's guarantee"},
            {"gpupool_tenant_entitled_gpus",
             "a tenant's fair share now (guarantee plus its part of the "
             "excess, water-filled)"},
            {"gpupool_tenant_pending_gpus", "GPUs a tenant's queue asks for"},
            {"gpupool_tenant_pending_jobs", "jobs a tenant has waiting"},
            {"gpupool_tenant_running_jobs", "jobs a tenant has running"},
            {"gpupool_tenant_usage_gpu_seconds",
             "a tenant's past GPU use, decayed with the half-life"},
        };
        for (size_t f = 0; f < sizeof(fam) / sizeof(*fam); f++) {
            gp_prom_family(&b, fam[f].name, fam[f].help, GP_PROM_GAUGE);
            for (size_t t = 0; t < gp_core_ntenants(d->core); t++) {
                const struct gp_tenant_info *ti =
                    gp_core_tenant_info(d->core, (uint32_t)t);
                const char *const lab[1][2] = {{"tenant", ti->name}};

                if (!gp_tenancy_may(d, who, ti->name))
                    continue;
                double v = f == 0   ? gp_milli_gpus(ti->held_milli)
                           : f == 1 ? ti->guarantee
                           : f == 2 ? ti->entitled
                           : f == 3 ? gp_milli_gpus(ti->pending_milli)
                           : f == 4 ? ti->npending
                           : f == 5 ? ti->nrunning
                                    : ti->usage_gpu_s;

                gp_prom_sample(&b, fam[f].name, lab, 1, v);
            }
        }
    }
    if (d->samples && d->samples[0].t_us > 0)
        gp_monitor_prom_write(&b, d->gpus, d->samples, d->ngpus);
    (void)now;
    text = gp_prom_text(&b, &len);
    if (gp_prom_error(&b, NULL) == GP_OK)
        out = strdup(text);
    gp_prom_fini(&b);
    return out;
}

/* ---- routing ------------------------------------------------------------ */

static bool job_path(const char *path, int64_t *id, const char **rest)
{
    char *end;
    long long x;

    if (strncmp(path, "/v1/jobs/", 9) != 0)
        return false;
    x = strtoll(path + 9, &end, 10);
    if (end == path + 9 || x <= 0 || (*end && *end != '/'))
        return false;
    *id = x;
    *rest = *end ? end + 1 : NULL;
    return true;
}

void gp_api_handle(struct daemon *d, struct gp_http_request *r, int64_t now,
                   unsigned *status, json_t **reply, char **text,
                   const char **type)
{
    const char *m = r->method, *p = r->path, *rest = NULL;
    int64_t id;
    bool get = strcmp(m, "GET") == 0, post = strcmp(m, "POST") == 0;

    *text = NULL;
    *type = "application/json";
    if (r->args_too_long) {
        *reply = error(status, 400, "RANGE", "query",
                       "query: at most %d arguments of limited length",
                       GP_HTTP_MAX_ARGS);
        return;
    }
    if (get && strcmp(p, "/v1/health") == 0) {
        *status = 200;
        *reply = json_pack("{sssssIsIsfsI}", "status", "ok", "version",
                           GP_VERSION, "jobs", (json_int_t)d->njobs,
                           "core_jobs", (json_int_t)gp_core_nalive(d->core),
                           "uptime_s", secs(now - d->started_us), "rounds",
                           (json_int_t)d->rounds);
        return;
    }
    /* the HTTP front refuses these already; a second line of defence */
    if (!r->who.known) {
        *reply = error(status, 401, "AUTH", NULL,
                       "who is asking is not known (a valid bearer token is "
                       "required)");
        return;
    }
    if (get && strcmp(p, "/metrics") == 0) {
        if (!d->cfg.metrics.enabled) {
            *reply = error(status, 404, "NOENT", NULL,
                           "metrics are off (metrics.enabled)");
            return;
        }
        *text = metrics(d, &r->who, now);
        *type = "text/plain; version=0.0.4";
        *status = *text ? 200 : 500;
        if (!*text)
            *reply = error(status, 500, "NOMEM", NULL, "metrics failed");
        return;
    }
    if (strcmp(p, "/v1/jobs") == 0) {
        if (post)
            *reply = submit(d, r, now, status);
        else if (get)
            *reply = list(d, r, now, status);
        else
            *reply = error(status, 405, "STATE", NULL,
                           "%s /v1/jobs: use GET or POST", m);
        return;
    }
    if (job_path(p, &id, &rest)) {
        if (get &&
            (!rest || strcmp(rest, "events") == 0 || strcmp(rest, "why") == 0))
            *reply = show(d, &r->who, id, rest, now, status);
        else if ((post && rest && strcmp(rest, "cancel") == 0) ||
                 (strcmp(m, "DELETE") == 0 && !rest))
            *reply = cancel(d, &r->who, id, now, status);
        else
            *reply = error(status, 404, "NOENT", NULL, "no route %s %s", m, p);
        return;
    }
    if (strcmp(p, "/v1/tenants") == 0) {
        if (get)
            *reply = tenants(d, &r->who, false, status);
        else if (post)
            *reply = tenant_create(d, r, now, status);
        else
            *reply = error(status, 405, "STATE", NULL,
                           "%s /v1/tenants: use GET or POST", m);
        return;
    }
    if (strncmp(p, "/v1/tenants/", 12) == 0 && p[12]) {
        if (strcmp(m, "PATCH") == 0)
            *reply = tenant_update(d, r, p + 12, now, status);
        else
            *reply =
                error(status, 405, "STATE", NULL,
                      "%s %s: use PATCH (GET /v1/tenants lists them)", m, p);
        return;
    }
    if (get && strcmp(p, "/v1/ledger") == 0) {
        *reply = tenants(d, &r->who, true, status);
        return;
    }
    if (get && strcmp(p, "/v1/nodes") == 0) {
        *reply = nodes(d, &r->who, status);
        return;
    }
    if (strcmp(p, "/v1/policy/options") == 0) {
        if (strcmp(m, "PUT") == 0)
            *reply = policy_options(d, r, status);
        else
            *reply = error(status, 405, "STATE", NULL,
                           "%s /v1/policy/options: use PUT (GET /v1/policy "
                           "shows them)",
                           m);
        return;
    }
    if (get && strcmp(p, "/v1/policy") == 0) {
        *reply = gp_live_policy_json(d);
        *status = *reply ? 200 : 503;
        if (!*reply)
            *reply = error(status, 503, "NOMEM", NULL, "out of memory");
        return;
    }
    *reply = error(status, 404, "NOENT", NULL, "no route %s %s", m, p);
}
