/* local.c - the daemon's side of the local job controller: start a run
 * under gpupool-supervisor, find it again after a restart, poll it, signal
 * it. The supervisor's side is supervisor.c; what they share (the spec on
 * the wire, the start protocol, the run files) is local_priv.h.
 *
 * Key decision: the daemon never holds a job's processes. It spawns the
 * supervisor in a new session, the supervisor forks once more and owns the
 * job from then on, and everything the daemon learns afterwards comes from
 * two files (run-<n>.pid, run-<n>.status) and /proc. So a daemon that
 * crashes loses nothing, and a daemon that restarts needs no state of the
 * processes beyond the job directory and the run number.
 */
#define _GNU_SOURCE /* pidfds, POSIX_SPAWN_SETSID, SI_QUEUE */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/local_priv.h"

/* ---- shared with the supervisor ----------------------------------------- */

int gp__local_ctl_signal(void)
{
    return SIGRTMIN + 2;
}

int64_t gp__local_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * GP_US_PER_S + ts.tv_nsec / 1000;
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int gp__local_proc_stat(pid_t pid, uint64_t *start, char *state)
{
    char path[64], buf[2048];
    char *p, *end;
    ssize_t n;
    int fd;
    unsigned long long v;

    if (pid <= 0)
        return GP_ENOENT;
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ESRCH ? GP_ENOENT : GP_EIO;
    /* procfs hands the whole line to one read */
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return n == 0 || errno == ESRCH ? GP_ENOENT : GP_EIO;
    buf[n] = '\0';
    /* comm (field 2) may hold spaces and parentheses: it ends at the last
     * ')'; field 3 (state) follows */
    p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2])
        return GP_EPARSE;
    p += 2;
    if (state)
        *state = *p;
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p)
            return GP_EPARSE;
        p++;
    }
    errno = 0;
    v = strtoull(p, &end, 10);
    if (end == p || errno || (*end != ' ' && *end != '\n' && *end))
        return GP_EPARSE;
    *start = (uint64_t)v;
    return GP_OK;
}

int gp__local_read_small(const char *path, char *buf, size_t cap)
{
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0)
        return errno;
    for (;;) {
        ssize_t n;

        if (len + 1 >= cap) {
            close(fd);
            return EFBIG;
        }
        n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;

            close(fd);
            return e;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return 0;
}

int gp__local_boot_id(char out[40])
{
    char buf[64];
    size_t len;
    int e = gp__local_read_small("/proc/sys/kernel/random/boot_id", buf,
                                 sizeof(buf));

    if (e)
        return GP_EIO;
    len = strcspn(buf, "\n");
    if (len == 0 || len >= 40)
        return GP_EPARSE;
    memcpy(out, buf, len);
    out[len] = '\0';
    return GP_OK;
}

int gp__local_write_atomic(const char *dir, const char *name, const char *data,
                           size_t len, mode_t mode)
{
    char tmp[PATH_MAX], dst[PATH_MAX];
    int fd, dfd, e = 0;
    size_t off = 0;

    if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name) >=
            sizeof(tmp) ||
        (size_t)snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= sizeof(dst))
        return ENAMETOOLONG;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return errno;
    while (off < len) {
        ssize_t n = write(fd, data + off, len - off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            e = errno;
            break;
        }
        off += (size_t)n;
    }
    if (!e && fchmod(fd, mode) < 0)
        e = errno;
    if (!e && fsync(fd) < 0)
        e = errno;
    if (close(fd) < 0 && !e)
        e = errno;
    if (!e && rename(tmp, dst) < 0)
        e = errno;
    if (e) {
        unlink(tmp);
        return e;
    }
    /* the rename itself is durable only once the directory is */
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errno;
    if (fsync(dfd) < 0)
        e = errno;
    close(dfd);
    return e;
}

const char *gp__local_kv(const char *text, const char *key, char *val,
                         size_t cap)
{
    size_t klen = strlen(key);

    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t llen = nl ? (size_t)(nl - line) : strlen(line);

        if (llen > klen && !strncmp(line, key, klen) && line[klen] == '=') {
            size_t vlen = llen - klen - 1;

            if (vlen >= cap)
                return NULL;
            memcpy(val, line + klen + 1, vlen);
            val[vlen] = '\0';
            return val;
        }
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

int gp__local_err_from_name(const char *name)
{
    for (int e = GP__ERR_FIRST + 1; strcmp(gp_err_name(e), "UNKNOWN"); e++)
        if (!strcmp(gp_err_name(e), name))
            return e;
    return GP_EIO;
}

void gp__local_one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* ---- small helpers ------------------------------------------------------ */

static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0u);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

static int pidfd_send_signal_(int fd, int sig, siginfo_t *info)
{
#ifdef SYS_pidfd_send_signal
    return (int)syscall(SYS_pidfd_send_signal, fd, sig, info, 0u);
#else
    (void)fd;
    (void)sig;
    (void)info;
    errno = ENOSYS;
    return -1;
#endif
}

/* An absolute path with no empty, "." or ".." component and no trailing
 * '/': what it names does not depend on how it is spelled, so "directly
 * inside job_dir" can be decided from the text. */
