/* local.h - the local job controller: jobs as processes on this host, each
 * under its own tiny supervisor (gpupool-supervisor).
 *
 * The daemon starts a run with gp_local_start. That spawns the supervisor
 * in a new session and lets it go (it forks once more, so the daemon is not
 * its parent and has no zombie to reap). The supervisor starts the job as
 * the leader of its own process group, writes <job_dir>/run-<n>.pid, waits
 * for the job and writes <job_dir>/run-<n>.status before it exits. Nothing
 * ties the supervisor to the daemon's life: the daemon may crash, restart
 * and find the run again with gp_local_adopt; the exit status is in the
 * status file either way.
 *
 * A process is named by its pid plus its start time (/proc/<pid>/stat field
 * 22) plus the boot id, never by its pid alone: a pid that the kernel gave
 * to another process is never signalled and never taken for a live run.
 * Signals go through the supervisor (a queued control signal on a pidfd):
 * the supervisor is the job leader's parent, so the job's process group
 * cannot be recycled under it.
 *
 * The job's side of the contract (environment, signals, checkpoints,
 * files, exit codes) is in docs/jobs.md.
 *
 * All functions are for one thread (the daemon's loop); they block only
 * briefly (gp_local_start: until the job is started or refused, at most
 * start_timeout_ms). Errors are negative GP_E* codes with a diag naming
 * the place.
 */
#ifndef GPUPOOL_LOCAL_H
#define GPUPOOL_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpupool/base.h"

/* "Run as the daemon's own user" (uid) and "not set" (submitter_uid). */
#define GP_LOCAL_UID_SELF ((uid_t)-1)
#define GP_LOCAL_UID_UNSET ((uid_t)-2)

/* The only spec version; set by gp_local_job_init. */
#define GP_LOCAL_JOB_VERSION 1u

/* Longest job_dir a gp_local_proc can hold, NUL included. */
#define GP_LOCAL_PATH_MAX 1024

/* argv and env together: at most this many bytes (and at most 65536
 * strings each); more is GP_EINVAL. */
#define GP_LOCAL_SPEC_MAX (4u << 20)

/* What to start. Strings are borrowed for the call only.
 *
 * Start from gp_local_job_init(): it sets version, uid = GP_LOCAL_UID_SELF
 * and submitter_uid = GP_LOCAL_UID_UNSET, which gp_local_start refuses, so
 * a spec filled by hand from zeros (uid 0, submitter 0: "root for root")
 * is never taken by accident. */
struct gp_local_job {
    uint32_t version;       /* GP_LOCAL_JOB_VERSION */
    uint64_t job_id;        /* GPUPOOL_JOB_ID; > 0 */
    uint32_t run;           /* > 0; one per start of the job, never reused:
                               it names run-<run>.pid / .status */
    uint32_t restart_count; /* GPUPOOL_RESTART_COUNT: 0 on the first run */
    /* the command: NULL-terminated, argv[0] non-empty. argv[0] without a
     * '/' is looked up in the job's PATH; with one, relative to cwd */
    const char *const *argv;
    /* extra KEY=VALUE entries for the job, NULL-terminated, or NULL. They
     * override the defaults (PATH, HOME, USER, LOGNAME, SHELL; a later
     * entry overrides an earlier one) but may not set GPUPOOL_* or
     * CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER (GP_EINVAL) */
    const char *const *env;
    const char *cwd; /* absolute; NULL = the run-as user's home */
    /* Who the job runs as: the user named `user` if not NULL, else `uid`
     * (GP_LOCAL_UID_SELF: the daemon's own user). The user must exist in
     * the passwd database; the job gets its primary group and its
     * supplementary groups (initgroups), HOME, USER, LOGNAME and SHELL.
     *
     * submitter_uid is who asked for the job (the peer's uid on the API
     * socket). A submitter other than root may only run jobs as itself: a
     * job never runs as root, or as anyone else, for a non-root submitter.
     * A daemon that is not root can only run jobs as its own user. Both are
     * checked here (GP_EINVAL, when no lookup is needed) and again in the
     * supervisor after the lookup (start_failed). */
    const char *user;
    uid_t uid;
    uid_t submitter_uid;
    /* CUDA_VISIBLE_DEVICES as given: "0,1", "GPU-<uuid>", "MIG-<uuid>".
     * NULL or "" = a CPU-only job: CUDA_VISIBLE_DEVICES is set to "" so
     * it cannot grab GPUs. At most 1023 bytes, no newline. */
    const char *devices;
    /* absolute; holds the run files and the job's stdout/stderr. Created
     * (one level, mode 0755) if missing; owned by the daemon's user. At
     * most GP_LOCAL_PATH_MAX - 1 bytes */
    const char *job_dir;
    /* absolute; the same for every run of the job. NULL = <job_dir>/
     * checkpoint. A directory directly inside job_dir is created by the
     * supervisor and handed to the run-as user (mode 0700); any other is
     * created (with its missing parents) with the run-as user's own
     * rights, so gpupool never creates a directory as root in a place the
     * user controls */
    const char *checkpoint_dir;
    int preempt_signal; /* GPUPOOL_PREEMPT_SIGNAL; 0 = SIGUSR1 */
    uint32_t grace_s;   /* GPUPOOL_PREEMPT_GRACE_S: what the job is told it
                           has to checkpoint once signalled (0: unknown) */
    /* the gpupool-supervisor program; NULL = "gpupool-supervisor" in the
     * directory of /proc/self/exe */
    const char *supervisor;
    /* how long gp_local_start waits for the supervisor to get ready;
     * 0 = 30000 */
    uint32_t start_timeout_ms;
};

