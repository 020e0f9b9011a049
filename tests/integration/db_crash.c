/* db_crash.c - kill -9 the store's writer at random instants, then check
 * that nothing acknowledged was lost and nothing unacknowledged was half
 * kept.
 *
 * Each round forks a child that opens the store (synchronous FULL or
 * NORMAL, alternately) and loops: one transaction inserts a batch of 1..40
 * jobs, an event for each and a meta counter; after the commit it reports
 * the batch and its last job id on a pipe. The parent kills it with SIGKILL
 * at a random moment (sometimes before it has even opened the store, so
 * that creation and migration are killed too), then reopens the store and
 * checks: integrity_check is ok; every batch of every round is there whole
 * (as many jobs as its size, each with its one event) or not at all;
 * batches are numbered without a gap; every reported batch is there, at
 * most one more (committed, killed before it could report); the reported
 * job ids are those jobs; the meta counter names the last batch there; and
 * rounds checked before are unchanged.
 *
 * Usage: db_crash [SEED [ROUNDS]]. The seed is printed so that a failure
 * can be replayed (the kill instants still vary with the machine's speed).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/db.h"

#define MAX_ROUNDS 64
#define MAX_BATCH 40
/* an early kill comes 0..EARLY_US after the fork */
#define EARLY_US 15000
/* a child that is never killed stops here (a bug in the parent) */
#define CHILD_MAX_BATCHES 1000000

struct report {
    int32_t round;
    int32_t batch;
    int64_t last_id;
};

/* What the parent knows of one round. */
struct round {
    int32_t reported;  /* batches the child reported committed */
    int64_t *last_ids; /* their last job ids, by batch */
    size_t cap_ids;
    int32_t checked; /* batches found when the round was checked; -1 */
    uint32_t *count; /* jobs seen per batch (this check) */
    uint32_t *size;  /* their batch size */
    int64_t *max_id; /* highest job id per batch */
    size_t cap;
};

static struct round rounds[MAX_ROUNDS];
static char dir[256], path[320];

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "db_crash: FAIL: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\ndb_crash: the store is kept for a look: %s\n", path);
    exit(1);
}

static void die_diag(const char *what, int rc, const struct gp_diag *d)
{
    die("%s: %s: %s: %s", what, gp_err_name(rc), d->where, d->msg);
}

