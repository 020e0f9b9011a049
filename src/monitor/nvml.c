/* nvml.c - real GPUs through NVIDIA's management library, loaded at run
 * time.
 *
 * gpupool is built without nvml.h: the few types and constants used here
 * are declared below from NVIDIA's NVML API reference, and the library is
 * dlopen()ed when the monitor opens, so one binary runs with or without a
 * driver. Static facts (name, UUID, memory, MIG mode) are read once at
 * open; sampling reads utilization, memory, temperature, power and the
 * compute processes.
 *
 * The process list is the one place where NVML's ABI is unreliable: the
 * entry for nvmlDeviceGetComputeRunningProcesses is 16 bytes in the plain
 * (v1) function and 24 in _v2 and _v3 as documented, but R535 drivers
 * write 32-byte entries (with usedGpuCcProtectedMemory) from _v3. Reading
 * entry k at the wrong stride gives nonsense pids, so the stride is
 * measured once: the buffer is filled with 0xAA, then 0x55, NVML is asked
 * twice, and the last byte that differs from the fill marks the end of
 * what it wrote. A byte cannot equal both fills, so with the same count
 * both times end / count is the stride. Pid is the first field in every
 * layout, so one process needs no stride at all.
 */
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/monitor_priv.h"

/* ---- NVML's API, as documented (nvml.h is not needed to build) -------- */

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_RESET_REQUIRED 16
#define NVML_TEMPERATURE_GPU 0
#define NVML_DEVICE_MIG_ENABLE 1

struct nvml_device; /* nvmlDevice_t is an opaque pointer */

