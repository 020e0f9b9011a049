/* bench_daemon.c - `gpupool serve` measured from outside, over its Unix
 * socket, as clients see it: durable submits per second with 1, 8 and 64
 * concurrent clients, submit -> process started on an idle node, the
 * loop's turns with 10,000 jobs in the store, and the daemon's memory as
 * jobs pass through.
 *
 * Each case starts its own daemon (tests/integration/harness.h) in a fresh
 * state directory under --dir, with 4 fake GPUs, and stops it afterwards.
 * Clients are threads of this process, each with its own libcurl handle
 * kept alive across requests; on a small machine they share its cores with
 * the daemon, and the figures say so much about the machine as about the
 * daemon. A bench prints figures and ratios to targets; it never fails on
 * speed (exit 1 only when a case could not run).
 *
 * Cases (--case NAME runs one; all by default):
 *  submit  synchronous full and normal x 1, 8, 64 clients: --submits
 *          single-job POST /v1/jobs, each with a client_id, for 4 GPUs
 *          behind a blocker that holds all 4 (so nothing is spawned and
 *          the queue grows by --submits). Submits/s over the whole run and
 *          over its first and last 10%, latency p50/p99/max. Target:
 *          >= 10,000/s with p99 < 10 ms.
 *  start   an idle node (nothing else queued or running): --starts jobs,
 *          one at a time, `sh -c 'date +%s%N > FILE'` on 1 GPU. From just
 *          before the request: the answer, the supervisor letting the job
 *          go (start_us of run-1.status), and the time the command wrote
 *          (which includes starting sh and date: measured alone too).
 *          Target: p50 < 20 ms (to the command's own timestamp).
 *  round   --store-jobs 4-GPU jobs waiting behind a blocker (submitted in
 *          batches of 1,000). Then, against the same measures taken while
 *          the queue was empty: GET /v1/health (one turn of the loop, no
 *          round: nothing changed), a single submit (one turn with a round
 *          over every waiting job, an insert and a commit), GET /v1/jobs
 *          (the first 100, each with its estimated start), and a restart
 *          (SIGTERM, start, first answer: recovery of every job).
 *  memory  --pass-jobs jobs pass through: submitted in batches of 1,000
 *          behind a blocker and cancelled (8 client threads), so at most
 *          1,000 are live at once. VmRSS of the daemon (/proc/PID/status)
 *          every tenth of the way, and bytes per job passed through.
 */
#define _XOPEN_SOURCE 700 /* nftw, getpgid (harness.h) */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include <jansson.h>

#include "../tests/integration/harness.h"
#include "bench_util.h"

#define PROG "bench_daemon"
#define UP_LIMIT_S 600.0 /* a bound against a hang, not a figure */
#define MAX_CLIENTS 256

struct opts {
    const char *exe, *dir, *only;
    const char *sync; /* --sync: the submit case's one mode, or NULL */
    unsigned clients; /* --clients: the submit case's one count, or 0 */
    uint64_t submits, starts, store_jobs, pass_jobs;
};

static struct opts O;
static int failures;

/* ---- helpers --------------------------------------------------------------
 */

static double rss_mib(pid_t pid, const char *key)
{
    char path[64], line[256];
    double kib = NAN;
    size_t klen = strlen(key);
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r")))
        return NAN;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':')
            kib = strtod(line + klen + 1, NULL);
    fclose(f);
    return kib / 1024.0;
}

/* CPU seconds (user + system) the process has used, from
 * /proc/PID/stat; NAN when it cannot be read. */
static double cpu_s(pid_t pid)
{
    char path[64], buf[1024], *p;
    unsigned long ut, st;
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return NAN;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* after "pid (comm) ": state is field 3, utime 14, stime 15 */
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
               &ut, &st) != 2)
        return NAN;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The daemon of the case under way, stopped on ^C (h_on_signals). */
static struct harness *volatile current;

static void daemon_down(struct harness *h)
{
    h_fini(h, false);
    current = NULL;
}

/* A daemon for one case; 0 or -1 (said why). */
static int daemon_up(struct harness *h, const char *tag, const char *sync)
{
    static char set_sync[64];

    if (h_init(h, O.exe, O.dir, tag) != 0)
        return -1;
    current = h;
    snprintf(set_sync, sizeof(set_sync), "store.synchronous=%s", sync);
    h_set(h, "backend.gpus=4");
    h_set(h, set_sync);
    h_set(h, "backend.kill_after=1s");
    if (h_start(h) != 0 || h_wait_up(h, UP_LIMIT_S) != 0) {
        fprintf(stderr, PROG ": %s: the daemon did not come up\n", tag);
        daemon_down(h);
        return -1;
    }
    return 0;
}

