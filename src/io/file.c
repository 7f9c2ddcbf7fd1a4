#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/afile.h"

int rn_file_open_read(const char *path, size_t max_bytes, size_t *size, rn_err *err)
{
    /* O_NONBLOCK: a FIFO without a writer opens at once instead of waiting for one. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return rn_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return rn_err_set(err, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return rn_err_set(err, "%s: not a regular file (%s); give a file", path, rn_file_kind(st.st_mode));
    }
    if ((uint64_t)st.st_size > max_bytes) {
        close(fd);
        return rn_err_set(err, "%s: %lld bytes, more than the %zu read at most", path, (long long)st.st_size,
                          max_bytes);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *size = (size_t)st.st_size;
    return fd;
}

int rn_mapfile_open(rn_mapfile *m, const char *path, rn_err *err)
{
    m->data = NULL;
    m->size = 0;
    size_t size = 0;
    int fd = rn_file_open_read(path, SIZE_MAX, &size, err);
    if (fd < 0) return -1;
    if (size == 0) {
        close(fd);
        return 0;
    }
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return rn_err_set(err, "%s: cannot map: %s", path, strerror(e));
    m->data = p;
    m->size = size;
    return 0;
}

void rn_mapfile_close(rn_mapfile *m)
{
    if (m->data) munmap((void *)m->data, m->size);
    m->data = NULL;
    m->size = 0;
}

int rn_mkdirs(const char *path, rn_err *err)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) return rn_err_set(err, "'%s': bad directory path", path);
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) && errno != EEXIST) return rn_err_set(err, "%s: cannot create: %s", buf, strerror(errno));
        buf[i] = c;
    }
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode)) return rn_err_set(err, "%s: not a directory", path);
    return 0;
}