static uint64_t rng_state;
static uint64_t rnd(uint64_t n)
{
    /* splitmix64: enough for timings */
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (z ^ (z >> 31)) % n;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the child: write batches until killed ---------------------------- */

static void child_exit(const char *what, int rc, const struct gp_diag *d)
{
    fprintf(stderr, "db_crash child: %s: %s: %s: %s\n", what, gp_err_name(rc),
            d->where, d->msg);
    _exit(3);
}

static void child(int round, int fd, uint64_t seed)
{
    struct gp_db_options o = {.sync = round % 2 ? GP_DB_SYNC_NORMAL
                                                : GP_DB_SYNC_FULL};
    struct gp_diag d = {{0}, {0}};
    char ext[64], key[32], spec[256];
    struct gp_db *db;
    int rc;

    rng_state = seed;
    if ((rc = gp_db_open(&db, path, &o, &d)) != GP_OK)
        child_exit("open", rc, &d);
    snprintf(key, sizeof(key), "crash_batches_r%d", round);
    for (int32_t batch = 0; batch < CHILD_MAX_BATCHES; batch++) {
        uint32_t size = 1 + (uint32_t)rnd(MAX_BATCH);
        struct report rep = {round, batch, 0};

        if ((rc = gp_db_begin(db, &d)) != GP_OK)
            child_exit("begin", rc, &d);
        for (uint32_t i = 0; i < size; i++) {
            struct gp_db_job j = {
                .ext = ext,
                .tenant = "crash",
                .user = "tester",
                .uid = (uint32_t)round,
                .gid = (uint32_t)batch,
                .name = "batch-job",
                .spec_json = spec,
                .state = GP_JOB_PENDING,
                .submit_us = batch,
                .queued_us = batch,
                .first_start_us = GP_TIME_NONE,
                .end_us = GP_TIME_NONE,
                .restarts = size,
                .preemptions = i,
                .exit_code = GP_DB_NO_EXIT,
            };
            struct gp_db_event ev = {.ts_us = batch, .kind = "submitted"};

            snprintf(ext, sizeof(ext), "r%d-b%" PRId32 "-i%u", round, batch, i);
            /* some bulk, so that batches span pages */
            snprintf(spec, sizeof(spec),
                     "{\"argv\":[\"sleep\",\"%u\"],\"gpus\":%u,\"pad\":\"%0*d"
                     "\"}",
                     i, size % 8, 120, 0);
            if ((rc = gp_db_job_insert(db, &j, &rep.last_id, &d)) != GP_OK)
                child_exit("insert", rc, &d);
            ev.job_id = rep.last_id;
            if ((rc = gp_db_event_append(db, &ev, NULL, &d)) != GP_OK)
                child_exit("event", rc, &d);
        }
        if ((rc = gp_db_meta_set_i64(db, key, batch + 1, &d)) != GP_OK)
            child_exit("meta", rc, &d);
        if ((rc = gp_db_commit(db, &d)) != GP_OK)
            child_exit("commit", rc, &d);
        /* acknowledged: from here on it must survive */
        if (write(fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
            _exit(4);
    }
    _exit(0);
}

/* ---- the parent: kill, reopen, check ---------------------------------------
 */

static void note_report(const struct report *rep, int round)
{
    struct round *r = &rounds[round];

    if (rep->round != round || rep->batch != r->reported)
        die("round %d: report out of order (round %d batch %d, expected "
            "batch %d)",
            round, rep->round, rep->batch, r->reported);
    if ((size_t)r->reported >= r->cap_ids) {
        size_t cap = r->cap_ids ? r->cap_ids * 2 : 256;
        int64_t *p = realloc(r->last_ids, cap * sizeof(*p));

        if (!p)
            die("out of memory");
        r->last_ids = p;
        r->cap_ids = cap;
    }
    r->last_ids[r->reported++] = rep->last_id;
}

/* Read whatever reports are in the pipe, waiting at most timeout_ms.
 * Returns 0 at end of file. */
static int read_reports(int fd, int round, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    struct report rep;
    ssize_t n;

    if (poll(&p, 1, timeout_ms) <= 0)
        return 1;
    n = read(fd, &rep, sizeof(rep));
    if (n == 0)
        return 0;
    if (n < 0)
        return errno == EINTR ? 1 : 0;
    if (n != (ssize_t)sizeof(rep))
        die("round %d: a short report (%zd bytes)", round, n);
    note_report(&rep, round);
    return 1;
}

struct seen {
    int round; /* the round being checked: its jobs' events are counted */
    struct gp_db *db;
    struct gp_diag *diag;
    int nrounds;
    uint64_t jobs;
};

static int count_event(void *priv, const struct gp_db_event *ev)
{
    (void)ev;
    ++*(int *)priv;
    return 0;
}

static int see_job(void *priv, const struct gp_db_job *j)
{
    struct seen *s = priv;
    struct round *r;
    uint32_t b = j->gid;
    char want[64];

    if ((int)j->uid >= s->nrounds)
        die("job %" PRId64 " of round %u, which has not run yet", j->id,
            j->uid);
    r = &rounds[j->uid];
    if (b >= r->cap) {
        size_t cap = r->cap ? r->cap : 256;

        while (cap <= b)
            cap *= 2;
        r->count = realloc(r->count, cap * sizeof(*r->count));
        r->size = realloc(r->size, cap * sizeof(*r->size));
        r->max_id = realloc(r->max_id, cap * sizeof(*r->max_id));
        if (!r->count || !r->size || !r->max_id)
            die("out of memory");
        memset(r->count + r->cap, 0, (cap - r->cap) * sizeof(*r->count));
        memset(r->max_id + r->cap, 0, (cap - r->cap) * sizeof(*r->max_id));
        r->cap = cap;
    }
    if (r->count[b] == 0)
        r->size[b] = j->restarts;
    else if (r->size[b] != j->restarts)
        die("round %u batch %u: jobs disagree on the batch size", j->uid, b);
    if (j->preemptions >= j->restarts)
        die("job %" PRId64 ": index %u in a batch of %u", j->id, j->preemptions,
            j->restarts);
    snprintf(want, sizeof(want), "r%u-b%u-i%u", j->uid, b, j->preemptions);
    if (!j->ext || strcmp(j->ext, want) != 0)
        die("job %" PRId64 ": ext %s, expected %s", j->id,
            j->ext ? j->ext : "(none)", want);
    r->count[b]++;
    if (j->id > r->max_id[b])
        r->max_id[b] = j->id;
    if ((int)j->uid == s->round) {
        int n = 0;
        int rc = gp_db_events_each(s->db, j->id, count_event, &n, s->diag);

        if (rc != GP_OK)
            die_diag("events", rc, s->diag);
        if (n != 1)
            die("job %" PRId64 ": %d events, expected 1", j->id, n);
    }
    s->jobs++;
    return 0;
}

static void check_store(int round, uint64_t *njobs)
{
    struct gp_diag d = {{0}, {0}};
    struct seen s = {.round = round, .diag = &d, .nrounds = round + 1};
    struct gp_db *db;
    int rc;

    if ((rc = gp_db_open(&db, path, NULL, &d)) != GP_OK)
        die_diag("reopen", rc, &d);
    s.db = db;
    if ((rc = gp_db_check(db, true, &d)) != GP_OK)
        die_diag("integrity", rc, &d);
    for (int i = 0; i <= round; i++)
        if (rounds[i].count) {
            memset(rounds[i].count, 0, rounds[i].cap * sizeof(uint32_t));
            memset(rounds[i].max_id, 0, rounds[i].cap * sizeof(int64_t));
        }
    if ((rc = gp_db_jobs_each(db, GP_DB_ALL, 0, 0, see_job, &s, &d)) != GP_OK)
        die_diag("list jobs", rc, &d);

    for (int i = 0; i <= round; i++) {
        struct round *r = &rounds[i];
        int32_t batches = 0;
        char key[32];
        int64_t meta = 0;

        while ((size_t)batches < r->cap && r->count[batches] > 0)
            batches++;
        for (size_t b = (size_t)batches; b < r->cap; b++)
            if (r->count[b])
                die("round %d: batch %zu is there but batch %d is not", i, b,
                    batches);
        for (int32_t b = 0; b < batches; b++)
            if (r->count[b] != r->size[b])
                die("round %d batch %d: %u of its %u jobs (a torn batch)", i, b,
                    r->count[b], r->size[b]);
        if (batches < r->reported)
            die("round %d: %d batches reported committed, %d found (lost "
                "acknowledged jobs)",
                i, r->reported, batches);
        if (batches > r->reported + 1)
            die("round %d: %d batches found, only %d reported", i, batches,
                r->reported);
        for (int32_t b = 0; b < r->reported; b++)
            if (r->max_id[b] != r->last_ids[b])
                die("round %d batch %d: reported job %" PRId64
                    " last, found %" PRId64,
                    i, b, r->last_ids[b], r->max_id[b]);
        if (i < round && batches != r->checked)
            die("round %d: %d batches when checked, %d now", i, r->checked,
                batches);
        snprintf(key, sizeof(key), "crash_batches_r%d", i);
        rc = gp_db_meta_get_i64(db, key, &meta, &d);
        if (rc != GP_OK && !(rc == GP_ENOENT && batches == 0))
            die_diag("meta", rc, &d);
        if (meta != batches)
            die("round %d: meta says %" PRId64 " batches, %d found", i, meta,
                batches);
        r->checked = batches;
    }
    *njobs = s.jobs;
    gp_db_close(db);
}

static void rm_store(void)
{
    const char *suffix[] = {"", "-wal", "-shm"};
    char p[400];

    for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
        unlink(p);
    }
}

static void forget_rounds(void)
{
    for (int i = 0; i < MAX_ROUNDS; i++) {
        free(rounds[i].last_ids);
        free(rounds[i].count);
        free(rounds[i].size);
        free(rounds[i].max_id);
        memset(&rounds[i], 0, sizeof(rounds[i]));
    }
}

/* Fork a writer, kill it, check the store. early: kill 0..15 ms after the
 * fork, by the clock alone (often while it opens the store); otherwise
 * after 1..60 reported batches and a random 0..3 ms more. */
static void run_round(int round, bool early, uint64_t *njobs,
                      long long bytes[2])
{
    uint64_t child_seed = rnd(UINT64_MAX);
    /* half of the early kills in the first tenth: while it opens */
    double delay_s =
        early ? (double)rnd(rnd(2) ? EARLY_US / 10 : EARLY_US) / 1e6 : 0;
    int32_t want = early ? 0 : 1 + (int32_t)rnd(60);
    double extra_s = (double)rnd(3000) / 1e6;
    double start, deadline;
    int fds[2], status;
    pid_t pid;

    rounds[round].checked = -1;
    fflush(stdout);
    fflush(stderr);
    if (pipe(fds) != 0)
        die("pipe: %s", strerror(errno));
    if ((pid = fork()) < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        child(round, fds[1], child_seed);
    }
    close(fds[1]);
    start = now_s();
    deadline = start + delay_s;
    /* generous: a loaded machine may take long to fsync */
    while (rounds[round].reported < want && now_s() < start + 20)
        if (!read_reports(fds[0], round, 50))
            break;
    if (want) {
        if (rounds[round].reported < want)
            die("round %d: the child reported %d batches in 20 s", round,
                rounds[round].reported);
        deadline = now_s() + extra_s;
    }
    while (now_s() < deadline)
        if (!read_reports(fds[0], round, 1))
            break;
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    /* every report written before the kill is still in the pipe */
    while (read_reports(fds[0], round, 0))
        ;
    close(fds[0]);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        die("round %d: the child exited with status %d before the kill", round,
            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (bytes) { /* what the kill left: the file's and the WAL's sizes */
        struct stat st;
        char wal[400];

        snprintf(wal, sizeof(wal), "%s-wal", path);
        bytes[0] = stat(path, &st) == 0 ? (long long)st.st_size : -1;
        bytes[1] = stat(wal, &st) == 0 ? (long long)st.st_size : -1;
    }
    check_store(round, njobs);
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    int nrounds = 32, ncreate = 8, total_reports = 0;
    const char *tmp = getenv("TMPDIR");
    double t0 = now_s();
    uint64_t njobs = 0;

    if (argc > 1)
        seed = strtoull(argv[1], NULL, 0);
    if (argc > 2)
        nrounds = atoi(argv[2]);
    if (nrounds < 1 || nrounds > MAX_ROUNDS)
        die("rounds must be 1..%d", MAX_ROUNDS);
    rng_state = seed;
    printf("db_crash: seed %" PRIu64 ", %d rounds\n", seed, nrounds);
    snprintf(dir, sizeof(dir), "%s/gp-db-crash-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        die("mkdtemp %s: %s", dir, strerror(errno));

    /* killed while creating a store: it opens as a whole store or a new
     * one, never a half-made one */
    for (int k = 0; k < ncreate; k++) {
        snprintf(path, sizeof(path), "%s/new-%d.db", dir, k);
        long long bytes[2];

        run_round(0, true, &njobs, bytes);
        printf("new store %d: killed with %lld bytes in the file (-1: none), "
               "%lld in the WAL, %d batches reported; %d found\n",
               k, bytes[0], bytes[1], rounds[0].reported, rounds[0].checked);
        rm_store();
        forget_rounds();
    }

    /* one store, killed again and again */
    snprintf(path, sizeof(path), "%s/store.db", dir);
    for (int round = 0; round < nrounds; round++) {
        run_round(round, rnd(4) == 0, &njobs, NULL);
        total_reports += rounds[round].reported;
        printf("round %2d: %s, killed after %d reported batches; %d found; "
               "%" PRIu64 " jobs in the store\n",
               round, round % 2 ? "NORMAL" : "FULL  ", rounds[round].reported,
               rounds[round].checked, njobs);
    }
    printf("db_crash: ok: %d new stores killed, %d rounds, %d batches "
           "reported, %.1f s\n",
           ncreate, nrounds, total_reports, now_s() - t0);
    rm_store();
    rmdir(dir);
    forget_rounds();
    return 0;
}