static json_t *call(CURL *c, const char *method, const char *path,
                    const char *body, long *status)
{
    char *reply;
    json_t *j = NULL;

    *status = 0;
    if (h_call(c, method, path, body, status, &reply) == CURLE_OK && reply)
        j = json_loads(reply, 0, NULL);
    free(reply);
    return j;
}

/* POST a job; its id, or -1 (said why). */
static int64_t submit(CURL *c, const char *body)
{
    long status;
    json_t *j = call(c, "POST", "/v1/jobs", body, &status);
    int64_t id = json_integer_value(json_object_get(j, "id"));

    if (status != 201 || id <= 0) {
        fprintf(stderr, PROG ": submit: HTTP %ld: %s\n", status,
                json_string_value(json_object_get(j, "message"))
                    ? json_string_value(json_object_get(j, "message"))
                    : "no answer");
        id = -1;
    }
    json_decref(j);
    return id;
}

static int wait_state(CURL *c, int64_t id, const char *want)
{
    double t0 = h_now_s();
    char path[64];

    snprintf(path, sizeof(path), "/v1/jobs/%" PRId64, id);
    for (;;) {
        long status;
        json_t *j = call(c, "GET", path, NULL, &status);
        const char *st = json_string_value(json_object_get(j, "state"));
        bool ok = st && strcmp(st, want) == 0;

        json_decref(j);
        if (ok)
            return 0;
        if (h_now_s() - t0 > UP_LIMIT_S) {
            fprintf(stderr, PROG ": job %" PRId64 " never became %s\n", id,
                    want);
            return -1;
        }
        h_sleep_us(1000);
    }
}

static int64_t blocker(CURL *c)
{
    int64_t id = submit(c, "{\"command\": [\"sleep\", \"100000\"], "
                           "\"gpus\": 4, \"name\": \"blocker\"}");

    if (id > 0 && wait_state(c, id, "running") != 0)
        return -1;
    return id;
}

/* ---- many clients
 * ------------------------------------------------------------ */

enum load_kind { LOAD_SUBMIT, LOAD_CANCEL, LOAD_HEALTH };

struct load {
    const struct harness *h;
    enum load_kind kind;
    uint64_t n, first;  /* requests; the first client_id number */
    const int64_t *ids; /* LOAD_CANCEL: the jobs */
    atomic_uint_fast64_t next;
    double t0;
    double *lat_s, *done_s; /* per request */
    atomic_bool failed;
};

static void *load_client(void *arg)
{
    struct load *l = arg;
    CURL *c = h_curl(l->h);
    char body[256], path[64];

    if (!c) {
        atomic_store(&l->failed, true);
        return NULL;
    }
    for (;;) {
        uint64_t k = atomic_fetch_add(&l->next, 1);
        long status, want = 200;
        char *reply;
        double t;
        CURLcode rc;

        if (k >= l->n || atomic_load(&l->failed))
            break;
        t = h_now_s();
        switch (l->kind) {
        case LOAD_SUBMIT:
            snprintf(body, sizeof(body),
                     "{\"command\": [\"true\"], \"gpus\": 4, \"name\": "
                     "\"bench\", \"client_id\": \"bench-%" PRIu64 "\"}",
                     l->first + k);
            want = 201;
            rc = h_call(c, "POST", "/v1/jobs", body, &status, &reply);
            break;
        case LOAD_CANCEL:
            snprintf(path, sizeof(path), "/v1/jobs/%" PRId64 "/cancel",
                     l->ids[k]);
            rc = h_call(c, "POST", path, "{}", &status, &reply);
            break;
        default:
            rc = h_call(c, "GET", "/v1/health", NULL, &status, &reply);
            break;
        }
        l->done_s[k] = h_now_s();
        l->lat_s[k] = l->done_s[k] - t;
        if (rc != CURLE_OK || status != want) {
            fprintf(stderr,
                    PROG ": request %" PRIu64 ": %s, HTTP %ld: %.200s\n", k,
                    curl_easy_strerror(rc), status, reply ? reply : "");
            atomic_store(&l->failed, true);
        }
        free(reply);
    }
    curl_easy_cleanup(c);
    return NULL;
}

