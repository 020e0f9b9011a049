/* err.c - names and sentences for error codes; filling a diagnostic. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpupool/err.h"

static const char *const names[] = {
#define X(name, msg) #name,
    GP_ERR_MAP(X)
#undef X
};

static const char *const sentences[] = {
#define X(name, msg) msg,
    GP_ERR_MAP(X)
#undef X
};

#define NERR (sizeof(names) / sizeof(names[0]))

const char *gp_err_name(int err)
{
    int i = err - GP__ERR_FIRST - 1;

    if (err == GP_OK)
        return "OK";
    if (i < 0 || (size_t)i >= NERR)
        return "UNKNOWN";
    return names[i];
}

const char *gp_err_str(int err)
{
    int i = err - GP__ERR_FIRST - 1;

    if (err == GP_OK)
        return "success";
    if (i < 0 || (size_t)i >= NERR)
        return "unknown error";
    return sentences[i];
}

int gp_diag_set(struct gp_diag *diag, int err, const char *where,
                const char *fmt, ...)
{
    va_list ap;

    if (!diag)
        return err;
    snprintf(diag->where, sizeof(diag->where), "%s", where ? where : "");
    va_start(ap, fmt);
    vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
    va_end(ap);
    return err;
}

const char *gp_diag_format(const struct gp_diag *diag, int err, char *buf,
                           size_t len)
{
    if (!diag || !diag->msg[0])
        snprintf(buf, len, "%s", gp_err_str(err));
    else if (diag->where[0])
        snprintf(buf, len, "%s: %s", diag->where, diag->msg);
    else
        snprintf(buf, len, "%s", diag->msg);
    return buf;
}
