/* fake.c - GPUs that exist only in the monitor.
 *
 * A fake GPU is idle (0% utilization) unless the daemon marks it busy
 * while it runs a job there (100%): enough for the scheduler, the metrics
 * and the tests of a host without GPUs to see work happen. Memory used,
 * temperature, power and processes are not invented: used memory is 0, the
 * rest unknown, so nobody mistakes a fake reading for a measurement.
 */
#include <stdio.h>
#include <string.h>

#include "monitor/monitor_priv.h"

struct fake {
    unsigned ngpus;
    int64_t mem_mib;
    char type[GP_GPU_TYPE_MAX];
    const struct gp_env *env;
    bool busy[]; /* ngpus */
};

static int fake_open(void **priv, const struct gp_monitor_options *o,
                     struct gp_diag *diag)
{
    const char *type = o->fake_type ? o->fake_type : "fake";
    struct fake *f;

    /* gp_monitor_open checked the options; sizes stay small. */
    f = gp_env_calloc(o->env, 1, sizeof(*f) + o->fake_gpus * sizeof(bool));
    if (!f)
        return gp_diag_set(diag, GP_ENOMEM, "monitor",
                           "out of memory for %u fake GPUs", o->fake_gpus);
    f->ngpus = o->fake_gpus;
    f->mem_mib = o->fake_mem_mib;
    f->env = o->env;
    snprintf(f->type, sizeof(f->type), "%s", type);
    *priv = f;
    return GP_OK;
}

static unsigned fake_ngpus(const void *priv)
{
    const struct fake *f = priv;

    return f->ngpus;
}

static int fake_info(const void *priv, unsigned i, struct gp_gpu_info *out)
{
    const struct fake *f = priv;

    memset(out, 0, sizeof(*out));
    out->index = i;
    snprintf(out->uuid, sizeof(out->uuid), "GPU-fake-%u", i);
    snprintf(out->name, sizeof(out->name), "gpupool fake GPU (%s)", f->type);
    snprintf(out->type, sizeof(out->type), "%s", f->type);
    out->mem_total_mib = f->mem_mib;
    out->mig = GP_MIG_NA;
    return GP_OK;
}

static int fake_sample(void *priv, unsigned i, struct gp_gpu_sample *out)
{
    const struct fake *f = priv;

    out->util_pct = f->busy[i] ? 100 : 0;
    out->mem_used_mib = 0;
    out->mem_total_mib = f->mem_mib;
    return GP_OK;
}

static void fake_close(void *priv)
{
    struct fake *f = priv;

    if (f)
        gp_env_free(f->env, f);
}

void gp__monitor_fake_set_busy(void *priv, unsigned i, bool busy)
{
    struct fake *f = priv;

    f->busy[i] = busy;
}

const struct gp_monitor_ops gp_monitor_fake = {
    .name = "fake",
    .open = fake_open,
    .ngpus = fake_ngpus,
    .info = fake_info,
    .sample = fake_sample,
    .close = fake_close,
};
