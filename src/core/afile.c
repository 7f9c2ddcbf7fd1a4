#include "core/afile.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rn_file_kind(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* A path that exists and is no regular file (nor a link to one) is written in place:
 * character devices and FIFOs with a reader directly, anything else refused. */
static int afile_open_direct(rn_afile *f, const char *path, mode_t mode, rn_err *err)
{
    if (!S_ISCHR(mode) && !S_ISFIFO(mode))
        return rn_err_set(err, "%s: cannot write over %s; give a file path", path, rn_file_kind(mode));
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENXIO) return rn_err_set(err, "%s: a FIFO with no reader", path);
    if (fd < 0) return rn_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    f->fd = fd;
    f->path = rn_xstrdup(path);
    f->tmp = NULL;
    return 0;
}

/* The pid in name when it is base ".tmp." PID, optionally "." and more (exact: base is the whole name
 * before ".tmp."; else a suffix of it); 0 otherwise. */
static long temp_pid(const char *name, const char *base, int exact)
{
    const char *at = strstr(name, ".tmp.");
    size_t n = strlen(base);
    if (!at || (size_t)(at - name) < n || strncmp(at - n, base, n) || (exact && at - n != name)) return 0;
    char *end;
    long pid = strtol(at + 5, &end, 10);
    if (end == at + 5 || (*end && *end != '.') || pid <= 0) return 0;
    return pid;
}

static int remove_stale(const char *dir, const char *base, int exact)
{
    DIR *d = opendir(dir);
    int removed = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        long pid = temp_pid(de->d_name, base, exact);
        if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        size_t n = strlen(dir) + strlen(de->d_name) + 2;
        char *p = rn_xmalloc(n);
        snprintf(p, n, "%s/%s", dir, de->d_name);
        removed += !unlink(p);
        free(p);
    }
    if (d) closedir(d);
    return removed;
}

int rn_stale_temps_remove(const char *path)
{
    char *copy = rn_xstrdup(path), *copy2 = rn_xstrdup(path);
    int removed = remove_stale(dirname(copy), basename(copy2), 1);
    free(copy), free(copy2);
    return removed;
}

int rn_stale_temps_in(const char *dir, const char *ext) { return remove_stale(dir, ext, 0); }

int rn_afile_open(rn_afile *f, const char *path, rn_err *err)
{
    *f = (rn_afile){.fd = -1};
    struct stat st, lst;
    int exists = !stat(path, &st);
    if (exists && !S_ISREG(st.st_mode)) return afile_open_direct(f, path, st.st_mode, err);
    /* A link to a regular file: replace the file it names, not the link. */
    char *real = exists && !lstat(path, &lst) && S_ISLNK(lst.st_mode) ? realpath(path, NULL) : NULL;
    f->path = real ? real : rn_xstrdup(path);
    rn_stale_temps_remove(f->path);
    size_t n = strlen(f->path) + 40;
    f->tmp = rn_xmalloc(n);
    snprintf(f->tmp, n, "%s.tmp.%ld.XXXXXX", f->path, (long)getpid());
    f->fd = mkostemp(f->tmp, O_CLOEXEC);
    if (f->fd < 0) {
        int e = errno;
        free(f->tmp);
        free(f->path);
        f->tmp = f->path = NULL;
        return rn_err_set(err, "%s: cannot create temporary file: %s", path, strerror(e));
    }
    return 0;
}

int rn_afile_write(rn_afile *f, const void *buf, size_t n, rn_err *err)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            rn_err_set(err, "%s: write failed: %s", f->path, w < 0 ? strerror(errno) : "no progress");
            rn_afile_abort(f);
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void fsync_dir(const char *path)
{
    char *copy = rn_xstrdup(path);
    int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(copy);
}

static int afile_commit_direct(rn_afile *f, rn_err *err)
{
    int rc = close(f->fd);
    f->fd = -1;
    if (rc) rn_err_set(err, "%s: write failed: %s", f->path, strerror(errno));
    free(f->path);
    f->path = NULL;
    return rc ? -1 : 0;
}

