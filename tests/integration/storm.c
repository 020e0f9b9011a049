/* storm.c - kill -9 the daemon at random instants during a storm of
 * submissions from concurrent clients, then prove that nothing acknowledged
 * was lost or duplicated and that nothing ran twice.
 *
 * A real `gpupool serve` (4 fake GPUs, synchronous FULL, a temporary state
 * directory) first gets a blocker: `sleep 100000` on 2 GPUs. Then T client
 * threads, each with its own libcurl handle on the Unix socket, submit N
 * jobs in all, each with its own client_id ("storm-<k>"). Most ask for 4
 * GPUs and so wait behind the blocker for good (`true`, never started);
 * every --run-every'th asks for 1 GPU and really runs beside the blocker,
 * under `flock -n -E 97 <dir>/locks/storm-<k>`: a second copy of the same
 * job running at the same time would find the lock taken and fail with
 * exit code 97. Each run appends its job id to <dir>/ran.log.
 *
 * The main thread kills the daemon with SIGKILL after a seeded random
 * number of acknowledged submits (plus 0-5 ms), K times, and restarts it;
 * now and then it kills the restarted daemon again 0-200 ms after the
 * exec, while it recovers. A client whose request got no answer sends the
 * same body again (same client_id) until one comes: 201 (that try created
 * the job) or 200 (an earlier try had, and only its answer was lost).
 *
 * Checked, as the storm goes and at its end:
 *  - after each restart, the blocker is still the same process group
 *    (adopted, not started again), and no job has two process groups;
 *  - no first try is answered 200 (a fresh client_id already known);
 *  - GET /v1/jobs?all=1, paged, lists exactly the acknowledged ids, once;
 *  - after a clean stop, in the store (SQLite, read-only):
 *    integrity_check and foreign_key_check; N + 1 jobs, every client_id
 *    once with the id its client was given; one "submitted" event per job;
 *    each job's runs numbered 1.. without overlap in time, only the last
 *    one open, none open for an ended job; every runnable job completed
 *    with exit code 0 (never 97), started at most once per run row.
 *
 * Usage: storm GPUPOOL [--jobs N] [--clients T] [--kills K] [--seed S]
 *                      [--run-every R] [--keep]
 * The seed is printed; the instants still vary with the machine's speed.
 */
#define _XOPEN_SOURCE 700 /* nftw, getpgid (harness.h) */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include <jansson.h>
#include <sqlite3.h>

#include "harness.h"

#define MAX_KILLS 32
#define MAX_CLIENTS 256
#define UP_LIMIT_S 300.0 /* a bound against a hang, not a timing check */
#define STALL_LIMIT_S 300.0

struct sub {
    int64_t id;        /* the acknowledged job id; 0 = not yet */
    uint32_t attempts; /* requests sent */
    uint32_t lost;     /* of them, answered by nothing (the daemon died) */
    uint32_t busy;     /* answered 503 */
    uint32_t status;   /* the answer that acknowledged it: 201 or 200 */
};

static struct {
    struct harness h;
    uint64_t njobs, nclients, nkills, run_every, seed;
    bool keep;
    struct sub *subs;
    atomic_uint_fast64_t next, acked;
    atomic_bool failed;
    pthread_mutex_t mu;
    char why[1024];
    int64_t blocker;
    pid_t blocker_pgid;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "storm: FAIL (seed %" PRIu64 "): ", S.seed);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nstorm: the state directory is kept for a look: %s\n",
            S.h.dir);
    h_fini(&S.h, true);
    exit(1);
}

/* A client thread's failure: recorded, the main thread dies with it. */
static void client_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void client_fail(const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&S.mu);
    if (!atomic_load(&S.failed)) {
        va_start(ap, fmt);
        vsnprintf(S.why, sizeof(S.why), fmt, ap);
        va_end(ap);
        atomic_store(&S.failed, true);
    }
    pthread_mutex_unlock(&S.mu);
}

