/* local_priv.h - what local.c (the daemon's side) and supervisor.c share:
 * the spec handed to the supervisor, the start protocol, the run files and
 * the process identity read from /proc. Not a public API.
 *
 * The spec travels on a socket (fd 3 of the supervisor), never on the
 * command line, where every user could read the job's environment: its
 * length in decimal and a newline, then that many bytes of NUL-terminated
 * "key=value" records, the last one "end=1". The supervisor answers in
 * lines:
 *   "pid <pid> <start>"   as soon as it runs (who to kill on a time-out)
 *   "ready"               the job exists, blocked, and run-<n>.pid is
 *                         written; the daemon answers "go\n"
 *   "started"             the job's exec succeeded
 *   "failed <ERR> <why>"  it will not run (ERR: a gp_err_name: NOENT...)
 * A daemon that dies before "go" makes the supervisor give up (EOF), so a
 * run the daemon never confirmed never runs.
 */
#ifndef GPUPOOL_LOCAL_PRIV_H
#define GPUPOOL_LOCAL_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/local.h"

/* The supervisor's end of the control socket. */
#define GP__LOCAL_CTL_FD 3

/* Run files are small; anything bigger is not ours. */
#define GP__LOCAL_FILE_MAX 16384

/* The queued signal that asks the supervisor to signal its job's group:
 * si_value.sival_int is the signal to send (0..SIGRTMAX). */
int gp__local_ctl_signal(void);

/* /proc/<pid>/stat: field 22 (start time, clock ticks since boot) and
 * field 3 (state: 'R', 'S', 'Z'...). GP_ENOENT when there is no such
 * process, GP_EPARSE / GP_EIO otherwise. */
int gp__local_proc_stat(pid_t pid, uint64_t *start, char *state);

/* This boot's id (/proc/sys/kernel/random/boot_id), 36 characters. */
int gp__local_boot_id(char out[40]);

/* Write dir/name through dir/name.tmp: write, fsync, rename, fsync dir.
 * Returns 0 or an errno value. */
int gp__local_write_atomic(const char *dir, const char *name, const char *data,
                           size_t len, mode_t mode);

/* Read a whole small file into buf (NUL-terminated). 0 or an errno value
 * (EFBIG when it does not fit). */
int gp__local_read_small(const char *path, char *buf, size_t cap);

/* The value of "key=value" lines in text, copied into val; NULL when
 * absent or too long. */
const char *gp__local_kv(const char *text, const char *key, char *val,
                         size_t cap);

/* The GP_E* code of a gp_err_name ("NOENT"); GP_EIO for an unknown one. */
int gp__local_err_from_name(const char *name);

/* CLOCK_REALTIME in microseconds. */
int64_t gp__local_now_us(void);

/* Replace control characters so that s fits on one line of a run file. */
void gp__local_one_line(char *s);

#endif