struct load_result {
    double wall_s, rate, rate_first, rate_last;
    double p50_ms, p99_ms, max_ms;
    double daemon_cpu_us, client_cpu_us; /* CPU time per request */
};

/* n requests of one kind from `clients` threads; 0 or -1. */
static int run_load(const struct harness *h, enum load_kind kind, uint64_t n,
                    uint64_t first, const int64_t *ids, unsigned clients,
                    struct load_result *r)
{
    struct load l = {.h = h, .kind = kind, .n = n, .first = first, .ids = ids};
    pthread_t th[MAX_CLIENTS];
    size_t tenth = n / 10 ? n / 10 : 1;
    double t1, d0, c0;
    int rc = 0;

    l.lat_s = calloc(n, sizeof(double));
    l.done_s = calloc(n, sizeof(double));
    if (!l.lat_s || !l.done_s) {
        free(l.lat_s);
        free(l.done_s);
        return -1;
    }
    d0 = cpu_s(h->pid);
    c0 = cpu_s(getpid());
    l.t0 = h_now_s();
    for (unsigned i = 0; i < clients; i++)
        pthread_create(&th[i], NULL, load_client, &l);
    for (unsigned i = 0; i < clients; i++)
        pthread_join(th[i], NULL);
    t1 = h_now_s();
    r->daemon_cpu_us = (cpu_s(h->pid) - d0) / (double)n * 1e6;
    r->client_cpu_us = (cpu_s(getpid()) - c0) / (double)n * 1e6;
    if (atomic_load(&l.failed)) {
        rc = -1;
        goto out;
    }
    r->wall_s = t1 - l.t0;
    r->rate = (double)n / r->wall_s;
    qsort(l.done_s, n, sizeof(double), bench_cmp_double);
    r->rate_first = (double)tenth / (l.done_s[tenth - 1] - l.t0);
    r->rate_last = (double)tenth / (t1 - l.done_s[n - tenth]);
    r->p50_ms = bench_quantile(l.lat_s, n, 0.5) * 1e3;
    r->p99_ms = bench_quantile(l.lat_s, n, 0.99) * 1e3;
    r->max_ms = l.lat_s[n - 1] * 1e3;
out:
    free(l.lat_s);
    free(l.done_s);
    return rc;
}

/* ---- case: submit
 * ------------------------------------------------------------ */

struct submit_fig {
    const char *sync;
    unsigned clients;
    struct load_result r;
    bool ok;
};

static struct submit_fig submit_figs[6];

static void case_submit(void)
{
    static const char *const syncs[] = {"full", "normal"};
    static const unsigned clients[] = {1, 8, 64};
    size_t f = 0;

    for (size_t s = 0; s < 2; s++)
        for (size_t ci = 0; ci < 3; ci++, f++) {
            struct submit_fig *fig = &submit_figs[f];
            struct harness h;
            char tag[32];
            CURL *c;

            if ((O.sync && strcmp(O.sync, syncs[s]) != 0) ||
                (O.clients && O.clients != clients[ci]))
                continue;
            fig->sync = syncs[s];
            fig->clients = clients[ci];
            snprintf(tag, sizeof(tag), "bench-%s-%u", syncs[s], clients[ci]);
            if (daemon_up(&h, tag, syncs[s]) != 0) {
                failures++;
                continue;
            }
            c = h_curl(&h);
            if (!c || blocker(c) < 0 ||
                run_load(&h, LOAD_SUBMIT, O.submits, 0, NULL, clients[ci],
                         &fig->r) != 0) {
                fprintf(stderr, PROG ": %s failed\n", tag);
                failures++;
            } else {
                fig->ok = true;
                printf("submit-%s-%u: submits=%" PRIu64
                       " wall_s=%.2f per_s=%.0f first10%%_per_s=%.0f "
                       "last10%%_per_s=%.0f p50_ms=%.2f p99_ms=%.2f "
                       "max_ms=%.1f rss_mib=%.1f daemon_cpu_us=%.0f "
                       "client_cpu_us=%.0f\n",
                       syncs[s], clients[ci], O.submits, fig->r.wall_s,
                       fig->r.rate, fig->r.rate_first, fig->r.rate_last,
                       fig->r.p50_ms, fig->r.p99_ms, fig->r.max_ms,
                       rss_mib(h.pid, "VmRSS"), fig->r.daemon_cpu_us,
                       fig->r.client_cpu_us);
            }
            if (c)
                curl_easy_cleanup(c);
            daemon_down(&h);
        }
}

