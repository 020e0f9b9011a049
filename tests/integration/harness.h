/* harness.h - a real `gpupool serve` under test: started in a temporary
 * state directory with fake GPUs, driven over its Unix socket with libcurl,
 * killed or stopped, and the jobs it left behind found by their
 * environment. Used by tests/integration/storm.c and bench/bench_daemon.c.
 *
 * Header-only (static inline functions, like bench/bench_util.h) so that
 * each program stays one file plus this one. The daemon's output goes to
 * <dir>/daemon.log (appended across restarts), whose tail is printed when
 * it does not come up.
 *
 * Processes: the daemon is this process's child; the jobs it starts are
 * not (their supervisors are reparented to init, by design: they outlive
 * the daemon). A job's processes carry GPUPOOL_CHECKPOINT_DIR=<dir>/jobs/..
 * in their environment, which names them as this harness's without
 * ambiguity; h_jobs_kill ends exactly those.
 */
#ifndef GPUPOOL_TESTS_HARNESS_H
#define GPUPOOL_TESTS_HARNESS_H

#if !defined(_XOPEN_SOURCE) || _XOPEN_SOURCE < 700
#error "define _XOPEN_SOURCE 700 before any #include (nftw, getpgid)"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#define H_MAX_SETS 16
#define H_MAX_REPLY (64u << 20)

struct harness {
    const char *exe;              /* the gpupool program */
    char dir[256];                /* the state directory (mkdtemp) */
    char sock[320];               /* <dir>/gp.sock */
    char db[320];                 /* <dir>/gpupool.db */
    char log[320];                /* <dir>/daemon.log */
    const char *sets[H_MAX_SETS]; /* extra --set K=V */
    size_t nsets;
    pid_t pid; /* the daemon; 0 when none */
};

static inline void h_sleep_us(int64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static inline double h_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int64_t h_realtime_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A fresh state directory under base ("/tmp" when NULL). 0 or -1. */
static inline int h_init(struct harness *h, const char *exe, const char *base,
                         const char *tag)
{
    memset(h, 0, sizeof(*h));
    h->exe = exe;
    snprintf(h->dir, sizeof(h->dir), "%s/gpupool-%s.XXXXXX",
             base ? base : "/tmp", tag);
    if (!mkdtemp(h->dir)) {
        fprintf(stderr, "harness: mkdtemp %s: %s\n", h->dir, strerror(errno));
        return -1;
    }
    snprintf(h->sock, sizeof(h->sock), "%s/gp.sock", h->dir);
    snprintf(h->db, sizeof(h->db), "%s/gpupool.db", h->dir);
    snprintf(h->log, sizeof(h->log), "%s/daemon.log", h->dir);
    return 0;
}

static inline void h_set(struct harness *h, const char *kv)
{
    if (h->nsets < H_MAX_SETS)
        h->sets[h->nsets++] = kv;
}

/* Fork and exec `gpupool serve` on the state directory; returns at once
 * (h_wait_up waits until it answers). 0 or -1. */
static inline int h_start(struct harness *h)
{
    char a_dir[300], a_sock[340], a_db[340];
    const char *argv[8 + 2 * H_MAX_SETS];
    size_t n = 0;
    pid_t pid;

    snprintf(a_dir, sizeof(a_dir), "server.state_dir=%s", h->dir);
    snprintf(a_sock, sizeof(a_sock), "server.socket=%s", h->sock);
    snprintf(a_db, sizeof(a_db), "store.db=%s", h->db);
    argv[n++] = h->exe;
    argv[n++] = "serve";
    argv[n++] = "--set";
    argv[n++] = a_dir;
    argv[n++] = "--set";
    argv[n++] = a_sock;
    argv[n++] = "--set";
    argv[n++] = a_db;
    for (size_t i = 0; i < h->nsets; i++) {
        argv[n++] = "--set";
        argv[n++] = h->sets[i];
    }
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    if ((pid = fork()) < 0) {
        fprintf(stderr, "harness: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int fd = open(h->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        sigset_t none;

        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execv(h->exe, (char *const *)(uintptr_t)argv);
        fprintf(stderr, "harness: exec %s: %s\n", h->exe, strerror(errno));
        _exit(127);
    }
    h->pid = pid;
    return 0;
}

/* The last `lines` lines of the daemon's log, on stderr. */
static inline void h_log_tail(const struct harness *h, int lines)
{
    FILE *f = fopen(h->log, "r");
    char buf[65536];
    size_t n;
    long pos;
    int seen = 0;

    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    pos = ftell(f);
    pos = pos > (long)sizeof(buf) - 1 ? pos - (long)sizeof(buf) + 1 : 0;
    fseek(f, pos, SEEK_SET);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (size_t i = n; i > 0; i--)
        if (buf[i - 1] == '\n' && ++seen > lines) {
            fprintf(stderr, "%s", buf + i);
            return;
        }
    fprintf(stderr, "%s", buf);
}

/* ---- HTTP over the socket ------------------------------------------- */

struct h_buf {
    char *p;
    size_t n;
};

static inline size_t h_on_data(char *d, size_t size, size_t nmemb, void *priv)
{
    struct h_buf *b = priv;
    size_t len = size * nmemb;
    char *p;

    if (b->n + len > H_MAX_REPLY || !(p = realloc(b->p, b->n + len + 1)))
        return 0;
    memcpy(p + b->n, d, len);
    b->p = p;
    b->n += len;
    b->p[b->n] = '\0';
    return len;
}

/* A curl handle on the daemon's socket (keep-alive: reuse it). */
static inline CURL *h_curl(const struct harness *h)
{
    CURL *c = curl_easy_init();

    if (!c)
        return NULL;
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, h->sock);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 300L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, h_on_data);
    return c;
}