static bool is_clean_abs(const char *p)
{
    if (!p || p[0] != '/')
        return false;
    if (!p[1])
        return true;
    for (const char *c = p + 1;;) {
        size_t n = strcspn(c, "/");

        if (n == 0 || (n == 1 && c[0] == '.') ||
            (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (!c[n])
            return true;
        c += n + 1;
    }
}

static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

/* Is pid the process recorded (start time, boot) and not a zombie? */
static bool is_same_process(pid_t pid, uint64_t start, const char *boot_id,
                            bool zombie_ok)
{
    char now_boot[40];
    uint64_t s;
    char st;

    if (pid <= 0 || !boot_id[0])
        return false;
    if (gp__local_boot_id(now_boot) != GP_OK || strcmp(now_boot, boot_id))
        return false;
    if (gp__local_proc_stat(pid, &s, &st) != GP_OK || s != start)
        return false;
    return zombie_ok || (st != 'Z' && st != 'X');
}

static int check_proc(const struct gp_local_proc *proc, struct gp_diag *diag)
{
    if (!proc)
        return gp_diag_set(diag, GP_EINVAL, "proc", "no proc");
    if (proc->run == 0 || !memchr(proc->job_dir, '\0', sizeof(proc->job_dir)) ||
        !is_clean_abs(proc->job_dir))
        return gp_diag_set(diag, GP_EINVAL, "proc",
                           "not a proc from gp_local_start or _adopt");
    return GP_OK;
}

static void run_path(char *buf, size_t cap, const char *job_dir, uint32_t run,
                     const char *ext)
{
    snprintf(buf, cap, "%s/run-%u.%s", job_dir, run, ext);
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || !*s || *s == '-')
        return GP_EPARSE;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end)
        return GP_EPARSE;
    *out = (uint64_t)v;
    return GP_OK;
}

static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    long long v;

    if (!s || !*s)
        return GP_EPARSE;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end)
        return GP_EPARSE;
    *out = (int64_t)v;
    return GP_OK;
}

/* A number of key from a run file (0 when ok). */
static int kv_u64(const char *text, const char *key, uint64_t *out)
{
    char val[32];

    return parse_u64(gp__local_kv(text, key, val, sizeof(val)), out);
}

static int kv_i64(const char *text, const char *key, int64_t *out)
{
    char val[32];

    return parse_i64(gp__local_kv(text, key, val, sizeof(val)), out);
}

/* ---- run files ---------------------------------------------------------- */

/* Read run-<n>.status into *st. GP_ENOENT when there is none. */
static int read_status(const struct gp_local_proc *proc,
                       struct gp_local_state *st, struct gp_diag *diag)
{
    char path[PATH_MAX], text[GP__LOCAL_FILE_MAX], kind[32], val[32];
    uint64_t job, run, u;
    int e;

    run_path(path, sizeof(path), proc->job_dir, proc->run, "status");
    e = gp__local_read_small(path, text, sizeof(text));
    if (e == ENOENT)
        return GP_ENOENT;
    if (e)
        return gp_diag_set(diag, e == EFBIG ? GP_EPARSE : GP_EIO, path, "%s",
                           e == EFBIG ? "too big for a status file"
                                      : strerror(e));
    memset(st, 0, sizeof(*st));
    st->start_us = GP_TIME_NONE;
    st->end_us = GP_TIME_NONE;
    if (kv_u64(text, "job", &job) || kv_u64(text, "run", &run) ||
        !gp__local_kv(text, "kind", kind, sizeof(kind)))
        return gp_diag_set(diag, GP_EPARSE, path,
                           "no job, run or kind: not a status file");
    if ((proc->job_id && job != proc->job_id) || run != proc->run)
        return gp_diag_set(diag, GP_EPARSE, path,
                           "holds job %llu run %llu, not job %llu run %u",
                           (unsigned long long)job, (unsigned long long)run,
                           (unsigned long long)proc->job_id, proc->run);
    if (kv_i64(text, "start_us", &st->start_us))
        st->start_us = GP_TIME_NONE;
    if (kv_i64(text, "end_us", &st->end_us))
        st->end_us = GP_TIME_NONE;
    if (!strcmp(kind, "exited")) {
        st->kind = GP_LOCAL_EXITED;
        if (kv_u64(text, "code", &u) || u > 255)
            return gp_diag_set(diag, GP_EPARSE, path, "bad code");
        st->code = (int)u;
    } else if (!strcmp(kind, "killed")) {
        st->kind = GP_LOCAL_KILLED;
        if (kv_u64(text, "signal", &u) || u == 0 || u >= 128)
            return gp_diag_set(diag, GP_EPARSE, path, "bad signal");
        st->signal = (int)u;
        st->core_dumped = !kv_u64(text, "core_dumped", &u) && u == 1;
    } else if (!strcmp(kind, "start_failed")) {
        st->kind = GP_LOCAL_START_FAILED;
        if (!gp__local_kv(text, "reason", st->reason, sizeof(st->reason)))
            snprintf(st->reason, sizeof(st->reason), "(no reason given)");
        st->error = gp__local_kv(text, "error", val, sizeof(val))
                        ? gp__local_err_from_name(val)
                        : GP_EIO;
    } else {
        return gp_diag_set(diag, GP_EPARSE, path, "unknown kind '%s'", kind);
    }
    return GP_OK;
}

/* Read run-<n>.pid of job_dir into *proc (job_dir and run already set).
 * GP_ENOENT when there is none. */