/* ---- case: start ----------------------------------------------------------
 */

static int64_t read_ns(const char *path)
{
    char buf[64];
    ssize_t n;
    int fd = open(path, O_RDONLY);

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0 || buf[n - 1] != '\n')
        return -1; /* not written yet, or not whole */
    buf[n] = '\0';
    return strtoll(buf, NULL, 10);
}

/* start_us of a run's status file, in ns; -1 if not there. */
static int64_t let_go_ns(const struct harness *h, int64_t id)
{
    char path[512], line[256];
    int64_t us = -1;
    FILE *f;

    snprintf(path, sizeof(path), "%s/jobs/%" PRId64 "/run-1.status", h->dir,
             id);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "start_us=", 9) == 0)
            us = strtoll(line + 9, NULL, 10);
    fclose(f);
    return us < 0 ? -1 : us * 1000;
}

/* sh -c 'date +%s%N > FILE' started by this process: what the command
 * itself costs before it writes its timestamp. */
static double command_alone_ms(const char *dir, unsigned runs)
{
    double *v = calloc(runs, sizeof(double)), q;
    char file[512], cmd[600];

    if (!v)
        return NAN;
    snprintf(file, sizeof(file), "%s/alone", dir);
    snprintf(cmd, sizeof(cmd), "date +%%s%%N > %s", file);
    for (unsigned i = 0; i < runs; i++) {
        int64_t t0 = h_realtime_ns(), t;
        pid_t pid = fork();

        if (pid == 0) {
            execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
            _exit(127);
        }
        waitpid(pid, NULL, 0);
        t = read_ns(file);
        v[i] = t > 0 ? (double)(t - t0) / 1e6 : NAN;
        unlink(file);
    }
    q = bench_quantile(v, runs, 0.5);
    free(v);
    return q;
}

struct start_fig {
    const char *sync;
    double ack[3], go[3], cmd[3]; /* p50, p99, max (ms) */
    bool ok;
};

static struct start_fig start_figs[2];
static double alone_ms;

static void case_start(void)
{
    static const char *const syncs[] = {"full", "normal"};

    for (size_t s = 0; s < 2; s++) {
        struct start_fig *fig = &start_figs[s];
        double *ack = calloc(O.starts, sizeof(double)),
               *go = calloc(O.starts, sizeof(double)),
               *cmd = calloc(O.starts, sizeof(double));
        struct harness h;
        char tag[32];
        CURL *c = NULL;
        uint64_t i;

        fig->sync = syncs[s];
        snprintf(tag, sizeof(tag), "bench-start-%s", syncs[s]);
        if (!ack || !go || !cmd || daemon_up(&h, tag, syncs[s]) != 0) {
            failures++;
            goto next;
        }
        if (s == 0)
            alone_ms = command_alone_ms(h.dir, 50);
        if (!(c = h_curl(&h)))
            goto fail;
        for (i = 0; i < O.starts; i++) {
            char file[512], body[1024];
            int64_t t0, t_ack, t_cmd = -1, t_go = -1, id;
            double tw;

            snprintf(file, sizeof(file), "%s/started-%" PRIu64, h.dir, i);
            snprintf(body, sizeof(body),
                     "{\"command\": [\"sh\", \"-c\", \"date +%%s%%N > %s\"], "
                     "\"gpus\": 1, \"name\": \"start\"}",
                     file);
            t0 = h_realtime_ns();
            if ((id = submit(c, body)) < 0)
                goto fail;
            t_ack = h_realtime_ns();
            tw = h_now_s();
            while ((t_cmd = read_ns(file)) < 0) {
                if (h_now_s() - tw > UP_LIMIT_S)
                    goto fail;
                h_sleep_us(200);
            }
            /* idle again before the next: this job over */
            if (wait_state(c, id, "completed") != 0)
                goto fail;
            t_go = let_go_ns(&h, id);
            ack[i] = (double)(t_ack - t0) / 1e6;
            cmd[i] = (double)(t_cmd - t0) / 1e6;
            go[i] = t_go > 0 ? (double)(t_go - t0) / 1e6 : NAN;
        }
        fig->ack[0] = bench_quantile(ack, O.starts, 0.5);
        fig->ack[1] = bench_quantile(ack, O.starts, 0.99);
        fig->ack[2] = ack[O.starts - 1];
        fig->go[0] = bench_quantile(go, O.starts, 0.5);
        fig->go[1] = bench_quantile(go, O.starts, 0.99);
        fig->go[2] = go[O.starts - 1];
        fig->cmd[0] = bench_quantile(cmd, O.starts, 0.5);
        fig->cmd[1] = bench_quantile(cmd, O.starts, 0.99);
        fig->cmd[2] = cmd[O.starts - 1];
        fig->ok = true;
        printf("start-%s: jobs=%" PRIu64
               " answer_ms p50=%.2f p99=%.2f max=%.2f; let_go_ms p50=%.2f "
               "p99=%.2f max=%.2f; command_ms p50=%.2f p99=%.2f max=%.2f "
               "(sh+date alone p50=%.2f)\n",
               syncs[s], O.starts, fig->ack[0], fig->ack[1], fig->ack[2],
               fig->go[0], fig->go[1], fig->go[2], fig->cmd[0], fig->cmd[1],
               fig->cmd[2], alone_ms);
        goto done;
    fail:
        fprintf(stderr, PROG ": %s failed\n", tag);
        failures++;
    done:
        if (c)
            curl_easy_cleanup(c);
        daemon_down(&h);
    next:
        free(ack);
        free(go);
        free(cmd);
    }
}