/* One request; body NULL for none. On CURLE_OK, *status is the HTTP
 * status and *reply the body (malloc'd, NUL-terminated; may be NULL when
 * empty). Anything else: no answer came (connection refused or cut). */
static inline CURLcode h_call(CURL *c, const char *method, const char *path,
                              const char *body, long *status, char **reply)
{
    static const char *const json_hdr = "Content-Type: application/json";
    struct curl_slist *hdr = NULL;
    struct h_buf b = {0};
    char url[512];
    CURLcode rc;

    *status = 0;
    *reply = NULL;
    snprintf(url, sizeof(url), "http://localhost%s", path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    if (body) {
        hdr = curl_slist_append(NULL, json_hdr);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    rc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, NULL);
    curl_slist_free_all(hdr);
    if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
        *reply = b.p;
    } else {
        free(b.p);
    }
    return rc;
}

/* Wait until the daemon answers GET /v1/health, at most limit_s seconds
 * (a bound against a hang, not a timing assertion). 0, or -1 when it
 * exited or never answered (the log's tail is printed). */
static inline int h_wait_up(struct harness *h, double limit_s)
{
    CURL *c = h_curl(h);
    double t0 = h_now_s();
    int status;

    if (!c)
        return -1;
    for (;;) {
        long code;
        char *reply;

        if (h_call(c, "GET", "/v1/health", NULL, &code, &reply) == CURLE_OK &&
            code == 200) {
            free(reply);
            curl_easy_cleanup(c);
            return 0;
        }
        free(reply);
        if (waitpid(h->pid, &status, WNOHANG) == h->pid) {
            fprintf(stderr,
                    "harness: the daemon exited (status 0x%x) before it "
                    "answered; its log ends:\n",
                    (unsigned)status);
            h->pid = 0;
            break;
        }
        if (h_now_s() - t0 > limit_s) {
            fprintf(stderr,
                    "harness: the daemon did not answer in %.0f s; its log "
                    "ends:\n",
                    limit_s);
            break;
        }
        h_sleep_us(5000);
    }
    curl_easy_cleanup(c);
    h_log_tail(h, 30);
    return -1;
}

/* Send sig to the daemon and reap it. Returns its wait status, -1 if none. */
static inline int h_signal_wait(struct harness *h, int sig)
{
    int status = -1;

    if (h->pid <= 0)
        return -1;
    kill(h->pid, sig);
    while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR)
        ;
    h->pid = 0;
    return status;
}

/* ---- the daemon's jobs as processes ------------------------------------ */