/* A run, as the daemon keeps it. Plain data, caller-owned, no fini: copy
 * it, store its fields, rebuild it with gp_local_adopt. */
struct gp_local_proc {
    uint64_t job_id;
    uint32_t run;
    pid_t supervisor_pid;      /* 0 when the run never got that far */
    uint64_t supervisor_start; /* clock ticks since boot (/proc stat 22) */
    pid_t job_pid;             /* = the job's process group id */
    uint64_t job_start;
    int64_t start_us; /* CLOCK_REALTIME when the job was let go */
    char boot_id[40]; /* the boot these pids belong to */
    char job_dir[GP_LOCAL_PATH_MAX];
};

enum gp_local_kind {
    GP_LOCAL_RUNNING,      /* the supervisor is alive, no status yet */
    GP_LOCAL_EXITED,       /* the job exited: code */
    GP_LOCAL_KILLED,       /* the job died of a signal: signal */
    GP_LOCAL_START_FAILED, /* it never ran: reason (bad command, missing
                              user, cwd, privileges) */
    GP_LOCAL_LOST,         /* no live supervisor and no status: the machine
                              rebooted, or the supervisor was SIGKILLed */
};

/* "running", "exited", "killed", "start_failed", "lost". */
const char *gp_local_kind_name(enum gp_local_kind kind);

struct gp_local_state {
    enum gp_local_kind kind;
    int code;         /* EXITED: 0..255 */
    int signal;       /* KILLED: the signal number */
    bool core_dumped; /* KILLED */
    int64_t start_us; /* CLOCK_REALTIME; GP_TIME_NONE when unknown */
    int64_t end_us;   /* the same; GP_TIME_NONE unless ended */
    /* START_FAILED: "exec: No such file or directory: ./trian.py",
     * "user 'bob' does not exist"; LOST: what was found; else "" */
    char reason[256];
    /* START_FAILED: the GP_E* code the supervisor gave (GP_ENOENT for a
     * missing command, user or directory; GP_EINVAL for a refused user;
     * GP_EIO otherwise) */
    int error;
};

/* Fill spec with defaults (see struct gp_local_job). */
void gp_local_job_init(struct gp_local_job *spec);

/* Start one run of a job and wait until it is started or refused.
 *
 * GP_OK: the job runs (or ran: a very short job may be over already) and
 * *out names it. Should the job fail to start after the supervisor was
 * told to go (an exec that takes longer than start_timeout_ms), poll
 * reports START_FAILED later.
 *
 * Errors (*out untouched; the job is not running and will not run):
 * GP_EINVAL a bad spec, diag.where naming the field ("argv", "env[2]"),
 *           or a run-as user refused (see uid);
 * GP_EEXIST this run's files exist already (a run number is used once);
 * GP_ENOENT the command, the user, cwd or the supervisor program does
 *           not exist; diag.msg is the reason, also kept in
 *           run-<n>.status (kind start_failed) and the job's stderr file;
 * GP_EIO    anything else (no fork, a full disk, a supervisor that did not
 *           answer within start_timeout_ms).
 * A start that fails is a start_failed for the core (gp_diag_format gives
 * the reason); the daemon need not read the status file.
 *
 * The supervisor is reparented to init (or the nearest subreaper): the
 * daemon must not set PR_SET_CHILD_SUBREAPER, and under systemd needs
 * KillMode=process so that stopping the daemon does not kill the jobs.
 * Internally the daemon briefly has one child (reaped before return), so a
 * SIGCHLD handler must not reap with waitpid(-1) (a signalfd that ignores
 * SIGCHLD is fine). */