/* ---- case: round ----------------------------------------------------------
 */

struct turn_fig {
    double health[2], submit[2], list[2]; /* p50, p99 (ms) */
};

static struct {
    struct turn_fig empty, full;
    double batch_ms[2]; /* batch of 1,000 submits: p50, max */
    double restart_s, rss_mib;
    uint64_t waiting;
    bool ok;
} round_fig;

/* n requests one after the other: p50 and p99 of their latency (ms). */
static int serial(CURL *c, const char *method, const char *path,
                  const char *body_fmt, uint64_t *seq, unsigned n,
                  double out[2])
{
    double *v = calloc(n, sizeof(double));
    char body[256];

    if (!v)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        long status;
        char *reply;
        double t;
        CURLcode rc;

        if (body_fmt)
            snprintf(body, sizeof(body), body_fmt, (*seq)++);
        t = h_now_s();
        rc = h_call(c, method, path, body_fmt ? body : NULL, &status, &reply);
        v[i] = (h_now_s() - t) * 1e3;
        free(reply);
        if (rc != CURLE_OK || status >= 300) {
            fprintf(stderr, PROG ": %s %s: HTTP %ld\n", method, path, status);
            free(v);
            return -1;
        }
    }
    out[0] = bench_quantile(v, n, 0.5);
    out[1] = bench_quantile(v, n, 0.99);
    free(v);
    return 0;
}

static int turns(CURL *c, uint64_t *seq, struct turn_fig *f)
{
    static const char single[] =
        "{\"command\": [\"true\"], \"gpus\": 4, \"name\": \"one\", "
        "\"client_id\": \"one-%" PRIu64 "\"}";

    return serial(c, "GET", "/v1/health", NULL, seq, 200, f->health) ||
           serial(c, "POST", "/v1/jobs", single, seq, 200, f->submit) ||
           serial(c, "GET", "/v1/jobs?limit=100", NULL, seq, 50, f->list);
}