/* Call fn(priv, pid, job_id, pgid) for every process that is a job of this
 * harness's daemon (GPUPOOL_CHECKPOINT_DIR under <dir>/jobs/). Processes
 * come and go during the walk; one that is gone is skipped. */
static inline void h_jobs_each(const struct harness *h,
                               void (*fn)(void *priv, pid_t pid, int64_t job_id,
                                          pid_t pgid),
                               void *priv)
{
    char prefix[400], path[64], *env;
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t plen;

    if (!d)
        return;
    snprintf(prefix, sizeof(prefix), "GPUPOOL_CHECKPOINT_DIR=%s/jobs/", h->dir);
    plen = strlen(prefix);
    if (!(env = malloc(1 << 20))) {
        closedir(d);
        return;
    }
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        int64_t job = -1;
        bool ours = false;
        ssize_t n = 0, r;
        int fd;

        if (*end || pid <= 0 || pid == getpid())
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
        if ((fd = open(path, O_RDONLY)) < 0)
            continue;
        while (n < (1 << 20) - 1 &&
               (r = read(fd, env + n, (size_t)((1 << 20) - 1 - n))) > 0)
            n += r;
        close(fd);
        env[n] = '\0';
        for (char *p = env; p < env + n; p += strlen(p) + 1) {
            if (strncmp(p, prefix, plen) == 0)
                ours = true;
            else if (strncmp(p, "GPUPOOL_JOB_ID=", 15) == 0)
                job = strtoll(p + 15, NULL, 10);
        }
        if (ours && job > 0) {
            pid_t pg = getpgid((pid_t)pid);

            if (pg > 0)
                fn(priv, (pid_t)pid, job, pg);
        }
    }
    free(env);
    closedir(d);
}

static inline void h_kill_one(void *priv, pid_t pid, int64_t job_id, pid_t pgid)
{
    (void)priv;
    (void)job_id;
    (void)pgid;
    kill(pid, SIGKILL);
}

/* SIGKILL every job process of this harness's daemon (jobs outlive the
 * daemon by design; a test must not leave them behind). */
static inline void h_jobs_kill(const struct harness *h)
{
    h_jobs_each(h, h_kill_one, NULL);
}

static inline int h_rm_one(const char *path, const struct stat *st, int flag,
                           struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* Stop the daemon (SIGKILL), its jobs, and remove the state directory. A
 * killed job's supervisor writes its status file a moment later: the
 * removal is tried again until the directory is gone (for 5 s at most). */
static inline void h_fini(struct harness *h, bool keep)
{
    if (h->pid > 0)
        h_signal_wait(h, SIGKILL);
    h_jobs_kill(h);
    if (keep || !h->dir[0])
        return;
    for (int i = 0; i < 250; i++) {
        nftw(h->dir, h_rm_one, 16, FTW_DEPTH | FTW_PHYS);
        if (access(h->dir, F_OK) != 0)
            return;
        h_sleep_us(20000);
    }
    fprintf(stderr, "harness: could not remove %s\n", h->dir);
}

/* ---- interrupted -------------------------------------------------------- */

static struct harness *volatile *h_sig_target;
static bool h_sig_keep;

static inline void *h_sig_thread(void *arg)
{
    struct harness *h;
    int sig = 0;

    sigwait((sigset_t *)arg, &sig);
    if ((h = *h_sig_target)) {
        fprintf(stderr,
                "harness: signal %d: stopping the daemon and its jobs%s\n", sig,
                h_sig_keep ? "; the state is kept" : "");
        h_fini(h, h_sig_keep);
    }
    _exit(128 + sig);
}

/* On SIGINT, SIGTERM or SIGHUP (a ^C, meson's timeout), stop the daemon
 * *target names (if any, then) and its jobs before exiting: jobs outlive
 * their daemon and would be left behind. Call it before any other thread
 * is made (they inherit the blocked mask). 0 or -1. */
static inline int h_on_signals(struct harness *volatile *target, bool keep)
{
    static sigset_t set;
    pthread_t t;

    h_sig_target = target;
    h_sig_keep = keep;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
        pthread_create(&t, NULL, h_sig_thread, &set) != 0)
        return -1;
    pthread_detach(t);
    return 0;
}

#endif