static struct harness *volatile sig_h; /* for h_on_signals */
static uint64_t rng_state;

static uint64_t rng(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool is_runnable(uint64_t k)
{
    return S.run_every > 0 && k % S.run_every == S.run_every / 2;
}

static void body_of(uint64_t k, char *buf, size_t len)
{
    if (is_runnable(k))
        snprintf(buf, len,
                 "{\"command\": [\"flock\", \"-n\", \"-E\", \"97\", "
                 "\"%s/locks/storm-%" PRIu64 "\", \"sh\", \"-c\", "
                 "\"echo $GPUPOOL_JOB_ID >> %s/ran.log; sleep 0.3\"], "
                 "\"gpus\": 1, \"name\": \"storm-run\", "
                 "\"client_id\": \"storm-%" PRIu64 "\"}",
                 S.h.dir, k, S.h.dir, k);
    else
        snprintf(buf, len,
                 "{\"command\": [\"true\"], \"gpus\": 4, \"name\": "
                 "\"storm\", \"client_id\": \"storm-%" PRIu64 "\"}",
                 k);
}

static int64_t id_of(const char *reply)
{
    json_t *j = reply ? json_loads(reply, 0, NULL) : NULL;
    int64_t id = json_integer_value(json_object_get(j, "id"));

    json_decref(j);
    return id;
}

/* One client: takes the next submission, sends it until it is answered. */
static void *client(void *arg)
{
    CURL *c = h_curl(&S.h);
    char body[1024];

    (void)arg;
    if (!c) {
        client_fail("curl_easy_init failed");
        return NULL;
    }
    for (;;) {
        uint64_t k = atomic_fetch_add(&S.next, 1);
        struct sub *s = &S.subs[k < S.njobs ? k : 0];

        if (k >= S.njobs)
            break;
        body_of(k, body, sizeof(body));
        for (;;) {
            long status;
            char *reply;
            CURLcode rc;

            if (atomic_load(&S.failed))
                goto out;
            s->attempts++;
            rc = h_call(c, "POST", "/v1/jobs", body, &status, &reply);
            if (rc != CURLE_OK || status == 503) {
                /* no answer, or a daemon going down: the same again */
                if (rc != CURLE_OK)
                    s->lost++;
                else
                    s->busy++;
                free(reply);
                h_sleep_us(2000);
                continue;
            }
            if (status != 201 && status != 200) {
                client_fail("storm-%" PRIu64 ": HTTP %ld: %s", k, status,
                            reply ? reply : "");
                free(reply);
                goto out;
            }
            if (status == 200 && s->lost == 0 && s->busy == 0) {
                client_fail("storm-%" PRIu64 ": its first try was answered "
                            "200: a fresh client_id was known already: %s",
                            k, reply ? reply : "");
                free(reply);
                goto out;
            }
            if ((s->id = id_of(reply)) <= 0) {
                client_fail("storm-%" PRIu64 ": HTTP %ld without a job id: %s",
                            k, status, reply ? reply : "");
                free(reply);
                goto out;
            }
            free(reply);
            s->status = (uint32_t)status;
            atomic_fetch_add(&S.acked, 1);
            break;
        }
    }
out:
    curl_easy_cleanup(c);
    return NULL;
}

/* ---- processes ---------------------------------------------------------- */

#define MAX_SEEN 4096

struct seen {
    size_t n;
    struct {
        int64_t job;
        pid_t pgid;
    } v[MAX_SEEN];
};

static void seen_one(void *priv, pid_t pid, int64_t job, pid_t pgid)
{
    struct seen *s = priv;

    (void)pid;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].job == job && s->v[i].pgid == pgid)
            return;
    if (s->n < MAX_SEEN) {
        s->v[s->n].job = job;
        s->v[s->n++].pgid = pgid;
    }
}