static void case_round(void)
{
    struct harness h;
    uint64_t seq = 0, nbatch = (O.store_jobs + 999) / 1000;
    double *bt = calloc(nbatch ? nbatch : 1, sizeof(double));
    char *body = malloc(1000 * 128 + 64);
    CURL *c = NULL;

    if (!bt || !body || daemon_up(&h, "bench-round", "full") != 0) {
        failures++;
        free(bt);
        free(body);
        return;
    }
    if (!(c = h_curl(&h)) || blocker(c) < 0 || turns(c, &seq, &round_fig.empty))
        goto fail;
    for (uint64_t b = 0; b < nbatch; b++) {
        size_t len = 0;
        long status;
        char *reply;
        double t;
        uint64_t n =
            O.store_jobs - b * 1000 < 1000 ? O.store_jobs - b * 1000 : 1000;

        len += (size_t)sprintf(body + len, "{\"jobs\": [");
        for (uint64_t i = 0; i < n; i++)
            len += (size_t)sprintf(body + len,
                                   "%s{\"command\": [\"true\"], \"gpus\": 4, "
                                   "\"name\": \"queued\"}",
                                   i ? ", " : "");
        sprintf(body + len, "]}");
        t = h_now_s();
        if (h_call(c, "POST", "/v1/jobs", body, &status, &reply) != CURLE_OK ||
            status != 201) {
            fprintf(stderr, PROG ": batch submit: HTTP %ld: %.200s\n", status,
                    reply ? reply : "");
            free(reply);
            goto fail;
        }
        free(reply);
        bt[b] = (h_now_s() - t) * 1e3;
    }
    round_fig.batch_ms[0] = bench_quantile(bt, nbatch, 0.5);
    round_fig.batch_ms[1] = bt[nbatch - 1];
    if (turns(c, &seq, &round_fig.full))
        goto fail;
    round_fig.waiting = O.store_jobs + 200 + 200; /* + the single submits */
    round_fig.rss_mib = rss_mib(h.pid, "VmRSS");
    {
        double t;
        int st = h_signal_wait(&h, SIGTERM);

        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, PROG ": SIGTERM: status 0x%x\n", (unsigned)st);
            goto fail;
        }
        t = h_now_s();
        if (h_start(&h) != 0 || h_wait_up(&h, UP_LIMIT_S) != 0)
            goto fail;
        round_fig.restart_s = h_now_s() - t;
    }
    round_fig.ok = true;
    printf(
        "round: waiting=%" PRIu64
        " | empty queue: health_ms p50=%.2f p99=%.2f, submit_ms "
        "p50=%.2f p99=%.2f, list100_ms p50=%.2f | %" PRIu64
        " waiting: health_ms p50=%.2f p99=%.2f, submit_ms p50=%.2f "
        "p99=%.2f, list100_ms p50=%.2f | batch1000_ms p50=%.1f "
        "max=%.1f | restart_s=%.2f rss_mib=%.1f\n",
        round_fig.waiting, round_fig.empty.health[0], round_fig.empty.health[1],
        round_fig.empty.submit[0], round_fig.empty.submit[1],
        round_fig.empty.list[0], round_fig.waiting, round_fig.full.health[0],
        round_fig.full.health[1], round_fig.full.submit[0],
        round_fig.full.submit[1], round_fig.full.list[0], round_fig.batch_ms[0],
        round_fig.batch_ms[1], round_fig.restart_s, round_fig.rss_mib);
    goto out;
fail:
    fprintf(stderr, PROG ": round failed\n");
    failures++;
out:
    if (c)
        curl_easy_cleanup(c);
    daemon_down(&h);
    free(bt);
    free(body);
}

/* ---- case: memory
 * ------------------------------------------------------------ */

static struct {
    double rss0, rss[11], hwm;
    uint64_t at[11];
    size_t n;
    double wall_s;
    bool ok;
} mem_fig;

static void case_memory(void)
{
    struct harness h;
    CURL *c = NULL;
    char *body = malloc(1000 * 128 + 64);
    int64_t *ids = calloc(1000, sizeof(*ids));
    uint64_t passed = 0, step = O.pass_jobs / 10 ? O.pass_jobs / 10 : 1;
    double t0;

    if (!body || !ids || daemon_up(&h, "bench-memory", "full") != 0) {
        free(body);
        free(ids);
        failures++;
        return;
    }
    if (!(c = h_curl(&h)) || blocker(c) < 0)
        goto fail;
    mem_fig.rss0 = rss_mib(h.pid, "VmRSS");
    t0 = h_now_s();
    while (passed < O.pass_jobs) {
        uint64_t n = O.pass_jobs - passed < 1000 ? O.pass_jobs - passed : 1000;
        struct load_result r;
        size_t len = 0, i;
        long status;
        json_t *j, *v;

        len += (size_t)sprintf(body + len, "{\"jobs\": [");
        for (i = 0; i < n; i++)
            len += (size_t)sprintf(body + len,
                                   "%s{\"command\": [\"true\"], \"gpus\": 4, "
                                   "\"name\": \"pass\"}",
                                   i ? ", " : "");
        sprintf(body + len, "]}");
        j = call(c, "POST", "/v1/jobs", body, &status);
        if (status != 201 || json_array_size(json_object_get(j, "jobs")) != n) {
            fprintf(stderr, PROG ": batch submit: HTTP %ld\n", status);
            json_decref(j);
            goto fail;
        }
        json_array_foreach(json_object_get(j, "jobs"), i, v) ids[i] =
            json_integer_value(json_object_get(v, "id"));
        json_decref(j);
        if (run_load(&h, LOAD_CANCEL, n, 0, ids, 8, &r) != 0)
            goto fail;
        if ((passed + n) / step != passed / step && mem_fig.n < 11) {
            mem_fig.at[mem_fig.n] = passed + n;
            mem_fig.rss[mem_fig.n++] = rss_mib(h.pid, "VmRSS");
            printf("memory: %" PRIu64 " jobs passed, VmRSS %.1f MiB, %.0f "
                   "jobs/s\n",
                   passed + n, mem_fig.rss[mem_fig.n - 1],
                   (double)(passed + n) / (h_now_s() - t0));
        }
        passed += n;
    }
    mem_fig.wall_s = h_now_s() - t0;
    mem_fig.hwm = rss_mib(h.pid, "VmHWM");
    mem_fig.ok = mem_fig.n > 0;
    goto out;
fail:
    fprintf(stderr, PROG ": memory failed\n");
    failures++;
out:
    if (c)
        curl_easy_cleanup(c);
    daemon_down(&h);
    free(body);
    free(ids);
}

