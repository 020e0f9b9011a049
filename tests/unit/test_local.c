/* test_local.c - the local job controller with real processes: the job's
 * environment, files and exit status, failed starts, preemption and its
 * escalation, restarts from a checkpoint, a daemon that dies, pid reuse,
 * and (as root) running as another user.
 *
 * Every wait is a poll loop with a generous limit; the fake clock of
 * gp_local_stop_step stands in for grace periods, so nothing here sleeps
 * for a grace. Root-only tests skip when not root. */
#define _GNU_SOURCE /* nftw */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/local.h"

#define WAIT_S 60
#define MAX_PROCS 8
#define COUNTER GP_SOURCE_ROOT "/examples/ckpt_counter.py"

struct t {
    char dir[64];      /* a fresh directory under /tmp, mode 0755 */
    char job_dir[128]; /* dir/job */
    struct gp_local_proc procs[MAX_PROCS];
    size_t nprocs;
};

/* ---- harness --------------------------------------------------------------
 */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

static struct gp_local_state poll_ok(const struct gp_local_proc *proc)
{
    struct gp_local_state st;
    struct gp_diag diag = {{0}, {0}};
    int rc = gp_local_poll(proc, &st, &diag);

    if (rc != GP_OK)
        fail_msg("poll: %s: %s", diag.where, diag.msg);
    return st;
}

/* st must be of this kind; else say what it was and what the job said. */
static void expect_kind(const struct gp_local_proc *proc,
                        const struct gp_local_state *st,
                        enum gp_local_kind kind)
{
    char path[GP_LOCAL_PATH_MAX + 16];
    char buf[4096] = "";
    FILE *f;

    if (st->kind == kind)
        return;
    snprintf(path, sizeof(path), "%s/stderr", proc->job_dir);
    f = fopen(path, "r");
    if (f) {
        buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
        fclose(f);
    }
    fail_msg("run %u is %s (code %d, signal %d, '%s'), not %s; stderr:\n%s",
             proc->run, gp_local_kind_name(st->kind), st->code, st->signal,
             st->reason, gp_local_kind_name(kind), buf);
}

/* Poll until the run is no longer RUNNING. */
static struct gp_local_state wait_end(const struct gp_local_proc *proc)
{
    double until = mono_s() + WAIT_S;

    for (;;) {
        struct gp_local_state st = poll_ok(proc);

        if (st.kind != GP_LOCAL_RUNNING)
            return st;
        if (mono_s() > until)
            fail_msg("run %u still running after %d s", proc->run, WAIT_S);
        sleep_ms(10);
    }
}

static int setup(void **state)
{
    struct t *t = calloc(1, sizeof(*t));

    if (!t)
        return -1;
    snprintf(t->dir, sizeof(t->dir), "/tmp/gp-local-XXXXXX");
    if (!mkdtemp(t->dir) || chmod(t->dir, 0755) < 0) {
        free(t);
        return -1;
    }
    snprintf(t->job_dir, sizeof(t->job_dir), "%s/job", t->dir);
    *state = t;
    return 0;
}

/* Whatever a failed test left running is killed before its files go. */
static int teardown(void **state)
{
    struct t *t = *state;

    for (size_t i = 0; i < t->nprocs; i++) {
        struct gp_local_state st;
        double until = mono_s() + 10;

        if (gp_local_signal(&t->procs[i], SIGKILL, NULL) != GP_OK)
            continue;
        while (gp_local_poll(&t->procs[i], &st, NULL) == GP_OK &&
               st.kind == GP_LOCAL_RUNNING && mono_s() < until)
            sleep_ms(10);
    }
    nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(t);
    return 0;
}

static void spec_for(struct t *t, struct gp_local_job *spec,
                     const char *const *argv)
{
    gp_local_job_init(spec);
    spec->job_id = 42;
    spec->run = 1;
    spec->argv = argv;
    spec->job_dir = t->job_dir;
    spec->cwd = t->dir;
    spec->submitter_uid = GP_LOCAL_UID_SELF;
    spec->supervisor = GP_SUPERVISOR_PATH;
}

static void track(struct t *t, const struct gp_local_proc *proc)
{
    if (t->nprocs < MAX_PROCS)
        t->procs[t->nprocs++] = *proc;
}

static void start_ok(struct t *t, const struct gp_local_job *spec,
                     struct gp_local_proc *proc)
{
    struct gp_diag diag = {{0}, {0}};
    int rc = gp_local_start(spec, proc, &diag);

    if (rc != GP_OK)
        fail_msg("start: %s: %s: %s", gp_err_name(rc), diag.where, diag.msg);
    track(t, proc);
}

/* The whole file, or NULL; the caller frees. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (!f)
        return NULL;
    do {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        n = fread(buf + len, 1, 4096, f);
        len += n;
    } while (n > 0);
    fclose(f);
    buf[len] = '\0';
    return buf;
}

static char *slurp_in(const struct t *t, const char *name)
{
    char path[256];

    snprintf(path, sizeof(path), "%s/%s", t->job_dir, name);
    return slurp(path);
}

/* The file with the "==> gpupool: ..." lines left out. */
static char *body_of(const struct t *t, const char *name)
{
    char *text = slurp_in(t, name), *out, *o;

    assert_non_null(text);
    out = o = calloc(1, strlen(text) + 1);
    assert_non_null(out);
    for (char *line = text; *line;) {
        size_t n = strcspn(line, "\n");

        if (strncmp(line, "==> gpupool:", 12)) {
            memcpy(o, line, n);
            o += n;
            if (line[n])
                *o++ = '\n';
        }
        line += n + (line[n] ? 1 : 0);
    }
    free(text);
    return out;
}

/* Wait until the job's file `name` holds needle. */
static void wait_text(const struct t *t, const char *name, const char *needle)
{
    double until = mono_s() + WAIT_S;

    for (;;) {
        char *text = slurp_in(t, name);
        bool found = text && strstr(text, needle);

        free(text);
        if (found)
            return;
        if (mono_s() > until)
            fail_msg("'%s' not in %s after %d s", needle, name, WAIT_S);
        sleep_ms(10);
    }
}

