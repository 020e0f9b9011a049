/* supervisor.c - gpupool-supervisor: one per run of a job, started by
 * gp_local_start (local.c), never by hand.
 *
 * It gets the spec on fd 3 (local_priv.h), leaves the daemon (a new
 * session, one more fork, no parent-death signal), sets up the job's
 * files, user, environment and checkpoint directory, forks the job as the
 * leader of its own process group, writes run-<n>.pid, waits, and writes
 * run-<n>.status before it exits: the exit status is never lost, whatever
 * became of the daemon.
 *
 * Key decisions:
 * - The supervisor keeps the daemon's user; only the job drops to the
 *   run-as user (between fork and exec). So the job can neither kill its
 *   supervisor nor forge its status, and its files stay the daemon's.
 * - It is a child subreaper and the job leader's parent: it reaps the
 *   leader only after it has SIGKILLed what the job left behind (its group,
 *   and orphans reparented to it), so the group id it signals is never
 *   another's, and no process of a job outlives the job's end.
 * - Signals for the job come as a queued control signal carrying the
 *   signal to send; plain SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and
 *   SIGUSR2 sent to the supervisor are passed on the same way.
 *
 * Single-threaded, so the child may call anything between fork and exec.
 */
#define _GNU_SOURCE /* close_range, getgrouplist, setgroups, prctl */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/local_priv.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define MAX_GROUPS 65536

struct spec {
    uint64_t job;
    uint64_t run, restart;
    char **argv;
    size_t nargv;
    char **env;
    size_t nenv;
    const char *cwd, *user, *devices, *job_dir, *ckpt;
    uint64_t uid, submitter, sig, grace;
    bool has_uid, has_end;
};

/* What the run knows so far; fail_start reports with it. */
struct sup {
    struct spec s;
    int out_fd, err_fd;  /* the job's stdout / stderr files */
    pid_t child;         /* the job, once forked */
    int64_t begin_us;    /* when the supervisor began */
    int64_t start_us;    /* when the job was let go */
    char ckpt[PATH_MAX]; /* the checkpoint directory */
    bool ckpt_by_user;   /* created by the job's user, not here */
    char name[256], home[PATH_MAX], shell[PATH_MAX];
    uid_t uid;
    gid_t gid;
    gid_t *groups;
    int ngroups;
    char *raw;  /* the spec as received; s points into it */
    char **env; /* the job's environment */
};

/* One run per process: the state is static, so that everything stays
 * reachable to the end (a leak checker has nothing to say). */
static struct sup sup;

static volatile sig_atomic_t job_pgid;   /* 0 until the job exists */
static volatile sig_atomic_t job_reaped; /* its leader is reaped: hands off */
static int sig_max;                      /* SIGRTMAX, read once */

static void pass_on(int sig)
{
    int e = errno;

    if (job_pgid > 0 && !job_reaped)
        kill(-(pid_t)job_pgid, sig);
    errno = e;
}

static void on_forward(int sig)
{
    pass_on(sig);
}

static void on_ctl(int sig, siginfo_t *si, void *uc)
{
    int target = si->si_value.sival_int;

    (void)sig;
    (void)uc;
    if (si->si_code == SI_QUEUE && target >= 0 && target <= sig_max)
        pass_on(target);
}

static const int forwarded[] = {SIGHUP,  SIGINT,  SIGQUIT,
                                SIGTERM, SIGUSR1, SIGUSR2};

static void install_handlers(void)
{
    struct sigaction sa;

    sig_max = SIGRTMAX;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_forward;
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
        sigaction(forwarded[i], &sa, NULL);
    sa.sa_handler = NULL;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sa.sa_sigaction = on_ctl;
    sigaction(gp__local_ctl_signal(), &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* ---- talking to the daemon ---------------------------------------------- */

static bool daemon_there = true;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int n;

    if (!daemon_there)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(buf) - 2)
        n = (int)sizeof(buf) - 2;
    buf[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t w =
            send(GP__LOCAL_CTL_FD, buf + off, (size_t)(n - off), MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            daemon_there = false;
            return;
        }
        off += (int)w;
    }
}