int gp_local_start(const struct gp_local_job *spec, struct gp_local_proc *out,
                   struct gp_diag *diag);

/* What a run is doing now: the status file if there is one, else RUNNING
 * if the supervisor (pid + start time + boot) is alive, else the status
 * file again (it may just have been written), else LOST. Reads a small
 * file and /proc; cheap enough for every running job on every tick.
 * Errors: GP_EPARSE for a malformed status file, GP_EIO for one that
 * cannot be read, GP_EINVAL for a bad proc. */
int gp_local_poll(const struct gp_local_proc *proc,
                  struct gp_local_state *state, struct gp_diag *diag);

/* Send sig (1..SIGRTMAX, or 0 to check only) to the job's whole process
 * group. The supervisor is checked to be the same process (pid + start
 * time + boot id) through a pidfd and asked to send it; it does so only
 * while the job's leader is unreaped, so the group cannot be another's.
 * Where the supervisor is gone but its job is not (a LOST run), the job's
 * leader is checked the same way and its group signalled directly.
 * GP_OK: handed on (the job may have exited meanwhile: poll tells).
 * GP_ESTATE: the run has ended (status file written). GP_ENOENT: neither
 * the supervisor nor the job is alive as recorded: nothing was signalled.
 * GP_EINVAL: a bad signal or proc. */
int gp_local_signal(const struct gp_local_proc *proc, int sig,
                    struct gp_diag *diag);

/* After a daemon restart: rebuild the proc of run `run` of the job whose
 * files are in job_dir, from run-<run>.pid. Without a pid file (the run
 * failed before it had a job, or never started) *proc has no pids and
 * job_id 0, and gp_local_poll says START_FAILED or LOST. Then poll as
 * usual.
 * GP_EINVAL for a bad job_dir or run; GP_EPARSE for a malformed pid
 * file; GP_EIO for one that cannot be read. */
int gp_local_adopt(const char *job_dir, uint32_t run,
                   struct gp_local_proc *proc, struct gp_diag *diag);

/* A pidfd of the supervisor, checked to be the recorded process: it polls
 * readable (POLLIN) when the supervisor exits, i.e. after the status file
 * is written. For the daemon's epoll, instead of or beside a timer.
 * The caller closes *fd. GP_ENOENT when the supervisor is gone already
 * (poll now); GP_EIO where pidfds are not supported (kernel < 5.3). */
int gp_local_watch_fd(const struct gp_local_proc *proc, int *fd,
                      struct gp_diag *diag);

/* ---- stopping a run: preempt signal -> grace -> SIGTERM -> kill_after ->
 * SIGKILL. The daemon's timers drive it; this keeps the steps. ---------- */

struct gp_local_stop {
    int first_signal;      /* the preempt signal, or SIGTERM */
    int64_t grace_us;      /* after first_signal, before SIGTERM */
    int64_t kill_after_us; /* after SIGTERM, before SIGKILL */
    int stage;             /* 0 nothing sent, 1 first, 2 SIGTERM, 3 KILL */
    int64_t deadline_us;   /* when step is due next; GP_TIME_NONE once
                              SIGKILL is sent */
};

/* Preemption: first_signal = the run's preempt signal, grace_us = its
 * grace. Cancel and time limit: first_signal = SIGTERM (grace_us is then
 * unused: SIGTERM is not sent twice). kill_after_us: how long SIGTERM
 * has before SIGKILL. Times in microseconds, >= 0. */
void gp_local_stop_init(struct gp_local_stop *st, int first_signal,
                        int64_t grace_us, int64_t kill_after_us);

/* Send what is due at now_us (a clock of the daemon's choice, the same
 * for every call) and set st->deadline_us to when to call again. The
 * first call sends first_signal; a call before the deadline sends
 * nothing. The daemon should poll before each step: errors are those of
 * gp_local_signal (GP_ESTATE once the run has ended). */
int gp_local_stop_step(struct gp_local_stop *st,
                       const struct gp_local_proc *proc, int64_t now_us,
                       struct gp_diag *diag);

#endif
