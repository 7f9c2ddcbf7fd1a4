#include "core/afile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
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

int rn_afile_open(rn_afile *f, const char *path, rn_err *err)
{
    *f = (rn_afile){.fd = -1};
    struct stat st, lst;
    int exists = !stat(path, &st);
    if (exists && !S_ISREG(st.st_mode)) return afile_open_direct(f, path, st.st_mode, err);
    /* A link to a regular file: replace the file it names, not the link. */
    char *real = exists && !lstat(path, &lst) && S_ISLNK(lst.st_mode) ? realpath(path, NULL) : NULL;
    f->path = real ? real : rn_xstrdup(path);
    size_t n = strlen(f->path) + 16;
    f->tmp = rn_xmalloc(n);
    snprintf(f->tmp, n, "%s.tmpXXXXXX", f->path);
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

int rn_afile_commit(rn_afile *f, rn_err *err)
{
    if (f->fd < 0) return rn_err_set(err, "%s: file already closed", f->path ? f->path : "?");
    if (!f->tmp) return afile_commit_direct(f, err);
    if (fsync(f->fd) || fchmod(f->fd, 0644)) {
        rn_err_set(err, "%s: fsync failed: %s", f->path, strerror(errno));
        rn_afile_abort(f);
        return -1;
    }
    int rc = close(f->fd);
    f->fd = -1;
    if (rc || rename(f->tmp, f->path)) {
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