/* No job runs as two process groups; the blocker is the one it was. */
static void check_processes(const char *when)
{
    struct seen *s = calloc(1, sizeof(*s));
    size_t blocker = 0;

    if (!s)
        die("out of memory");
    h_jobs_each(&S.h, seen_one, s);
    for (size_t i = 0; i < s->n; i++) {
        for (size_t k = i + 1; k < s->n; k++)
            if (s->v[i].job == s->v[k].job)
                die("%s: job %" PRId64 " runs twice at once: process "
                    "groups %d and %d",
                    when, s->v[i].job, (int)s->v[i].pgid, (int)s->v[k].pgid);
        if (s->v[i].job == S.blocker) {
            blocker++;
            if (S.blocker_pgid == 0)
                S.blocker_pgid = s->v[i].pgid;
            else if (s->v[i].pgid != S.blocker_pgid)
                die("%s: the blocker (job %" PRId64 ") runs as process "
                    "group %d, not %d: it was started again instead of "
                    "adopted",
                    when, S.blocker, (int)s->v[i].pgid, (int)S.blocker_pgid);
        }
    }
    if (blocker != 1)
        die("%s: the blocker (job %" PRId64 ") has %zu process groups, "
            "expected 1",
            when, S.blocker, blocker);
    free(s);
}

/* ---- the daemon -----------------------------------------------------------
 */

static void start(void)
{
    if (h_start(&S.h) != 0)
        die("cannot start %s", S.h.exe);
}

static void up(const char *when)
{
    if (h_wait_up(&S.h, UP_LIMIT_S) != 0)
        die("%s: the daemon did not come up", when);
}

/* GET path; dies unless 200. Returns the parsed body. */
static json_t *get(CURL *c, const char *path)
{
    long status;
    char *reply;
    json_t *j;

    if (h_call(c, "GET", path, NULL, &status, &reply) != CURLE_OK)
        die("GET %s: no answer", path);
    if (status != 200 || !(j = json_loads(reply, 0, NULL)))
        die("GET %s: HTTP %ld: %s", path, status, reply ? reply : "");
    free(reply);
    return j;
}

static const char *state_of(CURL *c, int64_t id, char *buf, size_t len)
{
    char path[64];
    json_t *j;

    snprintf(path, sizeof(path), "/v1/jobs/%" PRId64, id);
    j = get(c, path);
    snprintf(buf, len, "%s",
             json_string_value(json_object_get(j, "state"))
                 ? json_string_value(json_object_get(j, "state"))
                 : "?");
    json_decref(j);
    return buf;
}

static void wait_state(CURL *c, int64_t id, const char *want)
{
    double t0 = h_now_s();
    char st[32];

    while (strcmp(state_of(c, id, st, sizeof(st)), want) != 0) {
        if (h_now_s() - t0 > UP_LIMIT_S)
            die("job %" PRId64 " is %s after %.0f s, expected %s", id, st,
                UP_LIMIT_S, want);
        h_sleep_us(20000);
    }
}

static void submit_blocker(CURL *c)
{
    long status;
    char *reply;
    const char *body = "{\"command\": [\"sleep\", \"100000\"], \"gpus\": 2, "
                       "\"name\": \"blocker\", \"client_id\": "
                       "\"storm-blocker\"}";

    if (h_call(c, "POST", "/v1/jobs", body, &status, &reply) != CURLE_OK ||
        status != 201 || (S.blocker = id_of(reply)) <= 0)
        die("the blocker's submit: HTTP %ld: %s", status, reply ? reply : "");
    free(reply);
    wait_state(c, S.blocker, "running");
}

/* Kill the daemon (SIGKILL) and start it again; sometimes kill the new one
 * too while it recovers. Returns the kills made during start-up. */
