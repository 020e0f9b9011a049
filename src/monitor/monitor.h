/* monitor.h - the daemon's Resource Monitor: which GPUs this host has and
 * what they are doing.
 *
 * Two backends behind one ops table. "nvml" asks NVIDIA's management
 * library, loaded with dlopen() when the monitor opens, so gpupool has no
 * build-time dependency on the driver and one binary runs on GPU and CPU
 * hosts alike. "fake" invents N identical GPUs (0 is valid: a CPU-only
 * host), for CI, laptops and the local backend's tests; the daemon may mark
 * a fake GPU busy so it reports the utilization of the job it runs.
 *
 * Contract for the whole module:
 * - A monitor is owned by one thread at a time (the daemon's loop); nothing
 *   here locks. NVML calls may block for milliseconds (seconds for a GPU
 *   that fell off the bus), so the loop should sample on a timer, not in a
 *   request path.
 * - The monitor reads no clock: the caller passes now_us and gets it back
 *   in each sample.
 * - Memory is in MiB (2^20 bytes, rounded down), power in watts,
 *   temperature in degrees Celsius, utilization in percent 0..100.
 * - A value the device cannot report is -1 (integers) or NaN (power_w);
 *   see struct gp_gpu_sample.
 */
#ifndef GPUPOOL_MONITOR_H
#define GPUPOOL_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpupool/base.h"
#include "gpupool/err.h"

/* Fits NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE
 * (96 bytes each, NUL included). */
#define GP_GPU_NAME_MAX 96
#define GP_GPU_UUID_MAX 96
/* A scheduling type: "h100", "a100", "t4" (NUL included). */
#define GP_GPU_TYPE_MAX 32
/* Pids kept per sample; nprocs still counts them all. */
#define GP_GPU_SAMPLE_PIDS 8
/* A host with more GPUs than this is refused (NVML hosts have <= 64). */
#define GP_MONITOR_MAX_GPUS 1024

/* The library gpupool loads in nvml and auto mode, and the environment
 * variable that overrides both it and gp_monitor_options.nvml_path. */
#define GP_MONITOR_NVML_DEFAULT "libnvidia-ml.so.1"
#define GP_MONITOR_NVML_ENV "GPUPOOL_NVML_LIB"

enum gp_monitor_mode {
    GP_MONITOR_AUTO, /* NVML when it loads and reports GPUs, else fake */
    GP_MONITOR_NVML, /* NVML or an error */
    GP_MONITOR_FAKE, /* fake GPUs, NVML never loaded */
};

struct gp_monitor_options {
    enum gp_monitor_mode mode;
    /* Fake GPUs in fake mode and when auto falls back; 0 = none (a host
     * for CPU-only jobs). At most GP_MONITOR_MAX_GPUS. */
    unsigned fake_gpus;
    /* Scheduling type of fake GPUs: [a-z0-9][a-z0-9_-]*, shorter than
     * GP_GPU_TYPE_MAX. NULL = "fake". */
    const char *fake_type;
    /* Memory each fake GPU reports as its total; 0 = report 0. */
    int64_t fake_mem_mib;
    /* Library to dlopen: a soname searched the usual way or a path.
     * NULL = GP_MONITOR_NVML_DEFAULT. The environment variable
     * GP_MONITOR_NVML_ENV, when set and not empty, wins over both. */
    const char *nvml_path;
    /* Allocator and log sink (may be NULL: the C library, no log). Must
     * outlive the monitor. The monitor logs which backend it chose and,
     * in auto mode, why NVML was not used. */
    const struct gp_env *env;
};

enum gp_mig_mode {
    GP_MIG_NA = -1, /* not supported by the device or the library */
    GP_MIG_OFF = 0,
    GP_MIG_ON = 1,
};

/* What does not change while the monitor is open (read once at open). */
struct gp_gpu_info {
    unsigned index;             /* 0..ngpus-1, NVML's index order */
    char uuid[GP_GPU_UUID_MAX]; /* "GPU-5c0f...", "GPU-fake-0" */
    char name[GP_GPU_NAME_MAX]; /* "NVIDIA H100 80GB HBM3" */
    char type[GP_GPU_TYPE_MAX]; /* "h100": gp_monitor_gpu_type(name) */
    int64_t mem_total_mib;      /* -1 when unknown */
    enum gp_mig_mode mig;       /* current mode at open */
};

/* One reading of one GPU. Fields the device cannot report (NVML answers
 * "not supported", "no permission", ...) hold -1, or NaN for power_w. */
struct gp_gpu_sample {
    unsigned gpu;         /* index, as gp_gpu_info.index */
    int64_t t_us;         /* the now_us given to gp_monitor_sample */
    int err;              /* GP_OK, or GP_EIO: the GPU is lost or needs a
                             reset; every value below is then unknown */
    int util_pct;         /* 0..100: time a kernel ran, last sample period */
    int64_t mem_used_mib; /* device memory in use */
    int64_t mem_total_mib;
    int temp_c;     /* die temperature */
    double power_w; /* board power draw */
    /* Compute processes on the GPU: nprocs counts them all (-1 unknown);
     * pids holds the first npids (npids <= GP_GPU_SAMPLE_PIDS; 0 when
     * NVML could not list them, e.g. more than 1024 processes). Pids are
     * as NVML sees them: host pids, or 0 inside a container without the
     * host pid namespace. */
    int nprocs;
    unsigned npids;
    uint32_t pids[GP_GPU_SAMPLE_PIDS];
};

struct gp_monitor;

/* A backend. priv is what open returned; info and sample are called with
 * i < ngpus only. sample fills one GPU's reading except gpu and t_us, and
 * reports a device that stopped answering in out->err, not as a return
 * value: a return value != GP_OK aborts the whole gp_monitor_sample. */
