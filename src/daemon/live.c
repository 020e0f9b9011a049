/* live.c - the policy's options and the tenants file, changed while the
 * daemon runs (live.h). */
#include "daemon/live.h"

#include <stdlib.h>
#include <string.h>

#include "daemon/tenancy.h"
#include "gpupool/policies.h"
#include "trace/tenants.h"

#define META_FILE "policy_file" /* the file's [policy], as JSON */
#define META_API "policy_api"   /* an admin's options, or "" */
#define META_MAX (256u << 10)

/* A config's [policy] as a JSON object of strings. */
static json_t *file_options(const struct gp_config *c)
{
    json_t *o = json_object();

    for (size_t i = 0; o && i < c->policy.n; i++)
        if (json_object_set_new(o, c->policy.opts[i].key,
                                json_string(c->policy.opts[i].value)) != 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static char *text_of(const json_t *o)
{
    return json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
}

/* Give the options to the core. */
static int to_core(struct daemon *d, json_t *opts, struct gp_diag *diag)
{
    size_t n = json_object_size(opts), i = 0;
    struct gp_kv *kv = n ? calloc(n, sizeof(*kv)) : NULL;
    const char *key;
    json_t *v;
    int rc;

    if (n && !kv)
        return gp_diag_set(diag, GP_ENOMEM, "policy", "out of memory");
    json_object_foreach(opts, key, v)
    {
        kv[i].key = key;
        kv[i++].value = json_string_value(v);
    }
    if (d->cfg.backend.kind == GP_CONFIG_BACKEND_SLURM &&
        gp_policy_colocates(gp_policy_lookup(d->cfg.scheduler.policy), kv, n))
        rc = gp_diag_set(diag, GP_EINVAL, "policy",
                         "these options share GPUs between jobs, and Slurm "
                         "gives a GPU to one job at a time");
    else
        rc = gp_core_set_policy_options(d->core, kv, n, diag);
    free(kv);
    return rc;
}

static void in_force(struct daemon *d, json_t *opts, const char *from)
{
    json_decref(d->policy_opts);
    d->policy_opts = json_incref(opts);
    d->policy_from = from;
}

static int meta_set(struct daemon *d, const char *key, const char *value,
                    struct gp_diag *diag)
{
    return gp_db_meta_set(d->db, key, value, diag) == GP_OK ? GP_OK : GP_EIO;
}

int gp_live_policy_init(struct daemon *d, struct gp_diag *diag)
{
    json_t *file = file_options(&d->cfg), *api = NULL;
    char *file_text = file ? text_of(file) : NULL, *buf = malloc(META_MAX);
    int rc = GP_OK;

    if (!file || !file_text || !buf) {
        rc = gp_diag_set(diag, GP_ENOMEM, "policy", "out of memory");
        goto out;
    }
    in_force(d, file, "file");
    if (gp_db_meta_get(d->db, META_API, buf, META_MAX, NULL) == GP_OK &&
        buf[0]) {
        bool same = false;

        api = json_loads(buf, 0, NULL);
        if (gp_db_meta_get(d->db, META_FILE, buf, META_MAX, NULL) == GP_OK)
            same = strcmp(buf, file_text) == 0;
        if (!api || !json_is_object(api)) {
            gp_dlog(d, GP_LOG_WARN,
                    "policy options: the store's admin set is unreadable; "
                    "the file's apply");
        } else if (!same) {
            gp_dlog(d, GP_LOG_INFO,
                    "policy options: the file's [policy] changed since an "
                    "admin set the options; the file's apply");
        } else {
            struct gp_diag why = {{0}, {0}};

            if (to_core(d, api, &why) == GP_OK) {
                in_force(d, api, "api");
                gp_dlog(d, GP_LOG_INFO,
                        "policy options: the set an admin gave through the "
                        "API replaces the file's");
                goto record;
            }
            gp_dlog(d, GP_LOG_WARN,
                    "policy options: the policy refuses the admin's set "
                    "now (%s: %s); the file's apply",
                    why.where, why.msg);
        }
        if ((rc = meta_set(d, META_API, "", diag)) != GP_OK)
            goto out;
    }
record:
    rc = meta_set(d, META_FILE, file_text, diag);
out:
    json_decref(file);
    json_decref(api);
    free(file_text);
    free(buf);
    return rc;
}

int gp_live_policy_set(struct daemon *d, json_t *opts, const char *from,
                       struct gp_diag *diag)
{
    bool api = strcmp(from, "api") == 0;
    char *text = text_of(opts);
    int rc;

    if (!text)
        return gp_diag_set(diag, GP_ENOMEM, "policy", "out of memory");
    /* the store first: the caller's savepoint undoes it if the policy
     * refuses the set */
    rc = meta_set(d, META_API, api ? text : "", diag);
    if (rc == GP_OK && !api)
        rc = meta_set(d, META_FILE, text, diag);
    if (rc == GP_OK && (rc = to_core(d, opts, diag)) == GP_OK)
        in_force(d, opts, api ? "api" : "file");
    free(text);
    return rc;
}

json_t *gp_live_policy_json(const struct daemon *d)
{
    return json_pack("{sssssOssss}", "policy", d->cfg.scheduler.policy,
                     "placement",
                     gp_place_model_name(d->cfg.scheduler.placement), "options",
                     d->policy_opts, "options_from", d->policy_from, "summary",
                     gp_core_policy(d->core)->summary);
}

/* The file's [policy] as recorded when it last applied. */
static bool file_policy_changed(struct daemon *d, const char *text)
{
    char *buf = malloc(META_MAX);
    bool changed = true;

    if (buf && gp_db_meta_get(d->db, META_FILE, buf, META_MAX, NULL) == GP_OK)
        changed = strcmp(buf, text) != 0;
    free(buf);
    return changed;
}

static void reload_policy(struct daemon *d, const struct gp_config *c)
{
    json_t *file = file_options(c);
    char *text = file ? text_of(file) : NULL;
    struct gp_diag why = {{0}, {0}};

    if (!text) {
        gp_dlog(d, GP_LOG_ERROR, "reload: [policy]: out of memory");
    } else if (strcmp(c->scheduler.policy, d->cfg.scheduler.policy) != 0) {
        gp_dlog(d, GP_LOG_WARN,
                "reload: scheduler.policy changed to %s: a new policy "
                "needs a restart; the options of %s stay",
                c->scheduler.policy, d->cfg.scheduler.policy);
    } else if (file_policy_changed(d, text)) {
        /* a set the policy refuses leaves no trace in the store, so the
         * next SIGHUP tries the file again */
        if (gp_db_savepoint(d->db, &why) != GP_OK) {
            gp_dlog(d, GP_LOG_ERROR, "reload: the store: %s", why.msg);
        } else if (gp_live_policy_set(d, file, "file", &why) == GP_OK) {
            gp_db_savepoint_release(d->db, NULL);
            gp_dlog(d, GP_LOG_INFO,
                    "reload: policy options from the file apply: %s", text);
        } else {
            gp_db_savepoint_rollback(d->db, NULL);
            gp_dlog(d, GP_LOG_ERROR,
                    "reload: [policy] %s: %s; the options in force stay",
                    why.where, why.msg);
        }
    }
    json_decref(file);
    free(text);
}

static void reload_tenants(struct daemon *d, const struct gp_config *c)
{
    const char *path = c->scheduler.tenants;
    struct gp_tenant_list l;
    struct gp_diag why = {{0}, {0}};

    if (!(path && *path) !=
        !(d->cfg.scheduler.tenants && *d->cfg.scheduler.tenants)) {
        gp_dlog(d, GP_LOG_WARN,
                "reload: scheduler.tenants turned %s: that needs a restart",
                path && *path ? "on" : "off");
        return;
    }
    if (!(path && *path))
        return; /* one open tenant, "default" */
    gp_tenant_list_init(&l);
    if (gp_tenants_load(&l, path, &why) != GP_OK) {
        gp_dlog(d, GP_LOG_ERROR,
                "reload: %s: %s; the tenants stay as they were", why.where,
                why.msg);
        gp_tenant_list_fini(&l);
        return;
    }
    if (gp_tenancy_reload(d, &l) == GP_OK) {
        struct gp_tenant_list old = d->tenants;

        d->tenants = l; /* the file the members now come from */
        l = old;
    }
    gp_tenant_list_fini(&l);
}

void gp_live_reload(struct daemon *d, const struct gp_config *c)
{
    struct gp_diag diag = {{0}, {0}};

    if (gp_db_begin(d->db, &diag) != GP_OK) {
        gp_dlog(d, GP_LOG_ERROR, "reload: the store: %s; nothing changed",
                diag.msg);
        return;
    }
    reload_tenants(d, c);
    reload_policy(d, c);
    if (gp_db_commit(d->db, &diag) != GP_OK)
        gp_dlog(d, GP_LOG_ERROR,
                "reload: the store: %s; what changed holds until the "
                "daemon restarts",
                diag.msg);
}

void gp_live_fini(struct daemon *d)
{
    json_decref(d->policy_opts);
    d->policy_opts = NULL;
}