static int read_pid_file(struct gp_local_proc *proc, struct gp_diag *diag)
{
    char path[PATH_MAX], text[GP__LOCAL_FILE_MAX];
    uint64_t job, run, sp, ss, jp, js;
    int e;

    run_path(path, sizeof(path), proc->job_dir, proc->run, "pid");
    e = gp__local_read_small(path, text, sizeof(text));
    if (e == ENOENT)
        return GP_ENOENT;
    if (e)
        return gp_diag_set(diag, e == EFBIG ? GP_EPARSE : GP_EIO, path, "%s",
                           e == EFBIG ? "too big for a pid file" : strerror(e));
    if (kv_u64(text, "job", &job) || kv_u64(text, "run", &run) ||
        kv_u64(text, "supervisor_pid", &sp) ||
        kv_u64(text, "supervisor_start", &ss) || kv_u64(text, "job_pid", &jp) ||
        kv_u64(text, "job_start", &js) ||
        !gp__local_kv(text, "boot_id", proc->boot_id, sizeof(proc->boot_id)) ||
        kv_i64(text, "start_us", &proc->start_us))
        return gp_diag_set(diag, GP_EPARSE, path, "not a pid file");
    if (run != proc->run || job == 0 || sp == 0 || sp > INT_MAX || jp == 0 ||
        jp > INT_MAX)
        return gp_diag_set(diag, GP_EPARSE, path,
                           "holds run %llu with pids %llu/%llu, not run %u",
                           (unsigned long long)run, (unsigned long long)sp,
                           (unsigned long long)jp, proc->run);
    proc->job_id = job;
    proc->supervisor_pid = (pid_t)sp;
    proc->supervisor_start = ss;
    proc->job_pid = (pid_t)jp;
    proc->job_start = js;
    return GP_OK;
}

/* ---- the spec ----------------------------------------------------------- */

void gp_local_job_init(struct gp_local_job *spec)
{
    memset(spec, 0, sizeof(*spec));
    spec->version = GP_LOCAL_JOB_VERSION;
    spec->uid = GP_LOCAL_UID_SELF;
    spec->submitter_uid = GP_LOCAL_UID_UNSET;
}

static const char *const reserved_env[] = {
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
};

static int check_env(const char *const *env, size_t *bytes,
                     struct gp_diag *diag)
{
    char where[32];

    for (size_t i = 0; env && env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        size_t klen = eq ? (size_t)(eq - env[i]) : 0;

        snprintf(where, sizeof(where), "env[%zu]", i);
        if (i >= 65536)
            return gp_diag_set(diag, GP_EINVAL, "env",
                               "more than 65536 entries");
        if (klen == 0)
            return gp_diag_set(diag, GP_EINVAL, where,
                               "'%.40s' is not KEY=VALUE", env[i]);
        if (klen >= 8 && !strncmp(env[i], "GPUPOOL_", 8))
            return gp_diag_set(diag, GP_EINVAL, where,
                               "%.*s: GPUPOOL_* is set by gpupool", (int)klen,
                               env[i]);
        for (size_t r = 0; r < sizeof(reserved_env) / sizeof(*reserved_env);
             r++)
            if (klen == strlen(reserved_env[r]) &&
                !strncmp(env[i], reserved_env[r], klen))
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "%s is set by gpupool from the job's "
                                   "devices",
                                   reserved_env[r]);
        *bytes += strlen(env[i]) + 1;
    }
    return GP_OK;
}

/* Refusals that need no user lookup; the supervisor checks all of it
 * again once it knows the user. */
static int check_identity(const struct gp_local_job *spec, struct gp_diag *diag)
{
    uid_t euid = geteuid();
    uid_t sub =
        spec->submitter_uid == GP_LOCAL_UID_SELF ? euid : spec->submitter_uid;
    uid_t target = spec->uid == GP_LOCAL_UID_SELF ? euid : spec->uid;

    if (spec->submitter_uid == GP_LOCAL_UID_UNSET)
        return gp_diag_set(diag, GP_EINVAL, "submitter_uid",
                           "not set: who submitted the job?");
    if (spec->user) {
        if (!spec->user[0] || strlen(spec->user) > 255 ||
            strchr(spec->user, ':') || has_control(spec->user))
            return gp_diag_set(diag, GP_EINVAL, "user",
                               "'%.40s' is not a user name", spec->user);
        return GP_OK; /* decided after the lookup */
    }
    if (spec->uid == GP_LOCAL_UID_UNSET)
        return gp_diag_set(diag, GP_EINVAL, "uid", "not a uid");
    if (euid != 0 && target != euid)
        return gp_diag_set(diag, GP_EINVAL, "uid",
                           "gpupool runs as uid %u and can only run jobs as "
                           "that user, not as uid %u",
                           (unsigned)euid, (unsigned)target);
    if (sub != 0 && target != sub)
        return gp_diag_set(diag, GP_EINVAL, "uid",
                           "a job submitted by uid %u runs as that user, not "
                           "as uid %u",
                           (unsigned)sub, (unsigned)target);
    return GP_OK;
}