struct gp_monitor_ops {
    const char *name;
    int (*open)(void **priv, const struct gp_monitor_options *o,
                struct gp_diag *diag);
    unsigned (*ngpus)(const void *priv);
    int (*info)(const void *priv, unsigned i, struct gp_gpu_info *out);
    int (*sample)(void *priv, unsigned i, struct gp_gpu_sample *out);
    void (*close)(void *priv);
};

/* The backends gp_monitor_open chooses from; it checks the options before
 * calling open, so call that, not these. */
extern const struct gp_monitor_ops gp_monitor_nvml;
extern const struct gp_monitor_ops gp_monitor_fake;

/* Open the monitor o describes (NULL: auto mode, no fake GPUs).
 *
 * nvml: the library must load, export every function gpupool needs, start
 *   (nvmlInit_v2) and report at least one GPU, each with a handle, a name
 *   and a UUID (memory and MIG mode may be unknown); otherwise GP_ENOENT
 *   (library absent, no GPUs), GP_ERANGE (more than GP_MONITOR_MAX_GPUS)
 *   or GP_EIO (missing symbol, a call failed), with a diag naming the
 *   library and the call, and NVML's own words (nvmlErrorString).
 * auto: as nvml, but any of those failures opens o->fake_gpus fake GPUs
 *   instead; gp_monitor_fallback_reason() keeps the reason.
 * fake: o->fake_gpus fake GPUs.
 *
 * Errors: GP_EINVAL / GP_ERANGE for bad options (diag names the option:
 * "monitor.fake_type"), GP_ENOMEM, and the nvml-mode errors above. *mon is
 * written only on success. */
int gp_monitor_open(struct gp_monitor **mon, const struct gp_monitor_options *o,
                    struct gp_diag *diag);

/* Close and free *mon (shutting NVML down, unloading the library) and set
 * *mon to NULL, so closing twice is harmless. mon or *mon NULL: nothing. */
void gp_monitor_close(struct gp_monitor **mon);

/* The backend in use: "nvml" or "fake". */
const char *gp_monitor_backend(const struct gp_monitor *mon);
bool gp_monitor_is_fake(const struct gp_monitor *mon);
/* Why auto mode fell back to fake GPUs ("libnvidia-ml.so.1: cannot load
 * the NVML library: ..."); "" when it did not. Valid until close. */
const char *gp_monitor_fallback_reason(const struct gp_monitor *mon);

unsigned gp_monitor_ngpus(const struct gp_monitor *mon);

/* Copy GPU i's description into *info. GP_ERANGE when i >= ngpus,
 * GP_EINVAL when info is NULL. */
int gp_monitor_gpu_info(const struct gp_monitor *mon, unsigned i,
                        struct gp_gpu_info *info);

/* Read every GPU now: out[i] for i < min(n, ngpus) (n may be larger). A GPU
 * that stopped answering has out[i].err = GP_EIO and the others are still
 * read. Returns GP_OK, or GP_EINVAL when out is NULL and n > 0. */
int gp_monitor_sample(struct gp_monitor *mon, int64_t now_us,
                      struct gp_gpu_sample *out, size_t n);

/* Fake GPUs only: a busy fake GPU reports util_pct 100, an idle one 0, so
 * a fake host's metrics follow what the daemon runs. GP_ERANGE for a bad
 * index; GP_ESTATE on a monitor that is not fake (real GPUs report their
 * own utilization). */
int gp_monitor_fake_set_busy(struct gp_monitor *mon, unsigned gpu, bool busy);

/* The scheduling type of a GPU model name, as jobs ask for it
 * (--gpus=h100:4). The rule, on words split at spaces, '-' and '_':
 *   1. skip brand words: NVIDIA, Tesla, Quadro, GeForce (any case);
 *   2. "RTX" or "GTX" followed by a word that starts with a digit: the two
 *      joined ("GeForce RTX 4090" -> "rtx4090");
 *   3. else the first word holding both a letter and a digit ("NVIDIA H100
 *      80GB HBM3" -> "h100", "Tesla V100-SXM2-16GB" -> "v100", "NVIDIA
 *      RTX A6000" -> "a6000", "NVIDIA L40S" -> "l40s");
 *   4. else the first word left ("NVIDIA TITAN Xp" -> "titan");
 *   5. else "unknown".
 * The result is lowercased, keeps only [a-z0-9] and is cut to len - 1
 * bytes. Never fails; len must be >= 1 (out is then at least ""). */
void gp_monitor_gpu_type(const char *name, char *out, size_t len);

/* Parse monitor.nvml from the config: "auto" -> AUTO, "on" -> NVML, "off"
 * -> FAKE. GP_EINVAL otherwise, diag where = "monitor.nvml". */
int gp_monitor_mode_parse(const char *s, enum gp_monitor_mode *mode,
                          struct gp_diag *diag);

struct gp_prom_buf;

/* Append the Prometheus families of n GPUs (infos[i] and samples[i] for
 * the same GPU) to b; see docs/monitor.md for the names and labels:
 *   gpupool_gpu_info{gpu,uuid,type,name,mig} 1
 *   gpupool_gpu_up, gpupool_gpu_utilization_ratio,
 *   gpupool_gpu_memory_used_bytes, gpupool_gpu_memory_total_bytes,
 *   gpupool_gpu_temperature_celsius, gpupool_gpu_power_watts,
 *   gpupool_gpu_processes, each labelled {gpu,uuid,type}.
 * Unknown values are left out, not written as NaN. Errors are b's (see
 * prom.h): the first error is returned and sticks. */
int gp_monitor_prom_write(struct gp_prom_buf *b,
                          const struct gp_gpu_info *infos,
                          const struct gp_gpu_sample *samples, size_t n);

#endif