/* Wait for the daemon's "go". False: it went away (or said otherwise). */
static bool wait_go(void)
{
    char buf[4];
    size_t len = 0;

    while (len < 3) {
        ssize_t n = read(GP__LOCAL_CTL_FD, buf + len, 3 - len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        len += (size_t)n;
    }
    return !memcmp(buf, "go\n", 3);
}

/* ---- the spec ------------------------------------------------------------ */

static int num(const char *v, uint64_t *out)
{
    char *end;

    if (!*v || *v == '-')
        return -1;
    errno = 0;
    *out = strtoull(v, &end, 10);
    return errno || *end ? -1 : 0;
}

/* Read exactly n bytes from the daemon. */
static bool read_exact(char *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(GP__LOCAL_CTL_FD, buf + got, n - got);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

/* The spec: "<len>\n" and len bytes. NULL when malformed or cut short. */
static char *read_spec(size_t *len)
{
    char head[24], *buf;
    size_t n = 0;
    uint64_t v;

    for (;;) {
        if (n == sizeof(head) - 1 || !read_exact(head + n, 1))
            return NULL;
        if (head[n] == '\n')
            break;
        n++;
    }
    head[n] = '\0';
    if (num(head, &v) < 0 || v == 0 ||
        v > (uint64_t)GP_LOCAL_SPEC_MAX + (1u << 20))
        return NULL;
    buf = malloc((size_t)v);
    if (buf && !read_exact(buf, (size_t)v)) {
        free(buf);
        return NULL;
    }
    *len = (size_t)v;
    return buf;
}

/* Split the records; the strings point into buf. */
static int parse_spec(char *buf, size_t len, struct spec *s)
{
    size_t nrec = 0;

    memset(s, 0, sizeof(*s));
    if (len == 0 || buf[len - 1] != '\0')
        return -1;
    for (size_t i = 0; i < len; i++)
        nrec += buf[i] == '\0';
    s->argv = calloc(nrec + 1, sizeof(char *));
    s->env = calloc(nrec + 1, sizeof(char *));
    if (!s->argv || !s->env)
        return -1;
    for (char *r = buf, *next; r < buf + len; r = next) {
        char *v = strchr(r, '=');
        int bad = 0;

        next = r + strlen(r) + 1;
        if (!v)
            return -1;
        *v++ = '\0';
        if (!strcmp(r, "arg"))
            s->argv[s->nargv++] = v;
        else if (!strcmp(r, "env"))
            s->env[s->nenv++] = v;
        else if (!strcmp(r, "job"))
            bad = num(v, &s->job);
        else if (!strcmp(r, "run"))
            bad = num(v, &s->run);
        else if (!strcmp(r, "restart"))
            bad = num(v, &s->restart);
        else if (!strcmp(r, "uid")) {
            bad = num(v, &s->uid);
            s->has_uid = true;
        } else if (!strcmp(r, "submitter"))
            bad = num(v, &s->submitter);
        else if (!strcmp(r, "signal"))
            bad = num(v, &s->sig);
        else if (!strcmp(r, "grace"))
            bad = num(v, &s->grace);
        else if (!strcmp(r, "cwd"))
            s->cwd = v;
        else if (!strcmp(r, "user"))
            s->user = v;
        else if (!strcmp(r, "devices"))
            s->devices = v;
        else if (!strcmp(r, "job_dir"))
            s->job_dir = v;
        else if (!strcmp(r, "ckpt"))
            s->ckpt = v;
        else if (!strcmp(r, "end"))
            s->has_end = true;
        /* "end" comes last, and only last */
        if (bad || s->has_end != (next >= buf + len))
            return -1;
        /* "version" and unknown keys: nothing to do */
    }
    if (!s->has_end || !s->job || !s->run || !s->nargv || !s->job_dir ||
        !s->devices || s->job_dir[0] != '/' || (!s->user && !s->has_uid) ||
        !s->sig || s->sig > (uint64_t)SIGRTMAX)
        return -1;
    return 0;
}

/* ---- run files and messages --------------------------------------------- */

static void iso_time(int64_t us, char *buf, size_t cap)
{
    time_t t = (time_t)(us / GP_US_PER_S);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void write_fd(int fd, const char *buf, size_t len)
{
    while (fd >= 0 && len) {
        ssize_t n = write(fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

/* "==> gpupool: job 42 run 3 ... <==" into the job's stderr file. */
static void banner(int fd, const struct sup *sp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void banner(int fd, const struct sup *sp, const char *fmt, ...)
{
    char msg[768], line[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    n = snprintf(line, sizeof(line), "==> gpupool: job %llu run %llu %s <==\n",
                 (unsigned long long)sp->s.job, (unsigned long long)sp->s.run,
                 msg);
    if (n > 0)
        write_fd(fd, line,
                 (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static int write_run_file(const struct sup *sp, const char *ext,
                          const char *text)
{
    char name[64];

    snprintf(name, sizeof(name), "run-%llu.%s", (unsigned long long)sp->s.run,
             ext);
    return gp__local_write_atomic(sp->s.job_dir, name, text, strlen(text),
                                  0644);
}

static int write_pid_file(const struct sup *sp)
{
    char text[512], boot[40];
    uint64_t sstart, jstart;

    if (gp__local_boot_id(boot) != GP_OK ||
        gp__local_proc_stat(getpid(), &sstart, NULL) != GP_OK ||
        gp__local_proc_stat(sp->child, &jstart, NULL) != GP_OK)
        return EIO;
    snprintf(text, sizeof(text),
             "version=1\njob=%llu\nrun=%llu\nboot_id=%s\n"
             "supervisor_pid=%ld\nsupervisor_start=%llu\n"
             "job_pid=%ld\njob_start=%llu\nstart_us=%lld\n",
             (unsigned long long)sp->s.job, (unsigned long long)sp->s.run, boot,
             (long)getpid(), (unsigned long long)sstart, (long)sp->child,
             (unsigned long long)jstart, (long long)sp->start_us);
    return write_run_file(sp, "pid", text);
}

/* Reap the job if there is one, record start_failed everywhere it can be
 * seen (status file, the job's stderr file, the daemon) and exit. */
static void fail_start(struct sup *sp, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

static void fail_start(struct sup *sp, int err, const char *fmt, ...)
{
    char reason[512], text[1024];
    va_list ap;
    int64_t end;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    gp__local_one_line(reason);
    if (sp->child > 0) {
        job_reaped = 1;
        kill(sp->child, SIGKILL); /* our unreaped child: safe */
        while (waitpid(sp->child, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    end = gp__local_now_us();
    banner(sp->err_fd, sp, "failed to start: %s", reason);
    if (sp->s.job_dir && sp->s.run) {
        snprintf(text, sizeof(text),
                 "version=1\njob=%llu\nrun=%llu\nkind=start_failed\n"
                 "error=%s\nreason=%s\nstart_us=%lld\nend_us=%lld\n",
                 (unsigned long long)sp->s.job, (unsigned long long)sp->s.run,
                 gp_err_name(err), reason, (long long)sp->begin_us,
                 (long long)end);
        write_run_file(sp, "status", text);
    }
    say("failed %s %s", gp_err_name(err), reason);
    exit(1);
}

/* ---- setting up ---------------------------------------------------------- */

static int open_output(struct sup *sp, const char *name)
{
    char path[PATH_MAX];
    int fd;

    snprintf(path, sizeof(path), "%s/%s", sp->s.job_dir, name);
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
              0600);
    if (fd < 0)
        fail_start(sp, GP_EIO, "open %s: %s", path, strerror(errno));
    return fd;
}

/* The user reads its output: the files are the user's. */
static void chown_output(struct sup *sp, int fd, const char *name)
{
    struct stat st;

    if (geteuid() == 0 && fstat(fd, &st) == 0 &&
        (st.st_uid != sp->uid || st.st_gid != sp->gid) &&
        fchown(fd, sp->uid, sp->gid) < 0)
        fail_start(sp, GP_EIO, "chown %s/%s: %s", sp->s.job_dir, name,
                   strerror(errno));
}

/* Who the job runs as, and whether it may. */
static void resolve_user(struct sup *sp)
{
    const struct spec *s = &sp->s;
    uid_t euid = geteuid();
    struct passwd *pw;
    int n;

    errno = 0;
    pw = s->user ? getpwnam(s->user) : getpwuid((uid_t)s->uid);
    if (!pw) {
        int e = errno;

        /* "not found" comes as 0, ENOENT, ESRCH, EBADF or EPERM */
        if (e && e != ENOENT && e != ESRCH && e != EBADF && e != EPERM)
            fail_start(sp, GP_EIO, "looking up user %s: %s",
                       s->user ? s->user : "(uid)", strerror(e));
        if (s->user)
            fail_start(sp, GP_ENOENT, "user '%s' does not exist", s->user);
        fail_start(sp, GP_ENOENT, "user with uid %llu does not exist",
                   (unsigned long long)s->uid);
    }
    if (strlen(pw->pw_name) >= sizeof(sp->name) ||
        strlen(pw->pw_dir) >= sizeof(sp->home) ||
        strlen(pw->pw_shell) >= sizeof(sp->shell))
        fail_start(sp, GP_EINVAL, "user '%s': passwd entry too long",
                   pw->pw_name);
    snprintf(sp->name, sizeof(sp->name), "%s", pw->pw_name);
    snprintf(sp->home, sizeof(sp->home), "%s", pw->pw_dir);
    snprintf(sp->shell, sizeof(sp->shell), "%s",
             pw->pw_shell[0] ? pw->pw_shell : "/bin/sh");
    sp->uid = pw->pw_uid;
    sp->gid = pw->pw_gid;
    if (euid != 0 && sp->uid != euid)
        fail_start(sp, GP_EINVAL,
                   "gpupool runs as uid %u and can only run jobs as that "
                   "user, not as '%s' (uid %u)",
                   (unsigned)euid, sp->name, (unsigned)sp->uid);
    if (s->submitter != 0 && sp->uid != (uid_t)s->submitter)
        fail_start(sp, GP_EINVAL,
                   "a job submitted by uid %llu runs as that user, not as "
                   "'%s' (uid %u)",
                   (unsigned long long)s->submitter, sp->name,
                   (unsigned)sp->uid);
    if (euid != 0)
        return; /* nothing to switch */
    n = 64;
    for (;;) {
        int want = n;
        gid_t *g = realloc(sp->groups, (size_t)n * sizeof(gid_t));

        if (!g)
            fail_start(sp, GP_ENOMEM, "groups of '%s': out of memory",
                       sp->name);
        sp->groups = g;
        if (getgrouplist(sp->name, sp->gid, sp->groups, &n) >= 0)
            break;
        if (n <= want)
            n = want * 2;
        if (n > MAX_GROUPS)
            fail_start(sp, GP_EINVAL, "user '%s' is in more than %d groups",
                       sp->name, MAX_GROUPS);
    }
    sp->ngroups = n;
}

/* Created here (and handed to the user) when it sits directly in the
 * job directory, which is the daemon's; anywhere else the job's user
 * makes it, in the child. */
static void prepare_ckpt(struct sup *sp)
{
    const char *slash;
    struct stat st;
    int fd;

    if (sp->s.ckpt)
        snprintf(sp->ckpt, sizeof(sp->ckpt), "%s", sp->s.ckpt);
    else
        snprintf(sp->ckpt, sizeof(sp->ckpt), "%s/checkpoint", sp->s.job_dir);
    slash = strrchr(sp->ckpt, '/');
    if (!slash || (size_t)(slash - sp->ckpt) != strlen(sp->s.job_dir) ||
        strncmp(sp->ckpt, sp->s.job_dir, (size_t)(slash - sp->ckpt))) {
        sp->ckpt_by_user = true;
        return;
    }
    if (mkdir(sp->ckpt, 0700) < 0 && errno != EEXIST)
        fail_start(sp, GP_EIO, "checkpoint dir: mkdir %s: %s", sp->ckpt,
                   strerror(errno));
    fd = open(sp->ckpt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0)
        fail_start(sp, GP_EIO, "checkpoint dir %s: %s", sp->ckpt,
                   strerror(errno));
    if (geteuid() == 0 && (st.st_uid != sp->uid || st.st_gid != sp->gid) &&
        fchown(fd, sp->uid, sp->gid) < 0)
        fail_start(sp, GP_EIO, "checkpoint dir: chown %s: %s", sp->ckpt,
                   strerror(errno));
    close(fd);
}

/* Set KEY=VALUE in env (n entries, room for one more), replacing KEY. */
static void env_set(char **env, size_t *n, char *kv)
{
    size_t klen = strcspn(kv, "=");

    for (size_t i = 0; i < *n; i++)
        if (!strncmp(env[i], kv, klen) && env[i][klen] == '=') {
            env[i] = kv;
            return;
        }
    env[(*n)++] = kv;
    env[*n] = NULL;
}

static char *kv_fmt(struct sup *sp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static char *kv_fmt(struct sup *sp, const char *fmt, ...)
{
    va_list ap;
    char *out = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&out, fmt, ap);
    va_end(ap);
    if (n < 0)
        fail_start(sp, GP_ENOMEM, "environment: out of memory");
    return out;
}

/* The job's whole environment (docs/jobs.md, "Environment"). */
static char **build_env(struct sup *sp)
{
    static char path[] = "PATH=" DEFAULT_PATH;
    static char order[] = "CUDA_DEVICE_ORDER=PCI_BUS_ID";
    const struct spec *s = &sp->s;
    char **env = calloc(s->nenv + 16, sizeof(char *));
    size_t n = 0;

    if (!env)
        fail_start(sp, GP_ENOMEM, "environment: out of memory");
    env_set(env, &n, path);
    env_set(env, &n, kv_fmt(sp, "HOME=%s", sp->home));
    env_set(env, &n, kv_fmt(sp, "USER=%s", sp->name));
    env_set(env, &n, kv_fmt(sp, "LOGNAME=%s", sp->name));
    env_set(env, &n, kv_fmt(sp, "SHELL=%s", sp->shell));
    for (size_t i = 0; i < s->nenv; i++)
        env_set(env, &n, s->env[i]);
    /* last, so nothing above can change them */
    env_set(env, &n,
            kv_fmt(sp, "GPUPOOL_JOB_ID=%llu", (unsigned long long)s->job));
    env_set(env, &n,
            kv_fmt(sp, "GPUPOOL_RESTART_COUNT=%llu",
                   (unsigned long long)s->restart));
    env_set(env, &n, kv_fmt(sp, "GPUPOOL_CHECKPOINT_DIR=%s", sp->ckpt));
    env_set(
        env, &n,
        kv_fmt(sp, "GPUPOOL_PREEMPT_SIGNAL=%llu", (unsigned long long)s->sig));
    env_set(env, &n,
            kv_fmt(sp, "GPUPOOL_PREEMPT_GRACE_S=%llu",
                   (unsigned long long)s->grace));
    env_set(env, &n, kv_fmt(sp, "CUDA_VISIBLE_DEVICES=%s", s->devices));
    env_set(env, &n, order);
    return env;
}

/* ---- the job (the child, between fork and exec) ---------------------------
 */

static void child_fail(int fd, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

static void child_fail(int fd, int err, const char *fmt, ...)
{
    char buf[600];
    va_list ap;
    int n = snprintf(buf, sizeof(buf), "%s ", gp_err_name(err));

    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
    va_end(ap);
    write_fd(fd, buf, strlen(buf));
    _exit(127);
}

static int errno_err(int e)
{
    return e == ENOENT || e == ENOTDIR ? GP_ENOENT : GP_EIO;
}

/* mkdir -p, with the user's rights: the last level 0700. */
static int mkdir_p(char *path)
{
    for (char *p = path + 1;; p++) {
        bool last = !*p;

        if (*p != '/' && !last)
            continue;
        *p = '\0';
        if (mkdir(path, last ? 0700 : 0755) < 0 && errno != EEXIST)
            return -1;
        if (last)
            return 0;
        *p = '/';
    }
}

/* Close every fd from `from` up. */
static void close_from(int from)
{
    DIR *d;
    struct dirent *de;

    if (close_range((unsigned)from, ~0U, 0) == 0)
        return;
    d = opendir("/proc/self/fd");
    while (d && (de = readdir(d))) {
        int fd = atoi(de->d_name);

        if (fd >= from && fd != dirfd(d))
            close(fd);
    }
    if (d)
        closedir(d);
}

/* Every fd from 3 up closes at exec (the error pipe among them). */
static void cloexec_from_3(void)
{
#ifdef CLOSE_RANGE_CLOEXEC
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
#endif
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;

    while (d && (de = readdir(d))) {
        int fd = atoi(de->d_name);

        if (fd >= 3 && fd != dirfd(d))
            fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    if (d)
        closedir(d);
}

static void exec_search(int errfd, char **argv, char **env)
{
    const char *path = DEFAULT_PATH;
    const char *file = argv[0];
    char buf[PATH_MAX];
    int first = 0;

    if (strchr(file, '/')) {
        execve(file, argv, env);
        child_fail(errfd, errno_err(errno), "exec: %s: %s", strerror(errno),
                   file);
    }
    for (size_t i = 0; env[i]; i++)
        if (!strncmp(env[i], "PATH=", 5))
            path = env[i] + 5;
    for (const char *p = path;; p += strcspn(p, ":") + 1) {
        size_t n = strcspn(p, ":");

        if ((size_t)snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, p,
                             n ? "/" : "", file) < sizeof(buf)) {
            execve(buf, argv, env);
            /* like execvp: a file found but not runnable is the answer,
             * unless another directory has a runnable one */
            if (errno != ENOENT && errno != ENOTDIR && !first)
                first = errno;
        }
        if (!p[n])
            break;
    }
    errno = first ? first : ENOENT;
    child_fail(errfd, errno_err(errno), "exec: %s: %s (PATH %s)",
               strerror(errno), file, path);
}

static void run_child(struct sup *sp, char **env, int go_fd, int errfd)
{
    struct sigaction sa;
    sigset_t none;
    char go;
    int devnull;

    setpgid(0, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &sa, NULL); /* KILL, STOP, 32, 33: EINVAL, fine */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    /* blocked until the pid file is written and the daemon said go; a
     * supervisor that dies first closes the pipe */
    while (read(go_fd, &go, 1) < 0 && errno == EINTR)
        ;
    if (go != 'g')
        _exit(126);
    close(go_fd);

    devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(sp->out_fd, 1) < 0 ||
        dup2(sp->err_fd, 2) < 0)
        child_fail(errfd, GP_EIO, "stdio: %s", strerror(errno));
    umask(022);
    if (geteuid() == 0) {
        if (setgroups((size_t)sp->ngroups, sp->groups) < 0)
            child_fail(errfd, GP_EIO, "setgroups for '%s': %s", sp->name,
                       strerror(errno));
        if (setgid(sp->gid) < 0)
            child_fail(errfd, GP_EIO, "setgid %u: %s", (unsigned)sp->gid,
                       strerror(errno));
        if (setuid(sp->uid) < 0)
            child_fail(errfd, GP_EIO, "setuid %u: %s", (unsigned)sp->uid,
                       strerror(errno));
        if (getuid() != sp->uid || geteuid() != sp->uid ||
            getgid() != sp->gid || getegid() != sp->gid ||
            (sp->uid != 0 && setuid(0) == 0))
            child_fail(errfd, GP_EIO, "could not become '%s' for good",
                       sp->name);
    }
    if (sp->ckpt_by_user && mkdir_p(sp->ckpt) < 0)
        child_fail(errfd, errno_err(errno), "checkpoint dir: mkdir %s: %s",
                   sp->ckpt, strerror(errno));
    {
        const char *cwd = sp->s.cwd ? sp->s.cwd : sp->home;

        if (chdir(cwd) < 0)
            child_fail(errfd, errno_err(errno), "chdir: %s: %s",
                       strerror(errno), cwd);
    }
    cloexec_from_3();
    exec_search(errfd, sp->s.argv, env);
}

/* ---- after the start ------------------------------------------------------
 */

/* SIGKILL every child of ours but the job's leader: processes the job left
 * behind, reparented to us. Our children cannot be recycled before we reap
 * them, so their pids are safe to signal. */
static void kill_children(pid_t leader)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    pid_t self = getpid();

    while (d && (de = readdir(d))) {
        char path[64], buf[512];
        char *p;
        long pid = atol(de->d_name), ppid;
        int fd;
        ssize_t n;

        if (pid <= 0 || pid == leader)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        p = strrchr(buf, ')');
        if (p && sscanf(p + 1, " %*c %ld", &ppid) == 1 && ppid == self)
            kill((pid_t)pid, SIGKILL);
    }
    if (d)
        closedir(d);
}

/* Wait for the leader, reaping the orphans that end meanwhile. */
static void wait_leader(pid_t leader)
{
    for (;;) {
        siginfo_t si;

        memset(&si, 0, sizeof(si));
        if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) < 0) {
            if (errno == EINTR)
                continue;
            return; /* ECHILD cannot be while the leader is ours */
        }
        if (si.si_pid == leader)
            return;
        while (waitpid(si.si_pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
}

static void supervise(struct sup *sp)
{
    char text[512], when[32];
    int64_t end;
    int status = 0;
    pid_t r;

    wait_leader(sp->child);
    end = gp__local_now_us();
    /* the leader is an unreaped zombie: its group id is still ours */
    kill(-sp->child, SIGKILL);
    kill_children(sp->child);
    job_reaped = 1;
    while ((r = waitpid(sp->child, &status, 0)) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status))
        snprintf(text, sizeof(text),
                 "version=1\njob=%llu\nrun=%llu\nkind=killed\nsignal=%d\n"
                 "core_dumped=%d\njob_pid=%ld\nstart_us=%lld\nend_us=%lld\n",
                 (unsigned long long)sp->s.job, (unsigned long long)sp->s.run,
                 WTERMSIG(status), WCOREDUMP(status) ? 1 : 0, (long)sp->child,
                 (long long)sp->start_us, (long long)end);
    else
        snprintf(text, sizeof(text),
                 "version=1\njob=%llu\nrun=%llu\nkind=exited\ncode=%d\n"
                 "job_pid=%ld\nstart_us=%lld\nend_us=%lld\n",
                 (unsigned long long)sp->s.job, (unsigned long long)sp->s.run,
                 WEXITSTATUS(status), (long)sp->child, (long long)sp->start_us,
                 (long long)end);
    /* the end line first: who sees the status finds the output complete */
    iso_time(end, when, sizeof(when));
    if (WIFSIGNALED(status))
        banner(sp->err_fd, sp, "ended %s: killed by signal %d (%s)", when,
               WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        banner(sp->err_fd, sp, "ended %s: exit code %d", when,
               WEXITSTATUS(status));
    /* a status that cannot be written leaves the run LOST: nothing else
     * to be done here */
    write_run_file(sp, "status", text);
    /* stragglers still dying, and orphans reparented since */
    for (;;) {
        kill_children(0);
        r = waitpid(-1, NULL, 0);
        if (r < 0 && errno != EINTR)
            break;
    }
}

int main(int argc, char **argv)
{
    struct sup *sp = &sup;
    char when[32], host[256];
    size_t len;
    int go[2], errp[2];
    uint64_t start;
    pid_t pid;

    (void)argc;
    (void)argv;
    memset(sp, 0, sizeof(*sp));
    sp->out_fd = sp->err_fd = -1;
    sp->begin_us = gp__local_now_us();
    install_handlers();

    /* Leave the daemon: a session of our own (posix_spawn made it where it
     * could), then a fork so that the daemon is not our parent. The parent
     * death signal is off by default and stays off. */
    if (getsid(0) != getpid() && setsid() < 0)
        fail_start(sp, GP_EIO, "setsid: %s", strerror(errno));
    pid = fork();
    if (pid < 0)
        fail_start(sp, GP_EIO, "fork: %s", strerror(errno));
    if (pid > 0)
        _exit(0);
    prctl(PR_SET_PDEATHSIG, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (chdir("/") < 0)
        fail_start(sp, GP_EIO, "chdir /: %s", strerror(errno));
    close_from(GP__LOCAL_CTL_FD + 1); /* whatever the daemon leaked */
    if (gp__local_proc_stat(getpid(), &start, NULL) != GP_OK)
        fail_start(sp, GP_EIO, "cannot read /proc/self/stat");
    say("pid %ld %llu", (long)getpid(), (unsigned long long)start);

    sp->raw = read_spec(&len);
    if (!sp->raw || parse_spec(sp->raw, len, &sp->s) < 0)
        fail_start(sp, GP_EINVAL, "malformed spec from gpupool");

    sp->out_fd = open_output(sp, "stdout");
    sp->err_fd = open_output(sp, "stderr");
    /* our own complaints (and a sanitizer's) go with the job's */
    dup2(sp->err_fd, 2);
    resolve_user(sp);
    chown_output(sp, sp->out_fd, "stdout");
    chown_output(sp, sp->err_fd, "stderr");
    prepare_ckpt(sp);
    sp->env = build_env(sp);

    if (gethostname(host, sizeof(host)) < 0)
        snprintf(host, sizeof(host), "?");
    host[sizeof(host) - 1] = '\0';
    iso_time(gp__local_now_us(), when, sizeof(when));
    banner(sp->out_fd, sp, "(restart %llu) as %s on %s, started %s",
           (unsigned long long)sp->s.restart, sp->name, host, when);
    banner(sp->err_fd, sp, "(restart %llu) as %s on %s, started %s",
           (unsigned long long)sp->s.restart, sp->name, host, when);

    if (pipe2(go, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0)
        fail_start(sp, GP_EIO, "pipe: %s", strerror(errno));
    pid = fork();
    if (pid < 0)
        fail_start(sp, GP_EIO, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(go[1]);
        close(errp[0]);
        run_child(sp, sp->env, go[0], errp[1]);
    }
    close(go[0]);
    close(errp[1]);
    sp->child = pid;
    setpgid(pid, pid); /* whichever of us runs first */
    job_pgid = pid;

    sp->start_us = gp__local_now_us();
    if ((errno = write_pid_file(sp)) != 0)
        fail_start(sp, GP_EIO, "writing run-%llu.pid: %s",
                   (unsigned long long)sp->s.run, strerror(errno));
    say("ready");
    if (!daemon_there || !wait_go())
        fail_start(sp, GP_EIO, "gpupool went away before the job started");
    if (write(go[1], "g", 1) != 1)
        fail_start(sp, GP_EIO, "releasing the job: %s", strerror(errno));
    close(go[1]);

    {
        char msg[600];
        size_t got = 0;
        ssize_t n;

        while (got < sizeof(msg) - 1 &&
               ((n = read(errp[0], msg + got, sizeof(msg) - 1 - got)) > 0 ||
                (n < 0 && errno == EINTR)))
            if (n > 0)
                got += (size_t)n;
        close(errp[0]);
        if (got) {
            char *sp_ = NULL;

            msg[got] = '\0';
            sp_ = strchr(msg, ' ');
            if (sp_)
                *sp_++ = '\0';
            fail_start(sp, gp__local_err_from_name(msg), "%s",
                       sp_ ? sp_ : "the job failed to start");
        }
    }
    say("started");
    close(GP__LOCAL_CTL_FD);
    supervise(sp);
    return 0;
}