static int check_spec(const struct gp_local_job *spec, struct gp_diag *diag)
{
    size_t bytes = 0, n;
    int rc;

    if (spec->version != GP_LOCAL_JOB_VERSION)
        return gp_diag_set(diag, GP_EINVAL, "version",
                           "%u: start the spec with gp_local_job_init",
                           spec->version);
    if (spec->job_id == 0)
        return gp_diag_set(diag, GP_EINVAL, "job_id", "must be > 0");
    if (spec->run == 0)
        return gp_diag_set(diag, GP_EINVAL, "run", "must be > 0");
    if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
        return gp_diag_set(diag, GP_EINVAL, "argv", "no command");
    for (n = 0; spec->argv[n]; n++) {
        if (n >= 65536)
            return gp_diag_set(diag, GP_EINVAL, "argv",
                               "more than 65536 arguments");
        bytes += strlen(spec->argv[n]) + 1;
    }
    if ((rc = check_env(spec->env, &bytes, diag)) != GP_OK)
        return rc;
    if (bytes > GP_LOCAL_SPEC_MAX)
        return gp_diag_set(diag, GP_EINVAL, "argv",
                           "argv and env hold %zu bytes, more than %u", bytes,
                           GP_LOCAL_SPEC_MAX);
    if (!spec->job_dir || !is_clean_abs(spec->job_dir) ||
        has_control(spec->job_dir) || !strcmp(spec->job_dir, "/"))
        return gp_diag_set(diag, GP_EINVAL, "job_dir",
                           "'%.60s' is not a clean absolute path",
                           spec->job_dir ? spec->job_dir : "(null)");
    if (strlen(spec->job_dir) >= GP_LOCAL_PATH_MAX - 32)
        return gp_diag_set(diag, GP_EINVAL, "job_dir", "longer than %d bytes",
                           GP_LOCAL_PATH_MAX - 32);
    if (spec->cwd && (spec->cwd[0] != '/' || has_control(spec->cwd) ||
                      strlen(spec->cwd) >= PATH_MAX))
        return gp_diag_set(diag, GP_EINVAL, "cwd",
                           "'%.60s' is not an absolute path", spec->cwd);
    if (spec->checkpoint_dir && (!is_clean_abs(spec->checkpoint_dir) ||
                                 has_control(spec->checkpoint_dir) ||
                                 strlen(spec->checkpoint_dir) >= PATH_MAX - 32))
        return gp_diag_set(diag, GP_EINVAL, "checkpoint_dir",
                           "'%.60s' is not a clean absolute path",
                           spec->checkpoint_dir);
    if (spec->devices &&
        (strlen(spec->devices) > 1023 || has_control(spec->devices)))
        return gp_diag_set(diag, GP_EINVAL, "devices",
                           "longer than 1023 bytes or not one line");
    if (spec->preempt_signal < 0 || spec->preempt_signal > SIGRTMAX ||
        spec->preempt_signal == SIGKILL || spec->preempt_signal == SIGSTOP)
        return gp_diag_set(diag, GP_EINVAL, "preempt_signal",
                           "%d: a signal a job can catch, or 0 for SIGUSR1",
                           spec->preempt_signal);
    if (spec->supervisor && spec->supervisor[0] != '/')
        return gp_diag_set(diag, GP_EINVAL, "supervisor",
                           "'%.60s' is not an absolute path", spec->supervisor);
    return check_identity(spec, diag);
}

/* The spec on the wire: NUL-terminated "key=value" records. */
struct wire {
    char *p;
    size_t len, cap;
    bool nomem;
};