struct nvml_memory { /* nvmlMemory_t (v1), bytes */
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct nvml_utilization { /* nvmlUtilization_t, percent */
    unsigned int gpu;
    unsigned int memory;
};

/* nvmlReturn_t and nvmlTemperatureSensors_t are C enums: int. */
struct nvml_fns {
    int (*init)(void);
    int (*shutdown)(void);
    const char *(*error_string)(int);
    int (*get_count)(unsigned int *);
    int (*get_handle)(unsigned int, struct nvml_device **);
    int (*get_name)(struct nvml_device *, char *, unsigned int);
    int (*get_uuid)(struct nvml_device *, char *, unsigned int);
    int (*get_memory)(struct nvml_device *, struct nvml_memory *);
    int (*get_util)(struct nvml_device *, struct nvml_utilization *);
    int (*get_temp)(struct nvml_device *, int, unsigned int *);
    int (*get_power)(struct nvml_device *, unsigned int *); /* mW */
    /* infos: entries of proc_stride bytes, pid first */
    int (*get_procs)(struct nvml_device *, unsigned int *, void *);
    int (*get_mig)(struct nvml_device *, unsigned int *, unsigned int *);
};

#define FN(field) offsetof(struct nvml_fns, field)

static const struct {
    const char *name;
    size_t off;
} required[] = {
    {"nvmlInit_v2", FN(init)},
    {"nvmlShutdown", FN(shutdown)},
    {"nvmlErrorString", FN(error_string)},
    {"nvmlDeviceGetCount_v2", FN(get_count)},
    {"nvmlDeviceGetHandleByIndex_v2", FN(get_handle)},
    {"nvmlDeviceGetName", FN(get_name)},
    {"nvmlDeviceGetUUID", FN(get_uuid)},
    {"nvmlDeviceGetMemoryInfo", FN(get_memory)},
    {"nvmlDeviceGetUtilizationRates", FN(get_util)},
    {"nvmlDeviceGetTemperature", FN(get_temp)},
    {"nvmlDeviceGetPowerUsage", FN(get_power)},
};

/* Newest first; the stride is the documented entry size. */
static const struct {
    const char *name;
    size_t stride;
} procs_fns[] = {
    {"nvmlDeviceGetComputeRunningProcesses_v3", 24},
    {"nvmlDeviceGetComputeRunningProcesses_v2", 24},
    {"nvmlDeviceGetComputeRunningProcesses", 16},
};

/* ---- the backend ------------------------------------------------------- */

#define PROC_CAP 1024      /* entries asked for; more is reported as a count */
#define PROC_STRIDE_MAX 32 /* the largest entry any driver writes */
#define FILL_A 0xaa
#define FILL_B 0x55

_Static_assert(sizeof(void (*)(void)) == sizeof(void *),
               "dlsym's result must fit a function pointer");

struct gpu {
    struct nvml_device *dev;
    struct gp_gpu_info info;
    bool lost; /* last sample found it lost: log transitions only */
};

struct nvml {
    void *lib;
    struct nvml_fns fn;
    char path[256];
    const char *procs_name; /* NULL: no process list */
    size_t stride_doc;      /* documented entry size of that function */
    size_t stride_seen;     /* measured; 0 until two processes were seen */
    bool inited;
    const struct gp_env *env;
    unsigned ngpus;
    struct gpu *gpus;
    unsigned char procbuf[PROC_CAP * PROC_STRIDE_MAX];
};

static const char *nvml_words(const struct nvml *m, int rc)
{
    const char *s = m->fn.error_string ? m->fn.error_string(rc) : NULL;

    return s ? s : "unknown NVML error";
}

/* diag for a failed call: "<lib>: <call>: <NVML's words> (NVML error N)" */
static int call_failed(const struct nvml *m, struct gp_diag *diag,
                       const char *what, int rc)
{
    return gp_diag_set(diag, GP_EIO, m->path, "%s: %s (NVML error %d)", what,
                       nvml_words(m, rc), rc);
}

static void *sym(void *lib, const char *name)
{
    (void)dlerror();
    return dlsym(lib, name);
}

static void set_fn(struct nvml *m, size_t off, void *p)
{
    memcpy((char *)&m->fn + off, &p, sizeof(p));
}

static int load(struct nvml *m, struct gp_diag *diag)
{
    const char *err;
    void *p;

    (void)dlerror();
    m->lib = dlopen(m->path, RTLD_NOW | RTLD_LOCAL);
    if (!m->lib) {
        err = dlerror();
        return gp_diag_set(diag, GP_ENOENT, m->path,
                           "cannot load the NVML library: %s",
                           err ? err : "dlopen failed");
    }
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        if (!(p = sym(m->lib, required[i].name))) {
            err = dlerror();
            return gp_diag_set(diag, GP_EIO, m->path,
                               "no symbol %s: not NVML, or an NVML too old "
                               "(%s)",
                               required[i].name, err ? err : "not found");
        }
        set_fn(m, required[i].off, p);
    }
    for (size_t i = 0; i < sizeof(procs_fns) / sizeof(procs_fns[0]); i++) {
        if ((p = sym(m->lib, procs_fns[i].name))) {
            set_fn(m, FN(get_procs), p);
            m->procs_name = procs_fns[i].name;
            m->stride_doc = procs_fns[i].stride;
            break;
        }
    }
    if ((p = sym(m->lib, "nvmlDeviceGetMigMode")))
        set_fn(m, FN(get_mig), p);
    return GP_OK;
}

static int read_info(struct nvml *m, unsigned i, struct gp_diag *diag)
{
    struct gpu *g = &m->gpus[i];
    struct gp_gpu_info *info = &g->info;
    struct nvml_memory mem;
    unsigned cur, pending;
    char what[64];
    int rc;

    info->index = i;
    snprintf(what, sizeof(what), "GPU %u: nvmlDeviceGetHandleByIndex_v2", i);
    if ((rc = m->fn.get_handle(i, &g->dev)) != NVML_SUCCESS)
        return call_failed(m, diag, what, rc);
    snprintf(what, sizeof(what), "GPU %u: nvmlDeviceGetName", i);
    rc = m->fn.get_name(g->dev, info->name, sizeof(info->name));
    if (rc != NVML_SUCCESS)
        return call_failed(m, diag, what, rc);
    info->name[sizeof(info->name) - 1] = '\0';
    snprintf(what, sizeof(what), "GPU %u: nvmlDeviceGetUUID", i);
    rc = m->fn.get_uuid(g->dev, info->uuid, sizeof(info->uuid));
    if (rc != NVML_SUCCESS)
        return call_failed(m, diag, what, rc);
    info->uuid[sizeof(info->uuid) - 1] = '\0';
    gp_monitor_gpu_type(info->name, info->type, sizeof(info->type));
    info->mem_total_mib = -1;
    if (m->fn.get_memory(g->dev, &mem) == NVML_SUCCESS)
        info->mem_total_mib = (int64_t)(mem.total >> 20);
    info->mig = GP_MIG_NA;
    if (m->fn.get_mig && m->fn.get_mig(g->dev, &cur, &pending) == NVML_SUCCESS)
        info->mig = cur == NVML_DEVICE_MIG_ENABLE ? GP_MIG_ON : GP_MIG_OFF;
    return GP_OK;
}