/* fsyncs and closes f's temporary (kept, not yet renamed); aborts f on failure. */
static int afile_seal(rn_afile *f, rn_err *err)
{
    if (fsync(f->fd) || fchmod(f->fd, 0644)) {
        rn_err_set(err, "%s: fsync failed: %s", f->path, strerror(errno));
        rn_afile_abort(f);
        return -1;
    }
    int rc = close(f->fd);
    f->fd = -1;
    if (rc) {
        rn_err_set(err, "%s: write failed: %s", f->path, strerror(errno));
        unlink(f->tmp);
        rn_afile_abort(f);
        return -1;
    }
    return 0;
}

int rn_afile_commit(rn_afile *f, rn_err *err)
{
    if (f->fd < 0) return rn_err_set(err, "%s: file already closed", f->path ? f->path : "?");
    if (!f->tmp) return afile_commit_direct(f, err);
    if (afile_seal(f, err)) return -1;
    if (rename(f->tmp, f->path)) {
        rn_err_set(err, "%s: cannot move temporary file into place: %s", f->path, strerror(errno));
        unlink(f->tmp);
        rn_afile_abort(f);
        return -1;
    }
    fsync_dir(f->path);
    free(f->tmp);
    free(f->path);
    f->tmp = f->path = NULL;
    return 0;
}

void rn_afile_abort(rn_afile *f)
{
    if (f->fd >= 0) {
        close(f->fd);
        f->fd = -1;
        if (f->tmp) unlink(f->tmp);
    }
    free(f->tmp);
    free(f->path);
    f->tmp = f->path = NULL;
}

static void afile_forget(rn_afile *f)
{
    free(f->tmp);
    free(f->path);
    f->tmp = f->path = NULL;
}

int rn_afile_commit_pair(rn_afile *a, rn_afile *b, rn_err *err)
{
    if (a->fd < 0 || b->fd < 0) {
        rn_afile_abort(a), rn_afile_abort(b);
        return rn_err_set(err, "rn_afile_commit_pair: a file already closed");
    }
    if (!a->tmp || !b->tmp) { /* one written in place (a device, a pipe): nothing to replace together */
        int rc = rn_afile_commit(a, err);
        if (rc) rn_afile_abort(b);
        return rc || rn_afile_commit(b, err) ? -1 : 0;
    }
    if (afile_seal(a, err)) {
        rn_afile_abort(b);
        return -1;
    }
    if (afile_seal(b, err)) {
        unlink(a->tmp);
        afile_forget(a);
        return -1;
    }
    /* a's old file kept under a hard link until b is in place, so a failed second rename puts it back */
    size_t n = strlen(a->path) + 40;
    char *old = rn_xmalloc(n);
    snprintf(old, n, "%s.tmp.%ld.oldXXXXXX", a->path, (long)getpid());
    int fd = mkostemp(old, O_CLOEXEC);
    int have_old = 0;
    if (fd >= 0) {
        close(fd);
        unlink(old);
        have_old = !link(a->path, old);
    }
    int rc = 0;
    if (rename(a->tmp, a->path)) {
        rc = rn_err_set(err, "%s: cannot move temporary file into place: %s", a->path, strerror(errno));
        unlink(a->tmp), unlink(b->tmp);
    } else if (rename(b->tmp, b->path)) {
        rc = rn_err_set(err, "%s: cannot move temporary file into place: %s (%s left as it was)", b->path,
                        strerror(errno), a->path);
        unlink(b->tmp);
        if (!have_old) unlink(a->path); /* a was new: none now, as b */
        else if (!rename(old, a->path)) have_old = 0;
        else have_old = 0, rn_err_prefix(err, "%s: its previous contents are in %s", a->path, old);
    } else {
        fsync_dir(a->path), fsync_dir(b->path);
    }
    if (have_old) unlink(old);
    free(old);
    afile_forget(a), afile_forget(b);
    return rc;
}