static void put(struct wire *w, const char *key, const char *val)
{
    size_t need = strlen(key) + 1 + strlen(val) + 1;

    if (w->nomem)
        return;
    if (w->len + need > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        char *p;

        while (cap < w->len + need)
            cap *= 2;
        p = realloc(w->p, cap);
        if (!p) {
            w->nomem = true;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    w->len += (size_t)sprintf(w->p + w->len, "%s=%s", key, val) + 1;
}

static void put_u64(struct wire *w, const char *key, uint64_t v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    put(w, key, buf);
}

static int build_wire(const struct gp_local_job *spec, struct wire *w)
{
    uid_t euid = geteuid();

    put_u64(w, "version", GP_LOCAL_JOB_VERSION);
    put_u64(w, "job", spec->job_id);
    put_u64(w, "run", spec->run);
    put_u64(w, "restart", spec->restart_count);
    for (size_t i = 0; spec->argv[i]; i++)
        put(w, "arg", spec->argv[i]);
    for (size_t i = 0; spec->env && spec->env[i]; i++)
        put(w, "env", spec->env[i]);
    if (spec->cwd)
        put(w, "cwd", spec->cwd);
    if (spec->user)
        put(w, "user", spec->user);
    else
        put_u64(w, "uid", spec->uid == GP_LOCAL_UID_SELF ? euid : spec->uid);
    put_u64(w, "submitter",
            spec->submitter_uid == GP_LOCAL_UID_SELF ? euid
                                                     : spec->submitter_uid);
    put(w, "devices", spec->devices ? spec->devices : "");
    put(w, "job_dir", spec->job_dir);
    if (spec->checkpoint_dir)
        put(w, "ckpt", spec->checkpoint_dir);
    put_u64(w, "signal",
            (uint64_t)(spec->preempt_signal ? spec->preempt_signal : SIGUSR1));
    put_u64(w, "grace", spec->grace_s);
    put(w, "end", "1"); /* a spec cut short is not a shorter spec */
    return w->nomem ? GP_ENOMEM : GP_OK;
}

/* ---- starting ----------------------------------------------------------- */

static int supervisor_path(const struct gp_local_job *spec, char *buf,
                           size_t cap, struct gp_diag *diag)
{
    char self[PATH_MAX];
    ssize_t n;
    char *slash;

    if (spec->supervisor) {
        if ((size_t)snprintf(buf, cap, "%s", spec->supervisor) >= cap)
            return gp_diag_set(diag, GP_EINVAL, "supervisor", "too long");
    } else {
        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
            return gp_diag_set(diag, GP_EIO, "supervisor",
                               "readlink /proc/self/exe: %s", strerror(errno));
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (!slash)
            return gp_diag_set(diag, GP_EIO, "supervisor",
                               "/proc/self/exe is '%s'", self);
        *slash = '\0';
        if ((size_t)snprintf(buf, cap, "%s/gpupool-supervisor", self) >= cap)
            return gp_diag_set(diag, GP_EINVAL, "supervisor", "too long");
    }
    if (access(buf, X_OK) < 0)
        return gp_diag_set(diag, errno == ENOENT ? GP_ENOENT : GP_EIO,
                           "supervisor", "%s: %s", buf, strerror(errno));
    return GP_OK;
}

/* The job directory exists (made here, one level, if missing) and this
 * run has no files yet. */
static int prepare_job_dir(const struct gp_local_job *spec,
                           struct gp_diag *diag)
{
    char path[PATH_MAX];
    struct stat st;
    static const char *const exts[] = {"pid", "status"};

    if (mkdir(spec->job_dir, 0755) < 0 && errno != EEXIST)
        return gp_diag_set(diag, errno == ENOENT ? GP_ENOENT : GP_EIO,
                           "job_dir", "mkdir %s: %s", spec->job_dir,
                           strerror(errno));
    if (lstat(spec->job_dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return gp_diag_set(diag, GP_EINVAL, "job_dir", "%s is not a directory",
                           spec->job_dir);
    for (size_t i = 0; i < 2; i++) {
        run_path(path, sizeof(path), spec->job_dir, spec->run, exts[i]);
        if (lstat(path, &st) == 0)
            return gp_diag_set(diag, GP_EEXIST, "run",
                               "run %u of job %llu was started before: %s "
                               "exists",
                               spec->run, (unsigned long long)spec->job_id,
                               path);
    }
    return GP_OK;
}

/* Lines from the supervisor, under a deadline. */
struct lines {
    int fd;
    char buf[1024];
    size_t len;
};

/* 1: a line in out; 0: end of file; GP_EIO: error or timeout (*timed_out
 * says which). */
static int next_line(struct lines *l, char *out, size_t cap,
                     int64_t deadline_ms, bool *timed_out)
{
    *timed_out = false;
    for (;;) {
        char *nl = memchr(l->buf, '\n', l->len);
        struct pollfd pfd = {.fd = l->fd, .events = POLLIN};
        int64_t left = deadline_ms - mono_ms();
        ssize_t n;
        int r;

        if (nl) {
            size_t len = (size_t)(nl - l->buf);

            snprintf(out, cap, "%.*s", (int)len, l->buf);
            memmove(l->buf, nl + 1, l->len - len - 1);
            l->len -= len + 1;
            return 1;
        }
        if (l->len == sizeof(l->buf))
            return GP_EIO; /* a line this long is not the protocol */
        if (left <= 0) {
            *timed_out = true;
            return GP_EIO;
        }
        r = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return GP_EIO;
        if (r == 0)
            continue; /* the deadline check above ends it */
        n = read(l->fd, l->buf + l->len, sizeof(l->buf) - l->len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return GP_EIO;
        if (n == 0)
            return 0;
        l->len += (size_t)n;
    }
}

static int send_all(int fd, const char *p, size_t len, int64_t deadline_ms)
{
    while (len) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int64_t left = deadline_ms - mono_ms();
        ssize_t n;

        if (left <= 0)
            return ETIMEDOUT;
        if (poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left) < 0 &&
            errno != EINTR)
            return errno;
        n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* SIGKILL the supervisor that said "pid <pid> <start>", if it still is
 * that process: a start given up before "go" must not leave it behind
 * (its blocked job exits when the supervisor's pipe closes). */
static void kill_supervisor(pid_t pid, uint64_t start)
{
    char boot[40];
    int fd;

    if (pid <= 0 || gp__local_boot_id(boot) != GP_OK)
        return;
    fd = pidfd_open_(pid);
    if (fd >= 0) {
        if (is_same_process(pid, start, boot, false))
            pidfd_send_signal_(fd, SIGKILL, NULL);
        close(fd);
    } else if (errno == ENOSYS && is_same_process(pid, start, boot, false)) {
        kill(pid, SIGKILL);
    }
}

static int spawn_supervisor(const char *path, const struct gp_local_job *spec,
                            int child_fd, pid_t *pid, struct gp_diag *diag)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    char prog[PATH_MAX], job[24], run[16], opt_job[] = "--job",
                                           opt_run[] = "--run";
    char *argv[] = {prog, opt_job, job, opt_run, run, NULL};
    char *envp[] = {NULL};
    int e;
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;

#ifdef POSIX_SPAWN_SETSID
    flags |= POSIX_SPAWN_SETSID;
#endif
    snprintf(prog, sizeof(prog), "%s", path);
    snprintf(job, sizeof(job), "%llu", (unsigned long long)spec->job_id);
    snprintf(run, sizeof(run), "%u", spec->run);
    sigemptyset(&none);
    sigfillset(&all);
    if ((e = posix_spawn_file_actions_init(&fa)) != 0)
        return gp_diag_set(diag, GP_ENOMEM, "supervisor", "%s", strerror(e));
    if ((e = posix_spawnattr_init(&attr)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return gp_diag_set(diag, GP_ENOMEM, "supervisor", "%s", strerror(e));
    }
    /* child_fd is >= 10: dup2 to 3 first (it clears close-on-exec), then
     * stdio on /dev/null */
    if (!(e = posix_spawn_file_actions_adddup2(&fa, child_fd,
                                               GP__LOCAL_CTL_FD)) &&
        !(e = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
                                               0)) &&
        !(e = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
                                               0)) &&
        !(e = posix_spawn_file_actions_adddup2(&fa, 1, 2)) &&
        !(e = posix_spawnattr_setflags(&attr, flags)) &&
        !(e = posix_spawnattr_setsigmask(&attr, &none)))
        e = posix_spawnattr_setsigdefault(&attr, &all);
    if (!e)
        e = posix_spawn(pid, path, &fa, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (e)
        return gp_diag_set(diag, e == ENOENT ? GP_ENOENT : GP_EIO, "supervisor",
                           "spawn %s: %s", path, strerror(e));
    return GP_OK;
}

/* The first supervisor process only sets up the session and forks: reap
 * it at once (ECHILD: the daemon ignores SIGCHLD, the kernel reaped it). */
static void reap_intermediate(pid_t pid)
{
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Talk the start protocol (local_priv.h). */
static int converse(int fd, const struct gp_local_job *spec,
                    const struct wire *w, struct gp_local_proc *proc,
                    struct gp_diag *diag)
{
    uint32_t timeout = spec->start_timeout_ms ? spec->start_timeout_ms : 30000;
    int64_t deadline = mono_ms() + timeout;
    struct lines l = {.fd = fd};
    char where[64], line[1024];
    unsigned long long spid = 0, sstart = 0;
    bool go_sent = false, timed_out;
    int rc, e;

    snprintf(where, sizeof(where), "job %llu run %u",
             (unsigned long long)spec->job_id, spec->run);
    snprintf(line, sizeof(line), "%zu\n", w->len);
    if ((e = send_all(fd, line, strlen(line), deadline)) != 0 ||
        (e = send_all(fd, w->p, w->len, deadline)) != 0) {
        rc = gp_diag_set(diag, GP_EIO, where,
                         "sending the spec to gpupool-supervisor: %s",
                         strerror(e));
        goto fail;
    }
    for (;;) {
        rc = next_line(&l, line, sizeof(line), deadline, &timed_out);
        if (rc == 1 && !strncmp(line, "pid ", 4)) {
            if (sscanf(line + 4, "%llu %llu", &spid, &sstart) != 2)
                spid = 0;
        } else if (rc == 1 && !strcmp(line, "ready") && !go_sent) {
            if ((rc = read_pid_file(proc, diag)) != GP_OK)
                goto fail;
            if ((unsigned long long)proc->supervisor_pid != spid) {
                rc = gp_diag_set(diag, GP_EIO, where,
                                 "the pid file names supervisor %ld, not "
                                 "%llu",
                                 (long)proc->supervisor_pid, spid);
                goto fail;
            }
            if (send_all(fd, "go\n", 3, deadline) != 0) {
                rc = gp_diag_set(diag, GP_EIO, where,
                                 "gpupool-supervisor went away before the "
                                 "job was let go");
                goto fail;
            }
            go_sent = true;
        } else if (rc == 1 && !strcmp(line, "started") && go_sent) {
            return GP_OK;
        } else if (rc == 1 && !strncmp(line, "failed ", 7)) {
            char name[16];
            int n = 0;

            if (sscanf(line + 7, "%15s %n", name, &n) != 1 || n == 0)
                return gp_diag_set(diag, GP_EIO, where, "%s", line + 7);
            return gp_diag_set(diag, gp__local_err_from_name(name), where, "%s",
                               line + 7 + n);
        } else if (rc == 1) {
            rc = gp_diag_set(diag, GP_EIO, where,
                             "gpupool-supervisor said '%.60s'", line);
            goto fail;
        } else if (go_sent) {
            /* Let go: the run exists whatever happens next, and its files
             * will say how it went. Failing here would start it twice. */
            return GP_OK;
        } else if (rc == 0) {
            struct gp_local_state st;

            /* it may have said why in the status file only */
            if (read_status(proc, &st, NULL) == GP_OK &&
                st.kind == GP_LOCAL_START_FAILED)
                return gp_diag_set(diag, st.error, where, "%s", st.reason);
            return gp_diag_set(diag, GP_EIO, where,
                               "gpupool-supervisor exited before the job "
                               "started");
        } else {
            rc = gp_diag_set(diag, GP_EIO, where,
                             timed_out ? "gpupool-supervisor was not ready "
                                         "within %u ms"
                                       : "reading from gpupool-supervisor "
                                         "failed (%u ms)",
                             timeout);
            goto fail;
        }
    }
fail:
    kill_supervisor((pid_t)spid, sstart);
    return rc;
}

int gp_local_start(const struct gp_local_job *spec, struct gp_local_proc *out,
                   struct gp_diag *diag)
{
    char path[PATH_MAX];
    struct wire w = {0};
    struct gp_local_proc proc;
    int sv[2] = {-1, -1}, child_fd = -1, rc;
    pid_t pid;

    if (!spec || !out)
        return gp_diag_set(diag, GP_EINVAL, "spec", "no spec or no out");
    if ((rc = check_spec(spec, diag)) != GP_OK)
        return rc;
    if ((rc = supervisor_path(spec, path, sizeof(path), diag)) != GP_OK)
        return rc;
    if ((rc = prepare_job_dir(spec, diag)) != GP_OK)
        return rc;
    if ((rc = build_wire(spec, &w)) != GP_OK) {
        gp_diag_set(diag, rc, "spec", "out of memory");
        goto fail;
    }
    memset(&proc, 0, sizeof(proc));
    proc.job_id = spec->job_id;
    proc.run = spec->run;
    snprintf(proc.job_dir, sizeof(proc.job_dir), "%s", spec->job_dir);

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        rc = gp_diag_set(diag, GP_EIO, "supervisor", "socketpair: %s",
                         strerror(errno));
        goto fail;
    }
    /* well away from 0..3, which the spawn rearranges */
    child_fd = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    if (child_fd < 0) {
        rc = gp_diag_set(diag, GP_EIO, "supervisor", "fcntl: %s",
                         strerror(errno));
        goto fail;
    }
    rc = spawn_supervisor(path, spec, child_fd, &pid, diag);
    close(child_fd);
    close(sv[1]);
    child_fd = sv[1] = -1;
    if (rc != GP_OK)
        goto fail;
    reap_intermediate(pid);
    rc = converse(sv[0], spec, &w, &proc, diag);
    if (rc == GP_OK)
        *out = proc;
fail:
    if (sv[0] >= 0)
        close(sv[0]);
    if (sv[1] >= 0)
        close(sv[1]);
    free(w.p);
    return rc;
}

/* ---- after the start ---------------------------------------------------- */

const char *gp_local_kind_name(enum gp_local_kind kind)
{
    switch (kind) {
    case GP_LOCAL_RUNNING:
        return "running";
    case GP_LOCAL_EXITED:
        return "exited";
    case GP_LOCAL_KILLED:
        return "killed";
    case GP_LOCAL_START_FAILED:
        return "start_failed";
    case GP_LOCAL_LOST:
        return "lost";
    }
    return "unknown";
}

int gp_local_poll(const struct gp_local_proc *proc,
                  struct gp_local_state *state, struct gp_diag *diag)
{
    struct gp_local_state st;
    int rc;

    if (!state)
        return gp_diag_set(diag, GP_EINVAL, "state", "no state");
    if ((rc = check_proc(proc, diag)) != GP_OK)
        return rc;
    rc = read_status(proc, &st, diag);
    if (rc == GP_ENOENT &&
        is_same_process(proc->supervisor_pid, proc->supervisor_start,
                        proc->boot_id, false)) {
        memset(&st, 0, sizeof(st));
        st.kind = GP_LOCAL_RUNNING;
        st.start_us = proc->start_us;
        st.end_us = GP_TIME_NONE;
        *state = st;
        return GP_OK;
    }
    /* the supervisor may have written it and gone since the first look */
    if (rc == GP_ENOENT)
        rc = read_status(proc, &st, diag);
    if (rc == GP_ENOENT) {
        memset(&st, 0, sizeof(st));
        st.kind = GP_LOCAL_LOST;
        st.start_us = proc->supervisor_pid ? proc->start_us : GP_TIME_NONE;
        st.end_us = GP_TIME_NONE;
        if (!proc->supervisor_pid)
            snprintf(st.reason, sizeof(st.reason),
                     "run %u has neither a pid file nor a status", proc->run);
        else
            snprintf(st.reason, sizeof(st.reason),
                     "supervisor %ld is gone and left no status%s",
                     (long)proc->supervisor_pid,
                     is_same_process(proc->job_pid, proc->job_start,
                                     proc->boot_id, false)
                         ? "; its job still runs (signal it to end it)"
                         : "");
        rc = GP_OK;
    }
    if (rc == GP_OK)
        *state = st;
    return rc;
}

static bool has_status(const struct gp_local_proc *proc)
{
    char path[PATH_MAX];
    struct stat st;

    run_path(path, sizeof(path), proc->job_dir, proc->run, "status");
    return lstat(path, &st) == 0;
}

int gp_local_signal(const struct gp_local_proc *proc, int sig,
                    struct gp_diag *diag)
{
    char where[64];
    int rc, fd;

    if ((rc = check_proc(proc, diag)) != GP_OK)
        return rc;
    snprintf(where, sizeof(where), "job %llu run %u",
             (unsigned long long)proc->job_id, proc->run);
    if (sig < 0 || sig > SIGRTMAX)
        return gp_diag_set(diag, GP_EINVAL, "sig", "%d is not a signal", sig);
    if (has_status(proc))
        return gp_diag_set(diag, GP_ESTATE, where, "the run has ended");
    if (proc->supervisor_pid > 0) {
        union sigval val = {.sival_int = sig};

        fd = pidfd_open_(proc->supervisor_pid);
        if (fd >= 0) {
            /* the pidfd names one process for good; checked after the
             * open, its start time proves it is the recorded one */
            if (is_same_process(proc->supervisor_pid, proc->supervisor_start,
                                proc->boot_id, false)) {
                siginfo_t si;

                memset(&si, 0, sizeof(si));
                si.si_signo = gp__local_ctl_signal();
                si.si_code = SI_QUEUE;
                si.si_pid = getpid();
                si.si_uid = getuid();
                si.si_value = val;
                rc = pidfd_send_signal_(fd, si.si_signo, &si);
                if (rc == 0 || errno != ESRCH) {
                    int e = errno;

                    close(fd);
                    if (rc == 0)
                        return GP_OK;
                    return gp_diag_set(diag, GP_EIO, where,
                                       "signalling supervisor %ld: %s",
                                       (long)proc->supervisor_pid, strerror(e));
                }
            }
            close(fd);
        } else if (errno == ENOSYS &&
                   is_same_process(proc->supervisor_pid, proc->supervisor_start,
                                   proc->boot_id, false)) {
            if (sigqueue(proc->supervisor_pid, gp__local_ctl_signal(), val) ==
                0)
                return GP_OK;
        }
    }
    if (has_status(proc))
        return gp_diag_set(diag, GP_ESTATE, where, "the run has ended");
    /* No supervisor: a lost run whose job may live on. Its leader, even
     * a zombie, holds the group id while it matches. */
    if (is_same_process(proc->job_pid, proc->job_start, proc->boot_id, true) &&
        kill(-proc->job_pid, sig) == 0)
        return GP_OK;
    return gp_diag_set(diag, GP_ENOENT, where,
                       "neither supervisor %ld nor job %ld is alive as "
                       "recorded: nothing signalled",
                       (long)proc->supervisor_pid, (long)proc->job_pid);
}

int gp_local_adopt(const char *job_dir, uint32_t run,
                   struct gp_local_proc *proc, struct gp_diag *diag)
{
    struct gp_local_proc p;
    int rc;

    if (!proc)
        return gp_diag_set(diag, GP_EINVAL, "proc", "no proc");
    if (!job_dir || !is_clean_abs(job_dir) ||
        strlen(job_dir) >= GP_LOCAL_PATH_MAX - 32)
        return gp_diag_set(diag, GP_EINVAL, "job_dir",
                           "'%.60s' is not a clean absolute path",
                           job_dir ? job_dir : "(null)");
    if (run == 0)
        return gp_diag_set(diag, GP_EINVAL, "run", "must be > 0");
    memset(&p, 0, sizeof(p));
    p.run = run;
    snprintf(p.job_dir, sizeof(p.job_dir), "%s", job_dir);
    rc = read_pid_file(&p, diag);
    if (rc != GP_OK && rc != GP_ENOENT)
        return rc;
    *proc = p;
    return GP_OK;
}

int gp_local_watch_fd(const struct gp_local_proc *proc, int *fd,
                      struct gp_diag *diag)
{
    int rc, pfd;

    if ((rc = check_proc(proc, diag)) != GP_OK)
        return rc;
    if (!fd)
        return gp_diag_set(diag, GP_EINVAL, "fd", "no fd");
    pfd = pidfd_open_(proc->supervisor_pid);
    if (pfd < 0 && errno == ENOSYS)
        return gp_diag_set(diag, GP_EIO, "pidfd", "not supported here");
    if (pfd >= 0 &&
        is_same_process(proc->supervisor_pid, proc->supervisor_start,
                        proc->boot_id, false)) {
        *fd = pfd;
        return GP_OK;
    }
    if (pfd >= 0)
        close(pfd);
    return gp_diag_set(diag, GP_ENOENT, "supervisor", "supervisor %ld is gone",
                       (long)proc->supervisor_pid);
}

/* ---- stopping ------------------------------------------------------------ */

void gp_local_stop_init(struct gp_local_stop *st, int first_signal,
                        int64_t grace_us, int64_t kill_after_us)
{
    memset(st, 0, sizeof(*st));
    st->first_signal = first_signal > 0 ? first_signal : SIGTERM;
    st->grace_us = grace_us > 0 ? grace_us : 0;
    st->kill_after_us = kill_after_us > 0 ? kill_after_us : 0;
}

int gp_local_stop_step(struct gp_local_stop *st,
                       const struct gp_local_proc *proc, int64_t now_us,
                       struct gp_diag *diag)
{
    int sig, stage, rc;
    int64_t deadline;

    if (!st)
        return gp_diag_set(diag, GP_EINVAL, "stop", "no stop");
    switch (st->stage) {
    case 0:
        sig = st->first_signal;
        stage = sig == SIGTERM ? 2 : 1;
        deadline = gp_add_sat(now_us, sig == SIGTERM ? st->kill_after_us
                                                     : st->grace_us);
        break;
    case 1:
        if (now_us < st->deadline_us)
            return GP_OK;
        sig = SIGTERM;
        stage = 2;
        deadline = gp_add_sat(now_us, st->kill_after_us);
        break;
    case 2:
        if (now_us < st->deadline_us)
            return GP_OK;
        sig = SIGKILL;
        stage = 3;
        deadline = GP_TIME_NONE;
        break;
    default:
        return GP_OK;
    }
    if ((rc = gp_local_signal(proc, sig, diag)) != GP_OK)
        return rc;
    st->stage = stage;
    st->deadline_us = deadline;
    return GP_OK;
}