static void nvml_close(void *priv)
{
    struct nvml *m = priv;

    if (!m)
        return;
    if (m->inited)
        m->fn.shutdown();
    if (m->lib)
        dlclose(m->lib);
    gp_env_free(m->env, m->gpus);
    gp_env_free(m->env, m);
}

static int nvml_open(void **priv, const struct gp_monitor_options *o,
                     struct gp_diag *diag)
{
    const char *path = getenv(GP_MONITOR_NVML_ENV);
    struct nvml *m;
    unsigned count = 0;
    int rc;

    if (!path || !*path)
        path = o->nvml_path ? o->nvml_path : GP_MONITOR_NVML_DEFAULT;
    if (!(m = gp_env_calloc(o->env, 1, sizeof(*m))))
        return gp_diag_set(diag, GP_ENOMEM, "monitor",
                           "out of memory for the NVML monitor");
    m->env = o->env;
    if (strlen(path) >= sizeof(m->path)) {
        rc = gp_diag_set(diag, GP_EINVAL, "monitor.nvml_path",
                         "path longer than %zu bytes", sizeof(m->path) - 1);
        goto fail;
    }
    snprintf(m->path, sizeof(m->path), "%s", path);
    if ((rc = load(m, diag)) != GP_OK)
        goto fail;
    if ((rc = m->fn.init()) != NVML_SUCCESS) {
        rc = call_failed(m, diag, "nvmlInit_v2", rc);
        goto fail;
    }
    m->inited = true;
    if ((rc = m->fn.get_count(&count)) != NVML_SUCCESS) {
        rc = call_failed(m, diag, "nvmlDeviceGetCount_v2", rc);
        goto fail;
    }
    if (count == 0) {
        rc = gp_diag_set(diag, GP_ENOENT, m->path, "NVML reports no GPUs");
        goto fail;
    }
    if (count > GP_MONITOR_MAX_GPUS) {
        rc = gp_diag_set(diag, GP_ERANGE, m->path,
                         "NVML reports %u GPUs, more than gpupool's %d", count,
                         GP_MONITOR_MAX_GPUS);
        goto fail;
    }
    if (!(m->gpus = gp_env_calloc(o->env, count, sizeof(*m->gpus)))) {
        rc = gp_diag_set(diag, GP_ENOMEM, "monitor",
                         "out of memory for %u GPUs", count);
        goto fail;
    }
    m->ngpus = count;
    for (unsigned i = 0; i < count; i++)
        if ((rc = read_info(m, i, diag)) != GP_OK)
            goto fail;
    gp_logf(o->env, GP_LOG_DEBUG,
            "msg=\"nvml loaded\" lib=\"%s\" gpus=%u procs=%s", m->path, count,
            m->procs_name ? m->procs_name : "none");
    *priv = m;
    return GP_OK;
fail:
    nvml_close(m);
    return rc;
}

static unsigned nvml_ngpus(const void *priv)
{
    const struct nvml *m = priv;

    return m->ngpus;
}

static int nvml_info(const void *priv, unsigned i, struct gp_gpu_info *out)
{
    const struct nvml *m = priv;

    *out = m->gpus[i].info;
    return GP_OK;
}

static bool is_lost(int rc)
{
    return rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_RESET_REQUIRED;
}

/* One past the last byte of procbuf that is not fill. */
static size_t written_end(const struct nvml *m, unsigned char fill)
{
    size_t n = sizeof(m->procbuf);

    while (n > 0 && m->procbuf[n - 1] == fill)
        n--;
    return n;
}

static int ask_procs(struct nvml *m, struct nvml_device *dev, unsigned *count,
                     unsigned char fill)
{
    memset(m->procbuf, fill, sizeof(m->procbuf));
    *count = PROC_CAP;
    return m->fn.get_procs(dev, count, m->procbuf);
}