static unsigned kill_and_restart(unsigned round)
{
    unsigned early = 0;
    char when[64];
    int st = h_signal_wait(&S.h, SIGKILL);

    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
        die("kill %u: the daemon had exited already (status 0x%x)", round,
            (unsigned)st);
    start();
    while (rng() % 3 == 0) {
        int64_t us = (int64_t)(rng() % 200000);

        h_sleep_us(us);
        st = h_signal_wait(&S.h, SIGKILL);
        if (!WIFSIGNALED(st))
            die("kill %u: the restarted daemon exited by itself (status "
                "0x%x)",
                round, (unsigned)st);
        early++;
        printf("storm:   killed again %.1f ms after the restart\n", us / 1e3);
        start();
    }
    snprintf(when, sizeof(when), "restart %u", round);
    up(when);
    check_processes(when);
    return early;
}

/* Let the clients go on until `until` submits are acknowledged (or all,
 * or a client failed), watching that the daemon neither exits by itself
 * (a crash: the clients would retry for ever) nor stops answering. */
static void storm_until(uint64_t until)
{
    uint64_t last = atomic_load(&S.acked);
    double t_last = h_now_s();
    int st;

    while (atomic_load(&S.acked) < until && atomic_load(&S.acked) < S.njobs &&
           !atomic_load(&S.failed)) {
        if (waitpid(S.h.pid, &st, WNOHANG) == S.h.pid) {
            S.h.pid = 0;
            die("the daemon exited by itself during the storm (status "
                "0x%x) after %" PRIu64 " acknowledged submits; see %s",
                (unsigned)st, (uint64_t)atomic_load(&S.acked), S.h.log);
        }
        if (atomic_load(&S.acked) != last) {
            last = atomic_load(&S.acked);
            t_last = h_now_s();
        } else if (h_now_s() - t_last > STALL_LIMIT_S) {
            die("no submit acknowledged for %.0f s (%" PRIu64
                " so far): the daemon hangs",
                STALL_LIMIT_S, last);
        }
        h_sleep_us(1000);
    }
}

/* ---- the end: the API's list and the store ------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* Every acknowledged id, and nothing else, once in GET /v1/jobs?all=1. */
static void check_listing(CURL *c)
{
    size_t n = 0, want = S.njobs + 1;
    int64_t *got = malloc((want + 1) * sizeof(*got)), after = 0;
    int64_t *ack = malloc(want * sizeof(*ack));

    if (!got || !ack)
        die("out of memory");
    for (;;) {
        char path[128];
        json_t *j, *jobs, *v;
        size_t i;

        snprintf(path, sizeof(path), "/v1/jobs?all=1&limit=1000&after=%" PRId64,
                 after);
        j = get(c, path);
        jobs = json_object_get(j, "jobs");
        json_array_foreach(jobs, i, v)
        {
            if (n == want)
                die("GET /v1/jobs?all=1 lists more than the %zu jobs "
                    "submitted",
                    want);
            got[n++] = json_integer_value(json_object_get(v, "id"));
        }
        after = json_integer_value(json_object_get(j, "next_after"));
        i = json_array_size(jobs);
        json_decref(j);
        if (i == 0 || after <= 0)
            break;
    }
    for (uint64_t k = 0; k < S.njobs; k++)
        ack[k] = S.subs[k].id;
    ack[S.njobs] = S.blocker;
    qsort(got, n, sizeof(*got), cmp_i64);
    qsort(ack, want, sizeof(*ack), cmp_i64);
    for (size_t i = 1; i < want; i++)
        if (ack[i] == ack[i - 1])
            die("two submissions were acknowledged with the same job id "
                "%" PRId64,
                ack[i]);
    if (n != want)
        die("GET /v1/jobs?all=1 lists %zu jobs, %zu were acknowledged", n,
            want);
    for (size_t i = 0; i < n; i++)
        if (got[i] != ack[i])
            die("GET /v1/jobs?all=1: job %" PRId64 " listed, %" PRId64
                " acknowledged (the %zu-th in id order)",
                got[i], ack[i], i + 1);
    free(got);
    free(ack);
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        die("store: %s: %s", sql, sqlite3_errmsg(db));
    return st;
}