/* ---- main ---------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [--case submit|start|round|memory] [--dir DIR]\n"
            "       [--gpupool PATH] [--submits N] [--starts N]\n"
            "       [--store-jobs N] [--pass-jobs N] [--sync full|normal]\n"
            "       [--clients 1|8|64]\n"
            "  --dir DIR         where the daemons' state goes (default "
            "/var/tmp)\n"
            "  --gpupool PATH    the gpupool program (default: this build's)\n"
            "  --submits N       per submit case (default 10000)\n"
            "  --sync MODE       the submit case under this mode only\n"
            "  --clients N       the submit case with this many clients only\n"
            "  --starts N        jobs of the start case (default 50)\n"
            "  --store-jobs N    jobs waiting in the round case (default "
            "10000)\n"
            "  --pass-jobs N     jobs through the daemon in the memory case "
            "(default 100000)\n");
}

static void ratio(const char *what, double got, double target, bool more)
{
    bool met = more ? got >= target : got < target;

    printf("  %-44s %12.2f  target %s %-8g %-6s ratio %.2f\n", what, got,
           more ? ">=" : "<", target, met ? "met" : "MISSED", got / target);
}

int main(int argc, char **argv)
{
    enum {
        O_CASE = 256,
        O_DIR,
        O_EXE,
        O_SUBMITS,
        O_STARTS,
        O_STORE,
        O_PASS,
        O_SYNC_MODE,
        O_NCLIENTS
    };
    static const struct option longopts[] = {
        {"case", required_argument, NULL, O_CASE},
        {"dir", required_argument, NULL, O_DIR},
        {"gpupool", required_argument, NULL, O_EXE},
        {"submits", required_argument, NULL, O_SUBMITS},
        {"starts", required_argument, NULL, O_STARTS},
        {"store-jobs", required_argument, NULL, O_STORE},
        {"pass-jobs", required_argument, NULL, O_PASS},
        {"sync", required_argument, NULL, O_SYNC_MODE},
        {"clients", required_argument, NULL, O_NCLIENTS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;

    O.exe = GP_GPUPOOL_PATH;
    O.dir = "/var/tmp";
    O.submits = 10000;
    O.starts = 50;
    O.store_jobs = 10000;
    O.pass_jobs = 100000;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_CASE:
            O.only = optarg;
            if (strcmp(optarg, "submit") && strcmp(optarg, "start") &&
                strcmp(optarg, "round") && strcmp(optarg, "memory")) {
                fprintf(stderr,
                        PROG ": --case: expected submit, start, round or "
                             "memory, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_DIR:
            O.dir = optarg;
            break;
        case O_SYNC_MODE:
            if (strcmp(optarg, "full") && strcmp(optarg, "normal")) {
                fprintf(stderr,
                        PROG ": --sync: expected full or normal, got '%s'\n",
                        optarg);
                return 2;
            }
            O.sync = optarg;
            break;
        case O_NCLIENTS:
            if (strcmp(optarg, "1") && strcmp(optarg, "8") &&
                strcmp(optarg, "64")) {
                fprintf(stderr,
                        PROG ": --clients: expected 1, 8 or 64, got '%s'\n",
                        optarg);
                return 2;
            }
            O.clients = (unsigned)atoi(optarg);
            break;
        case O_EXE:
            O.exe = optarg;
            break;
        case O_SUBMITS:
            if (bench_parse_u64(PROG, "--submits", optarg, 100, 100000000,
                                &O.submits))
                return 2;
            break;
        case O_STARTS:
            if (bench_parse_u64(PROG, "--starts", optarg, 1, 100000, &O.starts))
                return 2;
            break;
        case O_STORE:
            if (bench_parse_u64(PROG, "--store-jobs", optarg, 1, 10000000,
                                &O.store_jobs))
                return 2;
            break;
        case O_PASS:
            if (bench_parse_u64(PROG, "--pass-jobs", optarg, 1000, 100000000,
                                &O.pass_jobs))
                return 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (access(O.exe, X_OK) != 0) {
        fprintf(stderr, PROG ": --gpupool %s: %s\n", O.exe, strerror(errno));
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (h_on_signals(&current, false) != 0) {
        fprintf(stderr, PROG ": cannot watch for signals\n");
        return 1;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    printf(PROG ": %s, state under %s (%s), %ld CPUs\n", O.exe, O.dir,
           bench_fs_name(O.dir), sysconf(_SC_NPROCESSORS_ONLN));
    if (!O.only || !strcmp(O.only, "submit"))
        case_submit();
    if (!O.only || !strcmp(O.only, "start"))
        case_start();
    if (!O.only || !strcmp(O.only, "round"))
        case_round();
    if (!O.only || !strcmp(O.only, "memory"))
        case_memory();

    printf("\nsummary:\n");
    for (size_t f = 0; f < 6; f++) {
        char what[80];

        if (!submit_figs[f].ok)
            continue;
        snprintf(what, sizeof(what), "submits/s, %s, %u client%s",
                 submit_figs[f].sync, submit_figs[f].clients,
                 submit_figs[f].clients > 1 ? "s" : "");
        ratio(what, submit_figs[f].r.rate, 10000, true);
        snprintf(what, sizeof(what), "submit p99 ms, %s, %u client%s",
                 submit_figs[f].sync, submit_figs[f].clients,
                 submit_figs[f].clients > 1 ? "s" : "");
        ratio(what, submit_figs[f].r.p99_ms, 10, false);
    }
    for (size_t s = 0; s < 2; s++) {
        char what[80];

        if (!start_figs[s].ok)
            continue;
        snprintf(what, sizeof(what), "submit -> command runs, p50 ms, %s",
                 start_figs[s].sync);
        ratio(what, start_figs[s].cmd[0], 20, false);
    }
    if (round_fig.ok)
        printf("  %-44s %12.2f  (empty queue: %.2f)\n",
               "submit with 10k waiting, p50 ms", round_fig.full.submit[0],
               round_fig.empty.submit[0]);
    if (mem_fig.ok) {
        /* the growth after the first tenth: the first holds the start-up
         * of the working set (1,000 live jobs, SQLite's page cache) */
        double last = mem_fig.rss[mem_fig.n - 1];
        double per_job =
            mem_fig.n > 1
                ? (last - mem_fig.rss[0]) * 1048576.0 /
                      (double)(mem_fig.at[mem_fig.n - 1] - mem_fig.at[0])
                : NAN;

        printf("  %-44s %12.1f  MiB after %" PRIu64 " jobs (%.1f before "
               "the first, %.1f after the first tenth; peak %.1f); %.0f "
               "bytes per job after the first tenth; %.0f jobs/s\n",
               "daemon VmRSS", last, mem_fig.at[mem_fig.n - 1], mem_fig.rss0,
               mem_fig.rss[0], mem_fig.hwm, per_job,
               (double)mem_fig.at[mem_fig.n - 1] / mem_fig.wall_s);
        if (mem_fig.at[mem_fig.n - 1] < 1000000 && mem_fig.n > 1)
            printf("  %-44s %12.1f  MiB at 1,000,000 jobs, extrapolated "
                   "linearly from that growth\n",
                   "",
                   last + per_job * (1e6 - (double)mem_fig.at[mem_fig.n - 1]) /
                              1048576.0);
    }
    curl_global_cleanup();
    return failures ? 1 : 0;
}