/* nprocs, npids and pids of one sample; returns NVML's code. */
static int read_procs(struct nvml *m, struct nvml_device *dev,
                      struct gp_gpu_sample *s)
{
    size_t stride = m->stride_seen ? m->stride_seen : m->stride_doc;
    unsigned count, again;
    int rc;

    if (!m->fn.get_procs)
        return NVML_ERROR_NOT_SUPPORTED;
    rc = ask_procs(m, dev, &count, FILL_A);
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
        s->nprocs = count > INT32_MAX ? INT32_MAX : (int)count;
        s->npids = 0; /* NVML wrote nothing: too many to list */
        return NVML_SUCCESS;
    }
    if (rc != NVML_SUCCESS)
        return rc;
    if (count > PROC_CAP)
        return NVML_ERROR_INSUFFICIENT_SIZE; /* a broken library */
    if (!m->stride_seen && count >= 2) {
        size_t end = written_end(m, FILL_A), end_b;

        if ((rc = ask_procs(m, dev, &again, FILL_B)) != NVML_SUCCESS)
            return rc;
        if (again > PROC_CAP)
            return NVML_ERROR_INSUFFICIENT_SIZE;
        end_b = written_end(m, FILL_B);
        end = end_b > end ? end_b : end;
        if (again == count && end % count == 0 &&
            (end / count == 16 || end / count == 24 || end / count == 32)) {
            m->stride_seen = end / count;
            stride = m->stride_seen;
            gp_logf(m->env, GP_LOG_DEBUG,
                    "msg=\"nvml process entry size measured\" fn=%s "
                    "bytes=%zu documented=%zu",
                    m->procs_name, m->stride_seen, m->stride_doc);
        }
        count = again; /* procbuf holds the second answer */
    }
    s->nprocs = (int)count;
    s->npids = count < GP_GPU_SAMPLE_PIDS ? count : GP_GPU_SAMPLE_PIDS;
    for (unsigned k = 0; k < s->npids; k++) {
        unsigned int pid;

        memcpy(&pid, m->procbuf + k * stride, sizeof(pid));
        s->pids[k] = pid;
    }
    return NVML_SUCCESS;
}

static int nvml_sample(void *priv, unsigned i, struct gp_gpu_sample *out)
{
    struct nvml *m = priv;
    struct gpu *g = &m->gpus[i];
    struct nvml_utilization util;
    struct nvml_memory mem;
    unsigned temp, mw;
    bool lost = false;
    int rc;

    if ((rc = m->fn.get_util(g->dev, &util)) == NVML_SUCCESS)
        out->util_pct = util.gpu > 100 ? 100 : (int)util.gpu;
    lost |= is_lost(rc);
    if ((rc = m->fn.get_memory(g->dev, &mem)) == NVML_SUCCESS) {
        out->mem_used_mib = (int64_t)(mem.used >> 20);
        out->mem_total_mib = (int64_t)(mem.total >> 20);
    }
    lost |= is_lost(rc);
    rc = m->fn.get_temp(g->dev, NVML_TEMPERATURE_GPU, &temp);
    if (rc == NVML_SUCCESS)
        out->temp_c = temp > 1000 ? -1 : (int)temp;
    lost |= is_lost(rc);
    if ((rc = m->fn.get_power(g->dev, &mw)) == NVML_SUCCESS)
        out->power_w = mw / 1000.0;
    lost |= is_lost(rc);
    lost |= is_lost(read_procs(m, g->dev, out));
    if (lost) {
        gp__monitor_sample_unknown(out);
        out->err = GP_EIO;
    }
    if (lost != g->lost)
        gp_logf(m->env, lost ? GP_LOG_WARN : GP_LOG_INFO,
                "msg=\"%s\" gpu=%u uuid=%s",
                lost ? "GPU lost or needs a reset" : "GPU answers again", i,
                g->info.uuid);
    g->lost = lost;
    return GP_OK;
}

const struct gp_monitor_ops gp_monitor_nvml = {
    .name = "nvml",
    .open = nvml_open,
    .ngpus = nvml_ngpus,
    .info = nvml_info,
    .sample = nvml_sample,
    .close = nvml_close,
};