static int64_t *read_ran_log(size_t *n_out)
{
    char path[400], line[64];
    size_t n = 0, cap = 64;
    int64_t *v = malloc(cap * sizeof(*v));
    FILE *f;

    snprintf(path, sizeof(path), "%s/ran.log", S.h.dir);
    *n_out = 0;
    if (!v)
        die("out of memory");
    if (!(f = fopen(path, "r")))
        return v; /* no job ran */
    while (fgets(line, sizeof(line), f)) {
        if (n == cap && !(v = realloc(v, (cap *= 2) * sizeof(*v))))
            die("out of memory");
        v[n++] = strtoll(line, NULL, 10);
    }
    fclose(f);
    qsort(v, n, sizeof(*v), cmp_i64);
    *n_out = n;
    return v;
}

static size_t count_of(const int64_t *v, size_t n, int64_t x)
{
    size_t c = 0;

    for (size_t i = 0; i < n; i++) /* small: the runnable jobs' lines */
        c += v[i] == x;
    return c;
}

static void check_store(unsigned *runs_out, unsigned *reruns_out)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    uint8_t *seen = calloc(S.njobs, 1);
    int64_t *ran, prev_job = 0, prev_end = 0;
    uint32_t prev_run = 0;
    size_t nran, njobs = 0, nevents = 0;
    unsigned runs = 0, reruns = 0;
    bool prev_open = false;

    if (!seen)
        die("out of memory");
    if (sqlite3_open_v2(S.h.db, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        die("store %s: %s", S.h.db, sqlite3_errmsg(db));
    st = prep(db, "PRAGMA integrity_check");
    if (sqlite3_step(st) != SQLITE_ROW ||
        strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0)
        die("store: integrity_check: %s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    st = prep(db, "PRAGMA foreign_key_check");
    if (sqlite3_step(st) == SQLITE_ROW)
        die("store: foreign_key_check: a row of %s refers to nothing",
            sqlite3_column_text(st, 0));
    sqlite3_finalize(st);

    /* every client_id once, with the id its client was given */
    st = prep(db, "SELECT id, ext, state, exit_code FROM jobs ORDER BY id");
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *ext = (const char *)sqlite3_column_text(st, 1);
        const char *state = (const char *)sqlite3_column_text(st, 2);
        char *end;
        uint64_t k;

        njobs++;
        if (!ext || strncmp(ext, "storm-", 6) != 0)
            die("store: job %" PRId64 " has client_id %s: not submitted by "
                "a client",
                id, ext ? ext : "(none)");
        if (strcmp(ext, "storm-blocker") == 0) {
            if (id != S.blocker)
                die("store: the blocker is job %" PRId64 ", its client was "
                    "told %" PRId64,
                    id, S.blocker);
            continue;
        }
        k = strtoull(ext + 6, &end, 10);
        if (*end || k >= S.njobs)
            die("store: job %" PRId64 ": client_id %s was never sent", id, ext);
        if (seen[k]++)
            die("store: client_id %s is on two jobs (the second %" PRId64 ")",
                ext, id);
        if (S.subs[k].id != id)
            die("store: %s is job %" PRId64 ", its client was told %" PRId64,
                ext, id, S.subs[k].id);
        if (is_runnable(k) &&
            (strcmp(state, "completed") != 0 || sqlite3_column_int(st, 3) != 0))
            die("store: job %" PRId64 " (%s, a runnable job) is %s with exit "
                "code %d%s",
                id, ext, state, sqlite3_column_int(st, 3),
                sqlite3_column_int(st, 3) == 97
                    ? ": flock found another copy of it running"
                    : "");
        if (!is_runnable(k) &&
            (strcmp(state, "failed") == 0 || strcmp(state, "cancelled") == 0 ||
             strcmp(state, "rejected") == 0))
            die("store: job %" PRId64 " (%s) is %s", id, ext, state);
    }
    sqlite3_finalize(st);
    for (uint64_t k = 0; k < S.njobs; k++)
        if (!seen[k])
            die("store: storm-%" PRIu64 " (acknowledged as job %" PRId64
                ") is not there",
                k, S.subs[k].id);
    if (njobs != S.njobs + 1)
        die("store: %zu jobs, expected %" PRIu64, njobs, S.njobs + 1);

    /* one "submitted" event per job */
    st = prep(db, "SELECT job_id, count(*) FROM job_events WHERE kind = "
                  "'submitted' GROUP BY job_id");
    while (sqlite3_step(st) == SQLITE_ROW) {
        nevents++;
        if (sqlite3_column_int(st, 1) != 1)
            die("store: job %" PRId64 " has %d 'submitted' events",
                (int64_t)sqlite3_column_int64(st, 0),
                sqlite3_column_int(st, 1));
    }
    sqlite3_finalize(st);
    if (nevents != njobs)
        die("store: %zu jobs have a 'submitted' event, of %zu", nevents, njobs);

    /* runs: numbered 1.., one after the other, only the last one open */
    ran = read_ran_log(&nran);
    st = prep(db, "SELECT r.job_id, r.run, r.started_us, r.ended_us, "
                  "j.end_us IS NOT NULL FROM runs r JOIN jobs j ON j.id = "
                  "r.job_id ORDER BY r.job_id, r.run");
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t job = sqlite3_column_int64(st, 0);
        uint32_t run = (uint32_t)sqlite3_column_int(st, 1);
        int64_t started = sqlite3_column_int64(st, 2);
        bool open = sqlite3_column_type(st, 3) == SQLITE_NULL;
        int64_t ended = sqlite3_column_int64(st, 3);

        runs++;
        if (job != prev_job) {
            prev_run = 0;
            prev_open = false;
        } else {
            reruns++;
        }
        if (run != prev_run + 1)
            die("store: job %" PRId64 ": run %u follows run %u", job, run,
                prev_run);
        if (prev_open)
            die("store: job %" PRId64 ": run %u began while run %u was "
                "open: two runs at once",
                job, run, prev_run);
        if (prev_run && started < prev_end)
            die("store: job %" PRId64 ": run %u began at %" PRId64
                " us, before run %u ended (%" PRId64 " us)",
                job, run, started, prev_run, prev_end);
        if (open && sqlite3_column_int(st, 4))
            die("store: job %" PRId64 " has ended, its run %u is still open",
                job, run);
        if (!open && ended < started)
            die("store: job %" PRId64 ": run %u ends before it begins", job,
                run);
        prev_job = job;
        prev_run = run;
        prev_open = open;
        prev_end = ended;
    }
    sqlite3_finalize(st);
    /* a process start per run row at most (ran.log has one line a start) */
    for (size_t i = 0; i < nran; i++) {
        char sql[128];
        int nruns;

        if (i > 0 && ran[i] == ran[i - 1])
            continue;
        snprintf(sql, sizeof(sql),
                 "SELECT count(*) FROM runs WHERE job_id = %" PRId64, ran[i]);
        st = prep(db, sql);
        nruns = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
        sqlite3_finalize(st);
        if (count_of(ran, nran, ran[i]) > (size_t)nruns)
            die("job %" PRId64 " started %zu times, the store has %d runs",
                ran[i], count_of(ran, nran, ran[i]), nruns);
    }
    for (uint64_t k = 0; k < S.njobs; k++)
        if (is_runnable(k) && count_of(ran, nran, S.subs[k].id) == 0)
            die("storm-%" PRIu64 " (job %" PRId64 ") completed without "
                "running (no line in ran.log)",
                k, S.subs[k].id);
    free(ran);
    sqlite3_close(db);
    free(seen);
    *runs_out = runs;
    *reruns_out = reruns;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: storm GPUPOOL [--jobs N] [--clients T] [--kills K] "
                    "[--seed S] [--run-every R] [--keep]\n");
    exit(2);
}