static void touch(const char *dir, const char *name)
{
    char path[256];
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    close(fd);
}

static bool exists(const char *dir, const char *name)
{
    char path[256];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static bool have_python3(void)
{
    return access("/usr/bin/python3", X_OK) == 0 ||
           access("/usr/local/bin/python3", X_OK) == 0 ||
           access("/bin/python3", X_OK) == 0;
}

/* A job that waits for the file "go" in dir, then exits with `code`. */
static const char *wait_go_script =
    "echo waiting; while [ ! -e go ]; do sleep 0.02; done; exit \"$0\"";

/* ---- environment, files, exit status ----------------------------------------
 */

static void job_gets_exactly_the_documented_environment(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/usr/bin/env", NULL};
    const char *env[] = {"FOO=bar", "PATH=/usr/bin:/bin", "FOO=baz", NULL};
    struct passwd *pw = getpwuid(geteuid());
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_state st;
    char expect[16][300];
    char *out;
    size_t lines = 0;
    struct stat sb;

    assert_non_null(pw);
    spec_for(t, &spec, argv);
    spec.env = env;
    spec.devices = "0,1";
    spec.restart_count = 2;
    spec.grace_s = 30;
    start_ok(t, &spec, &proc);
    st = wait_end(&proc);
    expect_kind(&proc, &st, GP_LOCAL_EXITED);
    assert_int_equal(st.code, 0);

    snprintf(expect[0], 300, "PATH=/usr/bin:/bin");
    snprintf(expect[1], 300, "HOME=%s", pw->pw_dir);
    snprintf(expect[2], 300, "USER=%s", pw->pw_name);
    snprintf(expect[3], 300, "LOGNAME=%s", pw->pw_name);
    snprintf(expect[4], 300, "SHELL=%s",
             pw->pw_shell[0] ? pw->pw_shell : "/bin/sh");
    snprintf(expect[5], 300, "FOO=baz");
    snprintf(expect[6], 300, "GPUPOOL_JOB_ID=42");
    snprintf(expect[7], 300, "GPUPOOL_RESTART_COUNT=2");
    snprintf(expect[8], 300, "GPUPOOL_CHECKPOINT_DIR=%s/checkpoint",
             t->job_dir);
    snprintf(expect[9], 300, "GPUPOOL_PREEMPT_SIGNAL=%d", SIGUSR1);
    snprintf(expect[10], 300, "GPUPOOL_PREEMPT_GRACE_S=30");
    snprintf(expect[11], 300, "CUDA_VISIBLE_DEVICES=0,1");
    snprintf(expect[12], 300, "CUDA_DEVICE_ORDER=PCI_BUS_ID");
    out = body_of(t, "stdout");
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        bool known = false;

        for (size_t i = 0; i < 13; i++)
            known = known || !strcmp(line, expect[i]);
        if (!known)
            fail_msg("unexpected variable: %s", line);
        lines++;
    }
    assert_int_equal(lines, 13);
    free(out);
    /* the checkpoint directory exists, private to the job's user */
    snprintf(expect[0], 300, "%s/checkpoint", t->job_dir);
    assert_int_equal(stat(expect[0], &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0700);
    assert_int_equal(sb.st_uid, geteuid());
}

static void cpu_only_job_gets_an_empty_cuda_visible_devices(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c",
                          "printf '[%s]\\n' \"${CUDA_VISIBLE_DEVICES-unset}\"",
                          NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    char *out;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    assert_int_equal(wait_end(&proc).kind, GP_LOCAL_EXITED);
    out = body_of(t, "stdout");
    assert_string_equal(out, "[]\n");
    free(out);
}

static void job_runs_in_its_working_directory_or_its_home(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/pwd", "-P", NULL};
    struct passwd *pw = getpwuid(geteuid());
    struct gp_local_job spec;
    struct gp_local_proc proc;
    char work[128], expect[4352], home[4096];
    char *out;

    assert_non_null(pw);
    assert_non_null(realpath(pw->pw_dir, home));
    snprintf(work, sizeof(work), "%s/work", t->dir);
    assert_int_equal(mkdir(work, 0755), 0);
    spec_for(t, &spec, argv);
    spec.cwd = work;
    start_ok(t, &spec, &proc);
    assert_int_equal(wait_end(&proc).code, 0);

    spec.run = 2;
    spec.cwd = NULL;
    start_ok(t, &spec, &proc);
    assert_int_equal(wait_end(&proc).code, 0);
    out = body_of(t, "stdout");
    snprintf(expect, sizeof(expect), "%s\n%s\n", work, home);
    assert_string_equal(out, expect);
    free(out);
}

static void output_goes_to_stdout_and_stderr_with_a_header_per_run(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", "echo out$0; echo err$0 >&2", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    char *out, *err, *body;
    const char *h1, *h2;
    char path[256];
    struct stat sb;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    assert_int_equal(wait_end(&proc).code, 0);
    spec.run = 2;
    spec.restart_count = 1;
    start_ok(t, &spec, &proc);
    assert_int_equal(wait_end(&proc).code, 0);

    out = slurp_in(t, "stdout");
    err = slurp_in(t, "stderr");
    assert_non_null(out);
    assert_non_null(err);
    h1 = strstr(out, "==> gpupool: job 42 run 1 (restart 0) as ");
    h2 = strstr(out, "==> gpupool: job 42 run 2 (restart 1) as ");
    assert_non_null(h1);
    assert_non_null(h2);
    assert_true(h1 < strstr(out, "out/bin/sh"));
    assert_true(strstr(out, "out/bin/sh") < h2);
    assert_non_null(strstr(h2, "out/bin/sh"));
    /* stderr: the header, the job's lines, how it ended */
    h1 = strstr(err, "==> gpupool: job 42 run 1 ");
    assert_non_null(h1);
    assert_non_null(strstr(h1, "err/bin/sh"));
    assert_non_null(strstr(err, "==> gpupool: job 42 run 1 ended "));
    assert_non_null(strstr(err, ": exit code 0 <=="));
    assert_non_null(strstr(err, "==> gpupool: job 42 run 2 "));
    body = body_of(t, "stdout");
    assert_string_equal(body, "out/bin/sh\nout/bin/sh\n");
    free(body);
    body = body_of(t, "stderr");
    assert_string_equal(body, "err/bin/sh\nerr/bin/sh\n");
    free(body);
    free(out);
    free(err);
    /* the files are the job user's and private */
    snprintf(path, sizeof(path), "%s/stdout", t->job_dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(sb.st_uid, geteuid());
}

static void exit_code_3_is_recorded(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", "exit 3", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc, again;
    struct gp_local_state st;
    char *status;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    assert_true(proc.supervisor_pid > 0);
    assert_true(proc.job_pid > 0);
    assert_true(proc.start_us > 0);
    st = wait_end(&proc);
    expect_kind(&proc, &st, GP_LOCAL_EXITED);
    assert_int_equal(st.code, 3);
    assert_true(st.start_us > 0);
    assert_true(st.end_us >= st.start_us);
    /* written whole: no temporary left, and the same seen from a restart */
    assert_false(exists(t->job_dir, "run-1.status.tmp"));
    assert_false(exists(t->job_dir, "run-1.pid.tmp"));
    status = slurp_in(t, "run-1.status");
    assert_non_null(status);
    assert_non_null(strstr(status, "kind=exited\n"));
    assert_non_null(strstr(status, "code=3\n"));
    free(status);
    assert_int_equal(gp_local_adopt(t->job_dir, 1, &again, NULL), GP_OK);
    assert_int_equal(again.job_id, 42);
    assert_int_equal(again.job_pid, proc.job_pid);
    assert_int_equal(again.supervisor_pid, proc.supervisor_pid);
    st = poll_ok(&again);
    expect_kind(&again, &st, GP_LOCAL_EXITED);
    assert_int_equal(st.code, 3);
    assert_string_equal(gp_local_kind_name(st.kind), "exited");
}

static void job_killed_by_sigsegv_is_recorded_as_signal_11(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", "ulimit -c 0; kill -SEGV $$", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_state st;
    char *err;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    st = wait_end(&proc);
    expect_kind(&proc, &st, GP_LOCAL_KILLED);
    assert_int_equal(st.signal, SIGSEGV);
    err = slurp_in(t, "stderr");
    assert_non_null(strstr(err, "killed by signal 11"));
    free(err);
}

/* ---- failed starts
 * ------------------------------------------------------------ */

/* Start must fail with err and a message holding needle; the status file
 * says start_failed with the same reason, and the job's stderr says so. */
static void start_fails(struct t *t, const struct gp_local_job *spec, int err,
                        const char *needle)
{
    struct gp_diag diag = {{0}, {0}};
    struct gp_local_proc proc;
    struct gp_local_state st;
    char *text;
    int rc = gp_local_start(spec, &proc, &diag);

    if (rc != err)
        fail_msg("start gave %s (%s: %s), not %s", gp_err_name(rc), diag.where,
                 diag.msg, gp_err_name(err));
    if (!strstr(diag.msg, needle))
        fail_msg("'%s' not in '%s'", needle, diag.msg);
    assert_int_equal(gp_local_adopt(spec->job_dir, spec->run, &proc, NULL),
                     GP_OK);
    st = poll_ok(&proc);
    expect_kind(&proc, &st, GP_LOCAL_START_FAILED);
    assert_int_equal(st.error, err);
    assert_non_null(strstr(st.reason, needle));
    text = slurp_in(t, "stderr");
    assert_non_null(text);
    assert_non_null(strstr(text, "failed to start: "));
    assert_non_null(strstr(text, needle));
    free(text);
}

static void bad_command_fails_to_start_with_the_path_in_the_reason(void **state)
{
    struct t *t = *state;
    const char *typo[] = {"./trian.py", NULL};
    const char *bare[] = {"gp-no-such-command", "x", NULL};
    const char *noexec[] = {"./data.txt", NULL};
    struct gp_local_job spec;

    spec_for(t, &spec, typo);
    start_fails(t, &spec, GP_ENOENT,
                "exec: No such file or directory: ./trian.py");
    spec.argv = bare;
    spec.run = 2;
    start_fails(t, &spec, GP_ENOENT,
                "exec: No such file or directory: gp-no-such-command");
    touch(t->dir, "data.txt");
    spec.argv = noexec;
    spec.run = 3;
    start_fails(t, &spec, GP_EIO, "exec: Permission denied: ./data.txt");
    /* a script without "#!": not run by some shell behind the user's back */
    {
        char path[128];
        FILE *f;

        snprintf(path, sizeof(path), "%s/data.txt", t->dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("echo hi\n", f);
        fclose(f);
        assert_int_equal(chmod(path, 0755), 0);
    }
    spec.run = 4;
    start_fails(t, &spec, GP_EIO, "exec: Exec format error: ./data.txt");
}

static void missing_user_fails_to_start(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/true", NULL};
    struct gp_local_job spec;

    spec_for(t, &spec, argv);
    spec.user = "gp-no-such-user";
    start_fails(t, &spec, GP_ENOENT, "user 'gp-no-such-user' does not exist");
}

static void missing_working_directory_fails_to_start(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/true", NULL};
    struct gp_local_job spec;

    spec_for(t, &spec, argv);
    spec.cwd = "/nonexistent/gp-local";
    start_fails(t, &spec, GP_ENOENT,
                "chdir: No such file or directory: /nonexistent/gp-local");
}

static void bad_specs_are_refused_with_the_field_named(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/true", NULL};
    const char *empty[] = {"", NULL};
    const char *no_eq[] = {"NOEQUALS", NULL};
    const char *ours[] = {"A=1", "GPUPOOL_JOB_ID=9", NULL};
    const char *cuda[] = {"CUDA_VISIBLE_DEVICES=0,1,2,3", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_diag diag;
    size_t n = 0;

#define CASE(w, body)                                                          \
    do {                                                                       \
        spec_for(t, &spec, argv);                                              \
        body;                                                                  \
        memset(&diag, 0, sizeof(diag));                                        \
        assert_int_equal(gp_local_start(&spec, &proc, &diag), GP_EINVAL);      \
        if (strcmp(diag.where, w))                                             \
            fail_msg("where '%s' (%s), not '%s'", diag.where, diag.msg, w);    \
        n++;                                                                   \
    } while (0)
    CASE("version", spec.version = 0);
    CASE("job_id", spec.job_id = 0);
    CASE("run", spec.run = 0);
    CASE("argv", spec.argv = NULL);
    CASE("argv", spec.argv = empty);
    CASE("env[0]", spec.env = no_eq);
    CASE("env[1]", spec.env = ours);
    CASE("env[0]", spec.env = cuda);
    CASE("job_dir", spec.job_dir = "job");
    CASE("job_dir", spec.job_dir = "/tmp/../etc");
    CASE("job_dir", spec.job_dir = NULL);
    CASE("cwd", spec.cwd = "relative");
    CASE("checkpoint_dir", spec.checkpoint_dir = "ckpt");
    CASE("checkpoint_dir", spec.checkpoint_dir = "/tmp/a//b");
    CASE("preempt_signal", spec.preempt_signal = SIGKILL);
    CASE("preempt_signal", spec.preempt_signal = -1);
    CASE("submitter_uid", spec.submitter_uid = GP_LOCAL_UID_UNSET);
    CASE("devices", spec.devices = "0\n1");
    CASE("user", spec.user = "");
    CASE("supervisor", spec.supervisor = "gpupool-supervisor");
#undef CASE
    assert_int_equal(n, 20);
    assert_int_equal(gp_local_start(NULL, &proc, NULL), GP_EINVAL);
    spec_for(t, &spec, argv);
    assert_int_equal(gp_local_start(&spec, NULL, NULL), GP_EINVAL);
    /* nothing was started, and nothing was made */
    assert_false(exists(t->dir, "job/run-1.pid"));
    /* a supervisor that is not there */
    spec.supervisor = "/nonexistent/gpupool-supervisor";
    memset(&diag, 0, sizeof(diag));
    assert_int_equal(gp_local_start(&spec, &proc, &diag), GP_ENOENT);
    assert_string_equal(diag.where, "supervisor");
}

static void a_run_number_is_used_once(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/true", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_diag diag = {{0}, {0}};

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    assert_int_equal(wait_end(&proc).kind, GP_LOCAL_EXITED);
    assert_int_equal(gp_local_start(&spec, &proc, &diag), GP_EEXIST);
    assert_string_equal(diag.where, "run");
}

/* A start given up before the supervisor was told to go (here: a time-out
 * of 1 ms) never runs the job; one that returns GP_OK did run it. */
static void a_start_given_up_before_go_never_runs_the_job(void **state)
{
    struct t *t = *state;
    const char *args[8][5];
    struct gp_local_job spec;
    struct gp_local_proc proc;
    char marker[8][32];
    int ok[8];

    for (int i = 0; i < 8; i++) {
        snprintf(marker[i], sizeof(marker[i]), "%d", i);
        args[i][0] = "/bin/sh";
        args[i][1] = "-c";
        args[i][2] = "touch ran-$0";
        args[i][3] = marker[i];
        args[i][4] = NULL;
        spec_for(t, &spec, args[i]);
        spec.run = (uint32_t)i + 1;
        spec.start_timeout_ms = 1;
        ok[i] = gp_local_start(&spec, &proc, NULL) == GP_OK;
        if (ok[i]) {
            track(t, &proc);
            assert_int_equal(wait_end(&proc).kind, GP_LOCAL_EXITED);
        }
    }
    /* a supervisor that was not killed gives up on its own once it finds
     * gpupool gone; give it time, then nothing that failed may have run */
    sleep_ms(1000);
    for (int i = 0; i < 8; i++) {
        char name[40];

        snprintf(name, sizeof(name), "ran-%d", i);
        if (exists(t->dir, name) != (bool)ok[i])
            fail_msg("start %d gave %s but the job %s", i,
                     ok[i] ? "OK" : "an error", ok[i] ? "did not run" : "ran");
    }
}

/* ---- preemption
 * ------------------------------------------------------------------ */

/* Run 1 of the counter, preempted after step 3: the checkpointed step. */
static int counter_preempted(struct t *t)
{
    const char *argv[] = {"python3",        COUNTER, "--steps", "100000",
                          "--step-seconds", "0.02",  NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_stop stop;
    struct gp_local_state st;
    char *out, *state, *k;
    char path[256];
    int step;

    spec_for(t, &spec, argv);
    spec.grace_s = 30;
    start_ok(t, &spec, &proc);
    wait_text(t, "stdout", "step 3\n");
    gp_local_stop_init(&stop, SIGUSR1, 30 * GP_US_PER_S, 10 * GP_US_PER_S);
    assert_int_equal(gp_local_stop_step(&stop, &proc, 0, NULL), GP_OK);
    assert_int_equal(stop.stage, 1);
    assert_int_equal(stop.deadline_us, 30 * GP_US_PER_S);
    /* within its grace (real time; the deadline is never reached here) */
    st = wait_end(&proc);
    expect_kind(&proc, &st, GP_LOCAL_EXITED);
    assert_int_equal(st.code, 0);
    assert_int_equal(stop.stage, 1); /* no SIGTERM was needed */
    out = body_of(t, "stdout");
    k = strstr(out, "checkpointed at step ");
    assert_non_null(k);
    step = atoi(k + strlen("checkpointed at step "));
    assert_true(step >= 3);
    free(out);
    snprintf(path, sizeof(path), "%s/checkpoint/state.json", t->job_dir);
    state = slurp(path);
    assert_non_null(state);
    snprintf(path, sizeof(path), "{\"step\": %d}", step);
    assert_string_equal(state, path);
    free(state);
    return step;
}

static void preempted_counter_checkpoints_and_exits_0_within_grace(void **state)
{
    if (!have_python3())
        skip();
    counter_preempted(*state);
}

static void restarted_run_resumes_from_its_checkpoint(void **state)
{
    struct t *t = *state;
    int k;
    char steps[16], resumed[64], done[32];
    const char *argv[] = {"python3",        COUNTER, "--steps", steps,
                          "--step-seconds", "0.01",  NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_state st;
    char *out;

    if (!have_python3())
        skip();
    k = counter_preempted(t);
    snprintf(steps, sizeof(steps), "%d", k + 3);
    spec_for(t, &spec, argv);
    spec.run = 2;
    spec.restart_count = 1;
    start_ok(t, &spec, &proc);
    st = wait_end(&proc);
    expect_kind(&proc, &st, GP_LOCAL_EXITED);
    assert_int_equal(st.code, 0);
    out = body_of(t, "stdout");
    snprintf(resumed, sizeof(resumed), "resumed at step %d (restart 1)\n", k);
    snprintf(done, sizeof(done), "done %d\n", k + 3);
    assert_non_null(strstr(out, resumed));
    assert_non_null(strstr(out, done));
    assert_true(strstr(out, resumed) < strstr(out, done));
    free(out);
}

/* A shell job that reports each signal and goes on. */
static const char *stubborn_script =
    "trap 'echo got USR1' USR1; trap 'echo got TERM' TERM; echo ready; "
    "while :; do sleep 0.02; done";

static void
job_ignoring_the_preempt_signal_gets_sigterm_then_sigkill(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", stubborn_script, NULL};
    const int64_t t0 = 1000 * GP_US_PER_S, s = GP_US_PER_S;
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_stop stop;
    struct gp_local_state st;
    struct gp_diag diag = {{0}, {0}};

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    wait_text(t, "stdout", "ready\n");
    gp_local_stop_init(&stop, SIGUSR1, 5 * s, 5 * s);
    assert_int_equal(gp_local_stop_step(&stop, &proc, t0, NULL), GP_OK);
    wait_text(t, "stdout", "got USR1\n");
    assert_int_equal(stop.deadline_us, t0 + 5 * s);
    /* before the grace is out: nothing more */
    assert_int_equal(gp_local_stop_step(&stop, &proc, t0 + s, NULL), GP_OK);
    assert_int_equal(stop.stage, 1);
    assert_int_equal(gp_local_stop_step(&stop, &proc, t0 + 5 * s, NULL), GP_OK);
    assert_int_equal(stop.stage, 2);
    wait_text(t, "stdout", "got TERM\n");
    assert_int_equal(poll_ok(&proc).kind, GP_LOCAL_RUNNING);
    assert_int_equal(gp_local_stop_step(&stop, &proc, t0 + 9 * s, NULL), GP_OK);
    assert_int_equal(stop.stage, 2);
    assert_int_equal(gp_local_stop_step(&stop, &proc, t0 + 10 * s, NULL),
                     GP_OK);
    assert_int_equal(stop.stage, 3);
    assert_int_equal(stop.deadline_us, GP_TIME_NONE);
    st = wait_end(&proc);
    expect_kind(&proc, &st, GP_LOCAL_KILLED);
    assert_int_equal(st.signal, SIGKILL);
    /* an ended run takes no signals */
    assert_int_equal(gp_local_signal(&proc, SIGTERM, &diag), GP_ESTATE);
    assert_non_null(strstr(diag.msg, "ended"));
}

static void cancel_sends_sigterm_first_then_sigkill(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", stubborn_script, NULL};
    const int64_t s = GP_US_PER_S;
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_stop stop;
    char *out;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    wait_text(t, "stdout", "ready\n");
    gp_local_stop_init(&stop, SIGTERM, 0, 3 * s);
    assert_int_equal(gp_local_stop_step(&stop, &proc, 0, NULL), GP_OK);
    assert_int_equal(stop.stage, 2);
    assert_int_equal(stop.deadline_us, 3 * s);
    wait_text(t, "stdout", "got TERM\n");
    assert_int_equal(gp_local_stop_step(&stop, &proc, 3 * s, NULL), GP_OK);
    assert_int_equal(wait_end(&proc).signal, SIGKILL);
    out = body_of(t, "stdout");
    assert_null(strstr(out, "got USR1"));
    free(out);
}

static void signals_sent_to_the_supervisor_are_passed_to_the_job(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c",
                          "trap 'echo got TERM; exit 5' TERM; echo ready; "
                          "while :; do sleep 0.02; done",
                          NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_state st;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    wait_text(t, "stdout", "ready\n");
    assert_int_equal(kill(proc.supervisor_pid, SIGTERM), 0);
    st = wait_end(&proc);
    expect_kind(&proc, &st, GP_LOCAL_EXITED);
    assert_int_equal(st.code, 5);
}

/* ---- the daemon's death, adoption, pid reuse
 * ------------------------------------ */

static void job_survives_the_death_of_the_process_that_started_it(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", wait_go_script, "7", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc, adopted;
    struct gp_local_state st;
    int pipefd[2];
    pid_t daemon;
    ssize_t n;

    spec_for(t, &spec, argv);
    assert_int_equal(pipe(pipefd), 0);
    daemon = fork();
    assert_true(daemon >= 0);
    if (daemon == 0) {
        /* the "daemon": starts the job, hands over what it knows, and
         * waits to be killed */
        struct gp_local_proc p;

        close(pipefd[0]);
        if (gp_local_start(&spec, &p, NULL) != GP_OK)
            _exit(1);
        if (write(pipefd[1], &p, sizeof(p)) != (ssize_t)sizeof(p))
            _exit(1);
        for (;;)
            pause();
    }
    close(pipefd[1]);
    n = read(pipefd[0], &proc, sizeof(proc));
    close(pipefd[0]);
    assert_int_equal(n, (ssize_t)sizeof(proc));
    track(t, &proc);
    wait_text(t, "stdout", "waiting\n");
    assert_int_equal(kill(daemon, SIGKILL), 0);
    assert_int_equal(waitpid(daemon, NULL, 0), daemon);

    /* apart from the daemon: another session, its own process group */
    assert_true(getsid(proc.supervisor_pid) != getsid(0));
    assert_int_equal(getpgid(proc.job_pid), proc.job_pid);
    assert_int_equal(poll_ok(&proc).kind, GP_LOCAL_RUNNING);

    /* a new daemon finds it from the job directory and the run alone */
    assert_int_equal(gp_local_adopt(t->job_dir, 1, &adopted, NULL), GP_OK);
    assert_int_equal(adopted.job_id, 42);
    assert_int_equal(adopted.supervisor_pid, proc.supervisor_pid);
    assert_int_equal(adopted.supervisor_start, proc.supervisor_start);
    assert_int_equal(adopted.job_pid, proc.job_pid);
    assert_string_equal(adopted.boot_id, proc.boot_id);
    assert_int_equal(poll_ok(&adopted).kind, GP_LOCAL_RUNNING);

    touch(t->dir, "go");
    st = wait_end(&adopted);
    expect_kind(&adopted, &st, GP_LOCAL_EXITED);
    assert_int_equal(st.code, 7);
}

static void a_recycled_pid_is_never_signalled(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", wait_go_script, "0", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc, fake;
    struct gp_diag diag = {{0}, {0}};
    char text[512];
    pid_t other;
    int status;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    wait_text(t, "stdout", "waiting\n");

    /* the same pids, started at another time: not ours */
    fake = proc;
    fake.supervisor_start++;
    fake.job_start++;
    assert_int_equal(gp_local_signal(&fake, SIGKILL, &diag), GP_ENOENT);
    assert_non_null(strstr(diag.msg, "nothing signalled"));
    fake = proc;
    snprintf(fake.boot_id, sizeof(fake.boot_id), "another-boot");
    assert_int_equal(gp_local_signal(&fake, SIGKILL, NULL), GP_ENOENT);
    assert_int_equal(poll_ok(&fake).kind, GP_LOCAL_LOST);
    assert_int_equal(poll_ok(&proc).kind, GP_LOCAL_RUNNING);

    /* a pid file left by a run long gone, whose pids now belong to a
     * process of ours (its own group): never taken for it, never hit */
    other = fork();
    assert_true(other >= 0);
    if (other == 0) {
        setpgid(0, 0);
        for (;;)
            pause();
    }
    setpgid(other, other);
    snprintf(text, sizeof(text),
             "version=1\njob=42\nrun=9\nboot_id=%s\nsupervisor_pid=%ld\n"
             "supervisor_start=1\njob_pid=%ld\njob_start=1\nstart_us=1\n",
             proc.boot_id, (long)other, (long)other);
    {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/run-9.pid", t->job_dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
    }
    assert_int_equal(gp_local_adopt(t->job_dir, 9, &fake, NULL), GP_OK);
    assert_int_equal(fake.job_pid, other);
    assert_int_equal(poll_ok(&fake).kind, GP_LOCAL_LOST);
    assert_int_equal(gp_local_signal(&fake, SIGKILL, NULL), GP_ENOENT);
    assert_int_equal(
        gp_local_stop_step(&(struct gp_local_stop){.first_signal = SIGKILL},
                           &fake, 0, NULL),
        GP_ENOENT);
    sleep_ms(50);
    assert_int_equal(waitpid(other, &status, WNOHANG), 0); /* alive */
    kill(other, SIGKILL);
    waitpid(other, NULL, 0);

    touch(t->dir, "go");
    assert_int_equal(wait_end(&proc).code, 0);
}

static void a_run_with_neither_supervisor_nor_status_is_lost(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/true", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_state st;
    struct gp_diag diag = {{0}, {0}};
    char path[256];
    int fd;

    /* nothing at all for run 5 */
    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc); /* makes the job directory */
    wait_end(&proc);
    assert_int_equal(gp_local_adopt(t->job_dir, 5, &proc, NULL), GP_OK);
    assert_int_equal(proc.supervisor_pid, 0);
    st = poll_ok(&proc);
    expect_kind(&proc, &st, GP_LOCAL_LOST);
    assert_non_null(strstr(st.reason, "neither a pid file nor a status"));
    assert_int_equal(gp_local_signal(&proc, SIGTERM, NULL), GP_ENOENT);

    /* run 1 ended; its status gone (a reboot that lost it): lost. Its
     * supervisor must be gone too (it reaps stragglers after the status) */
    assert_int_equal(gp_local_adopt(t->job_dir, 1, &proc, NULL), GP_OK);
    if (gp_local_watch_fd(&proc, &fd, NULL) == GP_OK) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};

        assert_int_equal(poll(&pfd, 1, WAIT_S * 1000), 1);
        close(fd);
    }
    snprintf(path, sizeof(path), "%s/run-1.status", t->job_dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(gp_local_adopt(t->job_dir, 1, &proc, NULL), GP_OK);
    /* the pidfd is readable at the supervisor's exit; until its parent
     * reaps it, a loaded machine may still show it for a moment */
    for (int i = 0; i < WAIT_S * 100; i++) {
        st = poll_ok(&proc);
        if (st.kind != GP_LOCAL_RUNNING)
            break;
        usleep(10000);
    }
    expect_kind(&proc, &st, GP_LOCAL_LOST);
    assert_non_null(strstr(st.reason, "is gone and left no status"));

    /* a malformed pid file is an error naming the file */
    snprintf(path, sizeof(path), "%s/run-6.pid", t->job_dir);
    {
        FILE *f = fopen(path, "w");

        assert_non_null(f);
        fputs("job=42\nrun=6\n", f);
        fclose(f);
    }
    assert_int_equal(gp_local_adopt(t->job_dir, 6, &proc, &diag), GP_EPARSE);
    assert_string_equal(diag.where, path);
    assert_int_equal(gp_local_adopt("relative", 1, &proc, NULL), GP_EINVAL);
    assert_int_equal(gp_local_adopt(t->job_dir, 0, &proc, NULL), GP_EINVAL);
}

static bool pid_gone(pid_t pid);

/* The supervisor SIGKILLed by hand: no status will come. The run is
 * lost, and its job, still running, can be ended through its own
 * (checked) process group. */
static void
a_job_whose_supervisor_was_killed_is_lost_but_can_be_ended(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", wait_go_script, "0", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_state st;
    int fd;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    wait_text(t, "stdout", "waiting\n");
    assert_int_equal(gp_local_watch_fd(&proc, &fd, NULL), GP_OK);
    assert_int_equal(kill(proc.supervisor_pid, SIGKILL), 0);
    {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};

        assert_int_equal(poll(&pfd, 1, WAIT_S * 1000), 1);
        close(fd);
    }
    st = poll_ok(&proc);
    expect_kind(&proc, &st, GP_LOCAL_LOST);
    assert_non_null(strstr(st.reason, "its job still runs"));
    assert_int_equal(gp_local_signal(&proc, SIGKILL, NULL), GP_OK);
    assert_true(pid_gone(proc.job_pid));
    st = poll_ok(&proc);
    expect_kind(&proc, &st, GP_LOCAL_LOST);
    assert_null(strstr(st.reason, "its job still runs"));
    assert_int_equal(gp_local_signal(&proc, SIGKILL, NULL), GP_ENOENT);
}

static bool pid_gone(pid_t pid)
{
    double until = mono_s() + WAIT_S;

    while (mono_s() < until) {
        if (kill(pid, 0) < 0 && errno == ESRCH)
            return true;
        sleep_ms(10);
    }
    return false;
}

static void what_a_job_leaves_behind_is_killed_when_it_ends(void **state)
{
    struct t *t = *state;
    const char *argv[] = {
        "/bin/sh", "-c",
        "sleep 300 & echo $! > bg.pid; "
        "if command -v setsid >/dev/null; then setsid sleep 300 & "
        "echo $! > escaped.pid; fi; exit 0",
        NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    char path[256], *text;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    assert_int_equal(wait_end(&proc).code, 0);
    snprintf(path, sizeof(path), "%s/bg.pid", t->dir);
    text = slurp(path);
    assert_non_null(text);
    assert_true(pid_gone((pid_t)atol(text)));
    free(text);
    snprintf(path, sizeof(path), "%s/escaped.pid", t->dir);
    text = slurp(path);
    if (text) /* left its group and session: reparented to the supervisor */
        assert_true(pid_gone((pid_t)atol(text)));
    free(text);
}

static void watch_fd_polls_readable_when_the_run_ends(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", wait_go_script, "0", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct pollfd pfd = {.events = POLLIN};
    int fd;

    spec_for(t, &spec, argv);
    start_ok(t, &spec, &proc);
    assert_int_equal(gp_local_watch_fd(&proc, &fd, NULL), GP_OK);
    pfd.fd = fd;
    assert_int_equal(poll(&pfd, 1, 0), 0);
    touch(t->dir, "go");
    assert_int_equal(poll(&pfd, 1, WAIT_S * 1000), 1);
    close(fd);
    assert_true(exists(t->job_dir, "run-1.status"));
    assert_int_equal(poll_ok(&proc).kind, GP_LOCAL_EXITED);
    assert_int_equal(gp_local_watch_fd(&proc, &fd, NULL), GP_ENOENT);
}

/* ---- users
 * ---------------------------------------------------------------------- */

static void
job_runs_as_nobody_with_its_home_and_cannot_touch_its_supervisor(void **state)
{
    struct t *t = *state;
    const char *argv[] = {
        "/bin/sh", "-c",
        "id -u; id -g; echo \"$HOME $USER $LOGNAME\"; "
        "kill -TERM $PPID 2>/dev/null; echo \"kill: $?\"; "
        "touch \"$GPUPOOL_CHECKPOINT_DIR/mine\" && echo ckpt-ok; "
        "echo forged > run-1.status 2>/dev/null || echo no-forge",
        NULL};
    struct passwd *pw;
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_local_state st;
    char expect[512], path[256], *out;
    struct stat sb;

    if (geteuid() != 0)
        skip();
    pw = getpwnam("nobody");
    if (!pw)
        skip();
    spec_for(t, &spec, argv);
    spec.user = "nobody";
    spec.submitter_uid = 0;
    spec.cwd = t->job_dir;
    assert_int_equal(mkdir(t->job_dir, 0755), 0);
    start_ok(t, &spec, &proc);
    st = wait_end(&proc);
    expect_kind(&proc, &st, GP_LOCAL_EXITED);
    out = body_of(t, "stdout");
    snprintf(expect, sizeof(expect),
             "%u\n%u\n%s nobody nobody\nkill: 1\nckpt-ok\nno-forge\n",
             (unsigned)pw->pw_uid, (unsigned)pw->pw_gid, pw->pw_dir);
    assert_string_equal(out, expect);
    free(out);
    /* its files and checkpoint directory are its own; the run files not */
    snprintf(path, sizeof(path), "%s/stdout", t->job_dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_uid, pw->pw_uid);
    snprintf(path, sizeof(path), "%s/checkpoint", t->job_dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_uid, pw->pw_uid);
    assert_int_equal(sb.st_mode & 0777, 0700);
    snprintf(path, sizeof(path), "%s/run-1.status", t->job_dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_uid, 0);
}

static void
checkpoint_dir_outside_the_job_dir_is_made_by_the_job_user(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", "echo \"$GPUPOOL_CHECKPOINT_DIR\"",
                          NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    char ckpt[128], expect[160], *out;
    struct stat sb;
    struct passwd *pw = getpwnam("nobody");
    bool as_nobody = geteuid() == 0 && pw;

    snprintf(ckpt, sizeof(ckpt), "%s/ckpts/a/b", t->dir);
    spec_for(t, &spec, argv);
    spec.checkpoint_dir = ckpt;
    if (as_nobody) {
        char parent[128];

        /* nobody may write in ckpts, and only there */
        snprintf(parent, sizeof(parent), "%s/ckpts", t->dir);
        assert_int_equal(mkdir(parent, 0755), 0);
        assert_int_equal(chown(parent, pw->pw_uid, pw->pw_gid), 0);
        spec.user = "nobody";
        spec.submitter_uid = pw->pw_uid;
    }
    start_ok(t, &spec, &proc);
    assert_int_equal(wait_end(&proc).code, 0);
    out = body_of(t, "stdout");
    snprintf(expect, sizeof(expect), "%s\n", ckpt);
    assert_string_equal(out, expect);
    free(out);
    assert_int_equal(stat(ckpt, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0700);
    assert_int_equal(sb.st_uid, as_nobody ? pw->pw_uid : geteuid());
    if (as_nobody) {
        /* a directory nobody may not write in: it fails as nobody would */
        spec.run = 2;
        spec.checkpoint_dir = "/root/gp-local-ckpt";
        start_fails(t, &spec, GP_EIO,
                    "checkpoint dir: mkdir /root/gp-local-ckpt: Permission "
                    "denied");
    }
}

static void non_root_submitter_cannot_run_a_job_as_root_or_another(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/sh", "-c", "touch ran", NULL};
    const char *harmless[] = {"/bin/true", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_diag diag = {{0}, {0}};
    struct passwd *pw;

    if (geteuid() != 0)
        skip();
    pw = getpwnam("nobody");
    spec_for(t, &spec, argv);
    spec.submitter_uid = 1000;
    /* by uid: refused before anything runs */
    spec.uid = 0;
    assert_int_equal(gp_local_start(&spec, &proc, &diag), GP_EINVAL);
    assert_string_equal(diag.where, "uid");
    assert_non_null(strstr(diag.msg, "submitted by uid 1000"));
    spec.uid = GP_LOCAL_UID_SELF; /* the daemon's own user: root */
    assert_int_equal(gp_local_start(&spec, &proc, NULL), GP_EINVAL);
    /* by name: refused by the supervisor once it knows who that is */
    spec.user = "root";
    start_fails(t, &spec, GP_EINVAL, "submitted by uid 1000 runs as that user");
    if (pw) {
        spec.run = 2;
        spec.user = "nobody";
        start_fails(t, &spec, GP_EINVAL, "not as 'nobody'");
    }
    assert_false(exists(t->dir, "ran"));
    if (pw) {
        /* nobody itself may */
        spec.run = 3;
        spec.argv = harmless;
        spec.submitter_uid = pw->pw_uid;
        start_ok(t, &spec, &proc);
        assert_int_equal(wait_end(&proc).code, 0);
    }
}

static void non_root_daemon_runs_jobs_only_as_itself(void **state)
{
    struct t *t = *state;
    const char *argv[] = {"/bin/true", NULL};
    struct gp_local_job spec;
    struct gp_local_proc proc;
    struct gp_diag diag = {{0}, {0}};

    if (geteuid() == 0)
        skip();
    spec_for(t, &spec, argv);
    spec.uid = 0;
    spec.submitter_uid = 0;
    assert_int_equal(gp_local_start(&spec, &proc, &diag), GP_EINVAL);
    assert_non_null(strstr(diag.msg, "can only run jobs as that user"));
    spec.uid = GP_LOCAL_UID_SELF;
    spec.user = "root";
    start_fails(t, &spec, GP_EINVAL, "can only run jobs as that user");
    spec.run = 2;
    spec.user = NULL;
    start_ok(t, &spec, &proc);
    assert_int_equal(wait_end(&proc).code, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(job_gets_exactly_the_documented_environment),
        T(cpu_only_job_gets_an_empty_cuda_visible_devices),
        T(job_runs_in_its_working_directory_or_its_home),
        T(output_goes_to_stdout_and_stderr_with_a_header_per_run),
        T(exit_code_3_is_recorded),
        T(job_killed_by_sigsegv_is_recorded_as_signal_11),
        T(bad_command_fails_to_start_with_the_path_in_the_reason),
        T(missing_user_fails_to_start),
        T(missing_working_directory_fails_to_start),
        T(bad_specs_are_refused_with_the_field_named),
        T(a_run_number_is_used_once),
        T(a_start_given_up_before_go_never_runs_the_job),
        T(preempted_counter_checkpoints_and_exits_0_within_grace),
        T(restarted_run_resumes_from_its_checkpoint),
        T(job_ignoring_the_preempt_signal_gets_sigterm_then_sigkill),
        T(cancel_sends_sigterm_first_then_sigkill),
        T(signals_sent_to_the_supervisor_are_passed_to_the_job),
        T(job_survives_the_death_of_the_process_that_started_it),
        T(a_recycled_pid_is_never_signalled),
        T(a_run_with_neither_supervisor_nor_status_is_lost),
        T(a_job_whose_supervisor_was_killed_is_lost_but_can_be_ended),
        T(what_a_job_leaves_behind_is_killed_when_it_ends),
        T(watch_fd_polls_readable_when_the_run_ends),
        T(job_runs_as_nobody_with_its_home_and_cannot_touch_its_supervisor),
        T(checkpoint_dir_outside_the_job_dir_is_made_by_the_job_user),
        T(non_root_submitter_cannot_run_a_job_as_root_or_another),
        T(non_root_daemon_runs_jobs_only_as_itself),
#undef T
    };

    /* a job's pipe closing under us is an error to see, not a death */
    signal(SIGPIPE, SIG_IGN);
    /* GP_TEST_FILTER=pattern runs only the tests that match (cmocka's
     * wildcards) */
    if (getenv("GP_TEST_FILTER"))
        cmocka_set_test_filter(getenv("GP_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