static uint64_t num(const char *opt, const char *s, uint64_t lo, uint64_t hi)
{
    char *end;
    unsigned long long x;

    errno = 0;
    x = strtoull(s, &end, 10);
    if (end == s || *end || errno || s[0] == '-' || x < lo || x > hi) {
        fprintf(stderr,
                "storm: %s: expected an integer from %" PRIu64 " to %" PRIu64
                ", got '%s'\n",
                opt, lo, hi, s);
        exit(2);
    }
    return x;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"jobs", required_argument, NULL, 'n'},
        {"clients", required_argument, NULL, 't'},
        {"kills", required_argument, NULL, 'k'},
        {"seed", required_argument, NULL, 's'},
        {"run-every", required_argument, NULL, 'r'},
        {"keep", no_argument, NULL, 'K'},
        {NULL, 0, NULL, 0},
    };
    uint64_t gaps[MAX_KILLS], base = 0;
    pthread_t th[MAX_CLIENTS];
    unsigned early = 0, runs = 0, reruns = 0, kills = 0;
    uint64_t lost = 0, found = 0, recreated = 0, busy = 0, attempts = 0;
    double t0, t_storm;
    CURL *c;
    int o;

    S.njobs = 10000;
    S.nclients = 16;
    S.nkills = 4;
    S.run_every = 200;
    S.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'n':
            S.njobs = num("--jobs", optarg, 1, 10000000);
            break;
        case 't':
            S.nclients = num("--clients", optarg, 1, MAX_CLIENTS);
            break;
        case 'k':
            S.nkills = num("--kills", optarg, 0, MAX_KILLS);
            break;
        case 's':
            S.seed = num("--seed", optarg, 0, UINT64_MAX);
            break;
        case 'r':
            S.run_every = num("--run-every", optarg, 0, 10000000);
            break;
        case 'K':
            S.keep = true;
            break;
        default:
            usage();
        }
    }
    if (optind != argc - 1)
        usage();
    rng_state = S.seed;
    setvbuf(stdout, NULL, _IOLBF, 0); /* in order with stderr */
    if (!(S.subs = calloc(S.njobs, sizeof(*S.subs))))
        die("out of memory");
    curl_global_init(CURL_GLOBAL_ALL);
    if (h_init(&S.h, argv[optind], NULL, "storm") != 0)
        return 1;
    sig_h = &S.h;
    if (h_on_signals(&sig_h, true) != 0)
        die("cannot watch for signals");
    h_set(&S.h, "backend.gpus=4");
    h_set(&S.h, "store.synchronous=full");
    h_set(&S.h, "backend.kill_after=1s");
    {
        char locks[300];

        snprintf(locks, sizeof(locks), "%s/locks", S.h.dir);
        if (mkdir(locks, 0755) != 0)
            die("mkdir %s: %s", locks, strerror(errno));
    }
    /* kill instants: each daemon dies after it has acknowledged 0.5 to 1
     * times N / (K + 1) submits (then 0-5 ms more), so the kills spread
     * over the storm and all of them come before its end */
    for (uint64_t i = 0; i < S.nkills; i++)
        gaps[i] = S.njobs / (S.nkills + 1) / 2 + 1 +
                  rng() % (S.njobs / (S.nkills + 1) / 2 + 1);
    printf("storm: seed %" PRIu64 ", %" PRIu64 " jobs (every %" PRIu64
           "th runs), %" PRIu64 " clients; each daemon killed after",
           S.seed, S.njobs, S.run_every, S.nclients);
    for (uint64_t i = 0; i < S.nkills; i++)
        printf(" %" PRIu64, gaps[i]);
    printf(" acknowledged submits; state in %s\n", S.h.dir);

    start();
    up("first start");
    if (!(c = h_curl(&S.h)))
        die("curl_easy_init failed");
    submit_blocker(c);
    check_processes("before the storm");

    t0 = h_now_s();
    for (uint64_t i = 0; i < S.nclients; i++)
        if (pthread_create(&th[i], NULL, client, NULL) != 0)
            die("pthread_create failed");
    for (uint64_t i = 0; i <= S.nkills; i++) {
        int64_t us;

        /* the last turn only waits for the storm's end */
        storm_until(i < S.nkills ? base + gaps[i] : S.njobs);
        if (atomic_load(&S.failed) || i == S.nkills)
            break;
        if (atomic_load(&S.acked) >= S.njobs) {
            printf("storm: the storm ended before kill %" PRIu64 "\n", i + 1);
            break;
        }
        us = (int64_t)(rng() % 5000);
        h_sleep_us(us);
        printf("storm: kill %" PRIu64 " after %" PRIu64
               " acknowledged (+%.1f ms), at %.2f s\n",
               i + 1, (uint64_t)atomic_load(&S.acked), us / 1e3,
               h_now_s() - t0);
        kills++;
        early += kill_and_restart((unsigned)i + 1);
        base = atomic_load(&S.acked);
    }
    for (uint64_t i = 0; i < S.nclients; i++)
        pthread_join(th[i], NULL);
    if (atomic_load(&S.failed))
        die("%s", S.why);
    t_storm = h_now_s() - t0;
    for (uint64_t k = 0; k < S.njobs; k++) {
        const struct sub *s = &S.subs[k];

        attempts += s->attempts;
        lost += s->lost;
        busy += s->busy;
        found += s->status == 200;
        recreated += s->status == 201 && (s->lost || s->busy);
    }
    printf("storm: %" PRIu64 " submits acknowledged in %.1f s (%.0f/s, "
           "restarts included); %" PRIu64 " requests, %" PRIu64
           " without an answer, %" PRIu64 " answered 503\n",
           S.njobs, t_storm, (double)S.njobs / t_storm, attempts, lost, busy);
    printf("storm: retried with the same client_id: %" PRIu64
           " found stored (200: only the answer was lost), %" PRIu64
           " created by the retry (201: the lost try had not been stored)\n",
           found, recreated);

    /* the runnable jobs end; the rest wait behind the blocker */
    {
        uint64_t want = 1;
        double tw = h_now_s();

        for (uint64_t k = 0; k < S.njobs; k++)
            want += !is_runnable(k);
        for (;;) {
            json_t *j = get(c, "/v1/health");
            uint64_t live =
                (uint64_t)json_integer_value(json_object_get(j, "jobs"));

            json_decref(j);
            if (live == want)
                break;
            if (h_now_s() - tw > UP_LIMIT_S)
                die("%" PRIu64
                    " jobs still live after %.0f s, expected %" PRIu64
                    " (the runnable ones should have ended)",
                    live, UP_LIMIT_S, want);
            h_sleep_us(50000);
        }
    }
    check_processes("after the storm");
    check_listing(c);

    /* cancel the blocker, stop the daemon, read the store */
    {
        char path[64];
        long status;
        char *reply;
        int st;

        snprintf(path, sizeof(path), "/v1/jobs/%" PRId64 "/cancel", S.blocker);
        if (h_call(c, "POST", path, "{}", &status, &reply) != CURLE_OK ||
            status != 200)
            die("cancel the blocker: HTTP %ld: %s", status, reply ? reply : "");
        free(reply);
        wait_state(c, S.blocker, "cancelled");
        curl_easy_cleanup(c);
        st = h_signal_wait(&S.h, SIGTERM);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            die("SIGTERM: the daemon ended with status 0x%x", (unsigned)st);
    }
    check_store(&runs, &reruns);
    printf("storm: %u kills during the storm, %u more during start-up; "
           "the store: %" PRIu64 " jobs, each client_id once with its "
           "acknowledged id; %u runs (%u of them a job's second or later), "
           "none overlapping; integrity ok\n",
           kills, early, S.njobs + 1, runs, reruns);
    h_fini(&S.h, S.keep);
    free(S.subs);
    curl_global_cleanup();
    printf("storm: ok\n");
    return 0;
}
